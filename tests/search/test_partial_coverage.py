"""Hybrid search while vectors are still being computed is never worse than BM25 alone.

SciFact (5,183 abstracts, 300 claims) is indexed with the default model's real fp32 vectors
(made once by ``data/make_scifact_vectors.py``, stored as int8: computing them takes many minutes
on two cores). The embedder is paused by the test and let through batch by batch, so vectors exist
for 0%, 10%, 50%, 90% and then 100% of the documents — in indexing order, as the background
worker computes them — and at each step hybrid nDCG@10 is compared with BM25's.
"""

from __future__ import annotations

import hashlib
import math
import threading
from pathlib import Path

import numpy as np
import pytest

from ws_jupyter.search.engine import SearchEngine
from ws_jupyter.search.vector_store import ChromaVectorStore

from ..helpers import wait_for
from .conftest import read_jsonl

FIXTURE = Path(__file__).resolve().parent / "data" / "scifact_vectors.npz"
HYBRID_TARGET = 0.72  # QUALITY.md, hybrid with the fp32 model


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def _vectors(q: np.ndarray, scale: np.ndarray) -> np.ndarray:
    v = q.astype(np.float32) * scale[:, None]
    return v / np.linalg.norm(v, axis=1, keepdims=True)


class PausedEmbedder:
    """The stored vectors, looked up by text. Documents wait until the test lets them through
    (``allow``); queries never wait."""

    name = "scifact-fixture/all-MiniLM-L6-v2-fp32"

    def __init__(self, docs: dict[str, np.ndarray], queries: dict[str, np.ndarray]) -> None:
        self.docs, self.queries = docs, queries
        self.allowed = 0
        self.served = 0
        self._cond = threading.Condition()

    def allow(self, n: int) -> None:
        with self._cond:
            self.allowed = n
            self._cond.notify_all()

    def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) == 1 and texts[0] in self.queries:
            return self.queries[texts[0]][None, :]
        with self._cond:
            while self.served + len(texts) > self.allowed:
                self._cond.wait(0.5)
            self.served += len(texts)
        return np.stack([self.docs[t] for t in texts])


def _ndcg10(ranked: list[str], rel: dict[str, int]) -> float:
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(rel.values(), reverse=True)[:10]))
    return dcg / ideal


@pytest.fixture(scope="module")
def scifact_with_vectors(scifact_dir):
    if not FIXTURE.exists():
        pytest.skip("tests/search/data/scifact_vectors.npz is missing: run data/make_scifact_vectors.py")
    z = np.load(FIXTURE)
    docs = {str(d["_id"]): (d.get("title", "") + " " + d.get("text", "")).strip()
            for d in read_jsonl(scifact_dir / "corpus.jsonl")}
    claims = {str(q["_id"]): q["text"] for q in read_jsonl(scifact_dir / "queries.jsonl")}
    qrels: dict[str, dict[str, int]] = {}
    with open(scifact_dir / "qrels.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            qid, did, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, {})[did] = int(score)
    ids, qids = [str(i) for i in z["doc_ids"]], [str(i) for i in z["query_ids"]]
    if ([_digest(docs[i]) for i in ids] != [str(d) for d in z["doc_digests"]]
            or [_digest(claims[q]) for q in qids] != [str(d) for d in z["query_digests"]]):
        pytest.fail("the SciFact copy differs from the one the stored vectors were made from")
    dv = _vectors(z["doc_vectors"], z["doc_scales"])
    qv = _vectors(z["query_vectors"], z["query_scales"])
    return ({i: docs[i] for i in ids}, {q: claims[q] for q in qids}, qrels,
            {docs[i]: dv[k] for k, i in enumerate(ids)}, {claims[q]: qv[k] for k, q in enumerate(qids)})


def test_hybrid_is_never_below_bm25_while_vectors_fill_in(scifact_with_vectors):
    docs, claims, qrels, doc_vecs, query_vecs = scifact_with_vectors
    emb = PausedEmbedder(doc_vecs, query_vecs)
    engine = SearchEngine(True, emb, ChromaVectorStore(ephemeral=True), index_name="coverage", background=True)
    try:
        with engine.batch():
            for doc_id, text in docs.items():
                engine.index(doc_id, text)
        bm25 = np.mean([_ndcg10([r.id for r in engine.search(c, mode="bm25")], qrels[q]) for q, c in claims.items()])
        curve: list[tuple[float, float]] = []
        first = -1.0
        for share in (0.0, 0.1, 0.5, 0.9, 1.0):
            want = len(docs) if share == 1.0 else round(share * len(docs) / 64) * 64  # whole batches
            emb.allow(want)
            assert wait_for(lambda want=want: engine.status().embedded >= want, timeout=300)
            status = engine.status()
            assert status.embedded == want  # the worker is held at the next batch
            hybrid = np.mean([_ndcg10([r.id for r in engine.search(c, mode="hybrid")], qrels[q])
                              for q, c in claims.items()])
            if share == 0.0:
                first = float(hybrid)
            curve.append((round(status.coverage, 3), round(float(hybrid), 4)))
        print(f"BM25 nDCG@10 {bm25:.4f}; hybrid by coverage {curve}")
        assert all(h >= bm25 - 0.005 for _, h in curve), (bm25, curve)
        assert first == pytest.approx(bm25, abs=1e-12)  # no vectors: BM25's ranking exactly
        assert curve[-1][0] == 1.0 and curve[-1][1] >= HYBRID_TARGET, curve
    finally:
        emb.allow(10**9)
        engine.close()
