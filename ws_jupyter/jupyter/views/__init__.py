"""Rich displays for everything ``%ws`` shows — the one place that knows about HTML.

The workspace's own result types (``CommandResult``, ``SearchResult``, ``WorkspaceInfo``...) know
nothing of Jupyter. Here each ``%ws`` subcommand gets a small *view* object holding the data it
shows (so code can use it: ``r = %ws run make``; ``r.exit_code``). What a cell stores is its
``_repr_mimebundle_``: HTML (``html()``: inline styles that follow the JupyterLab theme through its
CSS variables, with fallbacks in Notebook 7, VS Code and nbconvert) and plain text (``text()``,
also the ``repr`` for terminal IPython and logs) — never a Markdown or JSON twin of the same
content, which would double every saved notebook. ``SkillView`` is Markdown + text instead: a
SKILL.md is Markdown.

Where things go:

* ``common``: the shared building blocks — colours and fonts (``MUTED``, ``MONO``, ``OK``...),
  ``esc``, ``table``/``text_table``, ``badge``, ``path_link``, ``format_bytes``/``format_duration``,
  ``one_line``. Views build their HTML from these instead of defining their own.
* ``base``: ``RichView`` (subclasses give ``title``/``meta``, ``html_body`` and ``text``) and
  ``MessageView``.
* one module per family of views: ``workspace`` (info), ``files`` (ls, cat, grep), ``processes``
  (run, ps, logs), ``search`` (search, index, highlighting), ``skills``, ``tools`` (tools, call),
  ``changes`` (checkpoints, changes and their diffs, restores),
  ``kernels`` (an execution as a notebook cell, the kernel table), ``notebook``, ``live`` (the live
  link's state).
  A new family (kernels, notebooks...) is a new module here; add its public names to ``_EXPORTS``
  and ``__all__`` below.
* ``formatters``: how IPython renders the core result types displayed directly.

Views import only the standard library and ``ws_jupyter``'s public API (heavy imports inside the
function that needs them), and the names below load lazily, so ``%load_ext ws_jupyter`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

_EXPORTS = {
    "ChangesView": ".changes",
    "CheckpointsView": ".changes",
    "DoctorView": ".doctor",
    "ExecutionView": ".kernels",
    "FileView": ".files",
    "GrepMatch": ".files",
    "GrepView": ".files",
    "IndexView": ".search",
    "InfoView": ".workspace",
    "JSONView": ".tools",
    "KernelTableView": ".kernels",
    "LiveStatusView": ".live",
    "LogView": ".processes",
    "McpServersView": ".mcp",
    "MessageView": ".base",
    "NotebookView": ".notebook",
    "ProcessTableView": ".processes",
    "RestoreView": ".changes",
    "RichView": ".base",
    "RunSummary": ".processes",
    "SearchResultsView": ".search",
    "SkillTableView": ".skills",
    "SkillView": ".skills",
    "ToolCallView": ".tools",
    "ToolTableView": ".tools",
    "TreeView": ".files",
    "format_bytes": ".common",
    "format_duration": ".common",
    "highlight_terms": ".search",
    "one_line": ".common",
    "path_link": ".common",
    "process_state": ".processes",
    "register_formatters": ".formatters",
    "unregister_formatters": ".formatters",
}

__all__ = [
    "ChangesView",
    "CheckpointsView",
    "DoctorView",
    "ExecutionView",
    "FileView",
    "GrepMatch",
    "GrepView",
    "IndexView",
    "InfoView",
    "JSONView",
    "KernelTableView",
    "LiveStatusView",
    "LogView",
    "McpServersView",
    "MessageView",
    "NotebookView",
    "ProcessTableView",
    "RestoreView",
    "RichView",
    "RunSummary",
    "SearchResultsView",
    "SkillTableView",
    "SkillView",
    "ToolCallView",
    "ToolTableView",
    "TreeView",
    "format_bytes",
    "format_duration",
    "highlight_terms",
    "one_line",
    "path_link",
    "process_state",
    "register_formatters",
    "unregister_formatters",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


if TYPE_CHECKING:  # pragma: no cover
    from .base import MessageView, RichView
    from .changes import ChangesView, CheckpointsView, RestoreView
    from .common import format_bytes, format_duration, one_line, path_link
    from .doctor import DoctorView
    from .files import FileView, GrepMatch, GrepView, TreeView
    from .formatters import register_formatters, unregister_formatters
    from .kernels import ExecutionView, KernelTableView
    from .live import LiveStatusView
    from .mcp import McpServersView
    from .notebook import NotebookView
    from .processes import LogView, ProcessTableView, RunSummary, process_state
    from .search import IndexView, SearchResultsView, highlight_terms
    from .skills import SkillTableView, SkillView
    from .tools import JSONView, ToolCallView, ToolTableView
    from .workspace import InfoView
