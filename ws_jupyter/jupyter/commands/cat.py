"""Show a file: text with line numbers, images as images, a short note for other binary files.

Long files show their start and end (see `%config WsMagics.max_lines`); pick lines with --lines:
`10:40`, `100:` (to the end), `:20` (the first 20) or `7` (one line).

A notebook (.ipynb) is shown as its cells: Markdown rendered, code highlighted with line numbers
within each cell, outputs compact; each cell's number opens it in JupyterLab. --cells A:B picks
cells (0-based, inclusive, like `[cell 4]` in grep and search results); --raw (or --lines) shows
the JSON instead.

Examples:
  %ws cat src/app.py
  %ws cat src/app.py --lines 40:80
  %ws cat plots/loss.png
  %ws cat analysis.ipynb --cells 2:5
"""

from __future__ import annotations

import argparse

from ..files import load_file_view
from ..parsing import WsArgumentParser
from ..views.common import base_path_of
from ..views.files import FileView
from ..views.notebook import NotebookView
from ._common import line_range, require_filesystem
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="file to show")
    parser.add_argument(
        "--lines", "-n", type=line_range, metavar="A:B", help="line range, 1-based and inclusive"
    )
    parser.add_argument(
        "--cells", type=cell_range, metavar="A:B", help="notebooks: cell range, 0-based and inclusive"
    )
    parser.add_argument("--raw", action="store_true", help="notebooks: the JSON text, not the cells")


def cell_range(text: str) -> tuple[int, int]:
    """``"2:5"``, ``"3:"``, ``":4"`` or ``"3"`` -> 0-based inclusive cell indexes."""
    start_text, sep, end_text = text.partition(":")
    try:
        start = int(start_text) if start_text.strip() else 0
        end = int(end_text) if end_text.strip() else (10**9 if sep else start)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A:B with cell indexes (e.g. 2:5), got {text!r}") from None
    if start < 0 or end < start:
        raise argparse.ArgumentTypeError(f"the cell range {text!r} is empty (cells count from 0)")
    return start, end


def run(inv: Invocation) -> FileView | NotebookView:
    fs = require_filesystem(inv.workspace, "cat")
    stat = fs.stat(inv.args.path)
    if stat.type == "directory":
        raise inv.usage_error(f"{stat.path} is a directory (list it with `%ws ls {stat.path}`)")
    view = load_file_view(
        fs,
        stat.path,
        lines=inv.args.lines,
        max_lines=inv.magics.max_lines,
        base_path=base_path_of(inv.workspace),
        stat=stat,
        cells=inv.args.cells,
        raw=inv.args.raw,
    )
    if inv.args.cells is not None and isinstance(view, NotebookView):
        first = inv.args.cells[0]
        if first >= len(view.notebook):
            raise inv.usage_error(f"{stat.path} has {len(view.notebook)} cells (0-{len(view.notebook) - 1})")
    elif inv.args.cells is not None:
        raise inv.usage_error("--cells is for notebooks (.ipynb)")
    return view


COMMAND = Subcommand(
    name="cat",
    summary="a file with line numbers (images as images, notebooks as cells): `%ws cat PATH [--lines A:B]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
