"""``SearchPanel``: query box, mode toggle, top-k, ranked results; a click opens the hit.

The mode toggle offers only the modes the workspace has (BM25, vector, hybrid). Each result shows
``path:lines``, its score (hover for each side's rank) and a snippet with the query's words marked;
clicking it previews the file at that line — in the given ``FileBrowser`` (the Dashboard links
them) or in the panel's own preview. The snippet is the hit's reported lines (``SearchResult.snippet``).
"Index" (re)indexes the workspace incrementally on a worker thread, so the notebook stays
responsive; an :class:`IndexProgressBar` above the results follows the index (the file pass, then
the vectors computed in the background) while it is not complete.

State for code and tests: ``query``, ``mode``, ``top_k``, ``results`` (dicts: id, path, lines,
score, snippet, snippet_html, cell, location), ``progress`` (the bar), ``opened`` (the path last opened), ``status``.
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as w
from traitlets import Dict, Int, List, Unicode

from ...tools.search.search import available_modes
from ..files import load_file_view
from ..views.common import BAD, MONO, MUTED, base_path_of
from ..views.search import hit_snippet
from .controls import button
from .index_progress import IndexProgressBar
from .live import MIN_INTERVAL, on_enter
from .snapshot import Snapshotting

__all__ = ["SearchPanel"]


class SearchPanel(Snapshotting, w.VBox):
    """Search the workspace's index from a widget. See the module docstring."""

    query = Unicode("")
    mode = Unicode("")
    top_k = Int(10)
    results = List(Dict())
    opened = Unicode("")
    status = Unicode("")
    snapshot_label = "search panel"

    def __init__(
        self,
        workspace: Any,
        *,
        file_browser: Any = None,
        on_open: Callable[[str, int | None], None] | None = None,
    ) -> None:
        self.workspace = workspace
        self.file_browser = file_browser
        self.on_open = on_open
        self._base = base_path_of(workspace)
        modes = available_modes(workspace)  # the default first, as the agents' search tool lists them
        self.query_box = w.Text(placeholder="Search the workspace…", layout=w.Layout(flex="1 1 auto"))
        self.search_button = button("Search", icon="search", button_style="primary")
        self.mode_toggle = w.ToggleButtons(
            options=modes or ["bm25"], value=(modes or ["bm25"])[0], style={"button_width": "70px"}
        )
        self.k_box = w.BoundedIntText(
            value=10,
            min=1,
            max=100,
            description="top k",
            layout=w.Layout(width="130px"),
            style={"description_width": "40px"},
        )
        self.index_button = button("Index", icon="database", tooltip="Index the workspace (incremental)")
        self.status_line = w.HTML()
        self.progress = IndexProgressBar(workspace) if getattr(workspace, "can_search", False) else None
        self.results_box = w.VBox(layout=w.Layout(width="100%", align_items="flex-start"))
        self.preview = w.HTML(layout=w.Layout(width="100%"))
        self._result_widgets: list[w.Widget] = []
        super().__init__(
            [
                w.HBox([self.query_box, self.search_button, self.index_button]),
                w.HBox([self.mode_toggle, self.k_box]),
                self.status_line,
                *([self.progress] if self.progress is not None else []),
                self.results_box,
                self.preview,
            ],
            layout=w.Layout(width="100%"),
        )
        self.add_class("ws-search-panel")
        if self.progress is not None:
            self.progress.snapshot_into(self)  # its status line is part of this panel's snapshot
        self.mode = self.mode_toggle.value
        from ...install.model import missing_model_message

        missing_model = missing_model_message(workspace) if "vector" in modes else None
        if missing_model:
            self._set_status(missing_model, error=True)
        if not getattr(workspace, "can_search", bool(modes)):
            self._set_status(
                "Search is not configured for this workspace (`%ws init` enables BM25 by default)."
            )
            self.search_button.disabled = self.index_button.disabled = self.query_box.disabled = True
        self.search_button.on_click(lambda _: self.search())
        on_enter(self.query_box, lambda: self.search())
        self.index_button.on_click(lambda _: self.index())
        self.mode_toggle.observe(lambda c: setattr(self, "mode", c["new"]), names="value")
        self.k_box.observe(lambda c: setattr(self, "top_k", int(c["new"])), names="value")

    def snapshot(self) -> tuple[str, str]:
        """The query, the status line and the results with their snippets."""
        lines = [f"search {self.query!r} ({self.mode}): {self.status}" if self.query else self.status]
        if self.progress is not None and not self.progress.finished:
            lines.append(self.progress.snapshot()[1])
        items = []
        for i, row in enumerate(self.results, 1):
            where = f"{row['path']}:{row['lines'][0]}-{row['lines'][1]}" if row["lines"] else row["path"]
            lines.append(f"{i:>2}. {where}  score {row['score']:.4f}")
            lines += [f"      {s}" for s in row["snippet"].splitlines()]
            items.append(
                f"<div style='margin: 4px 0'><span style='{MUTED}'>{i}.</span> <code>{html.escape(where)}</code> "
                f"<span style='{MUTED}; font-size: 0.9em'>score {row['score']:.4f}</span>"
                f"<div style='white-space: pre-wrap; {MONO}; margin-left: 1.5em'>"
                f"{row['snippet_html']}</div></div>"
            )
        head = f"<strong>{html.escape(self.query)}</strong> " if self.query else ""
        body = f"<div>{head}<span style='{MUTED}'>{html.escape(self.status)}</span></div>" + "".join(items)
        return body, "\n".join(lines)

    def _set_status(self, text: str, error: bool = False) -> None:
        self.status = text
        self.snapshot_changed()
        colour = BAD if error else "var(--jp-ui-font-color2, #6a737d)"
        self.status_line.value = f"<span style='color: {colour}'>{html.escape(text)}</span>"

    # --- searching --------------------------------------------------------------------------------

    def search(
        self, query: str | None = None, mode: str | None = None, top_k: int | None = None
    ) -> list[dict[str, Any]]:
        """Runs a search (arguments override the boxes) and draws the results."""
        if query is not None:
            self.query_box.value = query
        if mode is not None:
            self.mode_toggle.value = mode
        if top_k is not None:
            self.k_box.value = top_k
        self.query = self.query_box.value.strip()
        if not self.query:
            self._set_status("Type a query.")
            return []
        try:
            hits = self.workspace.search(self.query, top_k=self.top_k, mode=self.mode)
        except Exception as exc:
            self.results = []
            self._draw([])
            self._set_status(str(exc), error=True)
            return []
        rows = []
        for hit in hits:
            snippet, snippet_html = hit_snippet(hit, self.query)
            lines = list(hit.line_range) if hit.line_range else None
            rows.append(
                {"id": hit.id, "path": hit.source, "lines": lines, "score": float(hit.score), "snippet": snippet,
                 "snippet_html": snippet_html, "cell": hit.cell, "location": hit.location}
            )
        self.results = rows
        self._draw(rows)
        note = ""
        if not rows and not (self.workspace.get_info().search or {}).get("documents"):
            note = " — the index is empty: click Index"
        self._set_status(f"{len(rows)} result{'' if len(rows) == 1 else 's'} ({self.mode}){note}")
        return rows

    def _draw(self, rows: list[dict[str, Any]]) -> None:
        for old in self._result_widgets:
            old.close()
        widgets: list[w.Widget] = []
        for i, row in enumerate(rows):
            lines = row["lines"]
            where = row.get("location") or (f"{row['path']}:{lines[0]}-{lines[1]}" if lines else row["path"])
            button = w.Button(
                description=f"{i + 1}. {where}",
                tooltip=f"Open {where}",
                layout=w.Layout(width="auto", max_width="100%"),
            )
            button.add_class("ws-search-hit")
            button.on_click(lambda _, r=row: self.open_result(r))
            snippet = w.HTML(
                f"<div style='white-space: pre-wrap; {MONO}; margin: 0 0 6px 1.5em; line-height: 1.4'>"
                f"{row['snippet_html']} "
                f"<span style='{MUTED}; font-size: 0.9em'>score {row['score']:.4f}</span></div>"
            )
            widgets += [button, snippet]
        self._result_widgets = widgets
        self.results_box.children = widgets

    def open_result(self, row: dict[str, Any] | int) -> None:
        """Opens a hit (a row of ``results`` or its index) in the file browser or the preview."""
        hit: dict[str, Any] = self.results[row] if isinstance(row, int) else row
        line = hit["lines"][0] if hit.get("lines") else None
        self.opened = hit["path"]
        if self.on_open is not None:
            self.on_open(hit["path"], line)
        cell = hit.get("cell")
        if self.file_browser is not None:
            self.file_browser.select(hit["path"], line=line, cell=cell)
            return
        try:
            fs = self.workspace.resolve_filesystem(None)
            view = load_file_view(fs, hit["path"], max_lines=200, around=line, base_path=self._base, cell=cell)
            self.preview.value = (
                f"<div style='line-height: 1.4'><div><strong>{html.escape(hit['path'])}</strong></div>"
                f"{view.html_body()}</div>"
            )
        except Exception as exc:
            self.preview.value = f"<span style='color: {BAD}'>{html.escape(str(exc))}</span>"

    # --- indexing ---------------------------------------------------------------------------------

    def index(self, paths: list[str] | None = None, wait: bool = False) -> None:
        """Indexes ``paths`` (default: the whole workspace) on a worker thread."""
        self.index_button.disabled = True
        self._set_status("Indexing…")

        last = [0.0]

        def progress(update: Any) -> None:
            now = time.monotonic()
            if update.phase == "index" and now - last[0] >= MIN_INTERVAL:
                last[0] = now
                self._set_status(f"Indexing… {update.done}/{update.total}")

        def work() -> None:
            try:
                report = self.workspace.rebuild_search_index(paths or ["."], progress=progress)
                self._set_status(
                    f"Indexed {len(report.indexed)} files ({report.chunks} chunks), "
                    f"{report.unchanged + report.touched} unchanged, {len(report.removed)} removed."
                )
            except Exception as exc:
                self._set_status(f"Indexing failed: {exc}", error=True)
            finally:
                self.index_button.disabled = False
                if self.progress is not None:
                    self.progress.refresh()  # follows the vectors the pass left to compute

        if wait:
            work()
        else:
            threading.Thread(target=work, name="ws-index", daemon=True).start()

    def close(self) -> None:
        self.close_snapshot()
        for widget in [
            *self._result_widgets,
            *([self.progress] if self.progress is not None else []),
            self.query_box,
            self.search_button,
            self.mode_toggle,
            self.k_box,
            self.index_button,
            self.status_line,
            self.results_box,
            self.preview,
        ]:
            widget.close()
        super().close()
