"""What the search index is doing: progress of one indexing pass, and the state of the whole index.

``IndexProgress`` is what a pass reports file by file (the ``progress`` callback of
``rebuild_search_index``); ``IndexStatus`` is a snapshot of the index at any moment — documents,
the pass under way, vectors embedded so far and the time left — for the search output ("indexing
1,234 of 5,000 files"), ``%ws info`` and progress bars that update while the notebook is idle.
``EmbedRate`` is where that time comes from: what is left to embed over the recent speed.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EmbedRate", "IndexProgress", "IndexStatus", "format_duration"]


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
    computing the rest, ``eta_seconds`` (None until a first batch was timed) how long that should
    take at the recent speed; ``without_vectors`` documents are searched by BM25 only by the embed
    policy, ``skipped`` says why, as ``(reason, files)`` pairs; ``error`` is the last embedding
    failure, or what keeps vector search from running here (the worker stops on it; the next
    change or :meth:`~ws_jupyter.Workspace.wait_for_index` tries again); ``too_large`` names the
    files the last pass left out because their text is over the size cap (grep still searches
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
    without_vectors: int = 0
    skipped: tuple[tuple[str, int], ...] = ()
    eta_seconds: float | None = None
    too_large: tuple[str, ...] = ()

    @property
    def embeddable(self) -> int:
        """Documents that get a vector (all but those the embed policy leaves to BM25)."""
        return max(0, self.documents - self.without_vectors) if self.vectors else 0

    @property
    def pending(self) -> int:
        """Documents still waiting for their vector."""
        return max(0, self.embeddable - self.embedded) if self.vectors else 0

    @property
    def coverage(self) -> float:
        """Fraction of the documents that get a vector which have it (1.0 without vector search
        or such documents)."""
        if not self.vectors or not self.embeddable:
            return 1.0
        return min(1.0, self.embedded / self.embeddable)

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
            of = f"vectors for {self.embedded:,} of {self.embeddable:,} documents"
            if self.error:
                state = f"embedding stopped ({self.error}): {of}"
            else:
                state = f"embedding in the background: {of} ({self.coverage:.0%})"
                if self.eta_seconds is not None:
                    state += f", about {format_duration(self.eta_seconds)} left"
            parts.append(state)
        elif self.vectors and self.error:
            parts.append(f"vector search stopped ({self.error})")
        if not parts:
            noun = "document" if self.documents == 1 else "documents"
            parts.append(f"ready: {self.documents:,} {noun}" + (", all embedded" if self.vectors and not self.without_vectors else ""))
        if self.vectors and self.without_vectors:
            why = ", ".join(f"{reason} {files:,}" for reason, files in self.skipped)
            noun = "document" if self.without_vectors == 1 else "documents"
            parts.append(f"{self.without_vectors:,} {noun} searched by keywords only ({why} files)")
        if self.too_large:
            parts.append(self.too_large_note())
        return "; ".join(parts)

    def too_large_note(self) -> str:
        """``not indexed (too large): a.ipynb, b.log``: the files search cannot find ("" when none)."""
        if not self.too_large:
            return ""
        shown = ", ".join(self.too_large[:5]) + (f" and {len(self.too_large) - 5} more" if len(self.too_large) > 5 else "")
        return f"not indexed (text over the size cap; grep still searches them): {shown}"

    def __str__(self) -> str:
        return self.describe()


def format_duration(seconds: float) -> str:
    """``"40 s"``, ``"3 min"``, ``"1 h 20 min"``: a time left, rounded as people say it."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{max(s, 1)} s"
    if s < 3600:
        return f"{round(s / 60)} min"
    h, m = divmod(round(s / 60), 60)
    return f"{h} h {m} min" if m else f"{h} h"


class EmbedRate:
    """The recent embedding speed, in characters per second (smoothed over batches: the
    machine's load changes), and the time left for a number of characters at that speed."""

    def __init__(self, smoothing: float = 0.3) -> None:
        self._alpha = smoothing
        self._rate: float | None = None

    def record(self, chars: int, seconds: float) -> None:
        if chars <= 0 or seconds <= 0:
            return
        rate = chars / seconds
        self._rate = rate if self._rate is None else (1 - self._alpha) * self._rate + self._alpha * rate

    @property
    def chars_per_second(self) -> float | None:
        return self._rate

    def eta(self, chars_left: int) -> float | None:
        """Seconds to embed ``chars_left`` characters; None before the first measurement."""
        if chars_left <= 0:
            return 0.0
        return None if self._rate is None else chars_left / self._rate
