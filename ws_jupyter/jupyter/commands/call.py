r"""Call an agent tool exactly as an agent would, and see the output the model would get.

ARGS is a JSON object, or a Python expression giving a dict (`dict(path=p)`, a variable); as a
cell magic the body holds it. Arguments are validated against the tool's schema, and the tools'
policy applies: hooks, read tracking, output budgets — and approval. A tool that requires approval
(by default `workspace_execute_command` on a sandbox without isolation) shows Approve and Deny
buttons and runs once approved; --approve approves it up front.

Examples:
  %ws call workspace_read_file {"path": "README.md", "limit": 20}
  %ws call workspace_grep dict(pattern="TODO", context_lines=1)
  %ws call workspace_execute_command {"command": "ls -la"}

  %%ws call workspace_write_file
  {"path": "notes/todo.md", "content": "- write tests\n"}
"""

from __future__ import annotations

import json
from typing import Any

from IPython.display import display

from ..calls import run_observed
from ..parsing import WsArgumentParser
from ..views.tools import ToolCallView
from .base import Invocation, Subcommand

__all__ = ["COMMAND", "find_tool", "parse_arguments"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument(
        "--approve", action="store_true", help="approve the call up front if it needs approval"
    )
    parser.add_argument("command", nargs="*", metavar="TOOL ARGS", help="tool name, then its arguments")


def parse_arguments(inv: Invocation, text: str) -> dict[str, Any]:
    """JSON first (what a model sends); else a Python expression in the notebook's namespace."""
    text = text.strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as json_error:
        try:
            value = eval(compile(text, "<%ws call>", "eval"), inv.user_ns)
        except Exception as exc:
            raise inv.usage_error(
                f"ARGS must be a JSON object or a Python dict expression: JSON: {json_error}; Python: "
                f"{type(exc).__name__}: {exc}"
            ) from None
    if not isinstance(value, dict):
        raise inv.usage_error(f"ARGS must be an object/dict, got {type(value).__name__}")
    return value


def find_tool(inv: Invocation, tools: list[Any], name: str) -> Any:
    for tool in tools:
        if name in (tool.name, tool.workspace_tool_name):
            return tool
    available = ", ".join(t.name for t in tools) or "none"
    raise inv.usage_error(f"Unknown tool {name!r}. Available tools: {available}")


def run(inv: Invocation) -> Any:
    from ... import ToolsConfig

    name, _, rest = inv.args.command.strip().partition(" ")
    if not name:
        raise inv.usage_error("usage: %ws call TOOL ARGS (see `%ws tools` for the names)")
    if inv.cell is not None:
        if rest.strip():
            raise inv.usage_error("give ARGS either on the line or as the cell body, not both")
        rest = inv.cell
    workspace = inv.workspace
    tool = find_tool(inv, workspace.tools(), name)
    arguments = parse_arguments(inv, rest)
    if not inv.args.approve and tool.needs_approval(arguments):
        config = ToolsConfig.coerce(workspace.get_tools_config())
        if config.approver is None:
            if not inv.in_kernel:
                raise inv.usage_error(f"{tool.name} requires approval: add --approve to approve this call")
            from ..widgets.tool_call import ToolCallPanel

            panel = ToolCallPanel(workspace, tool, arguments, interval=inv.magics.update_interval)
            inv.session.track(panel.close)
            display(panel)
            return None
    call = run_observed(workspace, tool, arguments, approved=True if inv.args.approve else None)
    return ToolCallView.of(tool.name, arguments, call.output, call.seconds, call.blocked)


COMMAND = Subcommand(
    name="call",
    summary="call a tool as an agent would: `%ws call TOOL {json}` (approval applies)",
    doc=__doc__ or "",
    configure=configure,
    run=run,
    cell="optional",
    tail=True,
    expand=False,
)
