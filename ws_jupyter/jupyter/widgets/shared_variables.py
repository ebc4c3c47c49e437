"""``SharedVariables``: what the notebook shares with the agent, with a Revoke button per variable.

Rows follow the workspace's shared namespace (:mod:`ws_jupyter.userdata`): they change at once
when something is shared or unshared, and on Refresh (a variable's value changes without notice).
Revoke stops sharing that name (a pattern that matched it stays, without it).

State for code and tests: ``rows`` (dicts: name, type, shape, size, copy — "asks" or "allowed"),
``revoke(name)``, ``refresh()``.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w
from traitlets import Dict, List

from ..views.common import MONO, MUTED
from ..views.user_data import HEADERS, shared_rows
from .controls import button
from .snapshot import Snapshotting

__all__ = ["SharedVariables"]

_REVOKE_TIP = "Stop sharing this variable with the agent"


class SharedVariables(Snapshotting, w.VBox):
    """The "Shared with the agent" list. See the module docstring."""

    rows = List(Dict())
    snapshot_label = "shared variables"

    def __init__(self, workspace: Any) -> None:
        from ...userdata import shared_namespace

        self.workspace = workspace
        shared = shared_namespace(workspace, create=True)
        assert shared is not None
        self.shared = shared
        self.header = w.HTML()
        self.refresh_button = button("Refresh", icon="refresh", tooltip="Read the shared variables again")
        self.body = w.VBox()
        self._closed = False
        super().__init__(
            [
                w.HBox([self.header, self.refresh_button], layout=w.Layout(justify_content="space-between")),
                self.body,
            ],
            layout=w.Layout(width="100%"),
        )
        self.add_class("ws-shared-variables")
        self.refresh_button.on_click(lambda _: self.refresh())
        self._unsubscribe = self.shared.subscribe(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reads the shared variables again and redraws the list."""
        if self._closed:
            return
        rows = [dict(zip(HEADERS, r)) for r in shared_rows(self.workspace)]
        self.rows = rows
        self.header.value = (
            f"<strong>Shared with the agent</strong> <span style='{MUTED}'>{len(rows)} variable"
            f"{'' if len(rows) == 1 else 's'}, read-only · copies into the sandbox ask you unless allowed</span>"
        )
        for child in self.body.children:
            for part in getattr(child, "children", ()):
                part.close()
            child.close()
        if not rows:
            self.body.children = [
                w.HTML(
                    f"<div style='{MUTED}'>Nothing is shared. <code>%ws share NAME</code> shares a variable.</div>"
                )
            ]
        else:
            self.body.children = [self._row(r) for r in rows]
        self.snapshot_changed()

    def _row(self, row: dict[str, str]) -> w.HBox:
        text = w.HTML(
            f"<span style='{MONO}'><strong>{html.escape(row['name'])}</strong></span> "
            f"{html.escape(row['type'])} <span style='{MUTED}'>{html.escape(row['shape'])} · "
            f"{html.escape(row['size'])} · {'asks before a copy' if row['copy'] == 'asks' else 'copies without asking'}</span>"
        )
        revoke = button("Revoke", icon="ban", button_style="warning", tooltip=_REVOKE_TIP)
        revoke.add_class("ws-revoke")
        revoke.on_click(lambda _, name=row["name"]: self.revoke(name))
        return w.HBox([text, revoke], layout=w.Layout(align_items="center", justify_content="space-between"))

    def revoke(self, name: str) -> bool:
        """Stops sharing ``name``; False when it was not shared."""
        return bool(self.shared.unshare(name))

    def snapshot(self) -> tuple[str, str]:
        from ..views.user_data import SharedView

        view = SharedView([[r[h] for h in HEADERS] for r in self.rows])
        return view.html(), view.text()

    def close(self) -> None:
        if getattr(self, "_closed", True):
            return
        self._closed = True
        self.close_snapshot()
        self._unsubscribe()
        for child in self.body.children:
            for part in getattr(child, "children", ()):
                part.close()
            child.close()
        for widget in (self.header, self.refresh_button, self.body):
            widget.close()
        super().close()
