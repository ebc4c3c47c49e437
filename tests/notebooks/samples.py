"""Generated notebooks for the tests and ``bench/notebook_tokens.py``.

Built with nbformat's own constructors (``nbformat.v4.new_*``), then written with
``nbformat.writes`` the way Jupyter saves them. ``analysis_notebook()`` is a small data-science
notebook like a user's (Markdown, code, a DataFrame result with its HTML, a plot as a PNG, an error);
``kitchen_sink()`` has every cell and output kind there is; ``versioned(minor, ids)`` is a small
notebook in nbformat 4.``minor`` with or without cell ids.
"""

from __future__ import annotations

import base64
import json
import random
import struct
import zlib
from typing import Any

import nbformat
from nbformat import v4
from nbformat.v4.rwbase import split_lines

__all__ = ["analysis_notebook", "kitchen_sink", "png_bytes", "versioned", "write"]


def png_bytes(width: int = 64, height: int = 48, seed: int = 1, noise: float = 0.0) -> bytes:
    """A real PNG (RGB): a gradient with a few lines, like a plot; ``noise`` > 0 makes it compress
    less (plot-like sizes: ``png_bytes(640, 480, noise=0.02)`` is ~20-40 KB)."""
    rng = random.Random(seed)
    rows = []
    for y in range(height):
        row = bytearray([0])
        for x in range(width):
            on_line = abs((y * 7 + x * 3) % 97 - 48) < 2 or abs(y - height // 2) < 1
            if noise and rng.random() < noise:
                px = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
            elif on_line:
                px = (31, 119, 180)
            else:
                px = (255, 255 - (x * 40 // max(1, width)), 255 - (y * 40 // max(1, height)))
            row += bytes(px)
        rows.append(bytes(row))
    raw = zlib.compress(b"".join(rows), 9)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


_ANSI_TRACEBACK = [
    "\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
    "\x1b[0;31mZeroDivisionError\x1b[0m                         Traceback (most recent call last)",
    "Cell \x1b[0;32mIn[4], line 2\x1b[0m\n\x1b[1;32m      1\x1b[0m rate \x1b[38;5;241m=\x1b[39m total\n"
    "\x1b[0;32m----> 2\x1b[0m share \x1b[38;5;241m=\x1b[39m total \x1b[38;5;241m/\x1b[39m count",
    "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero",
]

_DF_HTML = (
    "<div>\n<style scoped>\n    .dataframe tbody tr th:only-of-type {\n        vertical-align: middle;\n    }\n"
    "</style>\n<table border=\"1\" class=\"dataframe\">\n  <thead>\n    <tr style=\"text-align: right;\">\n"
    "      <th></th>\n      <th>city</th>\n      <th>country</th>\n      <th>population</th>\n    </tr>\n"
    "  </thead>\n  <tbody>\n"
    + "".join(
        f"    <tr>\n      <th>{i}</th>\n      <td>{c}</td>\n      <td>{k}</td>\n      <td>{p}</td>\n    </tr>\n"
        for i, (c, k, p) in enumerate(
            [("Lagos", "Nigeria", 15388000), ("Osaka", "Japan", 19059856), ("Lyon", "France", 522250),
             ("Seoul", "South Korea", 9411000), ("Lima", "Peru", 10151000)]
        )
    )
    + "  </tbody>\n</table>\n</div>"
)
_DF_TEXT = (
    "    city      country  population\n0  Lagos      Nigeria    15388000\n1  Osaka        Japan    19059856\n"
    "2   Lyon       France      522250\n3  Seoul  South Korea     9411000\n4   Lima         Peru    10151000"
)


def analysis_notebook(image: bytes | None = None) -> Any:
    """Five cells, as in a user's analysis: a title, imports, a table, a plot (PNG), a failing cell."""
    png = image if image is not None else png_bytes(96, 64)
    cells = [
        v4.new_markdown_cell("# City sizes\n\nLoad the table of cities and compare their populations."),
        v4.new_code_cell("import pandas as pd\ndf = pd.read_csv('data/cities.csv')\ndf.head()", execution_count=2,
                         outputs=[v4.new_output("execute_result", data={"text/plain": _DF_TEXT, "text/html": _DF_HTML},
                                                execution_count=2)]),
        v4.new_code_cell("ax = df.plot.bar(x='city', y='population')\nax.set_ylabel('people')", execution_count=3,
                         outputs=[v4.new_output("execute_result", data={"text/plain": "Text(0, 0.5, 'people')"},
                                                execution_count=3),
                                  v4.new_output("display_data", data={"image/png": _b64(png),
                                                                      "text/plain": "<Figure size 640x480 with 1 Axes>"})]),
        v4.new_code_cell("total = df.population.sum()\ncount = 0\nshare = total / count", execution_count=4,
                         outputs=[v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                                                traceback=_ANSI_TRACEBACK)]),
        v4.new_markdown_cell("The largest city is **Osaka**."),
    ]
    nb = v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python", "version": "3.11.2"}})
    for i, c in enumerate(nb.cells):
        c.id = f"c{i}-{'abcdefgh'[i]}"
    return nb


def kitchen_sink() -> Any:
    """Every cell kind and output kind: markdown with an attachment, raw, code with stdout, stderr,
    a progress bar redrawn with \\r, a long stream, a result with HTML, SVG, JSON and a widget
    view, an image, an error, an empty code cell, and unicode."""
    png = png_bytes(8, 8)
    long_text = "".join(f"step {i}: loss={1 / (i + 1):.4f}\n" for i in range(200))
    cells = [
        v4.new_markdown_cell("# Kitchen sink\n\nA diagram: ![d](attachment:d.png)\n\nÜnïcödé ✓",
                             attachments={"d.png": {"image/png": _b64(png)}}),
        v4.new_raw_cell("raw text: {{ not rendered }}", metadata={"format": "text/plain"}),
        v4.new_code_cell("print('hello')\nimport sys; print('warn', file=sys.stderr)", execution_count=1,
                         outputs=[v4.new_output("stream", name="stdout", text="hello\n"),
                                  v4.new_output("stream", name="stderr", text="warn\n")]),
        v4.new_code_cell("for i in range(3): print(f'\\r{i * 50}%', end='')", execution_count=2,
                         outputs=[v4.new_output("stream", name="stdout", text="\r0%\r50%\r100%")]),
        v4.new_code_cell("train()", execution_count=3,
                         outputs=[v4.new_output("stream", name="stdout", text=long_text)]),
        v4.new_code_cell("df", execution_count=4, metadata={"tags": ["table"], "collapsed": False},
                         outputs=[v4.new_output("execute_result", execution_count=4,
                                                data={"text/plain": _DF_TEXT, "text/html": _DF_HTML})]),
        v4.new_code_cell("show()", execution_count=5, outputs=[
            v4.new_output("display_data", data={"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg'/>",
                                                "text/plain": "<svg>"}),
            v4.new_output("display_data", data={"application/json": {"a": [1, 2, 3]}}),
            v4.new_output("display_data", data={"application/vnd.jupyter.widget-view+json":
                                                {"model_id": "abc", "version_major": 2, "version_minor": 0},
                                                "text/plain": "IntSlider(value=0)"}),
            v4.new_output("display_data", data={"image/png": _b64(png)}),
        ]),
        v4.new_code_cell("1/0", execution_count=6, outputs=[
            v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero", traceback=_ANSI_TRACEBACK)]),
        v4.new_code_cell(""),
        v4.new_code_cell("x = 'naïve — “quotes” \"escaped\" \\\\ back'\nx", execution_count=7,
                         outputs=[v4.new_output("execute_result", execution_count=7,
                                                data={"text/plain": "'naïve — “quotes” \"escaped\" \\\\ back'"})]),
    ]
    nb = v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}, "custom": {"keep": True}})
    return nb


def versioned(minor: int, ids: bool) -> str:
    """A small notebook (markdown, code with output, raw) as nbformat 4.``minor`` JSON text, with or
    without cell ids (ids are only valid from 4.5; 4.5 without ids is what old tools write)."""
    nb = v4.new_notebook(cells=[
        v4.new_markdown_cell(f"# Versions\nnbformat 4.{minor}"),
        v4.new_code_cell("value = 41 + 1\nprint(value)", execution_count=1,
                         outputs=[v4.new_output("stream", name="stdout", text="42\n")]),
        v4.new_raw_cell("raw"),
    ])
    nb.nbformat_minor = minor
    for i, cell in enumerate(nb.cells):
        if ids:
            cell.id = f"v{minor}-{i}"
        else:
            cell.pop("id", None)
    if minor < 5 and not ids:
        nbformat.validate(nb)
    # nbformat's own line splitting and layout (its writer would refuse ids before 4.5)
    data = split_lines(nbformat.from_dict(json.loads(json.dumps(nb))))
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write(nb: Any) -> str:
    """JSON text as Jupyter saves it."""
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"
