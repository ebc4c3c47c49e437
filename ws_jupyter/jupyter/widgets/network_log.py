"""``NetworkLog``: the egress log of a sandbox in network ``allow`` mode, live.

A table of every connection attempt through the sandbox's proxy — time, allowed or denied, method,
host and port, the reason, bytes each way — newest first, redrawn when the log changes (the
proxy's thread only asks for a redraw; the shared widget thread draws, at most 10 times a second)
and once a second while a connection is open, so byte counts grow as data flows. "Denied only"
filters, "Clear" empties the log.

State for code and tests: ``rows`` (dicts: time, allowed, method, destination, reason, up, down,
open), ``denied_only``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import ipywidgets as w
from traitlets import Bool, Dict, List

from ...sandbox.capabilities import sandbox_egress
from ..views.common import MUTED, esc
from ..views.network import EgressRow, EgressTableView
from ..views.workspace import network_summary
from .controls import button
from .live import Throttle
from .snapshot import Snapshotting

__all__ = ["NetworkLog"]

#: Rows drawn at most (the log itself keeps more: ``ws.sandbox.egress_log()``).
MAX_ROWS = 200


class NetworkLog(Snapshotting, w.VBox):
    """Live table of a sandbox's connection attempts. See the module docstring."""

    rows = List(Dict())
    denied_only = Bool(False)
    snapshot_label = "network log"

    def __init__(self, workspace: Any, *, interval: float = 0.2, poll: float = 1.0) -> None:
        self.workspace = workspace
        sandbox = workspace.resolve_sandbox(None)
        log = sandbox_egress(sandbox)
        if log is None:
            raise ValueError("This sandbox's network is not in allow mode: there is no egress log")
        self.sandbox = sandbox
        self.egress = log
        self.poll = max(poll, interval)
        self._closed = False
        self._version = -1
        self.table = w.HTML(layout=w.Layout(width="100%"))
        self.filter = w.ToggleButton(
            description="Denied only", value=False, tooltip="Show refused attempts only"
        )
        self.clear_button = button("Clear", icon="trash", tooltip="Empty the egress log")
        super().__init__(
            [w.HBox([self.filter, self.clear_button]), self.table],
            layout=w.Layout(width="100%"),
        )
        self.add_class("ws-network-log")
        self._throttle = Throttle(self._render, interval)
        self._unsubscribe = log.subscribe(self._throttle.request)
        self.filter.observe(self._on_filter, names="value")
        self.clear_button.on_click(lambda _: self.clear())
        self._render()

    def _view(self) -> EgressTableView:
        rows = [EgressRow(**r) for r in self.rows]
        info = self.sandbox.get_info().metadata.get("network") or {}
        return EgressTableView(
            rows, mode=network_summary(info) if info else "", dropped=self.egress.dropped, limit=MAX_ROWS
        )

    def _render(self) -> None:
        if self._closed:
            return
        events = self.sandbox.egress_log(denied_only=self.denied_only, limit=MAX_ROWS)
        self.rows = [dataclasses.asdict(EgressRow.of(e)) for e in events]
        self._version = self.egress.version
        view = self._view()
        self.table.value = (
            f'<div style="{MUTED}; margin-bottom: 4px">{esc(view.meta())}</div>{view.html_body()}'
        )
        self.snapshot_changed()
        if any(r["open"] for r in self.rows):
            self._throttle.request_after(self.poll)  # bytes keep flowing without a log change: look again soon

    def refresh(self) -> None:
        """Re-reads the log now."""
        self._throttle.flush()

    def _on_filter(self, change: dict[str, Any]) -> None:
        self.denied_only = bool(change["new"])
        self.refresh()

    def clear(self) -> None:
        """Empties the sandbox's egress log (and this table)."""
        self.egress.clear()
        self.refresh()

    def snapshot(self) -> tuple[str, str]:
        view = self._view()
        return view.html(), view.text()

    def close(self) -> None:
        if not getattr(self, "_closed", True):
            self.close_snapshot()
        self._closed = True
        self._throttle.close()
        self._unsubscribe()
        for widget in (self.table, self.filter, self.clear_button):
            widget.close()
        super().close()
