"""Show the agent tools of the workspace as a model sees them: names, descriptions, JSON schemas.

The list follows the workspace's configuration (only the tools whose provider exists and that are
enabled; names as exposed). --format shows the definitions exactly as you would pass them to a
model API: `openai` (strict function tools), `anthropic` (tool use) or `mcp` (what
`ws-jupyter mcp` lists).

Examples:
  %ws tools
  %ws tools --format openai
"""

from __future__ import annotations

from typing import Any

from ..parsing import WsArgumentParser
from ..views.tools import JSONView, ToolTableView
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument(
        "--format", "-f", choices=["openai", "anthropic", "mcp"], help="definitions for a model API"
    )


def run(inv: Invocation) -> Any:
    tools = inv.workspace.tools()
    fmt = inv.args.format
    if fmt is None:
        return ToolTableView(tools)
    if fmt == "openai":
        from ...adapters import to_openai

        return JSONView("OpenAI tool definitions", to_openai(tools))
    if fmt == "anthropic":
        from ...adapters import to_anthropic

        return JSONView("Anthropic tool definitions", to_anthropic(tools))
    return JSONView(
        "MCP tool definitions",
        [{"name": t.name, "description": t.description, "inputSchema": t.non_strict_schema} for t in tools],
    )


COMMAND = Subcommand(
    name="tools",
    summary="the agent tools and their schemas: `%ws tools [--format openai|anthropic|mcp]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
