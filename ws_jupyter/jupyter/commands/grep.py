"""Search file contents with a regular expression (Python syntax), gitignore-aware.

Every match on a line is marked; paths and line numbers link to the files. Text files are found by
content, not extension (a `Makefile` is searched; binaries are skipped). Results stop at 1000
matches (or --max-count per file).

Examples:
  %ws grep TODO
  %ws grep "def \\w+_test" src -C 2
  %ws grep error logs -i --max-count 5
"""

from __future__ import annotations

import re

from ..display import GrepMatch, GrepView, base_path_of
from ..parsing import WsArgumentParser
from ._common import non_negative_int, positive_int, require_filesystem
from .base import Invocation, Subcommand

MAX_MATCHES = 1000
MAX_FILE_BYTES = 8 << 20
MAX_LINE_CHARS = 500


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("pattern", metavar="PATTERN", help="regular expression (Python `re` syntax)")
    parser.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="file or directory (default: all)"
    )
    parser.add_argument("-i", "--ignore-case", action="store_true", help="case-insensitive")
    parser.add_argument(
        "-F", "--fixed-strings", action="store_true", help="PATTERN is plain text, not a regex"
    )
    parser.add_argument(
        "-C", "--context", type=non_negative_int, default=0, metavar="N", help="lines of context"
    )
    parser.add_argument("--max-count", "-m", type=positive_int, metavar="N", help="most matches per file")
    parser.add_argument("--hidden", action="store_true", help="also search hidden files")


def _files(fs: object, path: str, hidden: bool) -> list[str]:
    from ...filesystem import walk

    stat = fs.stat(path)  # type: ignore[attr-defined]
    if stat.type != "directory":
        return [stat.path]
    return [e.path for e in walk(fs, stat.path, include_hidden=hidden) if not e.is_dir]


def run(inv: Invocation) -> GrepView:
    from ...filesystem.mime import looks_like_text

    args = inv.args
    fs = require_filesystem(inv.workspace, "grep")
    source = re.escape(args.pattern) if args.fixed_strings else args.pattern
    try:
        regex = re.compile(source, re.IGNORECASE if args.ignore_case else 0)
    except re.error as exc:
        raise inv.usage_error(f"Invalid regex pattern: {exc}") from None
    matches: list[GrepMatch] = []
    notes: list[str] = []
    total = 0
    skipped_large = 0
    for rel in _files(fs, args.path, args.hidden):
        if total >= MAX_MATCHES:
            notes.append(f"stopped at {MAX_MATCHES} matches")
            break
        try:
            if fs.stat(rel).size > MAX_FILE_BYTES:
                skipped_large += 1
                continue
            data = bytes(fs.read_file(rel, encoding="binary"))
        except OSError:
            continue
        if not looks_like_text(data[:8192]):
            continue
        lines = data.decode("utf-8", errors="replace").splitlines()
        hits: list[int] = []
        spans: dict[int, tuple[tuple[int, int], ...]] = {}
        for number, line in enumerate(lines, 1):
            found = tuple(m.span() for m in regex.finditer(line) if m.end() > m.start())
            if found or regex.search(line) is not None:  # zero-width matches (`^`) count, unmarked
                hits.append(number)
                spans[number] = found
                total += 1
                if total >= MAX_MATCHES or (args.max_count and len(hits) >= args.max_count):
                    break
        if not hits:
            continue
        shown: set[int] = set()
        for number in hits:
            for n in range(max(1, number - args.context), min(len(lines), number + args.context) + 1):
                shown.add(n)
        for n in sorted(shown):
            text = lines[n - 1]
            clipped = text[:MAX_LINE_CHARS] + ("…" if len(text) > MAX_LINE_CHARS else "")
            if n in spans:
                found = tuple((a, b) for a, b in spans[n] if a < MAX_LINE_CHARS)
                column = found[0][0] + 1 if found else 1
                matches.append(GrepMatch(rel, n, clipped, column, found))
            else:
                matches.append(GrepMatch(rel, n, clipped, context=True))
    if skipped_large:
        notes.append(f"{skipped_large} file(s) over {MAX_FILE_BYTES >> 20} MB skipped")
    return GrepView(args.pattern, matches, base_path_of(inv.workspace), notes)


COMMAND = Subcommand(
    name="grep",
    summary="regex search in files: `%ws grep PATTERN [PATH] [-i] [-C N]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
