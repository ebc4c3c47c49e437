"""``SearchResult``: one hit of a workspace search.

A plain frozen value (no Jupyter knowledge: notebooks render it through ``jupyter/views/``)
that keeps, in ``score_details``, how each side ranked and scored the hit, so a user can see *why*
a hybrid result came first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["SearchResult"]


@dataclass(frozen=True)
class SearchResult:
    """A matching document or chunk.

    ``id`` is the indexed id (``path`` or ``path#chunk-N``); ``line_range`` is 1-based and
    inclusive, in the coordinates of the file the chunk came from; ``score_details`` holds
    ``{"bm25": {"rank", "score"}, "vector": {"rank", "score"}, "fusion": ...}`` for the sides that
    found the hit (ranks are 1-based).
    """

    id: str
    content: str
    score: float
    line_range: tuple[int, int] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    score_details: dict[str, Any] = field(default_factory=dict)

    @property
    def source(self) -> str:
        """The file (or document id) this hit belongs to."""
        return str(self.metadata.get("source") or self.id.split("#chunk-")[0])

    @property
    def cell(self) -> int | None:
        """For a hit in a notebook: the cell's index (``line_range`` is then within that cell)."""
        cell = self.metadata.get("cell")
        return cell if isinstance(cell, int) and not isinstance(cell, bool) else None

    @property
    def location(self) -> str:
        """Where the hit is, as tools print it: ``docs/a.md:3-7``, or ``nb.ipynb [cell 4]:2-5`` in a
        notebook (``[cell 4 output]`` for a hit in its outputs)."""
        where = self.source
        if self.cell is not None:
            part = " output" if self.metadata.get("part") == "outputs" else ""
            where += f" [cell {self.cell}{part}]"
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
        }

    def __repr__(self) -> str:
        lines = f", lines {self.line_range[0]}-{self.line_range[1]}" if self.line_range else ""
        preview = self.content[:60].replace("\n", " ")
        return f"SearchResult({self.id!r}, score={self.score:.4f}{lines}, {preview!r})"
