"""An incremental BM25 (Okapi) inverted index whose scores equal rank-bm25's ``BM25Okapi``.

Why not rank-bm25 itself: it scores every document for every query (a Python loop over the
corpus per query term) and can only be rebuilt whole. Here each term keeps a postings list
(document slots + term frequencies in compact ``array`` buffers that numpy reads without copying),
so a query touches only the documents that contain its terms, and adding, replacing or removing a
document costs time proportional to that document:

* add: one append per distinct term of the document — buffered, and applied in bulk (numpy
  sorts the postings of many documents at once) before anything reads the index, so indexing a
  tree costs a fraction of a Python loop per term;
* remove: a tombstone plus per-term document-frequency updates; dead postings are skipped at
  query time and swept by an occasional compaction (amortised O(1) per removed posting);
* corpus statistics rank-bm25 needs (N, average length, the *average IDF* behind its epsilon
  floor for very common terms) are kept as running totals — the average IDF from a histogram of
  document frequencies, so it costs O(distinct df values), not O(vocabulary).

For the same corpus and the same tokens the scores are those of ``rank_bm25.BM25Okapi`` (same
formula, same IDF floor, same evaluation order), which ``tests/search/test_bm25.py`` checks.

>>> idx = BM25Index()
>>> idx.add("a", ["cat", "sat"]); idx.add("b", ["dog", "ran"]); idx.add("c", ["bird", "sang"])
>>> [doc_id for doc_id, _ in idx.top_k(["cat"], 5)]
['a']
"""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import IndexCorruptedError

__all__ = ["BM25Index"]

_FORMAT = "ws-jupyter-bm25/1"
# Above this fraction of touched postings per slot, dense accumulation beats sorting candidates.
_DENSE_FRACTION = 1 / 16
_WEIGHT_CACHE_TERMS = 4096
_SEED_DOCS = 256
_PRUNE_MIN_SLOTS = 200_000  # below this, one dense pass over the postings is cheaper than pruning
_BUFFER_TOKENS = 2_000_000  # added documents wait in a buffer up to this many tokens


class BM25Index:
    """Documents are string ids with token lists; ``top_k`` returns ``(id, score)`` best first.

    Thread-safe: every public method takes the index lock, so a background indexer and a
    notebook cell can use one index at the same time.
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.k1 = float(k1)
        self.b = float(b)
        self.epsilon = float(epsilon)
        self._lock = threading.RLock()
        self._reset()

    # ------------------------------------------------------------------ state
    def _reset(self) -> None:
        self._slot_of: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._dl = array("i")  # document length (tokens) per slot
        self._alive = bytearray()  # 1 per live slot
        self._doc_terms: list[array | None] = []  # distinct term ids per slot (for removal)
        self._vocab: dict[str, int] = {}
        self._terms: list[str] = []
        self._post_docs: list[array] = []
        self._post_tf: list[array] = []
        self._df = array("i")
        self._df_hist: Counter[int] = Counter()
        self._n = 0
        self._total_len = 0
        self._dead_slots = 0
        self._avg_idf_cache: tuple[int, float] | None = None
        self._version = 0
        # per-term (slots, contributions) for the current corpus version: repeated and popular
        # query terms cost one concatenation instead of a recomputation
        self._weights: dict[int, tuple[np.ndarray, np.ndarray, float, float]] = {}
        self._weights_version = -1
        # documents added but not yet in the postings (id -> tokens), applied by _flush
        self._buffer: dict[str, Sequence[str]] = {}
        self._buffered_tokens = 0

    # ------------------------------------------------------------------ basic protocol
    def __len__(self) -> int:
        with self._lock:
            self._flush()
            return self._n

    def __contains__(self, doc_id: object) -> bool:
        with self._lock:
            return doc_id in self._buffer or doc_id in self._slot_of

    def ids(self) -> list[str]:
        """Live document ids in insertion order (a replaced document moves to the end)."""
        with self._lock:
            self._flush()
            return [i for i in self._ids if i is not None]

    @property
    def vocabulary_size(self) -> int:
        with self._lock:
            self._flush()
            return sum(self._df_hist.values())

    @property
    def average_length(self) -> float:
        with self._lock:
            self._flush()
            return self._total_len / self._n if self._n else 0.0

    def clear(self) -> None:
        with self._lock:
            self._reset()

    # ------------------------------------------------------------------ mutation
    def add(self, doc_id: str, tokens: Sequence[str]) -> None:
        """Adds ``doc_id`` (replacing a previous version of it) in O(len(tokens)), amortised:
        the document waits in a buffer that the next read of the index applies in bulk."""
        with self._lock:
            old = self._buffer.pop(doc_id, None)
            if old is not None:
                self._buffered_tokens -= len(old)
            self._buffer[doc_id] = tokens
            self._buffered_tokens += len(tokens)
            if self._buffered_tokens > _BUFFER_TOKENS:
                self._flush()

    def _flush(self) -> None:
        """(Lock held.) Applies the buffered documents: their postings in one sort, per term."""
        if not self._buffer:
            return
        items = list(self._buffer.items())
        self._buffer = {}
        self._buffered_tokens = 0
        for doc_id, _ in items:
            slot = self._slot_of.get(doc_id)
            if slot is not None:
                self._remove_slot(slot)
        vocab = self._vocab
        lengths = [len(t) for _, t in items]
        tokens = list(itertools.chain.from_iterable(t for _, t in items))
        for term in sorted(set(tokens).difference(vocab)):
            vocab[term] = len(self._terms)
            self._terms.append(term)
            self._post_docs.append(array("i"))
            self._post_tf.append(array("i"))
            self._df.append(0)
        n_docs, base, nterms = len(items), len(self._ids), len(self._terms)
        tids = np.fromiter(map(vocab.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        keys = np.repeat(np.arange(n_docs, dtype=np.int64), lengths) * nterms + tids
        uniq, counts = np.unique(keys, return_counts=True)  # (document, term) pairs, sorted
        u_doc = uniq // nterms
        u_tid = (uniq - u_doc * nterms).astype(np.int32)
        # postings: grouped by term, in slot order within a term (new slots follow every old one)
        order = np.argsort(u_tid, kind="stable")
        t_sorted = u_tid[order]
        slots = memoryview((u_doc[order] + base).astype(np.int32).tobytes())
        tfs = memoryview(counts[order].astype(np.int32).tobytes())
        cuts = np.flatnonzero(np.diff(t_sorted)) + 1
        starts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [len(t_sorted)]))
        touched = t_sorted[starts] if len(t_sorted) else t_sorted
        post_docs, post_tf = self._post_docs, self._post_tf
        for tid, a, e in zip(touched.tolist(), (4 * starts).tolist(), (4 * ends).tolist()):
            post_docs[tid].frombytes(slots[a:e])
            post_tf[tid].frombytes(tfs[a:e])
        # document frequencies and their histogram, per distinct value rather than per term
        df = np.frombuffer(self._df, dtype=np.int32)
        old = df[touched]
        new = old + (ends - starts).astype(np.int32)
        df[touched] = new
        del df  # (a view of the array: it must not outlive this call, the array grows)
        hist = self._df_hist
        for value, count in zip(*np.unique(old[old > 0], return_counts=True)):
            left = hist[int(value)] - int(count)
            if left:
                hist[int(value)] = left
            else:
                del hist[int(value)]
        for value, count in zip(*np.unique(new, return_counts=True)):
            hist[int(value)] += int(count)
        bounds = np.searchsorted(u_doc, np.arange(n_docs + 1)).tolist()
        terms_blob = memoryview(u_tid.tobytes())
        for k, (doc_id, _) in enumerate(items):
            self._slot_of[doc_id] = base + k
            self._ids.append(doc_id)
            terms = array("i")
            terms.frombytes(terms_blob[4 * bounds[k]:4 * bounds[k + 1]])  # (array() would read ints)
            self._doc_terms.append(terms)
        self._dl.extend(lengths)
        self._alive.extend(b"\x01" * n_docs)
        self._n += n_docs
        self._total_len += sum(lengths)
        self._version += 1

    def remove(self, doc_id: str) -> bool:
        """Removes one document in O(its distinct terms); False when it was not indexed."""
        with self._lock:
            self._flush()
            slot = self._slot_of.get(doc_id)
            if slot is None:
                return False
            self._remove_slot(slot)
            self._maybe_compact()
            return True

    def _remove_slot(self, slot: int) -> None:
        doc_id = self._ids[slot]
        assert doc_id is not None
        del self._slot_of[doc_id]
        self._ids[slot] = None
        self._alive[slot] = 0
        df = self._df
        hist = self._df_hist
        terms = self._doc_terms[slot]
        assert terms is not None
        for tid in terms:
            old = df[tid]
            hist[old] -= 1
            if not hist[old]:
                del hist[old]
            df[tid] = old - 1
            if old > 1:
                hist[old - 1] += 1
        self._doc_terms[slot] = None
        self._n -= 1
        self._total_len -= self._dl[slot]
        self._dead_slots += 1
        self._version += 1

    def _maybe_compact(self) -> None:
        if self._dead_slots >= 64 and self._dead_slots * 4 >= len(self._ids):
            self._compact()

    def _compact(self) -> None:
        """Drops tombstoned slots and unused terms (O(total postings), run rarely)."""
        alive = np.frombuffer(bytes(self._alive), dtype=np.uint8).astype(bool) if self._alive else np.zeros(0, bool)
        remap = np.cumsum(alive, dtype=np.int64) - 1
        new_terms: list[str] = []
        new_vocab: dict[str, int] = {}
        new_docs: list[array] = []
        new_tf: list[array] = []
        new_df = array("i")
        term_remap = np.full(len(self._terms), -1, dtype=np.int64)
        for tid, term in enumerate(self._terms):
            if self._df[tid] <= 0:
                continue
            docs = np.frombuffer(self._post_docs[tid], dtype=np.int32)
            tfs = np.frombuffer(self._post_tf[tid], dtype=np.int32)
            keep = alive[docs]
            nd = array("i", remap[docs[keep]].astype(np.int32).tobytes())
            nt = array("i", tfs[keep].tobytes())
            del docs, tfs
            term_remap[tid] = len(new_terms)
            new_vocab[term] = len(new_terms)
            new_terms.append(term)
            new_docs.append(nd)
            new_tf.append(nt)
            new_df.append(len(nd))
        ids: list[str | None] = []
        dl = array("i")
        doc_terms: list[array | None] = []
        for slot, doc_id in enumerate(self._ids):
            if doc_id is None:
                continue
            ids.append(doc_id)
            dl.append(self._dl[slot])
            old_terms = self._doc_terms[slot]
            assert old_terms is not None
            doc_terms.append(array("i", term_remap[np.frombuffer(old_terms, dtype=np.int32)].astype(np.int32).tobytes())
                             if len(old_terms) else array("i"))
        self._ids = ids
        self._slot_of = {d: i for i, d in enumerate(ids) if d is not None}
        self._dl = dl
        self._alive = bytearray(b"\x01" * len(ids))
        self._doc_terms = doc_terms
        self._vocab = new_vocab
        self._terms = new_terms
        self._post_docs = new_docs
        self._post_tf = new_tf
        self._df = new_df
        self._dead_slots = 0

    # ------------------------------------------------------------------ scoring
    def _average_idf(self) -> float:
        cached = self._avg_idf_cache
        if cached is not None and cached[0] == self._version:
            return cached[1]
        n = self._n
        total = 0.0
        count = 0
        for d, c in self._df_hist.items():
            total += c * (math.log(n - d + 0.5) - math.log(d + 0.5))
            count += c
        avg = total / count if count else 0.0
        self._avg_idf_cache = (self._version, avg)
        return avg

    def idf(self, term: str) -> float:
        """rank-bm25's IDF: ``ln(N - df + 0.5) - ln(df + 0.5)``, floored to epsilon * average IDF."""
        with self._lock:
            self._flush()
            tid = self._vocab.get(term)
            if tid is None or self._df[tid] <= 0:
                return 0.0
            return self._idf_of(self._df[tid])

    def _idf_of(self, df: int) -> float:
        raw = math.log(self._n - df + 0.5) - math.log(df + 0.5)
        if raw < 0:
            return self.epsilon * self._average_idf()
        return raw

    def _term_weights(self, tid: int) -> tuple[np.ndarray, np.ndarray, float, float] | None:
        """(slots, contributions, idf, best contribution) of one term for the current corpus;
        None when no live document has it."""
        df = self._df[tid]
        if df <= 0:
            return None
        if self._weights_version != self._version:
            self._weights.clear()
            self._weights_version = self._version
        hit = self._weights.get(tid)
        if hit is not None:
            return hit
        k1, b = self.k1, self.b
        avgdl = self._total_len / self._n
        idf = self._idf_of(df)
        docs = np.frombuffer(self._post_docs[tid], dtype=np.int32).copy()
        tf = np.frombuffer(self._post_tf[tid], dtype=np.int32).astype(np.float64)
        dl_all = np.frombuffer(self._dl, dtype=np.int32)
        dl = dl_all[docs]
        del dl_all
        # Same expression, same evaluation order as rank_bm25.BM25Okapi.get_scores.
        contrib = idf * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)))
        entry = (docs, contrib, idf, float(contrib.max()))
        if len(self._weights) >= _WEIGHT_CACHE_TERMS:
            self._weights.pop(next(iter(self._weights)))
        self._weights[tid] = entry
        return entry

    def _contributions(self, term_ids: Iterable[int]) -> tuple[list[np.ndarray], list[np.ndarray], bool]:
        docs_parts: list[np.ndarray] = []
        score_parts: list[np.ndarray] = []
        positive = True
        for tid in term_ids:
            w = self._term_weights(tid)
            if w is None:
                continue
            docs_parts.append(w[0])
            score_parts.append(w[1])
            positive = positive and w[2] > 0
        return docs_parts, score_parts, positive

    def get_scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Scores of every live document (in :meth:`ids` order) — rank-bm25's ``get_scores``."""
        with self._lock:
            self._flush()
            if not self._n:
                return np.zeros(0)
            tids = [self._vocab[t] for t in tokens if t in self._vocab]
            docs_parts, score_parts, _ = self._contributions(tids)
            nslots = len(self._ids)
            dense: np.ndarray = np.zeros(nslots)
            if docs_parts:
                dense = np.bincount(np.concatenate(docs_parts), weights=np.concatenate(score_parts),
                                    minlength=nslots)
            alive = np.frombuffer(self._alive, dtype=np.uint8).astype(bool)
            return dense[alive]

    def top_k(
        self,
        tokens: Sequence[str],
        k: int = 10,
        *,
        dedupe: bool = False,
        accept: Callable[[str], bool] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` best documents containing at least one token, as ``(id, score)``.

        ``dedupe`` counts each distinct query token once (rank-bm25 counts repeats). ``accept``
        filters ids (e.g. a metadata filter); rejected documents do not use up ``k``.
        """
        if k <= 0:
            return []
        with self._lock:
            self._flush()
            if not self._n:
                return []
            seen: set[int] = set()
            tids: list[int] = []
            for t in tokens:
                tid = self._vocab.get(t)
                if tid is None or (dedupe and tid in seen):
                    continue
                seen.add(tid)
                tids.append(tid)
            docs_parts, score_parts, positive = self._contributions(tids)
            if not docs_parts:
                return []
            total = sum(len(d) for d in docs_parts)
            nslots = len(self._ids)
            if accept is None and positive and len(docs_parts) > 1 and total > 64 * k:
                if nslots >= _PRUNE_MIN_SLOTS:
                    pruned = self._top_k_pruned(tids, k)
                    if pruned is not None:
                        return pruned
                if total > nslots * _DENSE_FRACTION and nslots > k:
                    return self._top_k_dense(docs_parts, score_parts, k)
            docs = np.concatenate(docs_parts) if len(docs_parts) > 1 else docs_parts[0]
            contrib = np.concatenate(score_parts) if len(score_parts) > 1 else score_parts[0]
            if len(docs) > nslots * _DENSE_FRACTION:
                sums = np.bincount(docs, weights=contrib, minlength=nslots)
                # every contribution is > 0 when every IDF is: then "matched" is "score != 0"
                cand = np.flatnonzero(sums if positive else np.bincount(docs, minlength=nslots))
                scores = sums[cand]
            elif len(docs_parts) == 1:
                cand, scores = docs, contrib  # one term: postings are already unique
            else:
                cand, inverse = np.unique(docs, return_inverse=True)
                scores = np.bincount(inverse, weights=contrib)
            if self._dead_slots:
                alive = np.frombuffer(self._alive, dtype=np.uint8)[cand].astype(bool)
                cand, scores = cand[alive], scores[alive]
            return self._select(cand, scores, k, accept)

    def _top_k_pruned(self, tids: list[int], k: int) -> list[tuple[str, float]] | None:
        """Exact top-k with MaxScore-style pruning (every contribution must be >= 0).

        1. A lower bound ``theta`` of the final k-th best score: exact scores of a few seed
           documents taken from the rarest terms' postings.
        2. The longest tail of low-impact terms whose best possible contributions together stay
           below ``theta`` is *non-essential*: a document matching only those terms cannot
           reach the top k. Only the essential (rarer) terms' postings are scanned.
        3. Surviving candidates are completed by binary search in the non-essential postings.
        Returns None when nothing can be pruned (the caller then scores every posting).
        """
        mult: dict[int, int] = {}
        for t in tids:
            mult[t] = mult.get(t, 0) + 1
        terms: list[tuple[float, int, np.ndarray, np.ndarray]] = []
        for t, m in mult.items():
            w = self._term_weights(t)
            if w is not None:
                terms.append((w[3] * m, m, w[0], w[1] * m if m > 1 else w[1]))
        terms.sort(key=lambda x: -x[0])
        alive = np.frombuffer(self._alive, dtype=np.uint8) if self._dead_slots else None
        # 1. seed documents from the highest-impact postings
        seed_docs: list[np.ndarray] = []
        seed_w: list[np.ndarray] = []
        size = 0
        for _ub, _m, docs, contrib in terms:
            seed_docs.append(docs)
            seed_w.append(contrib)
            size += len(docs)
            if size >= _SEED_DOCS:
                break
        seed, inverse = np.unique(np.concatenate(seed_docs), return_inverse=True)
        if alive is not None or len(seed) > _SEED_DOCS:
            partial = np.bincount(inverse, weights=np.concatenate(seed_w))
            if alive is not None:
                ok = alive[seed].astype(bool)
                seed, partial = seed[ok], partial[ok]
            if len(seed) > _SEED_DOCS:  # the most promising seeds give the tightest bound
                best = np.argpartition(partial, len(partial) - _SEED_DOCS)[len(partial) - _SEED_DOCS:]
                seed = np.sort(seed[best])
        if len(seed) < k:
            return None
        seed_scores = self._probe(seed, terms)
        theta = np.partition(seed_scores, len(seed_scores) - k)[len(seed_scores) - k]
        # 2. non-essential tail
        cut, tail = len(terms), 0.0
        while cut > 1 and tail + terms[cut - 1][0] < theta:
            tail += terms[cut - 1][0]
            cut -= 1
        if cut == len(terms):
            return None
        essential = terms[:cut]
        nslots = len(self._ids)
        if len(essential) == 1:
            cand, part = essential[0][2], essential[0][3]
        elif sum(len(e[2]) for e in essential) > nslots * _DENSE_FRACTION:
            dense = np.bincount(np.concatenate([e[2] for e in essential]),
                                weights=np.concatenate([e[3] for e in essential]), minlength=nslots)
            # unmatched documents have 0 + tail < theta, so this also keeps only matched ones
            cand = np.flatnonzero(dense >= theta - tail).astype(np.int32)
            part = dense[cand]
        else:
            cand, inverse = np.unique(np.concatenate([e[2] for e in essential]), return_inverse=True)
            part = np.bincount(inverse, weights=np.concatenate([e[3] for e in essential]))
        viable = part + tail >= theta
        cand, part = cand[viable], part[viable]
        if alive is not None:
            ok = alive[cand].astype(bool)
            cand, part = cand[ok], part[ok]
        if len(cand) > 4 * _SEED_DOCS:
            # tighten the bound with the best survivors' exact scores, then filter again
            top = np.sort(np.argpartition(part, len(part) - _SEED_DOCS)[len(part) - _SEED_DOCS:])
            exact = part[top] + self._probe(cand[top], terms[cut:])
            theta = max(theta, np.partition(exact, len(exact) - k)[len(exact) - k])
            viable = part + tail >= theta
            cand, part = cand[viable], part[viable]
        # 3. complete the survivors' scores
        scores = part + self._probe(cand, terms[cut:])
        return self._select(cand, scores, k, None)

    def _top_k_dense(self, docs_parts: list[np.ndarray], score_parts: list[np.ndarray], k: int) -> list[tuple[str, float]]:
        """Accumulate into a dense score vector and partition it (positive contributions only)."""
        nslots = len(self._ids)
        sums = np.bincount(np.concatenate(docs_parts), weights=np.concatenate(score_parts), minlength=nslots)
        if self._dead_slots:
            sums[~np.frombuffer(self._alive, dtype=np.uint8).astype(bool)] = 0.0
        kth = np.partition(sums, nslots - k)[nslots - k]
        # ties with the k-th score are kept (stable order); unmatched documents score 0
        cand = np.flatnonzero(sums >= kth) if kth > 0 else np.flatnonzero(sums)
        return self._select(cand, sums[cand], k, None)

    @staticmethod
    def _probe(slots: np.ndarray, terms: list[tuple[float, int, np.ndarray, np.ndarray]]) -> np.ndarray:
        """Sum of the given terms' contributions for ``slots`` (binary search in the postings)."""
        out = np.zeros(len(slots))
        slots = slots.astype(np.int32, copy=False)  # same dtype as the postings: no conversion
        for _ub, _m, docs, contrib in terms:
            pos = np.searchsorted(docs, slots)
            pos[pos >= len(docs)] = 0
            hit = docs[pos] == slots
            out[hit] += contrib[pos[hit]]
        return out

    def _select(
        self, cand: np.ndarray, scores: np.ndarray, k: int, accept: Callable[[str], bool] | None
    ) -> list[tuple[str, float]]:
        ids = self._ids
        if accept is None:
            if len(cand) > k:
                # everything scoring at least the k-th best (ties included, so order is stable)
                threshold = np.partition(scores, len(scores) - k)[len(scores) - k]
                take = scores >= threshold
                cand, scores = cand[take], scores[take]
            order = np.lexsort((cand, -scores))[:k]  # score desc, then insertion order
            return [(ids[int(cand[i])], float(scores[i])) for i in order]  # type: ignore[misc]
        out: list[tuple[str, float]] = []
        want = max(k * 2, 32)
        remaining_c, remaining_s = cand, scores
        while len(remaining_c):
            if len(remaining_c) > want:
                # everything scoring at least the want-th best (ties included, so order is stable)
                threshold = -np.partition(-remaining_s, want - 1)[want - 1]
                take = remaining_s >= threshold
                chunk_c, chunk_s = remaining_c[take], remaining_s[take]
                remaining_c, remaining_s = remaining_c[~take], remaining_s[~take]
            else:
                chunk_c, chunk_s = remaining_c, remaining_s
                remaining_c = remaining_c[:0]
            order = np.lexsort((chunk_c, -chunk_s))  # score desc, then insertion order
            for i in order:
                doc_id = ids[int(chunk_c[i])]
                assert doc_id is not None
                if accept(doc_id):
                    out.append((doc_id, float(chunk_s[i])))
                    if len(out) >= k:
                        return out
            want *= 4
        return out

    def term_frequencies(self, doc_id: str) -> dict[str, int]:
        """Term -> frequency of one indexed document (for explanations and tests)."""
        with self._lock:
            self._flush()
            slot = self._slot_of[doc_id]
            out: dict[str, int] = {}
            terms = self._doc_terms[slot]
            assert terms is not None
            for tid in terms:
                docs = self._post_docs[tid]
                # postings are in slot order: binary search for this slot
                pos = int(np.searchsorted(np.frombuffer(docs, dtype=np.int32), slot))
                out[self._terms[tid]] = self._post_tf[tid][pos]
            return out

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike[str], meta: dict[str, Any] | None = None) -> None:
        """Writes a compacted snapshot atomically (temp file + rename)."""
        write_snapshot(path, self.snapshot(meta))

    def snapshot(self, meta: dict[str, Any] | None = None) -> dict[str, Any]:
        """The arrays of a snapshot, copied (:func:`write_snapshot` writes them later, maybe
        on another thread, while the index keeps changing)."""
        with self._lock:
            self._flush()
            if self._dead_slots:
                self._compact()
            terms_blob, terms_off = _pack_strings(self._terms)
            ids_blob, ids_off = _pack_strings([i for i in self._ids if i is not None])
            post_off = np.zeros(len(self._terms) + 1, dtype=np.int64)
            post_off[1:] = np.cumsum([len(p) for p in self._post_docs])
            dt_off = np.zeros(len(self._doc_terms) + 1, dtype=np.int64)
            dt_off[1:] = np.cumsum([len(t) if t is not None else 0 for t in self._doc_terms])
            header = {"format": _FORMAT, "n": self._n, "total_len": self._total_len, **(meta or {})}
            arrays = {
                "header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                "terms_blob": terms_blob, "terms_off": terms_off,
                "ids_blob": ids_blob, "ids_off": ids_off,
                "dl": np.frombuffer(self._dl, dtype=np.int32).copy(),
                "post_off": post_off,
                "post_docs": _concat_arrays(self._post_docs),
                "post_tf": _concat_arrays(self._post_tf),
                "dt_off": dt_off,
                "doc_terms": _concat_arrays([t for t in self._doc_terms if t is not None]),
            }
        return arrays

    @classmethod
    def load(cls, path: str | os.PathLike[str], k1: float = 1.5, b: float = 0.75,
             epsilon: float = 0.25) -> tuple[BM25Index, dict[str, Any]]:
        """Reads a snapshot written by :meth:`save`; raises ``IndexCorruptedError`` if unreadable."""
        try:
            with np.load(path, allow_pickle=False) as z:
                header = json.loads(bytes(z["header"]).decode())
                if header.get("format") != _FORMAT:
                    raise ValueError(f"unknown format {header.get('format')!r}")
                terms = _unpack_strings(z["terms_blob"], z["terms_off"])
                ids = _unpack_strings(z["ids_blob"], z["ids_off"])
                dl = z["dl"]
                post_off, post_docs, post_tf = z["post_off"], z["post_docs"], z["post_tf"]
                dt_off, doc_terms = z["dt_off"], z["doc_terms"]
            if len(dl) != len(ids) or len(post_off) != len(terms) + 1 or len(dt_off) != len(ids) + 1:
                raise ValueError("inconsistent array sizes")
            if post_off[-1] != len(post_docs) or dt_off[-1] != len(doc_terms):
                raise ValueError("inconsistent postings")
            idx = cls(k1, b, epsilon)
            idx._ids = list(ids)
            idx._slot_of = {d: i for i, d in enumerate(ids)}
            idx._dl = array("i", dl.astype(np.int32).tobytes())
            idx._alive = bytearray(b"\x01" * len(ids))
            idx._terms = terms
            idx._vocab = {t: i for i, t in enumerate(terms)}
            pd = post_docs.astype(np.int32)
            pt = post_tf.astype(np.int32)
            idx._post_docs = [array("i", pd[post_off[i]:post_off[i + 1]].tobytes()) for i in range(len(terms))]
            idx._post_tf = [array("i", pt[post_off[i]:post_off[i + 1]].tobytes()) for i in range(len(terms))]
            df = np.diff(post_off).astype(np.int32)
            idx._df = array("i", df.tobytes())
            idx._df_hist = Counter({int(k): int(v) for k, v in zip(*np.unique(df[df > 0], return_counts=True))})
            dt = doc_terms.astype(np.int32)
            idx._doc_terms = [array("i", dt[dt_off[i]:dt_off[i + 1]].tobytes()) for i in range(len(ids))]
            idx._n = len(ids)
            idx._total_len = int(dl.sum())
            if header.get("n") != idx._n or header.get("total_len") != idx._total_len:
                raise ValueError("header totals do not match the arrays")
            return idx, header
        except FileNotFoundError:
            raise
        except Exception as exc:
            raise IndexCorruptedError(f"BM25 snapshot {Path(path).name} is unreadable: {exc}") from exc


def write_snapshot(path: str | os.PathLike[str], arrays: dict[str, Any]) -> None:
    """Writes :meth:`BM25Index.snapshot` arrays atomically (temp file, fsync, rename)."""
    path = Path(path)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    with open(tmp, "wb") as fh:
        fh.write(buf.getbuffer())
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _pack_strings(items: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [s.encode("utf-8", "surrogatepass") for s in items]
    off = np.zeros(len(encoded) + 1, dtype=np.int64)
    if encoded:
        off[1:] = np.cumsum([len(e) for e in encoded])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), off


def _unpack_strings(blob: np.ndarray, off: np.ndarray) -> list[str]:
    raw = blob.tobytes()
    o = off.tolist()
    return [raw[o[i]:o[i + 1]].decode("utf-8", "surrogatepass") for i in range(len(o) - 1)]


def _concat_arrays(parts: Sequence[array]) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=np.int32)
    joined = array("i")
    for p in parts:
        joined.extend(p)
    return np.frombuffer(joined, dtype=np.int32).copy()
