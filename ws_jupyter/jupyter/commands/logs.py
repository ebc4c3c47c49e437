"""Show the output a background process produced (stdout, then stderr).

The sandbox keeps the newest output of each stream (1 MB by default). --tail keeps the last N
lines; --follow shows the live widget instead.

Examples:
  %ws logs 12345
  %ws logs 12345 --tail 50
  %ws logs 12345 --follow
"""

from __future__ import annotations

from typing import Any

from ..parsing import WsArgumentParser
from ..views.processes import LogView
from ._common import positive_int, require_processes
from ._pid import find_handle
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("pid", type=int, metavar="PID", help="process id (see `%%ws ps`)")
    parser.add_argument(
        "--tail", "-n", type=positive_int, metavar="N", help="only the last N lines of each stream"
    )
    parser.add_argument("--follow", "-f", action="store_true", help="show the live output widget")


def _last_lines(text: str, keep: int) -> tuple[str, int]:
    lines = text.splitlines(keepends=True)
    if len(lines) <= keep:
        return text, 0
    return "".join(lines[-keep:]), len(lines) - keep


def run(inv: Invocation) -> Any:
    manager = require_processes(inv.workspace, "logs")
    handle = find_handle(inv, manager, inv.args.pid)
    if inv.args.follow:
        from .bg import show_process

        show_process(inv, handle)
        return None
    limit = max(inv.magics.max_lines, 1)
    keep = min(inv.args.tail, limit) if inv.args.tail else limit
    out, out_cut = _last_lines(handle.stdout, keep)
    err, err_cut = _last_lines(handle.stderr, keep)
    shown = []
    if out_cut or err_cut:
        shown.append(f"last {keep} lines")
    if getattr(handle, "stdout_truncated", False) or getattr(handle, "stderr_truncated", False):
        shown.append("older output was not retained")
    return LogView(
        pid=handle.pid,
        command=handle.command,
        stdout=out,
        stderr=err,
        running=handle.exit_code is None,
        exit_code=handle.exit_code,
        shown="; ".join(shown),
    )


COMMAND = Subcommand(
    name="logs",
    summary="a background process's output: `%ws logs PID [--tail N] [--follow]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
