"""Splitting files into search chunks, and finding the lines of a chunk that match a query.

Whole lines only, so a result can always be shown as "lines a-b of file"; a few lines of overlap so
a passage that straddles a boundary is whole in at least one chunk. Line numbers are 1-based and in
*file* coordinates, so a chunk id ``notes.md#chunk-3`` with ``line_range=(120, 131)`` points to the
same lines an editor shows.

>>> [(c.start_line, c.end_line) for c in split_into_chunks("a\\nb\\nc\\nd", max_chars=4, overlap_lines=1)]
[(1, 2), (2, 3), (3, 4)]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_CHUNK_CHARS",
    "DEFAULT_OVERLAP_LINES",
    "MAX_RANGE_LINES",
    "Chunk",
    "best_line_range",
    "line_count",
    "line_range_from_terms",
    "line_range_in",
    "split_into_chunks",
    "terms_pattern",
]

DEFAULT_CHUNK_CHARS = 4000
DEFAULT_OVERLAP_LINES = 3
MAX_RANGE_LINES = 12  # the longest line range a hit reports when its terms are spread out


@dataclass(frozen=True)
class Chunk:
    """``content`` spans lines ``start_line..end_line`` (1-based, inclusive) of its file."""

    content: str
    start_line: int
    end_line: int


def line_count(text: str) -> int:
    """Lines as an editor numbers them: a final newline does not add a line; "" has one line."""
    n = text.count("\n")
    return n if n and text.endswith("\n") else n + 1


def split_into_chunks(
    text: str, max_chars: int = DEFAULT_CHUNK_CHARS, overlap_lines: int = DEFAULT_OVERLAP_LINES
) -> list[Chunk]:
    """Whole text when it fits in ``max_chars``; otherwise chunks of whole lines with overlap.

    A single line longer than ``max_chars`` (minified JS, a CSV row) is cut into pieces that all
    report that line. Empty text gives one empty chunk, so an empty file is still findable by name.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be >= 1")
    if len(text) <= max_chars:
        return [Chunk(text, 1, line_count(text))]
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it does not start another
    chunks: list[Chunk] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if len(line) > max_chars:
            for k in range(0, len(line), max_chars):
                chunks.append(Chunk(line[k:k + max_chars], i + 1, i + 1))
            i += 1
            continue
        size = 0
        j = i
        while j < n and (j == i or size + len(lines[j]) + 1 <= max_chars) and len(lines[j]) <= max_chars:
            size += len(lines[j]) + 1
            j += 1
        content = "\n".join(lines[i:j])
        chunks.append(Chunk(content, i + 1, j))
        if j >= n:
            break
        # next chunk starts overlap_lines before j, but always moves forward
        i = max(i + 1, j - overlap_lines)
    return chunks


def best_line_range(
    content: str,
    query_terms: Sequence[str],
    analyze: Callable[[str], list[str]],
    weights: Callable[[str], float] | None = None,
    max_lines: int = MAX_RANGE_LINES,
) -> tuple[int, int] | None:
    """1-based line range (within ``content``) of the densest window of query-term matches.

    Each distinct query term counts once per window, weighted (e.g. by IDF) so a window with the
    rare words wins over one repeating a common word; the window is trimmed to its first and last
    matching lines. None when no line contains a query term. (This analyses every line; the
    search engine uses :func:`line_range_from_terms` on lines analysed at index time.)
    """
    terms = set(query_terms)
    if not terms:
        return None
    matches: list[tuple[int, frozenset[str]]] = []
    for i, line in enumerate(content.split("\n")):
        if line:
            found = terms.intersection(analyze(line))
            if found:
                matches.append((i, frozenset(found)))
    return _densest_window(matches, terms, weights, max_lines)


def line_range_from_terms(
    line_terms: str,
    query_terms: Sequence[str],
    weights: Callable[[str], float] | None = None,
    max_lines: int = MAX_RANGE_LINES,
) -> tuple[int, int] | None:
    """:func:`best_line_range` from analysed lines (``Analyzer.line_terms``: one line per
    content line, terms separated by spaces): the same range, found by one regular-expression
    scan instead of analysing the content again."""
    terms = set(query_terms)
    if not terms or not line_terms:
        return None
    w = weights or (lambda _t: 1.0)
    return line_range_in(line_terms, terms_pattern(terms), {t: max(w(t), 1e-6) for t in terms}, max_lines)


def terms_pattern(terms: Iterable[str]) -> re.Pattern[str]:
    """Matches whole terms of analysed lines (compile once per query, use for every hit)."""
    alternatives = "|".join(re.escape(t) for t in sorted(set(terms), key=len, reverse=True))
    return re.compile(r"(?<![^ \n])(" + alternatives + r")(?![^ \n])")


def line_range_in(line_terms: str, pattern: re.Pattern[str], weight: Mapping[str, float],
                  max_lines: int = MAX_RANGE_LINES) -> tuple[int, int] | None:
    """The range of :func:`line_range_from_terms` with the query's ``pattern`` and term
    ``weight`` (every term > 0) prepared once for all hits."""
    by_line: dict[int, set[str]] = {}
    line, pos = 0, 0
    count = line_terms.count
    for m in pattern.finditer(line_terms):
        start = m.start()
        line += count("\n", pos, start)
        pos = start
        found = by_line.get(line)
        if found is None:
            by_line[line] = {m.group(1)}
        else:
            found.add(m.group(1))
    if not by_line:
        return None
    if len(by_line) == 1:
        (only,) = by_line
        return only + 1, only + 1
    return _window(sorted(by_line.items()), weight, max_lines)


def _densest_window(
    matches: list[tuple[int, frozenset[str]]],
    terms: set[str],
    weights: Callable[[str], float] | None,
    max_lines: int,
) -> tuple[int, int] | None:
    """The best window over ``matches`` (``(line index, terms found)``, ascending)."""
    if not matches:
        return None
    w = weights or (lambda _t: 1.0)
    return _window(matches, {t: max(w(t), 1e-6) for t in terms}, max_lines)


def _window(matches: Sequence[tuple[int, Any]], weight: Mapping[str, float], max_lines: int) -> tuple[int, int]:
    """Highest weight of distinct terms covered within ``max_lines`` lines, then the tighter
    window, then the earlier one; trimmed to its first and last matching lines (1-based)."""
    best_key: tuple[float, int, int] | None = None
    best_last = 0
    n = len(matches)
    for a in range(n):
        start = matches[a][0]
        limit = start + max_lines
        covered = set(matches[a][1])
        last = start
        b = a + 1
        while b < n and matches[b][0] < limit:
            covered |= matches[b][1]
            last = matches[b][0]
            b += 1
        key = (sum(weight[t] for t in covered), start - last, -start)
        if best_key is None or key > best_key:
            best_key, best_last = key, last
    assert best_key is not None
    return -best_key[2] + 1, best_last + 1
