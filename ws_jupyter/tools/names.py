"""The names of the workspace tools, as constants.

Configuration is keyed by these constants (``tools={WORKSPACE_TOOLS.FILESYSTEM.WRITE_FILE: {...}}``),
so a typo is caught at configuration time instead of silently configuring nothing. A tool may be
exposed to a model under another name (``"name"`` in its config); the constant stays its identity.
The groups (``FILESYSTEM_TOOLS``, ``WRITE_TOOLS``...) are derived from the tools' specs.

>>> WORKSPACE_TOOLS.FILESYSTEM.READ_FILE
'workspace_read_file'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .facts import WORKSPACE_TOOLS

if TYPE_CHECKING:
    from .base import ToolSpec

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


# The groups below follow from the tools' specs (their ``needs`` and ``writes``: see
# :mod:`.registry`), computed on first use, so a new tool joins its groups by its spec alone.
_GROUPS: dict[str, Callable[[ToolSpec], bool]] = {
    #: Every tool, in the order ``Workspace.tools()`` lists them.
    "ALL_TOOL_NAMES": lambda spec: True,
    #: Tools of the filesystem alone.
    "FILESYSTEM_TOOLS": lambda spec: spec.needs <= {"filesystem", "writable"} and "filesystem" in spec.needs,
    #: File tools that change files: hidden on a read-only filesystem.
    "WRITE_TOOLS": lambda spec: spec.writes and spec.needs <= {"filesystem", "writable"},
    #: Tools of the sandbox (commands, processes, kernels, notebooks run on a kernel).
    "SANDBOX_TOOLS": lambda spec: "sandbox" in spec.needs and not spec.needs & {"open_notebook", "user_data"},
    #: Present when the sandbox has a process manager (``sandbox.processes``).
    "PROCESS_TOOLS": lambda spec: "processes" in spec.needs,
    #: Present when the sandbox can run Jupyter kernels (``sandbox.kernels``).
    "KERNEL_TOOLS": lambda spec: "kernels" in spec.needs and not spec.needs & {"local_kernels", "user_data"},
    #: Run a workspace notebook on a sandbox kernel and write its outputs back: need kernels on this
    #: machine and a writable filesystem.
    "NOTEBOOK_RUN_TOOLS": lambda spec: "local_kernels" in spec.needs,
    "SEARCH_TOOLS": lambda spec: "search" in spec.needs,
    "SKILL_TOOLS": lambda spec: "skills" in spec.needs,
    #: Present while the notebook user shares variables (``%ws share``, ``Workspace.share``): list and
    #: inspect them read-only, and request copies into the sandbox's kernel (with a sandbox).
    "USER_DATA_TOOLS": lambda spec: "user_data" in spec.needs,
    #: Present while the notebook the user has open is connected (the ``%ws`` extension in its
    #: kernel and the ws-jupyter JupyterLab extension): read it, propose reviewed edits, run its cells.
    "OPEN_NOTEBOOK_TOOLS": lambda spec: "open_notebook" in spec.needs,
    #: Off unless enabled (``{WORKSPACE_TOOLS.CHECKPOINTS.CHECKPOINT: {"enabled": True}}``): a
    #: writable local or object-storage filesystem known up front.
    "CHECKPOINT_TOOLS": lambda spec: "static_filesystem" in spec.needs,
}

if TYPE_CHECKING:
    ALL_TOOL_NAMES: tuple[str, ...]
    FILESYSTEM_TOOLS: tuple[str, ...]
    WRITE_TOOLS: tuple[str, ...]
    SANDBOX_TOOLS: tuple[str, ...]
    PROCESS_TOOLS: tuple[str, ...]
    KERNEL_TOOLS: tuple[str, ...]
    NOTEBOOK_RUN_TOOLS: tuple[str, ...]
    SEARCH_TOOLS: tuple[str, ...]
    SKILL_TOOLS: tuple[str, ...]
    USER_DATA_TOOLS: tuple[str, ...]
    OPEN_NOTEBOOK_TOOLS: tuple[str, ...]
    CHECKPOINT_TOOLS: tuple[str, ...]


def __getattr__(name: str) -> tuple[str, ...]:
    belongs = _GROUPS.get(name)
    if belongs is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .registry import tool_specs

    return tuple(spec.name for spec in tool_specs() if belongs(spec))
