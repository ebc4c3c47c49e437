"""Search file contents with a regular expression (Python syntax), gitignore-aware.

The same search the agents' `workspace_grep` tool runs (ripgrep when installed, confined to the
workspace by Landlock or bubblewrap; a Python walk otherwise, with identical results): every match
on a line is marked, paths and line numbers link to the files, text files are found by content (a
`Makefile` is searched; a file whose first 8 KiB are not text, or in which a NUL byte is met while
searching, is binary and skipped).
PATH may be a file, a directory or a glob (`src/**/*.py`). At most 1000 matching lines.
Notebooks are searched by cell source (`nb.ipynb [cell 4]:2`, the line within the cell; the link
opens JupyterLab at that cell); --outputs also searches their outputs' text.

Examples:
  %ws grep TODO
  %ws grep "def \\w+_test" src -C 2
  %ws grep error "logs/*.txt" -i --max-count 5
"""

from __future__ import annotations

import re

from ..parsing import WsArgumentParser
from ..views.common import base_path_of
from ..views.files import GrepMatch, GrepView
from ._common import non_negative_int, positive_int, require_filesystem
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("pattern", metavar="PATTERN", help="regular expression (Python `re` syntax)")
    parser.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="file, directory or glob (default: all)"
    )
    parser.add_argument("-i", "--ignore-case", action="store_true", help="case-insensitive")
    parser.add_argument(
        "-F", "--fixed-strings", action="store_true", help="PATTERN is plain text, not a regex"
    )
    parser.add_argument(
        "-C", "--context", type=non_negative_int, default=0, metavar="N", help="lines of context (max 50)"
    )
    parser.add_argument("--max-count", "-m", type=positive_int, metavar="N", help="most matches per file")
    parser.add_argument("--hidden", action="store_true", help="also search hidden files")
    parser.add_argument("--outputs", action="store_true", help="notebooks: also search cell outputs")


def run(inv: Invocation) -> GrepView:
    from ...tools.grep import MAX_LINE_CHARS, MAX_MATCHES, search

    args = inv.args
    fs = require_filesystem(inv.workspace, "grep")
    source = re.escape(args.pattern) if args.fixed_strings else args.pattern
    flags = re.IGNORECASE if args.ignore_case else 0
    try:
        regex = re.compile(source, flags)
    except re.error as exc:
        raise inv.usage_error(f"Invalid regex pattern: {exc}") from None
    context = min(args.context, 50)
    result = search(
        fs,
        source,
        args.path,
        context_lines=context,
        max_count=args.max_count,
        case_sensitive=not args.ignore_case,
        include_hidden=args.hidden,
        notebook_outputs=args.outputs,
    )
    if result.target_missing:
        raise inv.usage_error(f"{args.path} does not exist")
    matches: list[GrepMatch] = []
    for fm in result.files:
        file: str | None = getattr(fm, "file", None) or None  # a notebook cell's matches: its notebook
        cell_id: str | None = getattr(fm, "cell_id", None)
        matched = {line: col for line, col, _ in fm.matches}
        texts = dict(fm.lines)
        for line, _, text in fm.matches:
            texts.setdefault(line, text)
        for n in sorted(texts):
            text = texts[n]
            clipped = text[:MAX_LINE_CHARS] + ("…" if len(text) > MAX_LINE_CHARS else "")
            if n in matched:
                spans = tuple(
                    m.span()
                    for m in regex.finditer(text)
                    if m.end() > m.start() and m.start() < MAX_LINE_CHARS
                )
                matches.append(GrepMatch(fm.path, n, clipped, matched[n], spans, file=file, cell_id=cell_id))
            else:
                matches.append(GrepMatch(fm.path, n, clipped, context=True, file=file, cell_id=cell_id))
    notes = []
    if result.truncated:
        notes.append(f"stopped at {MAX_MATCHES} matches")
    if result.timed_out:
        notes.append("stopped: the search took too long (simplify the pattern or narrow PATH)")
    if result.binary_skipped:
        notes.append(f"{result.binary_skipped} binary file(s) skipped")
    if result.read_errors:
        notes.append(f"{result.read_errors} file(s) could not be read")
    return GrepView(args.pattern, matches, base_path_of(inv.workspace), notes)


COMMAND = Subcommand(
    name="grep",
    summary="regex search in files: `%ws grep PATTERN [PATH] [-i] [-C N]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
