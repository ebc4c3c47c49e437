"""The indexer's size cap applies to a notebook's text, not to its file (mostly images), and the
files it leaves out are named in the search tool's answer and in index_status()."""

from __future__ import annotations

import json

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import LocalFilesystem, Workspace

from ..notebooks.wild import heavy
from ..tools.conftest import box


def _wordy() -> str:
    """A notebook whose cells hold 4.5 MB of text: over the cap however it is counted."""
    lines = "\n".join(f"walrus census line {i} " + "words " * 12 for i in range(50_000))
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"id": "w", "cell_type": "markdown", "metadata": {}, "source": lines}]})


def test_a_notebook_of_images_is_indexed_and_one_of_too_much_text_is_named(workdir):
    (workdir / "heavy.ipynb").write_text(heavy(), "utf-8")  # 5 MiB file, a few hundred bytes of text
    (workdir / "wordy.ipynb").write_text(_wordy(), "utf-8")
    (workdir / "small.md").write_text("# Zebra notes\n", "utf-8")
    assert (workdir / "heavy.ipynb").stat().st_size > 4 << 20
    ws = Workspace(filesystem=LocalFilesystem(workdir), embedder=None, auto_index_paths=["."])
    try:
        ws.init()
        ws.wait_for_index(timeout=120)
        hits = ws.search("zebra counts", mode="bm25")
        assert any(h.source == "heavy.ipynb" for h in hits)
        status = ws.index_status()
        assert status.too_large == ("wordy.ipynb",)
        assert "not indexed (text over the size cap; grep still searches them): wordy.ipynb" in status.describe()
        out = box(ws).run(T.SEARCH.SEARCH, query="walrus census")
        assert "not indexed (text over the size cap; grep still searches them): wordy.ipynb" in out
    finally:
        ws.destroy()
