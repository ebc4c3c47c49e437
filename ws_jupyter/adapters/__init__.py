"""Workspace tools in the formats agents speak: the OpenAI and Anthropic chat APIs (``chat``), the
agent frameworks (``openai_agents``, ``langchain``, ``pydantic_ai``, ``smolagents``: each imports
its framework only when used) and an MCP server (``mcp_server``; ``ws-jupyter mcp`` in the CLI).

Every adapter takes the ``Tool`` objects of ``workspace.tools()`` and keeps their names,
descriptions, outputs and policy (approval, hooks, read tracking): an adapter translates, it
never decides. The names are re-exported from :mod:`ws_jupyter`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_EXPORTS = {
    "to_openai": "ws_jupyter.adapters.chat",
    "to_anthropic": "ws_jupyter.adapters.chat",
    "run_tool_call": "ws_jupyter.adapters.chat",
    "openai_tool_output": "ws_jupyter.adapters.chat",
    "anthropic_tool_result": "ws_jupyter.adapters.chat",
    "run_openai_tool_calls": "ws_jupyter.adapters.chat",
    "run_anthropic_tool_calls": "ws_jupyter.adapters.chat",
    "to_openai_agents": "ws_jupyter.adapters.openai_agents",
    "to_langchain": "ws_jupyter.adapters.langchain",
    "to_pydantic_ai": "ws_jupyter.adapters.pydantic_ai",
    "to_smolagents": "ws_jupyter.adapters.smolagents",
    "serve_mcp": "ws_jupyter.adapters.mcp_server",
    "build_mcp_server": "ws_jupyter.adapters.mcp_server",
}

__all__ = [
    "anthropic_tool_result",
    "build_mcp_server",
    "openai_tool_output",
    "run_anthropic_tool_calls",
    "run_openai_tool_calls",
    "run_tool_call",
    "serve_mcp",
    "to_anthropic",
    "to_langchain",
    "to_openai",
    "to_openai_agents",
    "to_pydantic_ai",
    "to_smolagents",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

if TYPE_CHECKING:  # pragma: no cover
    from .chat import (
        anthropic_tool_result,
        openai_tool_output,
        run_anthropic_tool_calls,
        run_openai_tool_calls,
        run_tool_call,
        to_anthropic,
        to_openai,
    )
    from .langchain import to_langchain
    from .mcp_server import build_mcp_server, serve_mcp
    from .openai_agents import to_openai_agents
    from .pydantic_ai import to_pydantic_ai
    from .smolagents import to_smolagents
