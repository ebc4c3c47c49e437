"""Auto-indexing through the Workspace: globs, .gitignore at every level, hidden and binary files
skipped, incremental passes (embedder calls counted), deletions, persistence across a new
Workspace on the same directory, progress, and watch()."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ws_jupyter.errors import (
    InvalidArgumentError,
    SearchModeError,
    SearchNotAvailableError,
    WorkspaceNotReadyError,
)
from ws_jupyter.filesystem.local import LocalFilesystem
from ws_jupyter.search.indexer import glob_to_regex
from ws_jupyter.workspace import Workspace

from ..helpers import write as _write
from .conftest import HashEmbedder


@pytest.fixture
def tree(workdir: Path) -> Path:
    _write(workdir, "docs/guide.md", "# Guide\nInstall the zebra package first.\n")
    _write(workdir, "docs/api/reference.md", "zebra.run(config) starts the zebra engine\n")
    _write(workdir, "docs/api/.gitignore", "generated/\n*.tmp\n")
    _write(workdir, "docs/api/generated/out.md", "zebra generated output\n")
    _write(workdir, "docs/api/scratch.tmp", "zebra scratch notes\n")
    _write(workdir, "docs/.drafts/idea.md", "zebra hidden draft\n")
    _write(workdir, "docs/.secret.md", "zebra hidden file\n")
    _write(workdir, "docs/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00zebra")
    _write(workdir, "docs/Makefile", "zebra:\n\techo build the zebra\n")  # text without extension
    _write(workdir, "src/app.py", "def zebra():\n    return 'stripes'\n")
    _write(workdir, "src/notes.txt", "plain zebra notes\n")
    _write(workdir, ".gitignore", "build/\n")
    _write(workdir, "build/zebra.md", "zebra build artefact\n")
    return workdir


def _ids(results) -> set[str]:
    return {r.id for r in results}


def test_init_indexes_auto_paths_respecting_gitignore_hidden_binary(tree):
    emb = HashEmbedder()
    with Workspace(
        id="t1",
        filesystem=LocalFilesystem(tree),
        embedder=emb,
        auto_index_paths=["docs", "src/**/*.py", "missing-dir"],
    ) as ws:
        found = _ids(ws.search("zebra", top_k=50, mode="bm25"))
        assert found == {"docs/guide.md", "docs/api/reference.md", "docs/Makefile", "src/app.py"}
        report = ws.rebuild_search_index()
        assert report.indexed == [] and report.unchanged == 4 and report.missing == ["missing-dir"]
        assert ("docs/logo.png", "binary") in report.skipped
        # explicit paths: a single file and a glob with braces; build/ is ignored by the root
        # .gitignore, so a glob from the root does not reach it...
        ws.rebuild_search_index(["src/notes.txt", "**/{zebra,other}.md"])
        found = _ids(ws.search("zebra", top_k=50, mode="bm25"))
        assert "src/notes.txt" in found and "build/zebra.md" not in found
        # ...but naming the ignored directory itself is an explicit request (as in list_files)
        ws.rebuild_search_index(["build"])
        assert "build/zebra.md" in _ids(ws.search("zebra", top_k=50, mode="bm25"))
        # the index lives under the workspace, hidden from its own walk
        assert (tree / ".ws" / "index" / "t1_search" / "docs.sqlite3").exists()


def test_incremental_passes_count_embedder_calls(tree):
    emb = HashEmbedder()
    ws = Workspace(id="t2", filesystem=LocalFilesystem(tree), embedder=emb, auto_index_paths=["docs", "src"])
    ws.init()
    assert ws.wait_for_index(60)  # vectors are computed in the background
    first = emb.texts
    assert first == 5  # guide, reference, Makefile, app.py, notes.txt

    # nothing changed: nothing read, nothing embedded
    report = ws.rebuild_search_index()
    assert ws.wait_for_index(60)
    assert report.indexed == [] and report.unchanged == 5 and emb.texts == first

    # touched (mtime changes, content does not): read and hashed, not re-embedded
    os.utime(tree / "docs/guide.md", (time.time() + 5, time.time() + 5))
    report = ws.rebuild_search_index()
    assert ws.wait_for_index(60)
    assert report.touched == 1 and report.indexed == [] and emb.texts == first

    # one file edited: only that file is re-embedded
    _write(tree, "docs/guide.md", "# Guide\nInstall the okapi package first.\n")
    report = ws.rebuild_search_index()
    assert ws.wait_for_index(60)
    assert report.indexed == ["docs/guide.md"] and emb.texts == first + 1
    assert "docs/guide.md" in _ids(ws.search("okapi", mode="bm25"))

    # deleted, newly ignored, and a new file
    (tree / "src/notes.txt").unlink()
    _write(tree, "src/.gitignore", "app.py\n")
    _write(tree, "docs/new.md", "a new zebra page\n")
    report = ws.rebuild_search_index()
    assert sorted(report.removed) == ["src/app.py", "src/notes.txt"] and report.indexed == ["docs/new.md"]
    assert _ids(ws.search("zebra", top_k=50, mode="bm25")) == {
        "docs/api/reference.md",
        "docs/Makefile",
        "docs/new.md",
    }
    assert ws.wait_for_index(60)
    assert ws._search_engine.vector_store.count() == len(ws._search_engine)

    # a file that became binary leaves the index
    _write(tree, "docs/new.md", b"\x00\x01binary now")
    report = ws.rebuild_search_index()
    assert ("docs/new.md", "binary") in report.skipped and "docs/new.md" not in ws._search_engine.sources()
    ws.destroy()


def test_index_survives_a_new_workspace_on_the_same_directory(tree):
    emb = HashEmbedder()
    kwargs = {"filesystem": LocalFilesystem(tree), "embedder": emb, "auto_index_paths": ["docs"]}
    with Workspace(**kwargs) as ws:  # no id given: the on-disk index name is still stable
        ws.index("manual/note", "a zebra note indexed by hand", metadata={"by": "hand"})
        before = [(r.id, round(r.score, 6)) for r in ws.search("zebra engine", top_k=5)]
    embedded = emb.texts
    with Workspace(filesystem=LocalFilesystem(tree), embedder=emb, auto_index_paths=["docs"]) as ws2:
        assert emb.texts == embedded  # init re-read nothing and embedded nothing
        after = [(r.id, round(r.score, 6)) for r in ws2.search("zebra engine", top_k=5)]
        assert after == before
        note = ws2.search("hand note", mode="bm25")[0]
        assert note.id == "manual/note" and note.metadata["by"] == "hand"
    assert emb.texts == embedded + 1  # the one query


def test_chunk_line_ranges_through_the_workspace(workdir):
    lines = [f"ordinary line {i} with ordinary words" for i in range(1, 1201)]
    lines[876] = "the quokka migration happens here"  # line 877
    _write(workdir, "log/big.txt", "\n".join(lines) + "\n")
    with Workspace(id="t3", filesystem=LocalFilesystem(workdir), auto_index_paths=["log"]) as ws:
        hit = ws.search("quokka migration", top_k=1)[0]
        assert hit.id.startswith("log/big.txt#chunk-") and hit.line_range == (877, 877)
        assert hit.metadata["source"] == "log/big.txt"
        assert int(hit.content.split("\n")[0].split()[2]) <= 877  # the chunk starts before the hit


def test_progress_callback_and_report(tree):
    seen = []
    with Workspace(id="t4", filesystem=LocalFilesystem(tree), auto_index_paths=["docs"]) as ws:
        report = ws.rebuild_search_index(["docs", "src"], progress=seen.append)
    phases = [p.phase for p in seen]
    assert phases[0] == "scan" and phases[-1] == "done"
    index_updates = [p for p in seen if p.phase == "index"]
    assert [p.done for p in index_updates] == list(range(1, len(index_updates) + 1))
    assert all(p.total == len(index_updates) for p in index_updates) and seen[-1].fraction == 1.0
    assert "docs/logo.png" in {p.path for p in index_updates}  # considered, then skipped as binary
    assert "IndexReport(" in repr(report)
    # a workspace computes vectors in the background: the pass reports files only, the status
    # the vectors; an engine without a background worker reports embedding as its own phase
    seen.clear()
    with Workspace(id="t4v", filesystem=LocalFilesystem(tree), embedder=HashEmbedder(),
                   auto_index_paths=()) as ws:
        ws.rebuild_search_index(["docs", "src"], progress=seen.append)
        assert "embed" not in {p.phase for p in seen} and seen[-1].phase == "done"
        assert ws.wait_for_index(60)
        status = ws.index_status()
        assert status.ready and status.embedded == status.documents == 5 and status.coverage == 1.0
    from ws_jupyter.search.engine import SearchEngine
    from ws_jupyter.search.indexer import AutoIndexer

    seen.clear()
    engine = SearchEngine(True, HashEmbedder())
    AutoIndexer(LocalFilesystem(tree), engine).rebuild(["docs", "src"], progress=seen.append)
    embed = [p for p in seen if p.phase == "embed"]
    assert embed[0].done == 0 and embed[-1].done == embed[-1].total == 5
    assert seen[-1].phase == "done"
    engine.close()


def test_watch_keeps_the_index_current(tree):
    updates = []
    ws = Workspace(id="t5", filesystem=LocalFilesystem(tree), auto_index_paths=["docs"])
    ws.init()
    _write(tree, "docs/before.md", "the wombat came before watching\n")  # changed while not watching
    watcher = ws.watch(on_update=updates.append, debounce=0.1)
    try:
        assert watcher.running
        _wait(lambda: "docs/before.md" in _ids(ws.search("wombat", mode="bm25")))  # the catch-up pass
        _write(tree, "docs/fresh.md", "the platypus arrived\n")
        _wait(lambda: "docs/fresh.md" in _ids(ws.search("platypus", mode="bm25")))
        (tree / "docs/guide.md").unlink()
        _wait(lambda: "docs/guide.md" not in ws._search_engine.sources())
        assert updates and watcher.last_error is None
    finally:
        ws.destroy()
    assert not watcher.running  # destroy stops watchers


def test_targeted_update_of_changed_files(tree):
    from ws_jupyter.search.indexer import AutoIndexer

    emb = HashEmbedder()
    with Workspace(id="t8", filesystem=LocalFilesystem(tree), embedder=emb, auto_index_paths=["docs"]) as ws:
        engine = ws._search_engine
        indexer = AutoIndexer(ws.filesystem, engine)
        assert ws.wait_for_index(60)
        before = emb.texts
        _write(tree, "docs/api/reference.md", "the okapi engine\n")
        _write(tree, "docs/api/scratch.tmp", "ignored by docs/api/.gitignore\n")
        _write(tree, "docs/api/generated/more.md", "ignored directory\n")
        _write(tree, "docs/.hidden2.md", "hidden\n")
        _write(tree, "src/outside.md", "not under docs\n")
        (tree / "docs/guide.md").unlink()
        report = indexer.update(
            [
                "docs/api/reference.md",
                "docs/api/scratch.tmp",
                "docs/api/generated/more.md",
                "docs/.hidden2.md",
                "src/outside.md",
                "docs/guide.md",
            ],
            ["docs"],
        )
        assert report.indexed == ["docs/api/reference.md"] and report.removed == ["docs/guide.md"]
        assert ws.wait_for_index(60)
        assert emb.texts == before + 1
        assert set(engine.sources()) == {"docs/api/reference.md", "docs/Makefile"}
        # a changed .gitignore re-runs the full pass
        _write(tree, "docs/api/.gitignore", "generated/\n*.tmp\nreference.md\n")
        report = indexer.update(["docs/api/.gitignore"], ["docs"])
        assert report.removed == ["docs/api/reference.md"] and report.unchanged == 1


def test_targeted_update_keeps_explicitly_named_ignored_or_hidden_paths(tree):
    # An ignored directory or a hidden file named in the paths is indexed by a full pass (an
    # explicit request, as in list_files); a targeted update (what watch() runs) of one of its
    # files must re-index it too, not drop it as invisible from the workspace root.
    from ws_jupyter.search.indexer import AutoIndexer

    paths = ["build", "docs/.secret.md", "docs/api"]
    with Workspace(id="t9", filesystem=LocalFilesystem(tree), auto_index_paths=paths) as ws:
        engine = ws._search_engine
        assert set(engine.sources()) == {"build/zebra.md", "docs/.secret.md", "docs/api/reference.md"}
        _write(tree, "build/zebra.md", "zebra build artefact, rebuilt\n")
        _write(tree, "docs/.secret.md", "zebra hidden file, edited\n")
        _write(tree, "docs/api/scratch.tmp", "still ignored by docs/api/.gitignore\n")
        changed = ["build/zebra.md", "docs/.secret.md", "docs/api/scratch.tmp"]
        report = AutoIndexer(ws.filesystem, engine).update(changed, paths)
        assert sorted(report.indexed) == ["build/zebra.md", "docs/.secret.md"] and report.removed == []
        assert set(engine.sources()) == {"build/zebra.md", "docs/.secret.md", "docs/api/reference.md"}
        assert ws.search("rebuilt", mode="bm25")[0].id == "build/zebra.md"


def test_targeted_update_on_a_provider_walked_through_readdir(tree):
    # Providers without os.scandir are walked through readdir, which gives no mtime: a targeted
    # update must record the same (size, mtime) as a full pass, or the next pass re-reads the file.
    from ws_jupyter.search.engine import SearchEngine
    from ws_jupyter.search.indexer import AutoIndexer

    class ReaddirOnly:
        def __init__(self, fs):
            self._fs = fs

        def __getattr__(self, name):
            if name in ("containment", "host_path"):
                raise AttributeError(name)
            return getattr(self._fs, name)

    fs = ReaddirOnly(LocalFilesystem(tree))
    with SearchEngine(True) as engine:
        first = AutoIndexer(fs, engine).rebuild(["docs"])
        assert sorted(first.indexed) == ["docs/Makefile", "docs/api/reference.md", "docs/guide.md"]
        _write(tree, "docs/guide.md", "# Guide\nInstall the okapi package first.\n")
        assert AutoIndexer(fs, engine).update(["docs/guide.md"], ["docs"]).indexed == ["docs/guide.md"]
        again = AutoIndexer(fs, engine).rebuild(["docs"])
        assert again.unchanged == 3 and again.touched == 0 and again.indexed == []


def _wait(cond, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.1)


def test_workspace_search_errors(workdir):
    ws = Workspace(id="t6", filesystem=LocalFilesystem(workdir), bm25=None)
    with pytest.raises(SearchNotAvailableError):
        ws.search("x")
    with pytest.raises(SearchNotAvailableError):
        ws.index("a", "b")
    ws2 = Workspace(id="t7", filesystem=LocalFilesystem(workdir))
    ws2.index("a", "some words")
    with pytest.raises(SearchModeError, match="embedder"):
        ws2.search("words", mode="hybrid")
    with pytest.raises(InvalidArgumentError):
        ws2.rebuild_search_index([""])
    ws2.destroy()
    with pytest.raises(WorkspaceNotReadyError):
        ws2.search("words")


def test_glob_translation():
    assert glob_to_regex("**/*.md").match("a/b/c.md") and glob_to_regex("**/*.md").match("c.md")
    assert not glob_to_regex("docs/*.md").match("docs/a/b.md")
    assert glob_to_regex("docs/{a,b}.txt").match("docs/b.txt")
    assert glob_to_regex("file?.[ch]").match("file1.c") and not glob_to_regex("file?.[ch]").match("file1.py")
    # braces mean what they mean in list_files/grep globs: nested alternatives work, and an
    # unbalanced brace is a literal character (it used to make an invalid regular expression)
    assert glob_to_regex("**/{x,y/{z,w}}.md").match("a/y/w.md")
    assert glob_to_regex("notes/{draft").match("notes/{draft") and glob_to_regex("a,b}").match("a,b}")


def test_read_only_workspace_keeps_its_index_in_the_user_cache(tree, tmp_path, monkeypatch):
    monkeypatch.setenv("WS_JUPYTER_CACHE_DIR", str(tmp_path / "cache"))
    before = sorted(p.relative_to(tree) for p in tree.rglob("*"))
    with Workspace(
        id="ro", filesystem=LocalFilesystem(tree, read_only=True), auto_index_paths=["docs"]
    ) as ws:
        assert "docs/guide.md" in _ids(ws.search("zebra", top_k=20))
    assert sorted(p.relative_to(tree) for p in tree.rglob("*")) == before  # nothing written
    assert list((tmp_path / "cache" / "index").glob("*/ro_search/docs.sqlite3"))


def test_skills_engine_is_separate_and_in_memory(workdir):
    from ws_jupyter.search.engine import SearchEngine

    ws = Workspace(id="sk", filesystem=LocalFilesystem(workdir), embedder=HashEmbedder())
    files = SearchEngine.for_workspace(ws)
    skills = SearchEngine.for_workspace(ws, purpose="skills")
    try:
        assert skills.persist_dir is None and skills.index_name == "sk_search_skills"
        assert files.persist_dir == workdir / ".ws" / "index" / "sk_search"
        skills.index("skill:demo", "a skill about zebras")
        assert files.search("zebras") == [] and skills.search("zebras")[0].id == "skill:demo"
        with pytest.raises(InvalidArgumentError):
            SearchEngine.for_workspace(ws, purpose="other")
    finally:
        files.close()
        skills.close()
