"""What each tool does to the world, for clients that show or gate calls by it (MCP annotations).

Every tool states its hints and title on its own spec (``ToolSpec.hints``, ``ToolSpec.title``);
``hints_for(tool, workspace)`` and ``title_for(tool)`` look them up by the tool's workspace name
(the constant, so a renamed tool keeps them): read-only tools only look; destructive ones may
overwrite or remove what exists; idempotent ones do nothing more when repeated with the same
arguments; open-world ones reach beyond the workspace (a command on the host, or in a sandbox with
the network). A name no spec has gets the cautious answer (may change and destroy, not
idempotent), so nothing is advertised as safer than it is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..sandbox.capabilities import sandbox_allows_network, sandbox_runs_on_host
from .facts import LOOKS, ToolHints

if TYPE_CHECKING:
    from ..sandbox.types import WorkspaceSandbox
    from ..workspace import Workspace
    from .types import Tool

__all__ = ["LOOKS", "ToolHints", "hints_for", "title_for"]


def _reaches_out(sandbox: WorkspaceSandbox | None) -> bool:
    """Commands run on the host (no isolation) or with the network."""
    if sandbox is None:
        return True  # a resolver: not known before a request, so say what it may do
    return sandbox_runs_on_host(sandbox) or sandbox_allows_network(sandbox)


def _name(tool: Tool | str) -> str:
    name = getattr(tool, "workspace_tool_name", tool)
    return name if isinstance(name, str) else str(name)


def hints_for(tool: Tool | str, workspace: Workspace | None = None) -> ToolHints:
    """Hints for a ``Tool`` (or a workspace tool name)."""
    from .registry import tool_spec

    spec = tool_spec(_name(tool))
    if spec is None:
        return ToolHints()
    hints = spec.hints
    if hints.runs_code and workspace is not None:
        hints = replace(hints, open_world=_reaches_out(workspace.sandbox))
    return hints


def title_for(tool: Tool | str) -> str:
    """A short human title (``Read file``); a name no spec has gets its words."""
    from .registry import tool_spec

    name = _name(tool)
    spec = tool_spec(name)
    if spec is not None:
        return spec.title
    words = name.removeprefix("workspace_").replace("_", " ")
    return words[:1].upper() + words[1:]

