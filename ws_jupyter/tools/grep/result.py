"""What a grep search found (``GrepResult``: per-file matches and context, totals, skips) and how
the tool shows it (``format_result``). Both engines fill the same ``GrepResult``, so their output
is the same text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "MAX_LINE_CHARS",
    "MAX_MATCHES",
    "TIME_BUDGET",
    "FileMatches",
    "GrepResult",
    "Matches",
    "SearchOptions",
    "clip_line",
    "format_result",
    "tree_order",
]

#: Matching lines shown at most (the summary still counts them all).
MAX_MATCHES = 1000
#: Characters of one line shown (around the match).
MAX_LINE_CHARS = 500
#: Seconds a search may take by default.
TIME_BUDGET = 60.0


class Matches(Protocol):
    """Matching lines of one file (:class:`FileMatches`) or of one notebook cell (``CellMatches``)."""

    path: str
    matches: list[tuple[int, int, str]]
    lines: dict[int, str]


@dataclass
class FileMatches:
    """Matching lines of one file: ``matches`` as (line, column, text); ``lines`` every line known
    (matches and the context around them), by number."""

    path: str
    matches: list[tuple[int, int, str]] = field(default_factory=list)
    lines: dict[int, str] = field(default_factory=dict)


@dataclass
class GrepResult:
    """What a search found. ``files`` hold the lines shown (after ``offset``); ``total_matches`` /
    ``total_files`` count everything that matches (``count_complete`` False when counting stopped
    at the time budget); ``file_counts`` is the files-only listing."""

    files: list[Matches]  # notebooks contribute one CellMatches per cell with matches
    truncated: bool = False
    target_missing: bool = False
    binary_skipped: int = 0
    read_errors: int = 0
    engine: str = "python"
    timed_out: bool = False
    total_matches: int = 0
    total_files: int = 0
    count_complete: bool = True
    offset: int = 0
    file_counts: list[tuple[str, int]] | None = None
    time_budget: float = TIME_BUDGET  # the seconds this search was given

    @property
    def match_count(self) -> int:
        return sum(len(f.matches) for f in self.files)

    def add_total(self, matches: int) -> None:
        if matches > 0:
            self.total_matches += matches
            self.total_files += 1


def clip_line(text: str, col: int) -> str:
    """A line as shown: at most ``MAX_LINE_CHARS``, around the match at column ``col``."""
    if len(text) <= MAX_LINE_CHARS:
        return text
    if col <= MAX_LINE_CHARS - 100:
        return text[:MAX_LINE_CHARS] + "..."
    start = max(0, col - 1 - 100)
    piece = text[start : start + MAX_LINE_CHARS]
    return "..." + piece + ("..." if start + MAX_LINE_CHARS < len(text) else "")


def tree_order(path: str) -> tuple[tuple[int, str, str], ...]:
    """Tree order (the walker's): at each level directories first, then case-insensitive names."""
    parts = path.split("/")
    return tuple((0 if i < len(parts) - 1 else 1, p.lower(), p) for i, p in enumerate(parts))


@dataclass(frozen=True)
class SearchOptions:
    respect_gitignore: bool = True
    files_only: bool = False
    count_all: bool = True
    notebook_outputs: bool = False


# --- formatting -----------------------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else ("es" if word.endswith("ch") else "s"))


def format_result(result: GrepResult, context: int) -> tuple[str, str]:
    """(summary line, body) as the tool shows them.

    The summary counts everything that matches; when fewer are shown it says which and how to
    continue: ``5210 matches across 87 files (showing matches 1-1000; continue with offset=1000)``.
    """
    at_least = "" if result.count_complete else "at least "
    if result.file_counts is not None:
        listed = result.file_counts
        summary = (
            f"{at_least}{_plural(result.total_files, 'file')} with {_plural(result.total_matches, 'match')}"
        )
        if listed and (result.truncated or result.offset):
            first = result.offset + 1
            summary += f" (showing files {first}-{result.offset + len(listed)}"
            summary += f"; continue with offset={result.offset + len(listed)})" if result.truncated else ")"
        body = "\n".join(f"{path}: {n}" for path, n in listed)
    else:
        n = result.match_count
        summary = (
            f"{at_least}{_plural(result.total_matches, 'match')} across {_plural(result.total_files, 'file')}"
        )
        if n and (result.truncated or result.offset):
            first = result.offset + 1
            summary += f" (showing matches {first}-{result.offset + n}"
            more = result.truncated and result.offset + n < result.total_matches
            summary += (
                f"; continue with offset={result.offset + n})" if more or not result.count_complete else ")"
            )
        elif not n and result.offset and result.total_matches:
            summary += f" (offset={result.offset} is past the last match)"
        body = ""
    if result.target_missing:
        summary += " (target path not found: nothing searched)"
    if result.binary_skipped:
        summary += f" ({result.binary_skipped} file skipped: binary)"
    if result.read_errors:
        k = result.read_errors
        summary += f" ({k} {'path' if k == 1 else 'paths'} skipped: read error)"
    if result.timed_out:
        summary += f" (search stopped after {int(result.time_budget)}s)"
    elif not result.count_complete:
        summary += " (counting stopped at the time limit)"
    if result.file_counts is not None:
        return summary, body
    out: list[str] = []
    for fm in result.files:
        match_cols = {line: (col, text) for line, col, text in fm.matches}
        if context <= 0:
            for line, col, text in fm.matches:
                out.append(f"{fm.path}:{line}:{col}: {clip_line(text, col)}")
            continue
        wanted: set[int] = set()
        for line, _, _ in fm.matches:
            wanted.update(range(max(1, line - context), line + context + 1))
        shown = sorted(k for k in wanted if k in fm.lines)
        prev = None
        for k in shown:
            if (prev is not None and k != prev + 1) or (prev is None and out):
                out.append("--")
            prev = k
            if k in match_cols:
                col, text = match_cols[k]
                out.append(f"{fm.path}:{k}:{col}: {clip_line(text, col)}")
            else:
                out.append(f"{fm.path}:{k}- {clip_line(fm.lines[k], 1)}")
    return summary, "\n".join(out)
