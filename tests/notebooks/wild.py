"""Generated notebooks shaped like the ones people share: built by code, never committed.

Each builder returns the file's *text* exactly as the tool that saved it writes it:

* ``colab()`` — Google Colab: 2-space indent, keys in Colab's order (not sorted), nbformat 4.0
  with cell ids (which that format does not allow), ``execution_count`` on Markdown cells,
  source arrays split per line, a Markdown display output of a model answer, and a ``curl`` cell
  whose output is 300 consecutive ``stdout`` chunks broken mid-word;
* ``displays()`` — Markdown and HTML display outputs (``display(Markdown(...))``, an HTML-only
  display), as Jupyter saves them (1-space indent, sorted keys);
* ``heavy(mib)`` — a notebook of which nearly all is base64 PNG images (5 MiB by default);
* ``data_uri()`` — a Markdown cell with a data-URI image inline;
* ``numeric()`` — one-line cells starting with a number (``1 - pca.explained_variance_ratio_``);
* ``executed_error()`` — an executed notebook (previous author's outputs and counts on every
  cell) whose cell 2 fails on a re-run;
* ``long_cell(lines)`` — one cell longer than any read budget.

``fixtures()`` gives them all by name; ``corpus(root, n)`` writes ``n`` varied notebooks for the
grep measurements.
"""

from __future__ import annotations

import base64
import functools
import json
import random
from pathlib import Path
from typing import Any

from .samples import png_bytes

__all__ = [
    "colab",
    "corpus",
    "data_uri",
    "displays",
    "executed_error",
    "fixtures",
    "heavy",
    "long_cell",
    "numeric",
    "pretty_noise_png",
]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _jupyter(nb: dict[str, Any]) -> str:
    """Text as Jupyter writes it: 1-space indent, sorted keys, non-ASCII kept."""
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _kernel_meta() -> dict[str, Any]:
    return {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }


def pretty_noise_png(size: int, seed: int = 0) -> bytes:
    """A real PNG of about ``size`` bytes (noise compresses badly: size follows pixel count)."""
    side = max(8, int((size / 3) ** 0.5))
    return png_bytes(side, side, seed=seed, noise=1.0)


def colab(chunks: int = 300) -> str:
    """A Colab notebook (see the module docstring)."""
    answer = "\n".join(
        f"**Step {i}.** The model explains part {i} of the answer in a sentence or two." for i in range(1, 9)
    )
    chunk_text = "".join(f"{{\"token\": \"tok{i:03d}\", \"t\": {i * 0.01:.2f}}}\n" for i in range(chunks))
    pieces, pos, rng = [], 0, random.Random(7)
    while pos < len(chunk_text):
        step = rng.randrange(10, 40)
        pieces.append(chunk_text[pos : pos + step])
        pos += step
    cells: list[dict[str, Any]] = [
        {"cell_type": "markdown", "source": _lines("# Colab cookbook\n\nAsk the model and show its answer."),
         "metadata": {"id": "intro0001"}, "id": "intro0001", "execution_count": None},
        {"cell_type": "code", "source": _lines("!pip install -q requests\nimport requests"),
         "metadata": {"id": "setup0002"}, "id": "setup0002", "execution_count": 1, "outputs": []},
        {"cell_type": "code",
         "source": _lines("from IPython.display import Markdown, display\nanswer = ask('Explain PCA')\n"
                          "display(Markdown(answer))"),
         "metadata": {"id": "answer003", "colab": {"base_uri": "https://localhost:8080/", "height": 200}},
         "id": "answer003", "execution_count": 2,
         "outputs": [{"output_type": "display_data",
                      "data": {"text/plain": ["<IPython.core.display.Markdown object>"],
                               "text/markdown": _lines(answer)},
                      "metadata": {}}]},
        {"cell_type": "code", "source": _lines("!curl -N https://example.invalid/stream"),
         "metadata": {"id": "curl00004"}, "id": "curl00004", "execution_count": 3,
         "outputs": [{"output_type": "stream", "name": "stdout", "text": [p]} for p in pieces]},
        {"cell_type": "markdown", "source": _lines("## Notes\n\nThe answer above is shown as Markdown."),
         "metadata": {"id": "notes0005"}, "id": "notes0005", "execution_count": None},
        {"cell_type": "code", "source": ["x = 1\ny = ", "2\nprint(x + y)"],  # not split per line
         "metadata": {"id": "sum000006"}, "id": "sum000006", "execution_count": 4,
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["3\n"]}]},
    ]
    nb = {"nbformat": 4, "nbformat_minor": 0,
          "metadata": {"colab": {"provenance": [], "name": "cookbook.ipynb"},
                       "kernelspec": {"name": "python3", "display_name": "Python 3"},
                       "language_info": {"name": "python"}},
          "cells": cells}
    return json.dumps(nb, indent=2, ensure_ascii=False) + "\n"


def displays() -> str:
    """Markdown display outputs and an HTML-only display, as Jupyter saves them."""
    md = "## Answer\n\nThe **first principal component** explains 72% of the variance."
    html = ("<div><h3>Summary</h3><p>Revenue grew <b>12%</b> in Q3.</p>"
            "<script>alert('never run')</script><style>p {color: red}</style>"
            "<ul><li>north: 4</li><li>south: 7</li></ul></div>")
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": _kernel_meta(), "cells": [
        {"id": "md-out", "cell_type": "code", "execution_count": 1, "metadata": {},
         "source": _lines("display(Markdown(answer))"),
         "outputs": [{"output_type": "display_data", "metadata": {},
                      "data": {"text/plain": ["<IPython.core.display.Markdown object>"],
                               "text/markdown": _lines(md)}}]},
        {"id": "html-out", "cell_type": "code", "execution_count": 2, "metadata": {},
         "source": _lines("HTML(report)"),
         "outputs": [{"output_type": "execute_result", "execution_count": 2, "metadata": {},
                      "data": {"text/plain": ["<IPython.core.display.HTML object>"],
                               "text/html": _lines(html)}}]},
        {"id": "html-only", "cell_type": "code", "execution_count": 3, "metadata": {},
         "source": _lines("display_html(table)"),
         "outputs": [{"output_type": "display_data", "metadata": {},
                      "data": {"text/html": ["<table><tr><td>alpha</td><td>1</td></tr>"
                                             "<tr><td>beta</td><td>2</td></tr></table>"]}}]},
    ]}
    return _jupyter(nb)


@functools.lru_cache(maxsize=2)
def heavy(mib: float = 5.0) -> str:
    """A notebook of ~``mib`` MiB, nearly all base64 PNG plots, with a little searchable text."""
    cells = [{"id": "title", "cell_type": "markdown", "metadata": {},
              "source": _lines("# Heavy report\n\nQuarterly zebra-count plots.")}]
    target = int(mib * (1 << 20))
    i = 0
    while sum(len(json.dumps(c)) for c in cells) < target:
        png = base64.b64encode(pretty_noise_png(400_000, seed=i)).decode("ascii")
        cells.append({"id": f"plot-{i}", "cell_type": "code", "execution_count": i + 1, "metadata": {},
                      "source": _lines(f"plot_quarter({i})  # zebra counts"),
                      "outputs": [{"output_type": "display_data", "metadata": {},
                                   "data": {"image/png": png, "text/plain": ["<Figure size 640x480>"]}}]})
        i += 1
    return _jupyter({"nbformat": 4, "nbformat_minor": 5, "metadata": _kernel_meta(), "cells": cells})


def data_uri() -> str:
    """A Markdown cell holding a data-URI PNG (about 7 KB) between two lines of text."""
    png = base64.b64encode(pretty_noise_png(7_400, seed=3)).decode("ascii")
    src = f"## Architecture\n\n![diagram](data:image/png;base64,{png})\n\nThe encoder feeds the decoder."
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": _kernel_meta(), "cells": [
        {"id": "arch", "cell_type": "markdown", "metadata": {}, "source": _lines(src)},
        {"id": "code", "cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": _lines("model = build()")},
    ]}
    return _jupyter(nb)


def numeric() -> str:
    """One-line cells that start with a number, and short lines (the numbering's worst case)."""
    sources = ["1 - pca.explained_variance_ratio_.sum()", "2 * np.pi * r", "3", " 4 + 4",
               "x = 1\ny = 2", "42"]
    cells = [{"id": f"n{i}", "cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": _lines(s)} for i, s in enumerate(sources)]
    return _jupyter({"nbformat": 4, "nbformat_minor": 5, "metadata": _kernel_meta(), "cells": cells})


def executed_error() -> str:
    """An executed notebook (the previous author's outputs and counts everywhere, with
    ``metadata.execution`` timestamps) whose cell 2 raises when it runs again."""
    cells: list[dict[str, Any]] = [
        {"id": "e-md", "cell_type": "markdown", "metadata": {}, "source": ["# Executed before"]},
        {"id": "e-ok", "cell_type": "code", "execution_count": 11, "metadata": {},
         "source": ["print('first')"],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["first\n"]}]},
        {"id": "e-err", "cell_type": "code", "execution_count": 12, "metadata": {},
         "source": ["raise ValueError('boom now')"],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["it worked for the author\n"]}]},
    ]
    for n in range(3, 6):
        cells.append({"id": f"e-after{n}", "cell_type": "code", "execution_count": 10 + n, "metadata": {
            "execution": {"iopub.execute_input": "2024-01-01T00:00:00.000Z",
                          "shell.execute_reply": "2024-01-01T00:00:01.000Z"}},
            "source": [f"print('stale {n}')"],
            "outputs": [{"output_type": "stream", "name": "stdout", "text": [f"stale output {n}\n"]}]})
    return _jupyter({"nbformat": 4, "nbformat_minor": 5, "metadata": _kernel_meta(), "cells": cells})


def long_cell(lines: int = 3000) -> str:
    """One code cell of ``lines`` lines (over any read budget) between two small cells."""
    body = "\n".join(f"value_{i} = compute({i}) + offset  # step {i}" for i in range(lines))
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": _kernel_meta(), "cells": [
        {"id": "before", "cell_type": "markdown", "metadata": {}, "source": ["# Long"]},
        {"id": "long", "cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": _lines(body)},
        {"id": "after", "cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": ["done()"]},
    ]}
    return _jupyter(nb)


@functools.lru_cache(maxsize=1)
def fixtures() -> dict[str, str]:
    """Every shape above by file name (``heavy`` is the 5 MiB one); built once per process."""
    return {
        "colab.ipynb": colab(),
        "displays.ipynb": displays(),
        "heavy.ipynb": heavy(),
        "data_uri.ipynb": data_uri(),
        "numeric.ipynb": numeric(),
        "executed_error.ipynb": executed_error(),
        "long_cell.ipynb": long_cell(),
    }


def corpus(root: Path, n: int = 300, seed: int = 0) -> list[Path]:
    """``n`` varied notebooks under ``root`` (Jupyter and Colab layouts, outputs, small images):
    the grep corpus."""
    rng = random.Random(seed)
    words = ("train", "model", "loss", "pandas", "frame", "plot", "kmeans", "token", "answer", "curl")
    small_png = base64.b64encode(png_bytes(64, 48, noise=0.3)).decode("ascii")
    out = []
    for k in range(n):
        cells = []
        for c in range(rng.randrange(15, 45)):
            lines = [f"{rng.choice(words)}_{c} = {rng.choice(words)}({k}, {c})  # {rng.choice(words)}"
                     for _ in range(rng.randrange(1, 12))]
            outputs = []
            if rng.random() < 0.5:
                outputs.append({"output_type": "stream", "name": "stdout",
                                "text": [f"{rng.choice(words)} {i}\n" for i in range(rng.randrange(1, 30))]})
            if rng.random() < 0.15:
                outputs.append({"output_type": "display_data", "metadata": {},
                                "data": {"image/png": small_png, "text/plain": ["<Figure>"]}})
            cells.append({"id": f"k{k}c{c}", "cell_type": "code", "execution_count": c + 1, "metadata": {},
                          "source": _lines("\n".join(lines)), "outputs": outputs})
        nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": _kernel_meta(), "cells": cells}
        path = root / f"d{k % 10}" / f"nb{k:03d}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(nb, indent=2 if k % 3 == 0 else 1, ensure_ascii=False) + "\n", "utf-8")
        out.append(path)
    return out
