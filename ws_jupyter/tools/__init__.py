"""Agent tools over a workspace: files, grep, commands, processes, kernels, search and skills.

``workspace.tools(request_context=None)`` returns :class:`Tool` objects (see
``create_workspace_tools`` in ``factory.py``); hand them to a model with the adapters of
:mod:`ws_jupyter.adapters` (:func:`to_openai`, :func:`to_anthropic`, :func:`serve_mcp`..., also
importable from here).

The framework is at the top of this package: ``base`` (``ToolSpec``: a tool and its facts;
``ToolCall``: what a tool's ``run`` gets), ``registry`` (every tool, one line each), ``names``
(``WORKSPACE_TOOLS`` and the name groups), ``types`` (``Tool``, ``ToolResult``, contexts),
``config`` (``ToolsConfig``), ``schema`` (JSON Schemas, argument validation), ``factory`` (which
tools a workspace gets; policy), ``wrappers`` (approval, hooks, read tracking, write locks),
``tracking`` (read records, write locks), ``activity`` (live call events and the approval
broker), ``hints`` (MCP annotations and titles), ``executor`` (the thread pool of async calls),
``facts`` (the words of a spec: the name constants, ``ToolHints``, the settings and their
defaults; a tool module imports them from there, never from the readers ``names``, ``hints``,
``config``, which read every registered spec). The tools live in wings, by provider: ``files/``
(one module per tool, and the checkpoint tool), ``grep/`` (the tool and its engines),
``sandbox/`` (commands, processes, kernels, notebook runs), ``search/``, ``skills/``,
``open_notebook/`` (the notebook the user has open).

Adding a tool is one new module and one registry line:

1. a module in the wing of the provider it uses (``tools/files/word_count.py``) with its ``run``
   function (``ToolCall -> str | ToolResult``; raise a workspace error to fail) and its
   ``SPEC = ToolSpec(...)`` stating every fact: ``name``, ``description``, ``params``, ``run``,
   ``title``, ``hints`` (``ToolHints``, or ``LOOKS`` for a tool that only looks), ``needs``
   (``{"filesystem"}``, ``{"sandbox", "kernels"}``...), ``writes``, ``options`` (the settings it
   accepts; ``()``), and when it applies ``max_output_tokens``, ``write_path``/``check_reads``,
   ``default_approval``;
2. its line in ``registry.TOOLS`` (``".files.word_count:SPEC"``), where it should be listed.

Then the workspace lists it wherever its needs are met, ``ToolsConfig`` accepts its name and
settings, MCP clients get its title and hints, and the name groups of ``names`` include it. A
constant in ``WORKSPACE_TOOLS`` (``facts.py``, exported by ``names``) gives users a typo-proof
name for it.
``tests/tools/test_tool_specs.py`` checks every registered spec.

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
