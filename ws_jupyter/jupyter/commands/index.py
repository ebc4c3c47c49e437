"""Index files for `%ws search`, incrementally, with a progress bar.

PATH may be a directory, a file or a glob (`docs`, `notes.md`, `**/*.py`); without PATH the whole
workspace is indexed. The files are searchable (BM25) when the command returns; with vector search
their vectors are computed in the background, and a live bar shows how far. Like git, indexing skips .gitignored and hidden files; binary files are
skipped by content. Unchanged files are neither re-read nor re-embedded, so re-running is cheap, and
the index persists under `.ws/index` (it survives a kernel restart).

Examples:
  %ws index
  %ws index docs "**/*.md"
"""

from __future__ import annotations

import time
from typing import Any

from ..parsing import WsArgumentParser
from ..views.search import IndexView
from ._common import show_index_progress
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="*", metavar="PATH", help="directories, files or globs (default: everything)"
    )


class _ProgressBar:
    """An ``IntProgress`` fed from the indexing loop (main thread), redrawn at most 10 times a second."""

    def __init__(self, show: bool) -> None:
        self.bar: Any = None
        self._last = 0.0
        if not show:
            return  # terminal IPython: no widget front-end
        import ipywidgets as w
        from IPython.display import display

        self.bar = w.IntProgress(value=0, min=0, max=1, description="scanning", bar_style="info")
        self.label = w.Label("")
        self.box = w.HBox([self.bar, self.label])
        self.handle = display(self.box, display_id=True)

    def __call__(self, update: Any) -> None:
        if self.bar is None:
            return
        now = time.monotonic()
        final = update.phase in ("embed", "done")
        if not final and now - self._last < 0.1:
            return
        self._last = now
        self.bar.max = max(update.total, 1)
        self.bar.value = update.done
        self.bar.description = update.phase
        self.label.value = f"{update.done}/{update.total} {update.path or ''}"

    def close(self) -> None:
        if self.bar is not None:
            # replace the bar's output with nothing, so a saved notebook keeps no dead widget
            self.handle.update({"text/plain": ""}, raw=True)
            self.box.close()
            self.bar.close()
            self.label.close()


def run(inv: Invocation) -> IndexView:
    workspace = inv.workspace
    paths = list(inv.args.paths) or ["."]
    progress = _ProgressBar(inv.in_kernel)
    try:
        report = workspace.rebuild_search_index(paths, progress=progress)
    finally:
        progress.close()
    show_index_progress(inv, workspace)  # the files are searchable; vectors follow in the background
    search = workspace.get_info().search or {}
    return IndexView(
        paths=paths,
        indexed=len(report.indexed),
        unchanged=report.unchanged + report.touched,
        removed=len(report.removed),
        skipped=len(report.skipped),
        chunks=report.chunks,
        seconds=report.seconds,
        documents=search.get("documents"),
    )


COMMAND = Subcommand(
    name="index",
    summary="index files for search (incremental, progress bar): `%ws index [PATH ...]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
