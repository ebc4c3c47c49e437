"""Show the workspace: id, status, filesystem, sandbox and isolation, the host-trusted files in the
workspace (.git, .vscode, .envrc, virtual environments: what git, editors or direnv on the host act
on) and whether sandboxed commands can change them, search modes and index size, skills count.

Examples:
  %ws info
  %ws info --files     # also count the files (walks the tree, gitignore-aware)
"""

from __future__ import annotations

from ..parsing import WsArgumentParser
from ..views.workspace import InfoView, info_rows
from ._common import isolation_available, load_skills, show_index_progress
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("--files", action="store_true", help="count the files (walks the whole tree)")


def run(inv: Invocation) -> InfoView:
    workspace = inv.workspace
    problems = load_skills(workspace)
    info = workspace.get_info(include_file_count=inv.args.files)
    rows = info_rows(info)
    available = isolation_available(workspace)
    if available is not None:
        at = next((i + 1 for i, (k, _) in enumerate(rows) if k == "isolation"), len(rows))
        rows.insert(at, available)
    notes = [f"skill problem: {p} (see `%ws skills`)" for p in problems]
    show_index_progress(inv, workspace)  # live, above the table, while vectors are being computed
    return InfoView(f"Workspace {workspace.name}", rows, notes)


COMMAND = Subcommand(
    name="info",
    summary="workspace id, status, providers, isolation, index size, skills",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
