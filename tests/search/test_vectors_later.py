"""BM25 first, vectors later: init() never waits for (or needs) the vector store or the model;
identical chunks are embedded once; files with little meaning for vectors are searched by BM25
only; the status tells the time left; documents without a vector keep their BM25 place."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ws_jupyter import EmbedPolicy, LocalFilesystem, Workspace
from ws_jupyter.search.fusion import fuse
from ws_jupyter.search.status import IndexStatus, format_duration

from ..helpers import wait_for, write
from .conftest import HashEmbedder
from .test_background import SlowEmbedder

REPO = Path(__file__).resolve().parents[2]

_BLOCKED_CHILD = textwrap.dedent("""
    import importlib.abc, json, sys, time
    BLOCKED = ("chromadb", "onnxruntime")

    class Block(importlib.abc.MetaPathFinder):  # as if neither package were installed
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.path.insert(0, {repo!r})
    from ws_jupyter import LocalFilesystem, Workspace

    sys.meta_path.insert(0, Block())  # before the package's own finder of its dependencies

    out = {{}}
    ws = Workspace(id="blocked", filesystem=LocalFilesystem({root!r}), embedder="default")
    ws.init()
    out["bm25"] = [h.id for h in ws.search("sourdough bread", mode="bm25", top_k=3)]
    out["default_mode"] = [h.id for h in ws.search("sourdough bread", top_k=3)]
    deadline = time.monotonic() + 60
    while ws.index_status().error is None and time.monotonic() < deadline:
        time.sleep(0.05)
    status = ws.index_status()
    out["error"], out["describe"] = status.error, status.describe()
    out["after_error"] = [h.id for h in ws.search("sourdough bread", top_k=3)]
    try:
        ws.search("bread", mode="vector")
        out["vector"] = None
    except Exception as exc:
        out["vector"] = [type(exc).__name__, getattr(exc, "code", None), str(exc)]
    ws.destroy()
    auto = Workspace.from_directory({root!r})  # "auto": no vectors when they cannot run
    out["auto_modes"] = [auto.can_bm25, auto.can_vector]
    out["imported"] = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    print(json.dumps(out))
""")


def test_bm25_works_when_chromadb_and_onnxruntime_cannot_be_imported(workdir, tmp_path):
    for i in range(30):
        topic = "sourdough bread" if i % 3 == 0 else "bicycle repair"
        write(workdir, f"notes/n{i:02d}.md", f"# Note {i}\n\nAbout {topic}, item {i}.\n")
    script = tmp_path / "child.py"
    script.write_text(_BLOCKED_CHILD.format(repo=str(REPO), root=str(workdir)))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert len(out["bm25"]) == 3 and all(h in {f"notes/n{i:02d}.md" for i in range(0, 30, 3)} for h in out["bm25"])
    assert out["default_mode"] == out["bm25"] == out["after_error"]  # hybrid answers by BM25
    assert "chromadb" in out["error"] and "onnxruntime" in out["error"]  # both missing pieces named
    assert "stopped" in out["describe"] and "chromadb" in out["describe"]
    assert out["vector"][:2] == ["SearchError", "VECTORS_UNAVAILABLE"] and "chromadb" in out["vector"][2]
    assert out["auto_modes"] == [True, False]
    assert out["imported"] == []


def test_identical_chunks_are_embedded_once(workdir):
    text = "Sourdough starters need flour, water and patience.\nFeed them daily.\n"
    write(workdir, "a/recipe.md", text)
    write(workdir, "b/recipe-copy.md", text)  # the same chunk in another file
    write(workdir, "c/other.md", "Bicycle chains need oil.\n")
    emb = HashEmbedder()
    ws = Workspace(id="dedup", filesystem=LocalFilesystem(workdir), embedder=emb)
    try:
        ws.init()
        assert ws.wait_for_index(60)
        assert emb.texts == 2  # two distinct texts, three files
        write(workdir, "d/later-copy.md", text)  # a copy that appears later: its vector is copied
        ws.rebuild_search_index()
        assert ws.wait_for_index(60)
        assert emb.texts == 2
        store = ws._search_engine.vector_store
        assert store.count() == 4
        hits = ws.search("sourdough flour water", mode="vector", top_k=3)
        assert {h.id for h in hits} == {"a/recipe.md", "b/recipe-copy.md", "d/later-copy.md"}
        assert len({round(h.score, 6) for h in hits}) == 1  # the very same vector
    finally:
        ws.destroy()


def test_files_with_little_meaning_for_vectors_are_bm25_only(workdir):
    write(workdir, "notes.md", "Planning the zebra migration survey.\n")
    write(workdir, "poetry.lock", '[[package]]\nname = "zebrafish"\nversion = "1.0"\n')
    write(workdir, "data/rows.csv", "id,zebra_count\n" + "".join(f"{i},{i * 7}\n" for i in range(9000)))
    write(workdir, "web/app.min.js", "var zebra=1;" * 400)
    write(workdir, "api/zebra_pb2.py", "# zebra messages\n")
    write(workdir, "gen/stripes.go", "// Code generated by stripegen. DO NOT EDIT.\npackage zebra\n")
    emb = HashEmbedder()
    ws = Workspace(id="policy", filesystem=LocalFilesystem(workdir), embedder=emb)
    try:
        ws.init()
        assert ws.wait_for_index(60)
        status = ws.index_status()
        assert emb.texts == 1  # notes.md alone was embedded
        assert status.ready and status.embedded == 1 and status.without_vectors == status.documents - 1
        assert dict(status.skipped) == {"lock file": 1, "data file": 1, "minified": 1, "generated": 2}
        assert "searched by keywords only" in status.describe() and "lock file 1" in status.describe()
        assert status.coverage == 1.0
        # keywords still find them, in every mode that has BM25
        assert ws.search("zebrafish", mode="bm25")[0].id == "poetry.lock"
        assert ws.search("zebrafish")[0].id == "poetry.lock"
    finally:
        ws.destroy()
    # the rules are options: a workspace that embeds everything decides every file again
    emb2 = HashEmbedder()
    ws = Workspace(id="policy", filesystem=LocalFilesystem(workdir), embedder=emb2, embed_policy=False)
    try:
        ws.init()
        assert ws.wait_for_index(60)
        status = ws.index_status()
        assert status.without_vectors == 0 and status.embedded == status.documents and emb2.texts > 1
    finally:
        ws.destroy()
    ws = Workspace(id="policy", filesystem=LocalFilesystem(workdir), embedder=emb2,
                   embed_policy=EmbedPolicy(exclude=("notes.md",), lock_files=False))
    try:
        ws.init()
        assert ws.wait_for_index(60)
        assert dict(ws.index_status().skipped) == {"data file": 1, "excluded by rule": 1, "minified": 1,
                                                   "generated": 2}
        assert ws._search_engine.vector_store.count() == ws.index_status().embedded
    finally:
        ws.destroy()


def test_the_status_tells_the_time_left(workdir):
    for i in range(300):
        write(workdir, f"d/n{i}.md", f"note {i} about sourdough bread and more words to embed\n")
    ws = Workspace(id="eta", filesystem=LocalFilesystem(workdir), embedder=SlowEmbedder(delay=0.01))
    try:
        ws.init()
        status = wait_for(lambda: (s := ws.index_status()).eta_seconds is not None and s.pending and s, timeout=60)
        assert status, "no estimate while embedding"
        assert 0 < status.eta_seconds < 600 and " left" in status.describe()
        assert ws.wait_for_index(120) and ws.index_status().eta_seconds is None
    finally:
        ws.destroy()


def test_status_arithmetic_and_durations():
    s = IndexStatus(documents=10, vectors=True, embedded=4, without_vectors=2, skipped=(("lock file", 1),),
                    embedding=True, eta_seconds=125)
    assert (s.embeddable, s.pending, s.coverage) == (8, 4, 0.5)
    assert "vectors for 4 of 8 documents (50%), about 2 min left" in s.describe()
    assert [format_duration(x) for x in (0.2, 40, 125, 3600, 4900)] == ["1 s", "40 s", "2 min", "1 h", "1 h 22 min"]


def test_documents_without_a_vector_keep_their_bm25_place():
    bm25 = [("a", 9.0), ("b", 7.0), ("c", 5.0), ("d", 3.0), ("e", 1.0)]
    vector = [("e", 0.9), ("c", 0.8), ("x", 0.7)]
    # no vectors at all: BM25's ranking exactly
    assert [i for i, _, _ in fuse(bm25, [], has_vector=lambda _i: False)] == ["a", "b", "c", "d", "e"]
    # every document has one: the plain fusion
    assert fuse(bm25, vector, has_vector=lambda _i: True) == fuse(bm25, vector)
    # a and d have none yet: they stay 1st and 4th; the others are fused into places 2, 3, 5, ...
    out = fuse(bm25, vector, has_vector=lambda i: i not in {"a", "d"})
    ids = [i for i, _, _ in out]
    assert ids[0] == "a" and ids[3] == "d" and set(ids) == {"a", "b", "c", "d", "e", "x"}
    plain = [i for i, _, _ in fuse(bm25, vector) if i not in {"a", "d"}]
    assert [i for i in ids if i not in {"a", "d"}] == plain
    assert out[0][2]["kept_bm25_place"] and "kept_bm25_place" not in out[1][2]


@pytest.mark.parametrize("bad", [{"exclude": "*.csv"}, {"data_max_bytes": -1}, {"nope": 1}, 3])
def test_bad_embed_policies_are_config_errors(workdir, bad):
    from ws_jupyter.errors import WorkspaceConfigError

    with pytest.raises(WorkspaceConfigError):
        Workspace(filesystem=LocalFilesystem(workdir), embed_policy=bad)


class WindowEmbedder(HashEmbedder):
    """Cuts texts into windows of 6 words (the real model's are 256 tokens): one vector each."""

    name = "window-hash"
    windows = True

    def embed(self, texts):  # type: ignore[no-untyped-def]
        import numpy as np

        return np.asarray(self(list(texts)), dtype=np.float32)

    def embed_windows(self, texts):  # type: ignore[no-untyped-def]
        import numpy as np

        pieces, owner = [], []
        for k, text in enumerate(texts):
            words = text.split() or [""]
            for a in range(0, len(words), 6):
                pieces.append(" ".join(words[a:a + 6]))
                owner.append(k)
        return np.asarray(self(pieces), dtype=np.float32), np.asarray(owner)


def test_an_embedder_with_windows_stores_one_vector_per_window(workdir):
    from ws_jupyter.search.engine import WINDOW_SEP

    write(workdir, "long.md", "alpha beta gamma delta epsilon zeta\neta theta iota kappa lambda mu\nzebra stripes\n")
    write(workdir, "short.md", "okapi forest\n")
    ws = Workspace(id="windows", filesystem=LocalFilesystem(workdir), embedder=WindowEmbedder())
    try:
        ws.init()
        assert ws.wait_for_index(60)
        store = ws._search_engine.vector_store
        assert store.ids() == {"long.md", f"long.md{WINDOW_SEP}1", f"long.md{WINDOW_SEP}2", "short.md"}
        # the third window alone holds "zebra stripes": the document is found by it, once
        hits = ws.search("zebra stripes", mode="vector", top_k=5)
        assert [h.id for h in hits] == ["long.md", "short.md"]
        write(workdir, "long.md", "alpha beta\n")  # now one window: the others are deleted
        ws.rebuild_search_index()
        assert ws.wait_for_index(60)
        assert store.ids() == {"long.md", "short.md"}
        (workdir / "long.md").unlink()
        ws.rebuild_search_index()
        assert ws.wait_for_index(60) and store.ids() == {"short.md"}
    finally:
        ws.destroy()


def test_window_separator_is_refused_in_ids(workdir):
    from ws_jupyter.errors import InvalidArgumentError

    ws = Workspace(id="sep", filesystem=LocalFilesystem(workdir), auto_index_paths=())
    try:
        with pytest.raises(InvalidArgumentError, match="U\\+001F"):
            ws.index("notes/a\x1f1", "text")
    finally:
        ws.destroy()
