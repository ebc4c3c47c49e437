"""Show a file: text with line numbers, images as images, a short note for other binary files.

Long files show their start and end (see `%config WsMagics.max_lines`); pick lines with --lines:
`10:40`, `100:` (to the end), `:20` (the first 20) or `7` (one line).

Examples:
  %ws cat src/app.py
  %ws cat src/app.py --lines 40:80
  %ws cat plots/loss.png
"""

from __future__ import annotations

from ..files import load_file_view
from ..parsing import WsArgumentParser
from ..views.common import base_path_of
from ..views.files import FileView
from ._common import line_range, require_filesystem
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="file to show")
    parser.add_argument(
        "--lines", "-n", type=line_range, metavar="A:B", help="line range, 1-based and inclusive"
    )


def run(inv: Invocation) -> FileView:
    fs = require_filesystem(inv.workspace, "cat")
    stat = fs.stat(inv.args.path)
    if stat.type == "directory":
        raise inv.usage_error(f"{stat.path} is a directory (list it with `%ws ls {stat.path}`)")
    return load_file_view(
        fs,
        stat.path,
        lines=inv.args.lines,
        max_lines=inv.magics.max_lines,
        base_path=base_path_of(inv.workspace),
        stat=stat,
    )


COMMAND = Subcommand(
    name="cat",
    summary="a file with line numbers (images as images): `%ws cat PATH [--lines A:B]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
