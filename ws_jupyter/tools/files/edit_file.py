"""``workspace_edit_file``: replace an exact piece of text in a file.

The match is exact (whitespace included, no regex, ``$`` and ``\\`` are literal) and must be unique
unless ``replace_all``; failures say why and where: the closest lines when the text is not found,
the line numbers of every occurrence when it is not unique. A single replacement answers with
the changed lines and two lines around them, so the model sees the result without reading again. Files with CRLF line ends are edited
with text given with ``\\n`` ends.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from ...errors import IsADirectory
from ...filesystem.reading import MAX_FILE_BYTES, decode_text, read_limited
from ...notebooks.document import is_notebook_path
from ...text.shaping import number_line
from ..base import ToolCall, ToolSpec
from ..facts import WORKSPACE_TOOLS, ToolHints
from ..schema import Param
from ..types import ToolErrorText

__all__ = ["SPEC", "edit_file", "replace_text"]

DESCRIPTION = (
    "Replace an exact piece of text in a file with new text. old_string must match the file exactly "
    "(including indentation and line breaks — copy it from workspace_read_file output without the "
    "line-number prefix) and must occur once, unless replace_all=true. Include enough surrounding "
    "lines to make it unique. To create a file or replace all of it, use workspace_write_file."
)

PARAMS = (
    Param("path", "string", "File path relative to the workspace root.", required=True, allow_empty=False),
    Param("old_string", "string", "The exact text to replace.", required=True),
    Param("new_string", "string", "The text to put in its place (may be empty to delete).", required=True),
    Param(
        "replace_all", "boolean", "Replace every occurrence instead of requiring exactly one.", default=False
    ),
)

NOT_FOUND = "The specified text was not found. Make sure you use the exact text from the file, including whitespace and indentation."
_MAX_HINT_LINES = 8
_CONTEXT = 2  # lines shown around a change
_SNIPPET_EDGE = 4  # first and last lines shown of a long change


def _find_all(text: str, piece: str) -> list[int]:
    """Offsets of the non-overlapping occurrences of ``piece``, in order."""
    offsets = []
    start = text.find(piece)
    while start >= 0:
        offsets.append(start)
        start = text.find(piece, start + len(piece))
    return offsets


def _lines_of(text: str, offsets: list[int]) -> list[int]:
    """1-based line numbers of ascending ``offsets``, counted in one pass over ``text``."""
    lines = []
    line, prev = 1, 0
    for offset in offsets:
        line += text.count("\n", prev, offset)
        prev = offset
        lines.append(line)
    return lines


def _span_lines(s: str) -> int:
    return max(1, s.count("\n") + (0 if s.endswith("\n") else 1))


def _closest(content: str, old: str) -> str:
    """The file's lines most similar to ``old`` (a hint after a failed match)."""
    lines = content.split("\n")
    want = old.strip("\n").split("\n")
    n = min(len(want), _MAX_HINT_LINES)
    if not lines or (not want[0].strip() and len(want) == 1):
        return ""
    anchor = want[0].strip()
    stripped = [ln.strip() for ln in lines]
    candidates = [i for i, s in enumerate(stripped) if s == anchor]
    if not candidates:
        close = difflib.get_close_matches(anchor, stripped, n=3, cutoff=0.6)
        candidates = [i for i, s in enumerate(stripped) if s in close][:5]
    best, best_ratio = -1, 0.0
    target = "\n".join(want[:n])
    for i in candidates[:20]:
        window = "\n".join(lines[i : i + n])
        ratio = difflib.SequenceMatcher(None, window, target).ratio()
        if ratio > best_ratio:
            best, best_ratio = i, ratio
    if best < 0 or best_ratio < 0.5:
        return ""
    shown = "\n".join(number_line(best + 1 + k, lines[best + k]) for k in range(min(n, len(lines) - best)))
    end = best + min(n, len(lines) - best)
    return f"\nClosest match (lines {best + 1}-{end}):\n{shown}"


def _snippet(text: str, first: int, last: int) -> str:
    """Lines ``first``-``last`` of ``text`` with two lines of context, numbered as read_file shows
    them; a long change shows its first and last lines around ``…``."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    top, bottom = max(1, first - _CONTEXT), min(len(lines), last + _CONTEXT)
    wanted = list(range(top, bottom + 1))
    if last - first + 1 > 2 * _SNIPPET_EDGE:
        wanted = [*range(top, first + _SNIPPET_EDGE), 0, *range(last - _SNIPPET_EDGE + 1, bottom + 1)]
    return "\n".join(
        "     …" if n == 0 else number_line(n, lines[n - 1].removesuffix("\r")) for n in wanted
    )


def replace_text(
    content: str,
    old: str,
    new: str,
    replace_all: bool,
    check_lines: Callable[[int, int], None] | None = None,
) -> tuple[str | None, int, list[int], int]:
    """``(updated, count, start lines, new span)``; ``updated`` is None when the edit cannot be
    made (then ``count`` is 0 for "not found", or the number of occurrences when not unique, and
    the lines are theirs). ``check_lines(first, last)`` may refuse lines not read (it raises)."""
    offsets = _find_all(content, old)
    if not offsets and "\r\n" in content and "\n" in old and "\r\n" not in old:
        crlf_old = old.replace("\n", "\r\n")
        crlf_offsets = _find_all(content, crlf_old)
        if crlf_offsets:
            old, new = crlf_old, new.replace("\r\n", "\n").replace("\n", "\r\n")
            offsets = crlf_offsets
    count = len(offsets)
    if not offsets or (count > 1 and not replace_all):
        return None, count, _lines_of(content, offsets[:20]), 0
    firsts = _lines_of(content, offsets)
    span = _span_lines(old)
    if check_lines is not None:
        for first in firsts:
            check_lines(first, first + span - 1)
    updated = content.replace(old, new)
    # each earlier replacement moves the later ones by the difference in line breaks
    added_breaks = new.count("\n") - old.count("\n")
    starts = [first + i * added_breaks for i, first in enumerate(firsts)]
    return updated, count, starts, (_span_lines(new) if new else 0)


def _failure(content: str, old: str, count: int, lines: list[int]) -> ToolErrorText:
    if count == 0:
        return ToolErrorText(NOT_FOUND + _closest(content.replace("\r\n", "\n"), old.replace("\r\n", "\n")))
    where = ", ".join(str(n) for n in lines[:20]) + (", ..." if count > 20 else "")
    return ToolErrorText(
        f"The specified text appears {count} times (lines {where}). Provide more surrounding context "
        "to make the match unique, or set replace_all=true to replace every occurrence."
    )


def _done(label: str, starts: list[int], new_span: int, updated: str) -> str:
    if len(starts) == 1:
        a = starts[0]
        b = a + new_span - 1 if new_span else a
        lines = f"line {a}" if a == b else f"lines {a}-{b}"
        return f"Replaced 1 occurrence in {label} ({lines}):\n{_snippet(updated, a, b)}"
    listed = ", ".join(str(s) for s in starts[:20]) + (", ..." if len(starts) > 20 else "")
    return f"Replaced {len(starts)} occurrences in {label} (lines {listed})"


def edit_file(call: ToolCall) -> str:
    fs = call.filesystem()
    args = call.args
    path = args["path"]
    old, new = args["old_string"], args["new_string"]
    st = fs.stat(path)
    shown = st.path
    if st.type == "directory":
        raise IsADirectory(shown)
    if old == "":
        return ToolErrorText(
            "old_string is empty: give the exact text to replace "
            f"(use {call.exposed(WORKSPACE_TOOLS.FILESYSTEM.WRITE_FILE)} to write a whole file)."
        )
    if is_notebook_path(shown):
        from .notebook_files import edit_notebook

        return edit_notebook(call, st, shown, _json_edit(shown))
    content = decode_text(read_limited(fs, path, MAX_FILE_BYTES, size=st.size), shown)
    check = lambda a, b: call.check_lines_read(shown, a, b)  # noqa: E731
    updated, count, starts, new_span = replace_text(content, old, new, args["replace_all"], check)
    if updated is None:
        return _failure(content, old, count, starts)
    fs.write_file(path, updated, overwrite=True, expected_mtime=st.mtime)
    return _done(shown, starts, new_span, updated)


def _json_edit(shown: str) -> Callable[[str, str, str, bool], tuple[str | None, str]]:
    """The text replacement for a notebook's JSON: ``(updated, message)`` or ``(None, error)``."""

    def run(content: str, old: str, new: str, replace_all: bool) -> tuple[str | None, str]:
        updated, count, starts, new_span = replace_text(content, old, new, replace_all)
        if updated is None:
            return None, _failure(content, old, count, starts)
        return updated, _done(f"the JSON of {shown}", starts, new_span, updated)

    return run


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.FILESYSTEM.EDIT_FILE,
    description=DESCRIPTION,
    params=PARAMS,
    run=edit_file,
    title="Edit file",
    hints=ToolHints(destructive=True, idempotent=False),
    needs={"filesystem", "writable"},
    writes=True,
    options=("require_read_before_write",),
    write_path=lambda args: args["path"],
    check_reads=True,
)
