"""Agent tools over a workspace: files, grep, commands, processes, search and skills.

``workspace.tools(request_context=None)`` returns :class:`Tool` objects (see
``create_workspace_tools`` in ``factory.py``); hand them to a model with the adapters of
:mod:`ws_jupyter.adapters` (:func:`to_openai`, :func:`to_anthropic`, :func:`serve_mcp`..., also
importable from here). Modules:

``names`` (``WORKSPACE_TOOLS``), ``types`` (``Tool``, ``ToolResult``, contexts), ``config``
(``ToolsConfig``), ``schema`` (JSON Schemas, argument validation), ``factory`` (availability and
policy), ``wrappers`` (approval, hooks, read tracking, write locks), ``tracking`` (read records,
write locks), ``activity`` (live call events and the approval broker), ``executor`` (the thread
pool of async calls), and one module per tool.

Names are imported lazily so that importing the package (or the workspace) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_EXPORTS = {
    "WORKSPACE_TOOLS": "ws_jupyter.tools.names",
    "Tool": "ws_jupyter.tools.types",
    "ToolResult": "ws_jupyter.tools.types",
    "MediaPart": "ws_jupyter.tools.types",
    "ToolCallContext": "ws_jupyter.tools.types",
    "ToolHookContext": "ws_jupyter.tools.types",
    "ToolErrorText": "ws_jupyter.tools.types",
    "is_error_output": "ws_jupyter.tools.types",
    "ToolsConfig": "ws_jupyter.tools.config",
    "ToolConfig": "ws_jupyter.tools.config",
    "ToolHooks": "ws_jupyter.tools.config",
    "create_workspace_tools": "ws_jupyter.tools.factory",
    "ToolActivity": "ws_jupyter.tools.activity",
    "ToolActivityEvent": "ws_jupyter.tools.activity",
    "PendingApproval": "ws_jupyter.tools.activity",
    "tool_activity": "ws_jupyter.tools.activity",
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
    "count_tokens": "ws_jupyter.text.tokens",
}

__all__ = [
    "WORKSPACE_TOOLS",
    "MediaPart",
    "PendingApproval",
    "Tool",
    "ToolActivity",
    "ToolActivityEvent",
    "ToolCallContext",
    "ToolConfig",
    "ToolErrorText",
    "ToolHookContext",
    "ToolHooks",
    "ToolResult",
    "ToolsConfig",
    "anthropic_tool_result",
    "build_mcp_server",
    "count_tokens",
    "create_workspace_tools",
    "is_error_output",
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
    "tool_activity",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


if TYPE_CHECKING:  # pragma: no cover
    from ..adapters.chat import (
        anthropic_tool_result,
        openai_tool_output,
        run_anthropic_tool_calls,
        run_openai_tool_calls,
        run_tool_call,
        to_anthropic,
        to_openai,
    )
    from ..adapters.langchain import to_langchain
    from ..adapters.mcp_server import build_mcp_server, serve_mcp
    from ..adapters.openai_agents import to_openai_agents
    from ..adapters.pydantic_ai import to_pydantic_ai
    from ..adapters.smolagents import to_smolagents
    from ..text.tokens import count_tokens
    from .activity import PendingApproval, ToolActivity, ToolActivityEvent, tool_activity
    from .config import ToolConfig, ToolHooks, ToolsConfig
    from .factory import create_workspace_tools
    from .names import WORKSPACE_TOOLS
    from .types import (
        MediaPart,
        Tool,
        ToolCallContext,
        ToolErrorText,
        ToolHookContext,
        ToolResult,
        is_error_output,
    )
