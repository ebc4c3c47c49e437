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
        # once a batch was timed, the time left to full coverage is on the bar
        assert wait_for(lambda: (bar.eta > 0 and " left" in bar.label.value) or bar.phase == "ready", timeout=60)
        seen = set()
        assert wait_for(lambda: (seen.add(bar.done), bar.phase == "ready")[1], timeout=120)
        assert len({d for d in seen if 0 < d < 200}) >= 1  # it moved on its own, step by step
        assert bar.bar.value == bar.bar.max == 200 and bar.bar.bar_style == "success" and bar.eta == -1
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


def test_the_bar_leaves_a_snapshot_of_its_last_status(workdir: Path) -> None:
    write(workdir, "a.md", "alpha\n")
    ws = Workspace(id="bar3", filesystem=LocalFilesystem(workdir))
    ws.init()
    bar = IndexProgressBar(ws, interval=0.1)
    try:
        html, text = bar.snapshot()
        assert text == "search index — ready: 1 document" and "ready: 1 document" in html
    finally:
        bar.close()
        ws.destroy()


def test_the_search_panel_follows_background_embedding(workdir: Path) -> None:
    from ws_jupyter.jupyter.widgets.search_panel import SearchPanel

    for i in range(120):
        write(workdir, f"notes/n{i}.md", f"note {i} about sourdough bread\n\n    indented line {i}\n")
    ws = Workspace(id="bar4", filesystem=LocalFilesystem(workdir), embedder=SlowEmbedder(delay=0.02))
    ws.init()
    panel = SearchPanel(ws)
    try:
        assert panel.progress is not None and panel.progress in panel.children
        assert panel.progress.phase == "embedding"
        assert "vectors for" in panel.snapshot()[1]  # the saved view says how far the vectors are
        rows = panel.search("sourdough", mode="hybrid", top_k=3)  # hybrid works meanwhile
        assert rows and rows[0]["lines"] == [1, 1]
        # the snippet is the reported line (plus a line of context), marks on the matched word only
        assert rows[0]["snippet"].split("\n")[0].startswith("note ") and "about sourdough" in rows[0]["snippet"]
        assert "<mark" in rows[0]["snippet_html"] and ">sourdough</mark>" in rows[0]["snippet_html"]
        assert wait_for(lambda: panel.progress.phase == "ready", timeout=120)
        assert "vectors for" not in panel.snapshot()[1]
    finally:
        panel.close()
        ws.destroy()
