"""SearchEngine: modes, fusion, filters, chunks, persistence, recovery.

The vector tests run against three real Chroma set-ups: embedded persistent, in-memory, and a
Chroma server started with ``chroma run`` (the ``chroma_server`` fixture). They use the small
deterministic HashEmbedder: the point here is plumbing, the real model has its own tests.
"""

from __future__ import annotations

import threading
import uuid

import pytest

from ws_jupyter.errors import IndexCorruptedError, InvalidArgumentError, SearchModeError, WorkspaceConfigError
from ws_jupyter.search.config import BM25Config
from ws_jupyter.search.engine import SearchEngine
from ws_jupyter.search.vector_store import ChromaVectorStore, VectorStore, chroma_collection_name

from .conftest import HashEmbedder

CORPUS = {
    "notes/cooking.md": "How to bake sourdough bread at home.\nFlour, water, salt and a starter.",
    "notes/garden.md": "Planting tomatoes in spring.\nWater the garden every morning.",
    "notes/python.md": "Python list comprehensions and generators.\nIterating over a dict in Python.",
    "notes/bread.md": "Bread recipes: rye bread, wheat bread, bread rolls and bread crumbs.",
    "notes/travel.md": "A trip to the mountains by train.\nBring water and bread for the trip.",
}


@pytest.fixture(params=["persistent", "ephemeral", "server"])
def vector_engine(request, tmp_path):
    """An engine with BM25 + vectors over CORPUS, for each kind of Chroma store."""
    name = "t_" + uuid.uuid4().hex[:8]
    if request.param == "persistent":
        store, persist = None, tmp_path / "idx"
    elif request.param == "ephemeral":
        store, persist = ChromaVectorStore(ephemeral=True), None
    else:
        host, port = request.getfixturevalue("chroma_server")
        store, persist = ChromaVectorStore(host=host, port=port), tmp_path / "idx"
    emb = HashEmbedder()
    engine = SearchEngine(True, emb, store, index_name=name, persist_dir=persist)
    for path, text in CORPUS.items():
        engine.index(path, text, metadata={"topic": path.split("/")[1][:-3], "words": len(text.split())})
    yield engine
    engine.close()


def test_bm25_only_engine_basics(tmp_path):
    e = SearchEngine(True, persist_dir=tmp_path / "idx")
    assert (e.can_bm25, e.can_vector, e.can_hybrid, e.default_mode) == (True, False, False, "bm25")
    for path, text in CORPUS.items():
        assert e.index(path, text, metadata={"kind": "note"}) is True
    assert e.index("notes/bread.md", CORPUS["notes/bread.md"], metadata={"kind": "note"}) is False  # unchanged
    assert len(e) == 5 and set(e.ids()) == set(CORPUS)

    results = e.search("bread", top_k=3)
    assert next(r.id for r in results) == "notes/bread.md"
    assert all("bread" in r.content.lower() for r in results)
    top = results[0]
    assert top.metadata == {"kind": "note", "source": "notes/bread.md"}
    assert top.score_details["bm25"]["rank"] == 1 and top.score > results[-1].score
    assert top.line_range == (1, 1)
    assert e.search("bread", top_k=1)[0].id == "notes/bread.md"
    assert e.search("bread", min_score=top.score + 1) == []
    assert e.search("", top_k=3) == [] and e.search("the and of") == []
    assert e.search("zeppelin") == []

    # start_line_offset: line ranges point into the original file
    e.index("big.py#part", "x = 1\ndef parse_config():\n    pass", start_line_offset=40)
    hit = e.search("parse config")[0]
    assert hit.id == "big.py#part" and hit.line_range == (41, 41)

    # filters use Chroma's where syntax, on metadata plus "source"
    assert [r.id for r in e.search("bread", filter={"source": "notes/travel.md"})] == ["notes/travel.md"]
    assert {r.id for r in e.search("bread water", filter={"source": {"$in": ["notes/travel.md", "notes/garden.md"]}})} \
        == {"notes/travel.md", "notes/garden.md"}
    assert e.search("bread", filter={"kind": "other"}) == []
    with pytest.raises(InvalidArgumentError):
        e.search("bread", filter={"kind": {"$regex": "x"}})

    assert e.remove("notes/bread.md") is True and e.remove("notes/bread.md") is False
    assert "notes/bread.md" not in [r.id for r in e.search("bread")]
    e.clear()
    assert len(e) == 0 and e.search("bread") == []
    e.close()


def test_a_document_moved_to_another_source_leaves_no_empty_source():
    # Re-indexing an id under another source (e.g. a chunk id indexed by hand) must not leave
    # its old source behind as "indexed" with no documents: the auto-indexer trusts has_source().
    e = SearchEngine(True)
    chunks = e.index_document("big.md", "\n".join(f"line {i} " + "x" * 60 for i in range(200)))
    assert len(chunks) > 1
    for doc_id in chunks:
        e.index(doc_id, "replaced by hand")
    assert not e.has_source("big.md") and "big.md" not in e.sources()
    assert set(e.sources()) == set(chunks)
    e.close()


def test_mode_and_argument_errors():
    e = SearchEngine(True)
    e.index("a", "some text")
    with pytest.raises(SearchModeError, match="embedder") as exc:
        e.search("text", mode="vector")
    assert exc.value.code == "SEARCH_MODE_UNAVAILABLE" and exc.value.details["missing"] == ["embedder"]
    with pytest.raises(SearchModeError, match="missing: embedder"):
        e.search("text", mode="hybrid")
    v = SearchEngine(None, HashEmbedder())
    with pytest.raises(SearchModeError, match="BM25"):
        v.search("text", mode="bm25")
    assert v.default_mode == "vector"
    v.close()
    for kwargs in ({"mode": "fuzzy"}, {"top_k": 0}, {"top_k": "3"}, {"vector_weight": 2}, {"fusion": "max"}):
        with pytest.raises(InvalidArgumentError):
            e.search("text", **kwargs)
    with pytest.raises(InvalidArgumentError):
        e.search(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        e.index("", "x")
    with pytest.raises(InvalidArgumentError):
        e.index("a", b"bytes")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        e.index("a", "x", start_line_offset=0)
    with pytest.raises(WorkspaceConfigError):
        SearchEngine(True, None, ChromaVectorStore(ephemeral=True))  # store without embedder
    with pytest.raises(WorkspaceConfigError):
        SearchEngine(True, HashEmbedder(), vector_store=object())  # type: ignore[arg-type]
    with pytest.raises(WorkspaceConfigError):
        ChromaVectorStore(path="/tmp/x", ephemeral=True)
    e.close()


def test_hybrid_ordering_and_score_details(vector_engine):
    e = vector_engine
    assert isinstance(e.vector_store, VectorStore)
    query = "bread water"
    bm25 = [r.id for r in e.search(query, mode="bm25", top_k=5)]
    vec = [r.id for r in e.search(query, mode="vector", top_k=5)]
    hybrid = e.search(query, mode="hybrid", top_k=5)
    assert e.default_mode == "hybrid"
    assert [r.id for r in e.search(query, top_k=5)] == [r.id for r in hybrid]
    # a document both sides rank highly comes first; each side's rank is kept
    first = hybrid[0]
    assert {"bm25", "vector"} <= set(first.score_details)
    assert first.score_details["bm25"]["rank"] == bm25.index(first.id) + 1
    assert first.score_details["vector"]["rank"] == vec.index(first.id) + 1
    scores = [r.score for r in hybrid]
    assert scores == sorted(scores, reverse=True)
    # vector_weight moves linear fusion between the two single-mode orders
    assert [r.id for r in e.search(query, fusion="linear", vector_weight=0.0, top_k=5)][: len(bm25)] == bm25
    assert [r.id for r in e.search(query, fusion="linear", vector_weight=1.0, top_k=5)][:2] == vec[:2]
    # RRF: score = sum over sides of 1 / (60 + rank)
    for r in e.search(query, fusion="rrf", top_k=5):
        expected = sum(1 / (60 + d["rank"]) for k, d in r.score_details.items() if k in ("bm25", "vector"))
        assert r.score == pytest.approx(expected)
        assert r.score_details["fusion"] == "rrf"


def test_vector_search_filters_and_removal(vector_engine):
    e = vector_engine
    hits = e.search("python generators", mode="vector", top_k=2)
    assert hits[0].id == "notes/python.md" and hits[0].score_details["vector"]["rank"] == 1
    assert -1.0 <= hits[0].score <= 1.0
    only = e.search("bread", mode="vector", filter={"topic": "garden"})
    assert [r.id for r in only] == ["notes/garden.md"]
    big = e.search("bread", mode="hybrid", filter={"words": {"$gte": 12}})
    assert big and all(r.metadata["words"] >= 12 for r in big)
    e.remove("notes/python.md")
    assert "notes/python.md" not in [r.id for r in e.search("python generators", mode="vector")]
    assert e.vector_store.count() == 4
    e.remove_source("notes/garden.md")
    assert e.vector_store.count() == 3


def test_vector_store_query_beyond_its_size(vector_engine):
    # asking for more neighbours than the collection holds gives what it has; empty gives nothing
    store = vector_engine.vector_store
    vector_engine.flush()
    qvec = vector_engine.embedder.embed(["bread"])[0]
    assert len(store.query(qvec, 50)) == len(CORPUS)
    assert [i for i, _ in store.query(qvec, 50, where={"topic": "garden"})] == ["notes/garden.md"]
    vector_engine.clear()
    assert store.count() == 0 and store.query(qvec, 5) == []


def test_index_document_chunks_and_replaces_old_chunks(tmp_path):
    emb = HashEmbedder()
    e = SearchEngine(True, emb, index_name="chunks", persist_dir=tmp_path / "idx")
    lines = [f"filler line number {i} about nothing much" for i in range(1, 501)]
    lines[419] = "the zanzibar configuration lives here"  # line 420
    ids = e.index_document("big.txt", "\n".join(lines) + "\n")
    assert len(ids) > 1 and ids[0] == "big.txt#chunk-0"
    hit = e.search("zanzibar configuration", top_k=1)[0]
    assert hit.line_range == (420, 420) and hit.id in ids and hit.metadata["source"] == "big.txt"
    # vector-only hits without a keyword match report the chunk's span in file coordinates
    vec = e.search("filler", mode="vector", top_k=1)[0]
    assert vec.line_range[0] >= 1 and vec.line_range[1] <= 500
    e.flush()
    calls = emb.texts
    # editing the file's end: only changed chunks are re-embedded, stale chunks disappear
    shorter = "\n".join(lines[:100]) + "\n"
    new_ids = e.index_document("big.txt", shorter)
    assert len(new_ids) < len(ids)
    e.flush()
    assert emb.texts - calls <= 1
    assert set(e.ids()) == set(new_ids) and e.vector_store.count() == len(new_ids)
    assert e.search("zanzibar", mode="bm25") == []
    assert e.remove_source("big.txt") == len(new_ids) and len(e) == 0
    e.close()


def test_persistence_reopen_replays_changes_without_reembedding(tmp_path):
    emb = HashEmbedder()
    e = SearchEngine(True, emb, index_name="p", persist_dir=tmp_path / "idx")
    for path, text in CORPUS.items():
        e.index(path, text)
    before = [(r.id, round(r.score, 9)) for r in e.search("bread water", top_k=5)]
    e.close()
    texts = emb.texts

    e2 = SearchEngine(True, emb, index_name="p", persist_dir=tmp_path / "idx")
    assert len(e2) == 5 and e2.pending_embeddings == 0
    assert [(r.id, round(r.score, 9)) for r in e2.search("bread water", top_k=5)] == before
    assert emb.texts == texts + 1  # only the query was embedded

    # changes after the last BM25 snapshot are replayed from the document store on open
    e2.index("notes/extra.md", "Extra bread for later.")
    e2.remove("notes/garden.md")
    e2.flush()
    assert (tmp_path / "idx" / "bm25.npz").exists()
    expected = [r.id for r in e2.search("bread", mode="bm25", top_k=10)]
    e2.store.commit()
    e2.store.close()  # simulate a crash: no final snapshot
    e2.vector_store.close()
    e3 = SearchEngine(True, emb, index_name="p", persist_dir=tmp_path / "idx")
    assert [r.id for r in e3.search("bread", mode="bm25", top_k=10)] == expected
    assert set(e3.ids()) == set(CORPUS) - {"notes/garden.md"} | {"notes/extra.md"}
    e3.close()


def test_corrupted_index_is_rebuilt_with_a_warning(tmp_path):
    idx = tmp_path / "idx"
    e = SearchEngine(True, persist_dir=idx)
    for path, text in CORPUS.items():
        e.index(path, text)
    e.close()
    # a damaged BM25 snapshot: rebuilt from the stored texts, same results
    (idx / "bm25.npz").write_bytes(b"not a zip file")
    with pytest.warns(RuntimeWarning, match="BM25 snapshot unusable"):
        e2 = SearchEngine(True, persist_dir=idx)
    assert e2.search("bread")[0].id == "notes/bread.md"
    e2.close()
    # a damaged database: the directory is moved aside and the index starts empty (auto-indexing
    # fills it again), never a crash
    (idx / "docs.sqlite3").write_bytes(b"garbage" * 1000)
    for extra in ("docs.sqlite3-wal", "docs.sqlite3-shm"):
        (idx / extra).unlink(missing_ok=True)
    with pytest.warns(RuntimeWarning, match="corrupted"):
        e3 = SearchEngine(True, persist_dir=idx)
    assert len(e3) == 0
    e3.index("a", "works again")
    assert e3.search("works")[0].id == "a"
    e3.close()
    assert any(p.name.startswith("idx.corrupt-") for p in tmp_path.iterdir())
    with pytest.raises(IndexCorruptedError):
        from ws_jupyter.search.store import DocStore

        DocStore(next(p for p in tmp_path.iterdir() if p.name.startswith("idx.corrupt-")) / "docs.sqlite3")


def test_changing_tokenizer_or_embedder_rebuilds(tmp_path):
    idx = tmp_path / "idx"
    e = SearchEngine(BM25Config(stem=True), HashEmbedder(), index_name="c", persist_dir=idx)
    e.index("a", "running quickly")
    e.close()
    emb2 = HashEmbedder(dim=32)  # same name, other vector size
    e2 = SearchEngine(BM25Config(stem=False), emb2, index_name="c", persist_dir=idx)
    assert e2.search("running", mode="bm25")[0].id == "a"
    assert e2.search("run", mode="bm25") == []  # unstemmed now
    assert e2.search("running quickly", mode="vector")[0].id == "a"
    assert emb2.texts == 2  # the query, then the document re-embedded at the new size
    assert e2.vector_store.count() == 1
    e2.close()

    class Renamed(HashEmbedder):
        name = "another-model"

    e3 = SearchEngine(True, Renamed(), index_name="c", persist_dir=idx)
    assert e3.pending_embeddings == 1  # a different embedder name re-embeds at open
    e3.close()


def test_concurrent_indexing_and_searching():
    e = SearchEngine(True, HashEmbedder())
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        try:
            for i in range(60):
                e.index(f"w{k}/{i}", f"document {i} from writer {k} about bread")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def reader() -> None:
        try:
            for _ in range(40):
                e.search("bread writer", top_k=5)
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(3)] + [threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(e) == 180 and len(e.search("bread", top_k=200, mode="bm25")) == 180
    e.close()


def test_in_memory_engines_keep_their_vectors_apart():
    # Chroma's in-memory clients share one database per process: two engines with the same index
    # name must still not see, delete or clear each other's vectors (opening the second one used
    # to delete the first one's vectors as "extra", and clearing it broke the first one).
    a = SearchEngine(True, HashEmbedder())
    a.index("a1", "bread and water")
    a.flush()
    b = SearchEngine(True, HashEmbedder())
    assert b.pending_embeddings == 0 and a.vector_store.count() == 1
    b.index("b1", "bread and butter")
    assert [r.id for r in b.search("bread", mode="vector")] == ["b1"]
    b.clear()
    b.close()
    assert [r.id for r in a.search("bread", mode="vector")] == ["a1"]
    named = a.vector_store.collection_name
    assert named.startswith("search-")
    # the collection of a closed in-memory store is dropped, not left in the shared database
    keep = ChromaVectorStore(ephemeral=True)  # an open in-memory client keeps the database alive
    keep.open("other")
    assert named in [c.name for c in keep._client.list_collections()]
    a.close()
    assert named not in [c.name for c in keep._client.list_collections()]
    keep.close()


def test_collection_names():
    assert chroma_collection_name("ws_abc_search") == "ws_abc_search"
    assert chroma_collection_name("_x_") == "ws_x_index"
    assert chroma_collection_name("__") == "ws_index"
    assert chroma_collection_name("_my_index") == "my_index"


def test_damaged_chroma_directory_is_rebuilt(tmp_path):
    idx = tmp_path / "idx"
    emb = HashEmbedder()
    e = SearchEngine(True, emb, index_name="cc", persist_dir=idx)
    for path, text in CORPUS.items():
        e.index(path, text)
    e.close()
    (idx / "chroma" / "chroma.sqlite3").write_bytes(b"garbage" * 100)
    with pytest.warns(RuntimeWarning, match="vector index unreadable"):
        e2 = SearchEngine(True, emb, index_name="cc", persist_dir=idx)
    assert e2.pending_embeddings == len(CORPUS)  # documents kept, vectors re-embedded
    assert e2.search("python generators", mode="vector")[0].id == "notes/python.md"
    assert e2.vector_store.count() == len(CORPUS)
    e2.close()
