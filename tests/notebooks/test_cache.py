"""The cell-text cache grep uses: a notebook is parsed once while its file does not change, and
again as soon as its size, modification time or inode does; bounded in notebooks and characters."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat

from ws_jupyter import LocalFilesystem
from ws_jupyter.notebooks.cache import CellTextCache
from ws_jupyter.tools.grep import search

from .samples import write


def _nb(path: Path, source: str) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nb.cells[0].id = "only"
    path.write_text(write(nb), "utf-8")


def test_parsed_once_while_unchanged_and_again_after_any_change(tmp_path):
    fs = LocalFilesystem(tmp_path)
    cache = CellTextCache()
    path = tmp_path / "a.ipynb"
    _nb(path, "alpha = 1")
    first = cache.get(fs, "a.ipynb")
    assert first is not None and cache.get(fs, "a.ipynb") is first and (cache.misses, cache.hits) == (1, 1)
    # same size, same modification time, new content: a replaced file (another inode) is parsed again
    st = path.stat()
    replacement = tmp_path / "b.tmp"
    _nb(replacement, "bravo = 1")
    os.utime(replacement, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(replacement, path)
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    again = cache.get(fs, "a.ipynb")
    assert again is not None and again.cells[0].text == "bravo = 1"
    # in place, same size, a new modification time
    _nb(path, "delta = 1")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000))
    assert cache.get(fs, "a.ipynb").cells[0].text == "delta = 1"
    (tmp_path / "broken.ipynb").write_text("{not json", "utf-8")
    assert cache.get(fs, "broken.ipynb") is None and cache.get(fs, "broken.ipynb") is None
    assert cache.misses == 4


def test_bounded_in_notebooks_and_characters(tmp_path):
    fs = LocalFilesystem(tmp_path)
    for i in range(6):
        _nb(tmp_path / f"n{i}.ipynb", f"value_{i} = {'x' * 1000}")
    few = CellTextCache(max_notebooks=3)
    for i in range(6):
        few.get(fs, f"n{i}.ipynb")
    assert len(few) == 3
    small = CellTextCache(max_chars=8_000)
    for i in range(6):
        small.get(fs, f"n{i}.ipynb")
    assert 1 <= len(small) <= 2


def test_grep_sees_a_change_at_once(tmp_path):
    fs = LocalFilesystem(tmp_path)
    path = tmp_path / "live.ipynb"
    _nb(path, "needle_one = 1")
    assert search(fs, "needle_one").total_matches == 1
    data = json.loads(path.read_text("utf-8"))
    data["cells"][0]["source"] = ["needle_two = 2"]
    path.write_text(json.dumps(data), "utf-8")
    assert search(fs, "needle_one").total_matches == 0 and search(fs, "needle_two").total_matches == 1
