"""Combining a keyword ranking and a vector ranking into one (hybrid search).

Two methods, both over each side's own candidate list:

* ``rrf`` — reciprocal rank fusion, ``sum 1 / (k + rank)`` with ``k = 60``: uses ranks only, so
  it needs no calibration between BM25's unbounded scores and cosine similarities;
* ``linear`` — ``w * vector + (1 - w) * bm25`` over scores min-max normalised *per side* (a side
  whose scores are all equal maps them to 1). ``vector_weight`` is ``w`` (default 0.5).

Which one is the default is decided by measurement (``bench/search_quality.py``; the figures are
in docs/search.md).

While vectors are still being computed, some documents have no vector yet. Fused as they are, they
would get nothing from the vector side and fall below documents that have one, even better ones
(hybrid search was then worse than BM25 alone until most vectors existed). With ``has_vector``,
each document without a vector keeps the place BM25 gave it, and the documents with one are fused
among themselves into the remaining places: at no coverage the ranking is BM25's, at full
coverage it is the plain fusion, and in between it moves from one to the other. (Of the options
measured on both bench collections — this one, BM25 below a coverage threshold, scaling the vector
weight by the coverage, and imputing the missing vector score from BM25, its mean or a
regression — it was the only one at or above BM25 at every coverage; the curve is in docs/search.md.)

>>> [i for i, _ in fuse([("a", 3.0), ("b", 1.0)], [("b", 0.9), ("c", 0.2)], "rrf")]
['b', 'a', 'c']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

__all__ = ["DEFAULT_FUSION", "RRF_K", "Fusion", "fuse"]

Fusion = Literal["rrf", "linear"]
RRF_K = 60
DEFAULT_FUSION: Fusion = "linear"


def _minmax(scores: Sequence[float]) -> list[float]:
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi - lo <= 1e-12:
        return [1.0] * len(scores)
    return [(s - lo) / (hi - lo) for s in scores]


def fuse(
    bm25: Sequence[tuple[str, float]],
    vector: Sequence[tuple[str, float]],
    method: Fusion = DEFAULT_FUSION,
    vector_weight: float = 0.5,
    rrf_k: int = RRF_K,
    has_vector: Callable[[str], bool] | None = None,
) -> list[tuple[str, float, dict[str, Any]]]:
    """Fused ``(id, score, details)`` best first; inputs are ``(id, score)`` lists best first.

    ``details`` has ``bm25``/``vector`` entries (``rank`` 1-based, raw ``score``) for the sides that
    found the id. Ties keep BM25's order, then the vector side's. ``has_vector(id)`` False for a
    document means it has no vector (yet): it keeps its BM25 place (``details["kept_bm25_place"]``).
    """
    if method not in ("rrf", "linear"):
        raise ValueError(f"unknown fusion {method!r} (use 'rrf' or 'linear')")
    if not 0.0 <= vector_weight <= 1.0:
        raise ValueError(f"vector_weight must be between 0 and 1, got {vector_weight}")
    details: dict[str, dict[str, Any]] = {}
    order: dict[str, int] = {}
    for side, hits in (("bm25", bm25), ("vector", vector)):
        for rank, (doc_id, score) in enumerate(hits, 1):
            details.setdefault(doc_id, {})[side] = {"rank": rank, "score": float(score)}
            order.setdefault(doc_id, len(order))
    fused: dict[str, float] = dict.fromkeys(details, 0.0)
    if method == "rrf":
        weights = {"bm25": 1.0 - vector_weight, "vector": vector_weight}
        # weights scaled so the default 0.5/0.5 gives the textbook sum of 1/(k + rank)
        for doc_id, d in details.items():
            fused[doc_id] = sum(2.0 * weights[side] / (rrf_k + d[side]["rank"]) for side in d)
    else:
        for side, hits, w in (("bm25", bm25, 1.0 - vector_weight), ("vector", vector, vector_weight)):
            norm = _minmax([s for _, s in hits])
            for (doc_id, _), value in zip(hits, norm):
                details[doc_id][side]["normalized"] = value
                fused[doc_id] += w * value
    ranked = [(doc_id, score, details[doc_id])
              for doc_id, score in sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))]
    if has_vector is None:
        return ranked
    return _keep_bm25_places(ranked, bm25, has_vector)


def _keep_bm25_places(ranked: list[tuple[str, float, dict[str, Any]]], bm25: Sequence[tuple[str, float]],
                      has_vector: Callable[[str], bool]) -> list[tuple[str, float, dict[str, Any]]]:
    """Documents without a vector stay at their BM25 rank; the others fill BM25's remaining
    places in fused order (those beyond BM25's list follow)."""
    known = {doc_id for doc_id, _ in bm25 if not has_vector(doc_id)}
    if not known:
        return ranked
    by_id = {r[0]: r for r in ranked}
    fused = iter([r for r in ranked if r[0] not in known])
    out: list[tuple[str, float, dict[str, Any]]] = []
    for doc_id, _ in bm25:
        if doc_id in known:
            by_id[doc_id][2]["kept_bm25_place"] = True
            out.append(by_id[doc_id])
        else:
            nxt = next(fused, None)
            if nxt is not None:
                out.append(nxt)
    out.extend(fused)
    return out
