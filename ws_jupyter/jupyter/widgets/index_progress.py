"""``IndexProgressBar``: how far the search index is — the file pass, then the background embedding.

Indexing returns once BM25 has the files; the vectors are computed afterwards on a worker thread
(see ``Workspace.index_status()``). This bar shows that second part too: it re-reads the index
status from the shared widget thread (``live.Throttle``, at most every ``interval`` seconds), so it
keeps moving while the notebook is idle, and stops polling once the index is complete (or when
closed). ``%ws index``, ``%ws info`` and ``%ws init`` show it while the index is not complete; the
SearchPanel keeps one above its results. Like every ws-jupyter widget it leaves a saved snapshot
(the last status line) for a reopened notebook.

While vectors are computed the line says how long the rest should take at the recent speed
("about 3 min left", ``IndexStatus.eta_seconds``).

State for code and tests: ``phase`` ("indexing", "embedding", "ready", "stopped"), ``done``,
``total``, ``text`` (the status line), ``eta`` (seconds left to full vector coverage, -1 when
unknown or nothing is left), ``updates`` (renders so far).
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w
from traitlets import Float, Int, Unicode

from ..views.common import MUTED
from .live import Throttle
from .snapshot import Snapshotting

__all__ = ["IndexProgressBar"]


class IndexProgressBar(Snapshotting, w.HBox):
    """A progress bar that follows ``workspace.index_status()`` until the index is complete."""

    snapshot_label = "index progress"

    phase = Unicode("")
    done = Int(0)
    total = Int(0)
    text = Unicode("")
    eta = Float(-1.0)
    updates = Int(0)

    def __init__(self, workspace: Any, interval: float = 0.5) -> None:
        self.workspace = workspace
        self.bar = w.IntProgress(value=0, min=0, max=1, description="index", bar_style="info",
                                 layout=w.Layout(width="260px"))
        self.label = w.Label("")
        super().__init__([self.bar, self.label])
        self.add_class("ws-index-progress")
        self._throttle = Throttle(self._render, interval)
        self._render()

    @property
    def finished(self) -> bool:
        return self.phase in ("ready", "stopped")

    def _render(self) -> None:
        try:
            status = self.workspace.index_status()
        except Exception as exc:  # the workspace was destroyed: stop following it
            self._show("stopped", self.done, max(self.total, 1), f"index unavailable: {exc}", "warning")
            self._throttle.close()
            return
        if status.indexing:
            phase, done, total = "indexing", status.files_done, status.files_total
        elif status.vectors and status.pending:
            phase, done, total = "embedding", status.embedded, status.embeddable
        else:
            phase, done, total = "ready", status.documents, status.documents
        if status.error and phase == "embedding":
            phase = "stopped"
        style = {"indexing": "info", "embedding": "info", "ready": "success", "stopped": "warning"}[phase]
        eta = status.eta_seconds if phase == "embedding" and status.eta_seconds is not None else -1.0
        self.eta = float(eta)
        self._show(phase, done, max(total, 1), status.describe(), style)
        if phase in ("indexing", "embedding"):
            self._throttle.request()  # again in `interval` seconds, from the widget thread

    def _show(self, phase: str, done: int, total: int, text: str, style: str) -> None:
        self.bar.max = total
        self.bar.value = min(done, total)
        self.bar.description = phase
        self.bar.bar_style = style
        self.label.value = text
        self.phase, self.done, self.total, self.text = phase, done, total, text
        self.updates += 1
        self.snapshot_changed()

    def snapshot(self) -> tuple[str, str]:
        """The status line (``search index — ready: 400 documents, all embedded``)."""
        line = f"search index — {self.text}"
        return f"<div style='{MUTED}'>{html.escape(line)}</div>", line

    def refresh(self) -> None:
        """Reads the status now (in this thread) and resumes following it if work is left."""
        self._throttle.flush()

    def close(self) -> None:
        self._throttle.close()
        self.close_snapshot()
        self.bar.close()
        self.label.close()
        super().close()
