"""BM25 index: exact parity with rank-bm25, incremental add/replace/remove, persistence."""

from __future__ import annotations

import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from ws_jupyter.errors import IndexCorruptedError
from ws_jupyter.search.bm25 import BM25Index
from ws_jupyter.search.config import BM25Config
from ws_jupyter.search.tokenizer import Analyzer

from .conftest import read_jsonl


@pytest.fixture(scope="module")
def scifact_tokens(scifact_dir):
    analyze = Analyzer(BM25Config())
    docs = [analyze(d["title"] + " " + d["text"]) for d in read_jsonl(scifact_dir / "corpus.jsonl", 400)]
    queries = [analyze(q["text"]) for q in read_jsonl(scifact_dir / "queries.jsonl", 60)]
    return docs, queries


def _assert_same_scores(idx: BM25Index, corpus: list[list[str]], queries: list[list[str]], **kw) -> None:
    ref = BM25Okapi(corpus, **kw)
    for q in queries:
        ours = idx.get_scores(q)
        theirs = ref.get_scores(q)
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
        # top-k must agree with sorting rank-bm25's full score vector
        top = idx.top_k(q, 10)
        ids = idx.ids()
        expected = sorted((-theirs[i], i) for i in range(len(ids)) if set(q) & set(corpus[i]))[:10]
        assert [d for d, _ in top] == [ids[i] for _, i in expected]
        np.testing.assert_allclose([s for _, s in top], [-s for s, _ in expected], rtol=1e-12)


def test_scores_match_rank_bm25_on_scifact(scifact_tokens):
    docs, queries = scifact_tokens
    idx = BM25Index()
    for i, toks in enumerate(docs):
        idx.add(f"d{i}", toks)
    assert len(idx) == len(docs) == 400
    _assert_same_scores(idx, docs, queries)


def test_parity_with_other_parameters_and_common_terms():
    # Terms in more than half the documents get rank-bm25's epsilon * average-IDF floor.
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(60)]
    corpus = []
    for _ in range(300):
        doc = ["common"] * rng.randint(1, 3) + rng.choices(vocab, k=rng.randint(0, 40))
        if rng.random() < 0.8:
            doc.append("usual")
        corpus.append(doc)
    idx = BM25Index(k1=1.2, b=0.5, epsilon=0.4)
    for i, toks in enumerate(corpus):
        idx.add(str(i), toks)
    queries = [["common"], ["usual", "w3"], ["w1", "w1", "w2"], ["missing"], ["w5", "common", "usual"]]
    _assert_same_scores(idx, corpus, queries, k1=1.2, b=0.5, epsilon=0.4)
    assert idx.idf("common") == pytest.approx(0.4 * BM25Okapi(corpus, k1=1.2, b=0.5, epsilon=0.4).average_idf)


def test_add_replace_remove_equal_fresh_build(scifact_tokens):
    docs, queries = scifact_tokens
    docs = docs[:300]
    idx = BM25Index()
    for i, toks in enumerate(docs):
        idx.add(f"d{i}", toks)
    rng = random.Random(3)
    live = {f"d{i}": toks for i, toks in enumerate(docs)}
    order = [f"d{i}" for i in range(len(docs))]
    for step in range(250):  # enough removals to trigger compaction several times
        doc_id = rng.choice(order)
        if step % 3 == 0:
            assert idx.remove(doc_id)
            del live[doc_id]
            order.remove(doc_id)
        else:  # replace: the new version moves to the end, like a fresh add
            new = docs[rng.randrange(len(docs))][: rng.randint(1, 80)]
            idx.add(doc_id, new)
            live[doc_id] = new
            order.remove(doc_id)
            order.append(doc_id)
    assert not idx.remove("never-added")
    assert idx.ids() == order
    assert len(idx) == len(order)
    _assert_same_scores(idx, [live[d] for d in order], queries[:25])


def test_query_edge_cases():
    idx = BM25Index()
    assert idx.top_k(["x"], 5) == []
    assert len(idx.get_scores(["x"])) == 0
    idx.add("a", ["alpha", "beta"])
    idx.add("b", ["beta", "gamma"])
    assert idx.top_k([], 5) == []
    assert idx.top_k(["zzz"], 5) == []
    assert idx.top_k(["alpha"], 0) == []
    # two tiny documents both containing "beta": negative IDF is floored, results still returned
    assert {d for d, _ in idx.top_k(["beta"], 5)} == {"a", "b"}
    # dedupe counts a repeated query token once
    twice = dict(idx.top_k(["alpha", "alpha"], 5))
    once = dict(idx.top_k(["alpha", "alpha"], 5, dedupe=True))
    assert twice["a"] == pytest.approx(2 * once["a"])
    # accept filters without using up k
    assert idx.top_k(["beta"], 1, accept=lambda d: d == "b")[0][0] == "b"


def test_term_frequencies_and_clear():
    idx = BM25Index()
    idx.add("a", ["x", "y", "x"])
    assert idx.term_frequencies("a") == {"x": 2, "y": 1}
    idx.clear()
    assert len(idx) == 0 and idx.ids() == [] and idx.vocabulary_size == 0


def test_update_cost_does_not_grow_with_corpus():
    # Adding/removing one document must not touch the rest of the corpus: compare the time of
    # 200 updates on a 2k-doc and a 40k-doc index (generous bound for a noisy machine).
    import time

    def timed(n: int) -> float:
        rng = random.Random(1)
        vocab = [f"t{i}" for i in range(5000)]
        idx = BM25Index()
        for i in range(n):
            idx.add(str(i), rng.choices(vocab, k=30))
        assert len(idx) == n  # (reading applies the buffered build: that is not an update)
        t0 = time.perf_counter()
        for i in range(200):
            idx.add(str(i), rng.choices(vocab, k=30))
            idx.remove(str(n - 1 - i))
        return time.perf_counter() - t0

    small, large = timed(2000), timed(40000)
    assert large < small * 5, (small, large)


def test_save_load_roundtrip_and_corruption(tmp_path, scifact_tokens):
    docs, queries = scifact_tokens
    idx = BM25Index()
    for i, toks in enumerate(docs[:200]):
        idx.add(f"d{i}", toks)
    for i in range(0, 200, 3):
        idx.remove(f"d{i}")
    path = tmp_path / "bm25.npz"
    idx.save(path, meta={"fingerprint": "abc"})
    loaded, header = BM25Index.load(path)
    assert header["fingerprint"] == "abc"
    assert loaded.ids() == idx.ids()
    for q in queries[:20]:
        np.testing.assert_allclose(loaded.get_scores(q), idx.get_scores(q), rtol=1e-12)
    loaded.add("new", ["cell", "protein"])  # still incremental after loading
    assert "new" in loaded
    path.write_bytes(b"garbage" * 10)
    with pytest.raises(IndexCorruptedError):
        BM25Index.load(path)


@pytest.mark.parametrize("prune_min", [0, 10**9])
def test_pruned_and_dense_top_k_equal_exhaustive_scoring(scifact_tokens, monkeypatch, prune_min):
    # Large indexes use MaxScore-style pruning, mid-size ones a dense pass: both must return
    # exactly the documents and scores of exhaustive scoring (ties broken by insertion order).
    import ws_jupyter.search.bm25 as bm25_mod

    monkeypatch.setattr(bm25_mod, "_PRUNE_MIN_SLOTS", prune_min)
    docs, queries = scifact_tokens
    idx = BM25Index()
    for i, toks in enumerate(docs):
        idx.add(f"d{i}", toks)
    for i in range(0, 400, 7):
        idx.remove(f"d{i}")  # tombstones must never be returned
    ids = idx.ids()
    vocab = [set(idx.term_frequencies(d)) for d in ids]
    for q in queries + [q + q[:2] for q in queries[:10]]:
        full = idx.get_scores(q)
        matched = [i for i, terms in enumerate(vocab) if terms.intersection(q)]
        for k in (1, 10, 50):
            expected = sorted(matched, key=lambda i: (-full[i], i))[:k]
            got = idx.top_k(q, k)
            assert [d for d, _ in got] == [ids[i] for i in expected]
            np.testing.assert_allclose([s for _, s in got], [full[i] for i in expected], rtol=1e-12)
