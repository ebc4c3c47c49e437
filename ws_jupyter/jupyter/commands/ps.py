"""List the background processes of the sandbox: PID, state, runtime, exit code, command; then
the agents' jobs (long runs started with background or keep_running: a command job is one of the
processes, a code job runs on a kernel and keeps it busy), with who started them.

Exited processes stay listed (with their output, see `%ws logs`) until the sandbox's retention
limit drops the oldest.

Examples:
  %ws ps
  %ws ps --running
"""

from __future__ import annotations

from ..parsing import WsArgumentParser
from ..views.processes import JobRow, ProcessRow, ProcessTableView
from ._common import require_processes
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("--running", "-r", action="store_true", help="only running processes")


def run(inv: Invocation) -> ProcessTableView:
    manager = require_processes(inv.workspace, "ps")
    rows = [ProcessRow.from_info(info) for info in manager.list()]
    jobs = [JobRow.from_job(j) for j in inv.workspace.jobs()]
    if inv.args.running:
        rows = [r for r in rows if r.state == "running"]
        jobs = [j for j in jobs if j.state == "running"]
    return ProcessTableView(rows, jobs)


COMMAND = Subcommand(
    name="ps",
    summary="the background processes (pid, state, runtime, exit code)",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
