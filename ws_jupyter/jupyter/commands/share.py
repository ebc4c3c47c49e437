"""Share notebook variables with the agent, read-only, by name or pattern.

The agent's tools then see them: user_variables_list (name, type, shape, size) and
user_variable_inspect (summaries written by ws-jupyter for DataFrames, arrays and plain data;
only type and size for other objects — none of their code runs). A copy into the sandbox
(user_variable_request) waits for your Approve/Deny in the tool activity panel (`%ws ui`, or a
ToolActivity widget), showing the variable, its size and the agent's reason — unless you share
it with --allow-copy. A pattern also shares variables created later that match it.

Never shared, even when a pattern matches: names starting with _, IPython's own (In, Out,
get_ipython, exit, quit, ...), modules, names and strings that look like secrets (api_key,
password, token, sk-..., ghp_...), os.environ. To share a value under another name, use
ws.share(value, name="...") in Python.

Without NAME: shows what is shared, with a Revoke button per variable.

Examples:
  %ws share sales
  %ws share sales_* regions --allow-copy
  %ws share --limit 512
  %ws share
"""

from __future__ import annotations

from typing import Any

from ..parsing import WsArgumentParser
from ..views.base import MessageView
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME", help="variable names or glob patterns (sales_*)")
    parser.add_argument(
        "--allow-copy", action="store_true", help="let the agent copy these into the sandbox without asking"
    )
    parser.add_argument(
        "--limit", type=float, metavar="MB", help="the copy size limit in MB, both ways (default 256)"
    )


def run(inv: Invocation) -> Any:
    from ..user_data import bind_shell

    shared = bind_shell(inv.shell, inv.workspace, inv.session)
    args = inv.args
    notes: list[str] = []
    if args.limit is not None:
        if not args.limit > 0:
            raise inv.usage_error("--limit must be a positive number of MB")
        shared.max_copy_bytes = int(args.limit * (1 << 20))
        notes.append(f"copy limit: {args.limit:g} MB")
    if not args.names:
        if notes and not inv.in_kernel:
            return MessageView("Copy limit: " + f"{args.limit:g} MB.", "ok")
        return _show(inv)
    try:
        result = shared.share(*args.names, allow_copy=args.allow_copy)
    except Exception as exc:  # a name that is not a variable name
        raise inv.usage_error(str(exc)) from None
    parts = []
    if result.shared:
        how = " (copies without asking)" if args.allow_copy else ""
        parts.append(f"Shared with the agent{how}: {', '.join(result.shared)}")
    for name, why in result.skipped.items():
        parts.append(f"not shared: {name} ({why})")
    if result.unmatched:
        parts.append(f"no variable matches {', '.join(result.unmatched)} yet (shared when one appears)")
    level = "ok" if result.shared and not result.skipped else "warn"
    return MessageView("; ".join(parts + notes) or "Nothing to share.", level)


def _show(inv: Invocation) -> Any:
    if inv.in_kernel:
        from ..widgets.shared_variables import SharedVariables

        panel = SharedVariables(inv.workspace)
        inv.session.track(panel.close)
        return panel
    from ..views.user_data import SharedView

    return SharedView.of(inv.workspace)


COMMAND = Subcommand(
    name="share",
    summary="share variables with the agent, read-only: `%ws share NAME|PATTERN ... [--allow-copy]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
