"""``SearchResult``: one hit of a workspace search, and its ``Snippet``.

A plain frozen value (no Jupyter knowledge: notebooks render it through ``jupyter/views/``)
that keeps, in ``score_details``, how each side ranked and scored the hit, so a user can see *why*
a hybrid result came first.

The snippet of a hit is its reported line range — what the agent tools print and the notebook
shows, so the lines under ``path:18-20`` are lines 18 to 20 — with a line of context, indentation
kept, and the words that match the query's terms marked (compared after the index's own analysis:
stemmed, stopwords never marked). It is computed only when asked for, so a search pays for the
snippets it shows, not for every hit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["SearchResult", "Snippet", "SnippetLine"]

_WORD = re.compile(r"[^\W_]+")
SNIPPET_MAX_LINES = 12
SNIPPET_MAX_LINE_CHARS = 240


@dataclass(frozen=True)
class SnippetLine:
    """One line of a snippet: its ``number`` in the file, its ``text`` (indentation kept; a very
    long line is cut, ``cut`` says so), ``marks`` (``(start, end)`` columns of words matching the
    query) and whether it lies in the hit's line range (``in_range``) or is context."""

    number: int
    text: str
    marks: tuple[tuple[int, int], ...] = ()
    in_range: bool = True
    cut: bool = False


@dataclass(frozen=True)
class Snippet:
    """The lines of a hit to show. ``omitted`` counts lines of the range left out (the range was
    longer than the snippet may be)."""

    lines: tuple[SnippetLine, ...]
    omitted: int = 0

    def text(self, numbers: bool = True) -> str:
        """Plain text: ``  18→    code`` lines (numbers as in ``workspace_read_file``)."""
        width = len(str(self.lines[-1].number)) if self.lines else 1
        out = []
        for ln in self.lines:
            body = ln.text + (" …" if ln.cut else "")
            out.append(f"{ln.number:>{width}}→{body}" if numbers else body)
        if self.omitted:
            out.append(f"… ({self.omitted} more line{'' if self.omitted == 1 else 's'} in range)")
        return "\n".join(out)


class SearchResult:
    """A matching document or chunk (an immutable value).

    ``id`` is the indexed id (``path`` or ``path#chunk-N``); ``line_range`` is 1-based and
    inclusive, in the coordinates of the file the chunk came from; ``start_line`` is the file line
    ``content`` starts at; ``kind`` is ``"file"`` for a workspace file's chunk and ``"text"`` for
    a document indexed from given text; ``score_details`` holds ``{"bm25": {"rank", "score"},
    "vector": {"rank", "score"}, "fusion": ...}`` for the sides that found the hit (ranks are
    1-based); ``terms`` are the query's analysed terms.

    The search engine hands ``line_range`` over as a function (``span=``) that is called the
    first time the range is read, so a search pays for the ranges of the hits that are shown.
    """

    __slots__ = ("_line_range", "_span", "analyzer", "content", "id", "kind", "metadata", "score",
                 "score_details", "start_line", "terms")

    id: str
    content: str
    score: float
    metadata: dict[str, Any]
    score_details: dict[str, Any]
    start_line: int
    kind: str
    terms: tuple[str, ...]
    analyzer: Callable[[str], list[str]] | None
    _line_range: tuple[int, int] | None
    _span: Callable[[], tuple[int, int] | None] | None

    def __init__(
        self,
        id: str,
        content: str,
        score: float,
        line_range: tuple[int, int] | None = None,
        metadata: dict[str, Any] | None = None,
        score_details: dict[str, Any] | None = None,
        start_line: int = 1,
        kind: str = "text",
        terms: tuple[str, ...] = (),
        analyzer: Callable[[str], list[str]] | None = None,
        *,
        span: Callable[[], tuple[int, int] | None] | None = None,
    ) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "id", id)
        setattr_(self, "content", content)
        setattr_(self, "score", score)
        setattr_(self, "_line_range", line_range)
        setattr_(self, "_span", span if line_range is None else None)
        setattr_(self, "metadata", {} if metadata is None else metadata)
        setattr_(self, "score_details", {} if score_details is None else score_details)
        setattr_(self, "start_line", start_line)
        setattr_(self, "kind", kind)
        setattr_(self, "terms", tuple(terms))
        setattr_(self, "analyzer", analyzer)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"SearchResult is immutable (cannot set {name!r})")

    @property
    def line_range(self) -> tuple[int, int] | None:
        span = self._span
        if span is not None:
            object.__setattr__(self, "_line_range", span())
            object.__setattr__(self, "_span", None)
        return self._line_range

    def _key(self) -> tuple[Any, ...]:
        return (self.id, self.content, self.score, self.line_range, self.metadata, self.score_details,
                self.start_line, self.kind, self.terms)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SearchResult):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # a value with dict fields, like the dataclass it was

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.id, self.content, self.score, self.line_range, self.metadata,
                           self.score_details, self.start_line, self.kind, self.terms, self.analyzer))

    @property
    def source(self) -> str:
        """The file (or document id) this hit belongs to."""
        return str(self.metadata.get("source") or self.id.split("#chunk-")[0])

    def snippet(self, context: int = 1, max_lines: int = SNIPPET_MAX_LINES,
                max_line_chars: int = SNIPPET_MAX_LINE_CHARS) -> Snippet:
        """The hit's line range (at most ``max_lines`` of it) plus ``context`` lines either side,
        clipped to the content, with the query's matching words marked."""
        lines = self.content.split("\n")
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()  # a final newline ends the last line; it does not start another
        first = self.start_line
        lo, hi = self.line_range or (first, first + len(lines) - 1)
        omitted = max(0, hi - lo + 1 - max_lines)
        hi -= omitted
        shown: list[SnippetLine] = []
        after = 0 if omitted else context  # a clipped range goes on: what follows is no context
        for number in range(max(first, lo - context), min(first + len(lines) - 1, hi + after) + 1):
            text = lines[number - first].rstrip("\r")
            cut = len(text) > max_line_chars
            if cut:
                text = text[:max_line_chars]
            shown.append(SnippetLine(number, text, self.marks(text), lo <= number <= hi, cut))
        while shown and not shown[0].in_range and not shown[0].text.strip():
            shown.pop(0)  # blank context says nothing
        while shown and not shown[-1].in_range and not shown[-1].text.strip():
            shown.pop()
        return Snippet(tuple(shown), omitted)

    def marks(self, text: str) -> tuple[tuple[int, int], ...]:
        """``(start, end)`` spans of the words of ``text`` whose analysis is one of the query's
        terms (so stopwords, which the index drops, are never marked)."""
        terms = set(self.terms)
        if not terms or not text:
            return ()
        analyze = self.analyzer or (lambda word: [word.lower()])
        spans = []
        for m in _WORD.finditer(text):
            if terms.intersection(analyze(m.group(0))):
                spans.append((m.start(), m.end()))
        return tuple(spans)

    @property
    def cell(self) -> int | None:
        """For a hit in a notebook: the cell's index (``line_range`` is then within that cell)."""
        cell = self.metadata.get("cell")
        return cell if isinstance(cell, int) and not isinstance(cell, bool) else None

    @property
    def location(self) -> str:
        """Where the hit is, as tools print it: ``docs/a.md:3-7``, or ``nb.ipynb [cell 4]:2-5`` in a
        notebook (``[cell 4 output]`` for a hit in its outputs); ``notes [indexed text]:1-3`` for a
        document indexed from given text, so it is never taken for a file."""
        where = self.source
        if self.cell is not None:
            part = " output" if self.metadata.get("part") == "outputs" else ""
            where += f" [cell {self.cell}{part}]"
        if self.kind != "file":
            where += " [indexed text]"
        if self.line_range:
            a, b = self.line_range
            where += f":{a}-{b}"
        return where

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "score": self.score,
            "line_range": list(self.line_range) if self.line_range else None,
            "metadata": dict(self.metadata),
            "score_details": dict(self.score_details),
            "start_line": self.start_line,
            "kind": self.kind,
        }

    def __repr__(self) -> str:
        lines = f", lines {self.line_range[0]}-{self.line_range[1]}" if self.line_range else ""
        preview = self.content[:60].replace("\n", " ")
        return f"SearchResult({self.id!r}, score={self.score:.4f}{lines}, {preview!r})"


def _rebuild(*args: Any) -> SearchResult:
    return SearchResult(*args)
