"""Check what this environment has for ws-jupyter, what each missing piece costs, and the fixes.

The table `ws-jupyter doctor` prints in a terminal: sandbox isolation (a real bubblewrap probe),
what a sandboxed command can do when the notebook runs as root, ripgrep, the default model, the
kernelspec, the workspace's Chroma server (when it uses one), the JupyterLab and ipywidgets
versions, exact token counting, and the host-trusted files in the workspace's folder (.git,
.vscode, .envrc, ...) with whether sandboxed commands can change them. What is *needed* comes from the notebook's workspace — its
isolation, vector search, Chroma server — or, before `%ws init`, from the `%config WsMagics`
settings; --strict counts every missing piece.

Examples:
  %ws doctor
  %ws doctor --strict
  report = %ws doctor          # report.ok, report.report.get("ripgrep").fix
"""

from __future__ import annotations

from typing import Any

from ..parsing import WsArgumentParser
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("--strict", action="store_true", help="every missing piece counts as needed")


def run(inv: Invocation) -> Any:
    from ...doctor import DoctorConfig, check_environment
    from ..views.doctor import DoctorView

    workspace = inv.session.workspace
    if workspace is not None:
        config = DoctorConfig.from_workspace(workspace, strict=inv.args.strict or None)
    else:
        config = DoctorConfig(
            isolation=inv.magics.isolation, vector=bool(inv.magics.vector), strict=inv.args.strict
        )
    return DoctorView(check_environment(config))


COMMAND = Subcommand(
    name="doctor",
    summary="what this environment has, what each missing piece costs, and the command that fixes it",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
