"""The workspace sandbox's Jupyter kernels: start, list, interrupt, restart, stop.

These are the kernels `%%ws py` and the agent's `workspace_execute_code` run code in — inside the
sandbox (its working directory, environment and isolation), not this notebook's kernel. A name
picks one of several independent kernels (default: `default`).

Examples:
  %ws kernel list
  %ws kernel start                 # the "default" kernel
  %ws kernel start scratch --spec python3
  %ws kernel interrupt             # stop the code running in "default"
  %ws kernel restart scratch       # its variables and imports are lost
  %ws kernel stop scratch          # shut it down and forget it (`--all` for every kernel)
"""

from __future__ import annotations

from typing import Any

from ..parsing import WsArgumentParser
from ._common import require_kernels
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]

_ACTIONS = ("list", "start", "interrupt", "restart", "stop")


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument(
        "action", nargs="?", default="list", choices=_ACTIONS, help="what to do (default: list)"
    )
    parser.add_argument("name", nargs="?", default=None, help="kernel name (default: default)")
    parser.add_argument(
        "--spec", help="kernelspec to start (`jupyter kernelspec list`); default: this Python"
    )
    parser.add_argument("--all", action="store_true", help="with stop: every kernel")


def run(inv: Invocation) -> Any:
    from ...sandbox.kernels import DEFAULT_KERNEL
    from ..views import MessageView
    from ..views.kernels import KernelTableView

    kernels = require_kernels(inv.workspace, "kernel")
    args = inv.args
    name = args.name or DEFAULT_KERNEL
    if args.spec and args.action != "start":
        raise inv.usage_error("--spec goes with `start`")
    if args.all and args.action != "stop":
        raise inv.usage_error("--all goes with `stop`")
    if args.action == "list":
        return KernelTableView(kernels.list())
    if args.action == "start":
        kernel = kernels.start(name, spec=args.spec)
        info = kernel.info()
        return MessageView(
            f"Kernel {name!r} is {info.status} ({info.spec}, pid {info.pid}, {info.isolation})"
        )
    if args.action == "stop":
        if args.all:
            n = kernels.shutdown_all()
            return MessageView(f"Stopped {n} kernel{'' if n == 1 else 's'}.", "ok" if n else "info")
        if not kernels.shutdown(name):
            raise inv.usage_error(f"no kernel named {name!r} (see `%ws kernel list`)")
        return MessageView(f"Kernel {name!r} stopped.")
    kernel = kernels.get(name)
    if kernel is None:
        raise inv.usage_error(f"no kernel named {name!r} (see `%ws kernel list`)")
    if args.action == "interrupt":
        busy = kernel.interrupt()
        if busy:
            return MessageView(f"Interrupted kernel {name!r}.")
        return MessageView(f"Kernel {name!r} was not running code.", "info")
    kernel.restart()
    return MessageView(f"Kernel {name!r} restarted: its variables and imports are gone.")


COMMAND = Subcommand(
    name="kernel",
    summary="the sandbox's kernels: `%ws kernel list|start|interrupt|restart|stop [NAME]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
    aliases=("kernels",),
)
