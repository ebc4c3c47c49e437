"""``%ws share`` without a kernel: the variables shared with the agent, as a table (the widget,
:class:`~ws_jupyter.jupyter.widgets.SharedVariables`, shows the same rows with Revoke buttons)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import RichView
from .common import MUTED, esc, table, text_table

__all__ = ["SharedView", "shared_rows"]

HEADERS = ["name", "type", "shape", "size", "copy"]


def shared_rows(workspace: Any) -> list[list[str]]:
    """One row per shared variable: name, type, shape, size, and "asks"/"allowed" for copies."""
    from ...userdata import shared_namespace

    shared = shared_namespace(workspace)
    if shared is None:
        return []
    return [
        [
            v.name,
            v.summary.type_name,
            v.summary.shape or "",
            v.summary.size_text,
            "allowed" if v.allow_copy else "asks",
        ]
        for v in shared.variables()
    ]


@dataclass(repr=False)
class SharedView(RichView):
    rows: list[list[str]]
    kind = "shared"

    @classmethod
    def of(cls, workspace: Any) -> SharedView:
        return cls(shared_rows(workspace))

    def title(self) -> str:
        return "Shared with the agent"

    def meta(self) -> str:
        return f"{len(self.rows)} variable{'' if len(self.rows) == 1 else 's'}, read-only"

    def text(self) -> str:
        if not self.rows:
            return "Nothing is shared with the agent (`%ws share NAME`)."
        return f"{self.title()} ({self.meta()}):\n" + text_table(HEADERS, self.rows)

    def html_body(self) -> str:
        if not self.rows:
            return (
                f'<div style="{MUTED}">Nothing is shared with the agent (<code>%ws share NAME</code>).</div>'
            )
        return table(HEADERS, [[esc(c) for c in row] for row in self.rows])
