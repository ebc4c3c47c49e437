"""What each tool does to the world, for clients that show or gate calls by it (MCP annotations).

``hints_for(tool, workspace)`` gives :class:`ToolHints` for a tool by its workspace name (the
constant, so a renamed tool keeps its hints): read-only tools only look; destructive ones may
overwrite or remove what exists; idempotent ones do nothing more when repeated with the same
arguments; open-world ones reach beyond the workspace (a command on the host, or in a sandbox
with the network). A tool missing from the table gets the cautious answer (may change and
destroy, not idempotent), so a new tool is never advertised as safer than it is.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..sandbox.capabilities import sandbox_allows_network, sandbox_runs_on_host
from .names import WORKSPACE_TOOLS

__all__ = ["ToolHints", "hints_for", "title_for"]

T = WORKSPACE_TOOLS


@dataclass(frozen=True)
class ToolHints:
    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = False


_LOOK = ToolHints(read_only=True, destructive=False, idempotent=True)
_TABLE: dict[str, ToolHints] = {
    T.FILESYSTEM.READ_FILE: _LOOK,
    T.FILESYSTEM.LIST_FILES: _LOOK,
    T.FILESYSTEM.FILE_STAT: _LOOK,
    T.FILESYSTEM.GREP: _LOOK,
    T.FILESYSTEM.WRITE_FILE: ToolHints(destructive=True, idempotent=True),
    T.FILESYSTEM.EDIT_FILE: ToolHints(destructive=True, idempotent=False),
    T.FILESYSTEM.DELETE: ToolHints(destructive=True, idempotent=True),
    T.FILESYSTEM.MKDIR: ToolHints(destructive=False, idempotent=True),
    T.SANDBOX.EXECUTE_COMMAND: ToolHints(destructive=True, idempotent=False),
    T.SANDBOX.GET_PROCESS_OUTPUT: _LOOK,
    T.SANDBOX.LIST_PROCESSES: _LOOK,
    T.SANDBOX.KILL_PROCESS: ToolHints(destructive=True, idempotent=True),
    # code in a kernel can do what a command can; restarting drops the kernel's state
    T.SANDBOX.EXECUTE_CODE: ToolHints(destructive=True, idempotent=False),
    T.SANDBOX.RESTART_KERNEL: ToolHints(destructive=True, idempotent=False),
    T.SANDBOX.LIST_KERNELS: _LOOK,
    T.SANDBOX.RUN_NOTEBOOK: ToolHints(destructive=True, idempotent=False),
    T.SEARCH.SEARCH: _LOOK,
    T.SEARCH.INDEX: ToolHints(destructive=False, idempotent=True),
    T.SKILLS.SKILL: _LOOK,
    T.SKILLS.SKILL_SEARCH: _LOOK,
    T.SKILLS.SKILL_READ: _LOOK,
    T.USER_DATA.LIST: _LOOK,
    T.USER_DATA.INSPECT: _LOOK,
    # binds (or rebinds) a variable in the sandbox's kernel, once the user approves
    T.USER_DATA.REQUEST: ToolHints(destructive=True, idempotent=True),
    T.OPEN_NOTEBOOK.READ: _LOOK,
    # a proposal changes the user's notebook once accepted (or at once, in the user's accept mode)
    T.OPEN_NOTEBOOK.EDIT: ToolHints(destructive=True, idempotent=False),
    # where="user" runs unsandboxed code on the host (after the user approves it)
    T.OPEN_NOTEBOOK.RUN: ToolHints(destructive=True, idempotent=False, open_world=True),
    # records files outside the workspace; a restore (when allowed) overwrites files
    T.CHECKPOINTS.CHECKPOINT: ToolHints(destructive=True, idempotent=False),
}

_TITLES = {
    T.FILESYSTEM.READ_FILE: "Read file",
    T.FILESYSTEM.WRITE_FILE: "Write file",
    T.FILESYSTEM.EDIT_FILE: "Edit file",
    T.FILESYSTEM.LIST_FILES: "List files",
    T.FILESYSTEM.DELETE: "Delete",
    T.FILESYSTEM.FILE_STAT: "File info",
    T.FILESYSTEM.MKDIR: "Create directory",
    T.FILESYSTEM.GREP: "Search file contents (grep)",
    T.SANDBOX.EXECUTE_COMMAND: "Run command",
    T.SANDBOX.GET_PROCESS_OUTPUT: "Background process output",
    T.SANDBOX.KILL_PROCESS: "Kill background process",
    T.SANDBOX.LIST_PROCESSES: "List background processes",
    T.SANDBOX.EXECUTE_CODE: "Run Python code (kernel)",
    T.SANDBOX.RESTART_KERNEL: "Restart kernel",
    T.SANDBOX.LIST_KERNELS: "List kernels",
    T.SANDBOX.RUN_NOTEBOOK: "Run notebook",
    T.SEARCH.SEARCH: "Search the workspace",
    T.SEARCH.INDEX: "Add to the search index",
    T.SKILLS.SKILL: "Load skill",
    T.SKILLS.SKILL_SEARCH: "Search skills",
    T.SKILLS.SKILL_READ: "Read skill file",
    T.USER_DATA.LIST: "List the user's shared variables",
    T.USER_DATA.INSPECT: "Inspect a shared variable",
    T.USER_DATA.REQUEST: "Request a copy of a shared variable",
    T.OPEN_NOTEBOOK.READ: "Read the open notebook",
    T.OPEN_NOTEBOOK.EDIT: "Propose edits to the open notebook",
    T.OPEN_NOTEBOOK.RUN: "Run cells of the open notebook",
    T.CHECKPOINTS.CHECKPOINT: "Workspace checkpoint",
}


def _reaches_out(sandbox: Any) -> bool:
    """Commands run on the host (no isolation) or with the network."""
    if sandbox is None:
        return True  # a resolver: not known before a request, so say what it may do
    return sandbox_runs_on_host(sandbox) or sandbox_allows_network(sandbox)


#: Tools whose code runs in the sandbox: they reach out exactly when its commands do.
_RUNS_CODE = frozenset({T.SANDBOX.EXECUTE_COMMAND, T.SANDBOX.EXECUTE_CODE, T.SANDBOX.RUN_NOTEBOOK})


def hints_for(tool: Any, workspace: Any = None) -> ToolHints:
    """Hints for a ``Tool`` (or a workspace tool name)."""
    name = getattr(tool, "workspace_tool_name", tool)
    hints = _TABLE.get(name, ToolHints())
    if name in _RUNS_CODE and workspace is not None:
        hints = replace(hints, open_world=_reaches_out(workspace.sandbox))
    return hints


def title_for(tool: Any) -> str:
    """A short human title (``Read file``); unknown tools get their name in words."""
    name = getattr(tool, "workspace_tool_name", tool)
    title = _TITLES.get(name)
    if title is None:
        words = name.removeprefix("workspace_").replace("_", " ")
        title = words[:1].upper() + words[1:]
    return title
