"""``register_formatters(shell)`` teaches IPython to render the core result types when a user
displays them directly (``ws.search("...")`` as a cell's last line). Types are named, not imported,
so registering costs nothing until such a value is shown."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .processes import RunSummary
from .search import SearchResultsView
from .skills import SkillView
from .workspace import InfoView, info_rows

__all__ = ["register_formatters", "unregister_formatters"]


def _command_result_html(result: Any) -> str:
    return RunSummary.of(result).html()


def _execution_result_html(result: Any) -> str:
    from .kernels import ExecutionView  # only once a kernel's result is shown

    return ExecutionView(result).html()


def _search_result_html(result: Any) -> str:
    return SearchResultsView(query="", mode="result", results=[result]).html()


def _workspace_info_html(info: Any) -> str:
    return InfoView(f"Workspace {info.name}", info_rows(info)).html()


def _skill_html(skill: Any) -> str:
    """A skill as inert HTML (its Markdown is workspace content: see ``SkillView``)."""
    return SkillView(skill).html()


_HTML_FORMATTERS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("ws_jupyter.sandbox.types", "CommandResult", _command_result_html),
    ("ws_jupyter.sandbox.kernels.result", "ExecutionResult", _execution_result_html),
    ("ws_jupyter.search.results", "SearchResult", _search_result_html),
    ("ws_jupyter.workspace", "WorkspaceInfo", _workspace_info_html),
    ("ws_jupyter.skills.model", "Skill", _skill_html),
]


def register_formatters(shell: Any) -> None:
    """Teaches ``shell`` to render the core result types (by name: nothing is imported)."""
    formatters = shell.display_formatter.formatters
    for module, name, fn in _HTML_FORMATTERS:
        formatters["text/html"].for_type_by_name(module, name, fn)


def unregister_formatters(shell: Any) -> None:
    fmt = shell.display_formatter.formatters["text/html"]
    for module, name, _ in _HTML_FORMATTERS:
        fmt.deferred_printers.pop((module, name), None)
        for typ in list(fmt.type_printers):
            if getattr(typ, "__module__", None) == module and typ.__name__ == name:
                fmt.type_printers.pop(typ, None)
