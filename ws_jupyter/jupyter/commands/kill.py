"""Kill background processes (each as a whole tree: SIGTERM, then SIGKILL after a grace period).

Examples:
  %ws kill 12345
  %ws kill 12345 12346
  %ws kill --all
"""

from __future__ import annotations

from ..parsing import WsArgumentParser
from ..views.base import MessageView
from ._common import require_processes
from ._pid import find_handle
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("pids", nargs="*", type=int, metavar="PID", help="process ids (see `%%ws ps`)")
    parser.add_argument("--all", action="store_true", help="kill every running background process")


def run(inv: Invocation) -> MessageView:
    manager = require_processes(inv.workspace, "kill")
    args = inv.args
    if args.all == bool(args.pids):
        raise inv.usage_error("give PIDs or --all (not both)")
    if args.all:
        pids = [p.pid for p in manager.list() if p.running]
        if not pids:
            return MessageView("No running background processes.", "info")
    else:
        pids = args.pids
    handles = [find_handle(inv, manager, pid) for pid in pids]
    messages = []
    for handle in handles:
        if handle.kill():
            messages.append(f"Killed PID {handle.pid} (exit {handle.exit_code})")
        else:
            messages.append(f"PID {handle.pid} had already exited (exit {handle.exit_code})")
    return MessageView("; ".join(messages))


COMMAND = Subcommand(
    name="kill",
    summary="kill background processes: `%ws kill PID ...` or `--all`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
