"""Stop sharing notebook variables with the agent.

NAME may be a name or a pattern. Unsharing a name that a shared pattern matches hides that name
alone (the pattern stays). --all stops sharing everything.

Examples:
  %ws unshare sales
  %ws unshare sales_*
  %ws unshare --all
"""

from __future__ import annotations

from ..parsing import WsArgumentParser
from ..views.base import MessageView
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME", help="variable names or patterns")
    parser.add_argument("--all", action="store_true", help="stop sharing everything")


def run(inv: Invocation) -> MessageView:
    from ..user_data import bind_shell

    args = inv.args
    if args.all == bool(args.names):
        raise inv.usage_error("give NAMEs or --all (not both)")
    shared = bind_shell(inv.shell, inv.workspace, inv.session)
    gone = shared.unshare_all() if args.all else shared.unshare(*args.names)
    if not gone:
        return MessageView("Nothing was shared under those names.", "info")
    return MessageView(f"No longer shared with the agent: {', '.join(gone)}")


COMMAND = Subcommand(
    name="unshare",
    summary="stop sharing variables with the agent: `%ws unshare NAME ...` or `--all`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
