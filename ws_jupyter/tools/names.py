"""The names of the workspace tools, as constants.

Configuration is keyed by these constants (``tools={WORKSPACE_TOOLS.FILESYSTEM.WRITE_FILE: {...}}``),
so a typo is caught at configuration time instead of silently configuring nothing. A tool may be
exposed to a model under another name (``"name"`` in its config); the constant stays its identity.

>>> WORKSPACE_TOOLS.FILESYSTEM.READ_FILE
'workspace_read_file'
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ALL_TOOL_NAMES",
    "CHECKPOINT_TOOLS",
    "FILESYSTEM_TOOLS",
    "KERNEL_TOOLS",
    "NOTEBOOK_RUN_TOOLS",
    "OPEN_NOTEBOOK_TOOLS",
    "PROCESS_TOOLS",
    "SANDBOX_TOOLS",
    "SEARCH_TOOLS",
    "SKILL_TOOLS",
    "USER_DATA_TOOLS",
    "WORKSPACE_TOOLS",
    "WRITE_TOOLS",
]


class _Filesystem:
    READ_FILE: Final = "workspace_read_file"
    WRITE_FILE: Final = "workspace_write_file"
    EDIT_FILE: Final = "workspace_edit_file"
    NOTEBOOK_EDIT: Final = "workspace_notebook_edit"
    LIST_FILES: Final = "workspace_list_files"
    DELETE: Final = "workspace_delete"
    FILE_STAT: Final = "workspace_file_stat"
    MKDIR: Final = "workspace_mkdir"
    GREP: Final = "workspace_grep"


class _Sandbox:
    EXECUTE_COMMAND: Final = "workspace_execute_command"
    GET_PROCESS_OUTPUT: Final = "workspace_get_process_output"
    KILL_PROCESS: Final = "workspace_kill_process"
    LIST_PROCESSES: Final = "workspace_list_processes"
    EXECUTE_CODE: Final = "workspace_execute_code"
    RESTART_KERNEL: Final = "workspace_restart_kernel"
    LIST_KERNELS: Final = "workspace_list_kernels"
    RUN_NOTEBOOK: Final = "workspace_run_notebook"


class _Search:
    SEARCH: Final = "workspace_search"
    INDEX: Final = "workspace_index"


class _Skills:
    SKILL: Final = "skill"
    SKILL_SEARCH: Final = "skill_search"
    SKILL_READ: Final = "skill_read"


class _UserData:
    LIST: Final = "user_variables_list"
    INSPECT: Final = "user_variable_inspect"
    REQUEST: Final = "user_variable_request"


class _OpenNotebook:
    READ: Final = "open_notebook_read"
    EDIT: Final = "open_notebook_edit"
    RUN: Final = "open_notebook_run"


class _Checkpoints:
    CHECKPOINT: Final = "workspace_checkpoint"


class WORKSPACE_TOOLS:
    """Tool name constants, grouped by the provider that makes the tool available."""

    FILESYSTEM = _Filesystem
    SANDBOX = _Sandbox
    SEARCH = _Search
    SKILLS = _Skills
    USER_DATA = _UserData
    OPEN_NOTEBOOK = _OpenNotebook
    CHECKPOINTS = _Checkpoints


FILESYSTEM_TOOLS: Final = (
    _Filesystem.READ_FILE,
    _Filesystem.WRITE_FILE,
    _Filesystem.EDIT_FILE,
    _Filesystem.NOTEBOOK_EDIT,
    _Filesystem.LIST_FILES,
    _Filesystem.DELETE,
    _Filesystem.FILE_STAT,
    _Filesystem.MKDIR,
    _Filesystem.GREP,
)
#: Tools that change files: hidden on a read-only filesystem, serialised by the write lock.
WRITE_TOOLS: Final = (
    _Filesystem.WRITE_FILE,
    _Filesystem.EDIT_FILE,
    _Filesystem.NOTEBOOK_EDIT,
    _Filesystem.DELETE,
    _Filesystem.MKDIR,
)
PROCESS_TOOLS: Final = (
    _Sandbox.GET_PROCESS_OUTPUT,
    _Sandbox.KILL_PROCESS,
    _Sandbox.LIST_PROCESSES,
)
#: Present when the sandbox can run Jupyter kernels (``sandbox.kernels``).
KERNEL_TOOLS: Final = (_Sandbox.EXECUTE_CODE, _Sandbox.RESTART_KERNEL, _Sandbox.LIST_KERNELS)
#: Runs a workspace notebook on a sandbox kernel and writes its outputs back: needs kernels and a
#: writable filesystem.
NOTEBOOK_RUN_TOOLS: Final = (_Sandbox.RUN_NOTEBOOK,)
SANDBOX_TOOLS: Final = (_Sandbox.EXECUTE_COMMAND, *PROCESS_TOOLS, *KERNEL_TOOLS, *NOTEBOOK_RUN_TOOLS)
SEARCH_TOOLS: Final = (_Search.SEARCH, _Search.INDEX)
SKILL_TOOLS: Final = (_Skills.SKILL, _Skills.SKILL_SEARCH, _Skills.SKILL_READ)
#: Present while the notebook user shares variables (``%ws share``, ``Workspace.share``): list and
#: inspect them read-only, and request copies into the sandbox's kernel (with a sandbox).
USER_DATA_TOOLS: Final = (_UserData.LIST, _UserData.INSPECT, _UserData.REQUEST)
#: Present while the notebook the user has open is connected (the ``%ws`` extension in its kernel
#: and the ws-jupyter JupyterLab extension): read it, propose reviewed edits, run its cells.
OPEN_NOTEBOOK_TOOLS: Final = (_OpenNotebook.READ, _OpenNotebook.EDIT, _OpenNotebook.RUN)
#: Off unless enabled (``{WORKSPACE_TOOLS.CHECKPOINTS.CHECKPOINT: {"enabled": True}}``): a writable
#: local or object-storage filesystem known up front.
CHECKPOINT_TOOLS: Final = (_Checkpoints.CHECKPOINT,)
#: Every tool, in the order ``Workspace.tools()`` lists them.
ALL_TOOL_NAMES: Final = (
    *FILESYSTEM_TOOLS,
    *SANDBOX_TOOLS,
    *SEARCH_TOOLS,
    *SKILL_TOOLS,
    *USER_DATA_TOOLS,
    *OPEN_NOTEBOOK_TOOLS,
    *CHECKPOINT_TOOLS,
)
