"""What the search index is doing: progress of one indexing pass, and the state of the whole index.

``IndexProgress`` is what a pass reports file by file (the ``progress`` callback of
``rebuild_search_index``); ``IndexStatus`` is a snapshot of the index at any moment — documents,
the pass under way, vectors embedded so far — for the search output ("indexing 1,234 of 5,000
files"), ``%ws info`` and progress bars that update while the notebook is idle.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["IndexProgress", "IndexStatus"]


@dataclass(frozen=True)
class IndexProgress:
    """One progress update: ``done`` of ``total`` files handled, the current ``path``;
    ``phase`` is ``"scan"``, ``"index"``, ``"embed"`` or ``"done"``."""

    done: int
    total: int
    path: str | None
    phase: str

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


@dataclass(frozen=True)
class IndexStatus:
    """A snapshot of a search index.

    ``documents`` indexed (files are chunked: a document is a chunk or a free-text document);
    ``indexing`` while a pass over files runs, with ``files_done`` of ``files_total`` handled
    (0/0 while it is still listing files); ``vectors`` when the index has vector search, then
    ``embedded`` documents have their vector and ``embedding`` says the background worker is
    computing the rest; ``error`` is the last embedding failure (the worker stops on it; the next
    change or :meth:`~ws_jupyter.Workspace.wait_for_index` tries again); ``too_large`` names
    the files the last pass left out because their text is over the size cap (grep still searches
    them).
    """

    documents: int
    indexing: bool = False
    files_done: int = 0
    files_total: int = 0
    vectors: bool = False
    embedded: int = 0
    embedding: bool = False
    error: str | None = None
    too_large: tuple[str, ...] = ()

    @property
    def pending(self) -> int:
        """Documents still waiting for their vector."""
        return max(0, self.documents - self.embedded) if self.vectors else 0

    @property
    def coverage(self) -> float:
        """Fraction of documents with a vector (1.0 without vector search or documents)."""
        if not self.vectors or not self.documents:
            return 1.0
        return min(1.0, self.embedded / self.documents)

    @property
    def ready(self) -> bool:
        """Nothing left to do: no pass running, every document embedded."""
        return not self.indexing and self.pending == 0

    def describe(self) -> str:
        """One line for people and models: what is searchable now."""
        parts = []
        if self.indexing:
            if self.files_total:
                parts.append(f"indexing {self.files_done:,} of {self.files_total:,} files")
            else:
                parts.append("indexing: listing files")
        if not self.documents and not self.indexing:
            return "index is empty"
        if self.vectors and self.pending:
            state = f"embedding in the background: vectors for {self.embedded:,} of {self.documents:,} documents ({self.coverage:.0%})"
            if self.error:
                state = f"embedding stopped ({self.error}): vectors for {self.embedded:,} of {self.documents:,} documents"
            parts.append(state)
        if not parts:
            noun = "document" if self.documents == 1 else "documents"
            parts.append(f"ready: {self.documents:,} {noun}" + (", all embedded" if self.vectors else ""))
        if self.too_large:
            parts.append(self.skipped_note())
        return "; ".join(parts)

    def skipped_note(self) -> str:
        """``not indexed (too large): a.ipynb, b.log``: the files search cannot find ("" when none)."""
        if not self.too_large:
            return ""
        shown = ", ".join(self.too_large[:5]) + (f" and {len(self.too_large) - 5} more" if len(self.too_large) > 5 else "")
        return f"not indexed (text over the size cap; grep still searches them): {shown}"

    def __str__(self) -> str:
        return self.describe()
