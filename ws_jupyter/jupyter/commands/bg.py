"""Start a command in the background and show its live output; the value is its process handle.

The widget shows the state and runtime, the newest output (updated live), a stdin box and a Kill
button. The notebook stays free: run other cells meanwhile. `%ws ps`, `%ws logs`, `%ws send` and
`%ws kill` work with its PID, and the handle works from Python (`p = _`; `p.stdout`, `p.kill()`).

Examples:
  %ws bg python -m http.server 8000
  %ws bg --timeout 600 python train.py --epochs 5
  p = %ws bg tail -f logs/app.log
"""

from __future__ import annotations

from typing import Any

from IPython.display import display

from ..parsing import WsArgumentParser
from ._common import require_processes
from ._process_args import add_launch_options, env_from_args
from .base import Invocation, Subcommand

__all__ = ["COMMAND", "show_process"]


def configure(parser: WsArgumentParser) -> None:
    add_launch_options(parser)
    parser.add_argument("--no-widget", action="store_true", help="do not show the live output widget")
    parser.add_argument(
        "command", nargs="*", metavar="CMD", help="the command line (everything after the options)"
    )


def show_process(inv: Invocation, handle: Any) -> Any:
    """Displays the live ``ProcessOutput`` widget of ``handle`` (closed when the extension unloads)."""
    from ..widgets.process_output import ProcessOutput

    view = ProcessOutput(handle, interval=inv.magics.update_interval)
    inv.session.track(view.close)
    display(view)
    return view


def run(inv: Invocation) -> Any:
    args = inv.args
    command = args.command.strip()
    if not command:
        raise inv.usage_error("nothing to run (usage: %ws bg CMD)")
    manager = require_processes(inv.workspace, "bg")
    handle = manager.spawn(command, cwd=args.cwd, env=env_from_args(args), timeout=args.timeout)
    if not args.no_widget:
        show_process(inv, handle)
    return handle


COMMAND = Subcommand(
    name="bg",
    summary="start a background process with a live output widget: `%ws bg CMD`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
    tail=True,
)
