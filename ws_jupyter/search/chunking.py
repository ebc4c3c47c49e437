"""Splitting files into search chunks, and finding the lines of a chunk that match a query.

Whole lines only, so a result can always be shown as "lines a-b of file"; a few lines of overlap so
a passage that straddles a boundary is whole in at least one chunk. Line numbers are 1-based and in
*file* coordinates, so a chunk id ``notes.md#chunk-3`` with ``line_range=(120, 131)`` points to the
same lines an editor shows.

>>> [(c.start_line, c.end_line) for c in split_into_chunks("a\\nb\\nc\\nd", max_chars=4, overlap_lines=1)]
[(1, 2), (2, 3), (3, 4)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_CHUNK_CHARS",
    "DEFAULT_OVERLAP_LINES",
    "Chunk",
    "best_line_range",
    "line_count",
    "split_into_chunks",
]

DEFAULT_CHUNK_CHARS = 4000
DEFAULT_OVERLAP_LINES = 3


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
    max_lines: int = 12,
) -> tuple[int, int] | None:
    """1-based line range (within ``content``) of the densest window of query-term matches.

    Each distinct query term counts once per window, weighted (e.g. by IDF) so a window with the
    rare words wins over one repeating a common word; the window is trimmed to its first and last
    matching lines. None when no line contains a query term.
    """
    terms = set(query_terms)
    if not terms:
        return None
    line_terms: list[set[str]] = []
    any_match = False
    for line in content.split("\n"):
        found = terms.intersection(analyze(line)) if line else set()
        any_match = any_match or bool(found)
        line_terms.append(found)
    if not any_match:
        return None
    w = weights or (lambda _t: 1.0)
    weight = {t: max(w(t), 1e-6) for t in terms}
    best: tuple[float, int, int] | None = None
    n = len(line_terms)
    for start in range(n):
        if not line_terms[start]:
            continue
        covered: set[str] = set()
        last = start
        for end in range(start, min(n, start + max_lines)):
            if line_terms[end]:
                covered |= line_terms[end]
                last = end
        score = sum(weight[t] for t in covered)
        # prefer higher score, then the tighter window, then the earlier one
        key = (score, -(last - start), -start)
        if best is None or key > (best[0], -(best[2] - best[1]), -best[1]):
            best = (score, start, last)
    assert best is not None
    return best[1] + 1, best[2] + 1
