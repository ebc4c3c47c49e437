"""Show a file: text with line numbers, images as images, a short note for other binary files.

Long files show their start and end (see `%config WsMagics.max_lines`); pick lines with --lines:
`10:40`, `100:` (to the end), `:20` (the first 20) or `7` (one line).

Examples:
  %ws cat src/app.py
  %ws cat src/app.py --lines 40:80
  %ws cat plots/loss.png
"""

from __future__ import annotations

from ..display import FileView, base_path_of
from ..parsing import WsArgumentParser
from ._common import line_range, require_filesystem
from .base import Invocation, Subcommand

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml", "image/webp")
MAX_IMAGE_BYTES = 20 << 20
MAX_TEXT_BYTES = 64 << 20


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="file to show")
    parser.add_argument(
        "--lines", "-n", type=line_range, metavar="A:B", help="line range, 1-based and inclusive"
    )


def run(inv: Invocation) -> FileView:
    from ...filesystem.mime import guess_mime_type, looks_like_text

    fs = require_filesystem(inv.workspace, "cat")
    stat = fs.stat(inv.args.path)
    if stat.type == "directory":
        raise inv.usage_error(f"{stat.path} is a directory (list it with `%ws ls {stat.path}`)")
    mime = stat.mime_type or guess_mime_type(stat.path)
    base = base_path_of(inv.workspace)
    if mime in IMAGE_TYPES and stat.size <= MAX_IMAGE_BYTES and inv.args.lines is None:
        data = fs.read_file(stat.path, encoding="binary")
        return FileView(stat.path, data=bytes(data), mime_type=mime, size=stat.size, base_path=base)
    if stat.size > MAX_TEXT_BYTES:
        raise inv.usage_error(
            f"{stat.path} is {stat.size:,} bytes; look at parts of it with `%ws run head -n 50 {stat.path}`"
        )
    data = bytes(fs.read_file(stat.path, encoding="binary"))
    if not looks_like_text(data[:8192]):
        return FileView(stat.path, mime_type=mime, size=stat.size, base_path=base)
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines()
    total = len(lines)
    start, end = inv.args.lines or (None, None)
    first = start or 1
    last = min(end or total, total)
    if inv.args.lines is not None and first > max(total, 1):
        raise inv.usage_error(f"{stat.path} has {total} lines; --lines starts at {first}")
    chosen = lines[first - 1 : last]
    omitted = None
    limit = max(inv.magics.max_lines, 2)
    if len(chosen) > limit:
        head = limit // 2
        tail = limit - head
        omitted = (first + head, first + len(chosen) - tail - 1)
        chosen = chosen[:head] + chosen[len(chosen) - tail :]
    return FileView(
        stat.path,
        text_content="\n".join(chosen),
        mime_type=mime,
        size=stat.size,
        first_line=first,
        total_lines=total,
        omitted=omitted,
        base_path=base,
    )


COMMAND = Subcommand(
    name="cat",
    summary="a file with line numbers (images as images): `%ws cat PATH [--lines A:B]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
