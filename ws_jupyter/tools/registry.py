"""Every workspace tool, one line each, in the order ``Workspace.tools()`` lists them.

A line names the module and the ``ToolSpec`` in it: ``".files.read_file:SPEC"`` (a leading dot:
relative to :mod:`ws_jupyter.tools`; an absolute module path works too). The modules are imported on first use, so importing the tools package
(or the workspace) stays cheap. Everything else follows from the specs: which tools a workspace
gets (:mod:`.factory`), their names' groups (:mod:`.names`), the settings they accept
(:mod:`.config`), their MCP hints and titles (:mod:`.hints`).
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import ToolSpec

__all__ = ["TOOLS", "tool_names", "tool_spec", "tool_specs"]

TOOLS: tuple[str, ...] = (
    ".files.read_file:SPEC",
    ".files.write_file:SPEC",
    ".files.edit_file:SPEC",
    ".files.notebook_edit:SPEC",
    ".files.list_files:SPEC",
    ".files.delete:SPEC",
    ".files.file_stat:SPEC",
    ".files.mkdir:SPEC",
    ".grep.tool:SPEC",
    ".sandbox.execute_command:SPEC",
    ".sandbox.processes:GET_OUTPUT_SPEC",
    ".sandbox.processes:KILL_SPEC",
    ".sandbox.processes:LIST_SPEC",
    ".sandbox.kernels:EXECUTE_CODE_SPEC",
    ".sandbox.kernels:RESTART_KERNEL_SPEC",
    ".sandbox.kernels:LIST_KERNELS_SPEC",
    ".sandbox.run_notebook:RUN_NOTEBOOK_SPEC",
    ".search.search:SEARCH_SPEC",
    ".search.index:INDEX_SPEC",
    ".skills.skills:SKILL_SPEC",
    ".skills.skills:SKILL_SEARCH_SPEC",
    ".skills.skills:SKILL_READ_SPEC",
    ".user_data:LIST_SPEC",
    ".user_data:INSPECT_SPEC",
    ".user_data:REQUEST_SPEC",
    ".open_notebook.read:SPEC",
    ".open_notebook.edit:SPEC",
    ".open_notebook.run:SPEC",
    ".files.checkpoint:SPEC",
)


@functools.cache
def tool_specs() -> tuple[ToolSpec, ...]:
    """The specs of :data:`TOOLS`, in order (each name once)."""
    from .base import ToolSpec

    specs: list[ToolSpec] = []
    for entry in TOOLS:
        module, _, attribute = entry.partition(":")
        spec = getattr(importlib.import_module(module, __package__), attribute)
        if not isinstance(spec, ToolSpec):
            raise TypeError(f"{entry} is not a ToolSpec")
        if any(s.name == spec.name for s in specs):
            raise ValueError(f"{entry}: a tool named {spec.name!r} is registered twice")
        specs.append(spec)
    return tuple(specs)


def tool_spec(name: str) -> ToolSpec | None:
    """The spec of the tool whose workspace name is ``name`` (None for no such tool)."""
    return next((spec for spec in tool_specs() if spec.name == name), None)


def tool_names() -> tuple[str, ...]:
    """Every tool's workspace name, in listing order."""
    return tuple(spec.name for spec in tool_specs())
