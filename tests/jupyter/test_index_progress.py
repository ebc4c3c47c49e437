"""IndexProgressBar: follows the index from the widget thread — the file pass, then the background
embedding — with nobody calling it (as in a notebook whose cell has finished), and stops when the
index is complete."""

from __future__ import annotations

from pathlib import Path

from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.jupyter.widgets.index_progress import IndexProgressBar

from ..helpers import wait_for, write
from ..search.test_background import SlowEmbedder


def test_the_bar_moves_while_nobody_calls_it(workdir: Path) -> None:
    for i in range(200):
        write(workdir, f"notes/n{i}.md", f"note {i} about sourdough bread\n")
    ws = Workspace(id="bar", filesystem=LocalFilesystem(workdir), embedder=SlowEmbedder(delay=0.02))
    ws.init()  # BM25 ready; ~4 s of embedding left
    bar = IndexProgressBar(ws, interval=0.1)
    try:
        assert bar.phase == "embedding" and bar.total == 200 and bar.done < 200
        assert bar.bar.description == "embedding" and "vectors for" in bar.label.value
        seen = set()
        assert wait_for(lambda: (seen.add(bar.done), bar.phase == "ready")[1], timeout=120)
        assert len({d for d in seen if 0 < d < 200}) >= 1  # it moved on its own, step by step
        assert bar.bar.value == bar.bar.max == 200 and bar.bar.bar_style == "success"
        renders = bar.updates
        assert not wait_for(lambda: bar.updates > renders, timeout=1.0)  # stopped polling when done
    finally:
        bar.close()
        ws.destroy()


def test_the_bar_of_a_destroyed_workspace_stops(workdir: Path) -> None:
    write(workdir, "a.md", "alpha\n")
    ws = Workspace(id="bar2", filesystem=LocalFilesystem(workdir))
    ws.init()
    bar = IndexProgressBar(ws, interval=0.1)
    assert bar.phase == "ready" and bar.text == "ready: 1 document"
    ws.destroy()
    bar.refresh()
    assert bar.phase == "stopped" and "index unavailable" in bar.text
    bar.close()
