"""Viewing a notebook (``%ws cat nb.ipynb``, the FileBrowser preview) is bounded in HTML and time.

A Markdown cell's attachment was inlined at every reference (as a data URI, twenty times a
cell), then the whole of it parsed by markdown-it: a 2.7 MiB notebook took 24 s and emitted
53 MiB of HTML, a 40 MB one did not finish in 5 minutes. Now each image is drawn once, the images
of a view stay within a budget, outputs are counted past a limit, and the view says what it left
out. Each replay runs in a child process with a time limit (``replay``), measuring the HTML the
notebook would store and the time the kernel was held.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from ..helpers import write
from .conftest import replay

pytestmark = pytest.mark.slow

#: Bytes of HTML a view may emit here: the 4 MB image budget as base64, and the rest.
MAX_HTML = 6 << 20


def noise_png(side: int) -> bytes:
    """PNG's magic bytes and ``side`` x ``side`` x 3 random bytes: what the view checks of an image
    (its type), at the size of a real RGB image of random pixels (they do not compress)."""
    return b"\x89PNG\r\n\x1a\n" + os.urandom(side * side * 3)


def _markdown_cell(i: int, side: int, refs: int) -> dict:
    image = base64.b64encode(noise_png(side)).decode()
    source = "\n\n".join([f"# Figure {i}"] + ["![plot](attachment:plot.png)"] * refs)
    return {"cell_type": "markdown", "id": f"m{i}", "metadata": {}, "source": source,
            "attachments": {"plot.png": {"image/png": image}}}  # fmt: skip


def _notebook(cells: list) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})


VIEW = """
import time
from ws_jupyter import LocalFilesystem
from ws_jupyter.jupyter.files import load_file_view
for name, raw in {names!r}:
    started = time.monotonic()
    view = load_file_view(LocalFilesystem({root!r}), name, raw=raw)
    bundle = view._repr_mimebundle_()
    html, text = bundle["text/html"], bundle["text/plain"]
    emit([name + (" --raw" if raw else ""), len(html), len(text), time.monotonic() - started, html.count('src="data:image'),
          html.count("shown above"), html[-600:]])
"""


def _view(root: Path, *names: tuple[str, bool], timeout: float = 180) -> dict[str, list]:
    r = replay(VIEW.format(names=list(names), root=str(root)), timeout=timeout)
    assert r.finished, (
        f"viewing the notebooks held the kernel past {timeout} s (done: {[x[0] for x in r.results]})"
    )
    assert r.returncode == 0, r.stderr
    return {x[0]: x[1:] for x in r.results}


def test_an_attachment_referenced_twenty_times_is_drawn_once(workdir: Path) -> None:
    write(workdir, "small.ipynb", _notebook([_markdown_cell(0, 800, 20)]))
    assert 2 << 20 < (workdir / "small.ipynb").stat().st_size < 3 << 20  # 2.7 MiB, as reported
    html, text, seconds, images, above, _ = _view(workdir, ("small.ipynb", False))["small.ipynb"]
    assert html < MAX_HTML, f"{html:,} bytes of HTML"
    assert text < 100_000
    assert images == 1 and above == 19
    assert seconds < 30


def test_a_40_mb_notebook_is_drawn_within_the_budget_and_says_what_it_left_out(workdir: Path) -> None:
    cells = [_markdown_cell(i, 900, 20) for i in range(15)]
    cells.append({
        "cell_type": "code", "id": "flood", "metadata": {}, "execution_count": 1, "source": "spam()",
        "outputs": [{"output_type": "stream", "name": "stdout", "text": f"line {k}\n"} for k in range(5000)],
    })  # fmt: skip
    write(workdir, "big.ipynb", _notebook(cells))
    assert (workdir / "big.ipynb").stat().st_size > 40_000_000
    found = _view(workdir, ("big.ipynb", False), ("big.ipynb", True))
    html, _, seconds, images, above, tail = found["big.ipynb"]
    assert html < MAX_HTML, f"{html:,} bytes of HTML"
    assert seconds < 60
    assert max(found["big.ipynb --raw"][:2]) < 100_000  # its JSON text: one line, cut
    assert images >= 1 and above >= 19
    assert "images (" in tail and "not shown: a view draws at most 4.0 MB of images" in tail
    assert "outputs not shown: a view draws at most 500" in tail


def test_a_notebook_shown_as_json_text_cuts_its_one_line(workdir: Path) -> None:
    # --raw (and a notebook too large to be read as cells) shows the file as text: json.dumps
    # writes one line, which the view drew whole, as HTML and again as text.
    write(workdir, "one-line.ipynb", _notebook([_markdown_cell(0, 1200, 1)]))
    html, text, *_ = _view(workdir, ("one-line.ipynb", True))["one-line.ipynb --raw"]
    assert html < 100_000 and text < 100_000, (html, text)
