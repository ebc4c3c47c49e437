"""The workspace widgets, built from standard ipywidgets (no front-end extension to install).

``FileBrowser``, ``CommandRunner``, ``ProcessMonitor`` (and ``ProcessOutput`` for one process),
``SearchPanel``, ``SkillsBrowser``, ``ToolActivity`` (with ``ToolCallPanel`` for one call),
``KernelActivity`` (the sandbox kernels' executions as live cells), ``NetworkLog`` (the egress log
of a sandbox in network allow mode), ``SharedVariables`` (what the notebook shares with the agent,
with Revoke) and the
``Dashboard`` that holds them all (``%ws ui``). Each keeps its state in Python (traitlets), so code
and tests can drive it without a browser. Imported lazily: ipywidgets loads only when a widget is
first used, which keeps ``%load_ext ws_jupyter`` fast.

>>> from ws_jupyter.jupyter.widgets import FileBrowser   # doctest: +SKIP
>>> FileBrowser(ws)                                       # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

_EXPORTS = {
    "CommandRunner": ".command_runner",
    "Dashboard": ".dashboard",
    "FileBrowser": ".file_browser",
    "KernelActivity": ".kernel_activity",
    "NetworkLog": ".network_log",
    "ProcessMonitor": ".process_monitor",
    "ProcessOutput": ".process_output",
    "SearchPanel": ".search_panel",
    "SharedVariables": ".shared_variables",
    "SkillsBrowser": ".skills_browser",
    "ToolActivity": ".tool_activity",
    "ToolCallPanel": ".tool_call",
}

__all__ = [
    "CommandRunner",
    "Dashboard",
    "FileBrowser",
    "KernelActivity",
    "NetworkLog",
    "ProcessMonitor",
    "ProcessOutput",
    "SearchPanel",
    "SharedVariables",
    "SkillsBrowser",
    "ToolActivity",
    "ToolCallPanel",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


if TYPE_CHECKING:  # pragma: no cover
    from .command_runner import CommandRunner
    from .dashboard import Dashboard
    from .file_browser import FileBrowser
    from .kernel_activity import KernelActivity
    from .network_log import NetworkLog
    from .process_monitor import ProcessMonitor
    from .process_output import ProcessOutput
    from .search_panel import SearchPanel
    from .shared_variables import SharedVariables
    from .skills_browser import SkillsBrowser
    from .tool_activity import ToolActivity
    from .tool_call import ToolCallPanel
