"""The words a tool's facts are written in: the tools' names (``WORKSPACE_TOOLS``), MCP hints
(``ToolHints``), the settings a tool may accept and their defaults.

A tool's module takes them from here. The readers of the facts — the name groups of
:mod:`.names`, the hints of :mod:`.hints`, the configuration of :mod:`.config` — read every
registered spec (:mod:`.registry`), so a tool module importing a reader would import itself back;
this module imports nothing of the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, get_args

__all__ = [
    "DEFAULT_MAX_MEDIA_BYTES",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "DEFAULT_MAX_WAIT",
    "DEFAULT_MEDIA_TYPES",
    "LOOKS",
    "TOOL_SETTINGS",
    "WORKSPACE_TOOLS",
    "ToolHints",
    "ToolSetting",
]

# --- names ------------------------------------------------------------------------------------------


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


# --- MCP hints --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolHints:
    """MCP's tool annotations. ``runs_code``: the tool runs code in the sandbox, so it is
    open-world exactly when the sandbox's commands are (no isolation, or a network)."""

    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = False
    runs_code: bool = False


#: A tool that only looks.
LOOKS = ToolHints(read_only=True, destructive=False, idempotent=True)


# --- settings ---------------------------------------------------------------------------------------

#: A tool's output budget unless its spec says otherwise (``ToolSpec.max_output_tokens``).
DEFAULT_MAX_OUTPUT_TOKENS = 2000
DEFAULT_MEDIA_TYPES: tuple[str, ...] = ("image/png", "image/jpeg", "image/webp", "application/pdf")
DEFAULT_MAX_MEDIA_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_WAIT = 300.0
#: The settings a tool accepts only when its spec lists them (``ToolSpec.options``), besides the
#: keys every tool accepts. ``require_read_before_write`` is also a top-level key; the others are
#: the tool's ``options`` (checked by :mod:`.config`).
ToolSetting = Literal[
    "media_types",
    "max_media_bytes",
    "background_processes",
    "max_wait",
    "require_read_before_write",
    "user_kernel",  # False: where="user" is refused (the user's own setting can turn it off too)
    "allow_restore",
    "max_bytes",  # a copy's size limit in bytes (the user-data request)
]
TOOL_SETTINGS: tuple[str, ...] = get_args(ToolSetting)
