"""The checkpoint suite, run on a local folder, memory:// and S3 (moto on 127.0.0.1): changes and
their kinds, exact restores and the restore of a restore, notebooks by cell, the size policy,
storage and pruning, consistency under a concurrent writer, the write lock, forged stores."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from typing import Any

import nbformat
import pytest

from ws_jupyter.checkpoints.manifest import Manifest
from ws_jupyter.errors import CheckpointDamagedError, CheckpointNotFoundError, InvalidArgumentError
from ws_jupyter.tools.tracking import path_key, write_locks

BINARY = bytes(range(256)) * 4


def _seed(files: Any) -> None:
    files.write_many(
        {
            "keep.txt": b"unchanged\n",
            "notes.md": b"# Notes\nline two\nline three\n",
            "data/table.csv": b"a,b\n1,2\n",
            "data/blob.bin": BINARY,
            "sub/one.txt": b"one\n",
            "sub/deep/two.txt": b"two\n",
            "empty.txt": b"",
        }
    )


def test_changes_name_every_kind_and_restore_returns_exact_bytes_then_undoes(
    made: Any, provider: str
) -> None:
    ws, files = made()
    _seed(files)
    local = provider == "local"
    if local:
        os.chmod(os.path.join(ws.filesystem.base_path, "notes.md"), 0o755)
    cp = ws.checkpoint("start")
    before, before_modes = files.snapshot(), files.modes()

    fs = ws.filesystem
    fs.write_file("notes.md", "# Notes\nline 2 changed\nline three\n")
    fs.write_file("data/blob.bin", BINARY[::-1])
    fs.delete_file("keep.txt")
    fs.rmdir("sub", recursive=True)
    fs.write_file("new/made.txt", "created\n")
    if local:
        os.chmod(os.path.join(fs.base_path, "data/table.csv"), 0o600)
    changed, changed_modes = files.snapshot(), files.modes()

    ch = ws.changes(cp)
    kinds = {c.path: c.change for c in ch if c.kind == "file"}
    expected = {
        "notes.md": "modified",
        "data/blob.bin": "modified",
        "keep.txt": "deleted",
        "sub/one.txt": "deleted",
        "sub/deep/two.txt": "deleted",
        "new/made.txt": "added",
    }
    if local:
        expected["data/table.csv"] = "modified"
        assert ch.get("data/table.csv").detail == "mode 644 -> 600"
    assert kinds == expected
    assert all(str(c.by).startswith("outside") for c in ch)  # no agent tool did any of it
    folders = {c.path: c.change for c in ch if c.kind == "dir"}
    assert folders == {"sub": "deleted", "sub/deep": "deleted", "new": "added"}

    report = ws.restore(cp, remove_new=True)
    assert files.snapshot() == before
    assert files.modes() == before_modes
    assert "new/made.txt" in report.removed and "sub/deep/two.txt" in report.restored
    assert not ws.changes(cp)

    again = ws.restore(report.undo, remove_new=True)  # the restore of the restore
    assert files.snapshot() == changed
    assert files.modes() == changed_modes
    assert again.undo.id != report.undo.id
    assert {c.path for c in ws.changes(cp) if c.kind == "file"} == set(expected)


def test_restore_of_chosen_paths_keeps_new_files_unless_asked(made: Any) -> None:
    ws, files = made()
    _seed(files)
    cp = ws.checkpoint()
    fs = ws.filesystem
    fs.write_file("notes.md", "changed")
    fs.write_file("sub/one.txt", "changed")
    fs.write_file("sub/added.txt", "new")
    report = ws.restore(cp, paths=["sub"])
    assert files.read("sub/one.txt") == b"one\n"
    assert files.read("notes.md") == b"changed"  # not chosen
    assert report.kept == ("sub/added.txt",) and fs.exists("sub/added.txt")
    ws.restore(cp, paths="sub/added.txt", remove_new=True)
    assert not fs.exists("sub/added.txt")
    assert ws.restore(cp, paths=["nowhere"]).skipped == (
        ("nowhere", "not in the checkpoint and not in the workspace"),
    )


def test_notebooks_are_diffed_by_cell(made: Any) -> None:
    ws, files = made()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title", id="aaaa1111"),
        nbformat.v4.new_code_cell("x = 1\nprint(x)", id="bbbb2222"),
        nbformat.v4.new_code_cell("gone = True", id="cccc3333"),
    ]
    files.write_many({"analysis.ipynb": nbformat.writes(nb).encode()})
    cp = ws.checkpoint()
    nb.cells[1].source = "x = 2\nprint(x)"
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="2\n")]
    del nb.cells[2]
    nb.cells.append(nbformat.v4.new_code_cell("added()", id="dddd4444"))
    ws.filesystem.write_file("analysis.ipynb", nbformat.writes(nb))
    text = ws.diff(cp, "analysis.ipynb")
    assert "@@ cell [1] code bbbb2222: modified @@" in text
    assert "-x = 1\n+x = 2\n print(x)\n+» stdout:\n+2\n" in text
    assert "@@ cell [2] code cccc3333: removed @@" in text and "-gone = True" in text
    assert "@@ cell [2] code dddd4444: added @@" in text and "+added()" in text
    assert "Title" not in text  # an unchanged cell is not shown
    assert '"cell_type"' not in text  # cells as the notebook tools render them, not JSON


def test_binary_files_are_diffed_by_size_and_hash(made: Any) -> None:
    ws, files = made()
    _seed(files)
    cp = ws.checkpoint()
    ws.filesystem.write_file("data/blob.bin", BINARY + b"\0")
    text = ws.diff(cp, "data/blob.bin")
    old, new = hashlib.sha256(BINARY).hexdigest()[:12], hashlib.sha256(BINARY + b"\0").hexdigest()[:12]
    assert f"@@ Binary file: 1.0 KB sha256 {old}… => 1.0 KB sha256 {new}… @@" in text


def test_a_file_over_the_size_limit_is_reported_as_excluded(made: Any, provider: str) -> None:
    if provider == "local":
        ws, files = made()  # the default limit, and a real 1 GB (sparse) file
        files.write_many({"small.txt": b"x"})
        with open(os.path.join(ws.filesystem.base_path, "huge.bin"), "wb") as f:
            f.truncate(1 << 30)
        big = 1 << 30
    else:
        ws, files = made(max_file_bytes=1000)
        files.write_many({"small.txt": b"x", "huge.bin": b"y" * 5000})
        big = 5000
    cp = ws.checkpoint()
    assert [(e.path, e.size) for e in cp.excluded] == [("huge.bin", big)]
    assert "larger than max_file_bytes" in cp.excluded[0].reason
    assert cp.files == 1
    assert [e.path for e in ws.changes(cp).excluded] == ["huge.bin"]
    assert ws.checkpoints.usage().blob_bytes == 1  # nothing of it was stored


def test_twenty_checkpoints_of_a_large_workspace_stay_under_twice_its_size(made: Any, provider: str) -> None:
    ws, files = made()
    # 5,000 files, 10 changed each time; fewer where the backend, not the checkpoints, would make
    # the test slow: fsspec's in-memory store (its info() looks at every key) and the S3 test
    # server (tens of milliseconds a request): 500 and 100 files, 10 and 1 changed each time
    n, per_round = {"local": (5000, 10), "memory": (500, 10), "s3": (100, 1)}[provider]
    dirs = max(1, n // 100)
    content = {f"d{i % dirs:02d}/f{i:05d}.txt": (f"{i} " * 400).encode()[: 1500 + i % 1000] for i in range(n)}
    files.write_many(content)
    size = sum(len(v) for v in content.values())
    ws.checkpoint()
    for round_ in range(19):
        files.write_many(
            {
                f"d{i % dirs:02d}/f{i:05d}.txt": f"round {round_} {i}\n".encode() * 100
                for i in range(round_ * per_round, (round_ + 1) * per_round)
            }
        )
        cp = ws.checkpoint()
        assert cp.new and cp.files == n
    stored = sum(
        e.size or 0
        for e in ws.checkpoints.store.fs.readdir(".", recursive=True, max_depth=10)
        if e.type == "file"
    )
    assert len(ws.checkpoints.list()) == 20
    assert stored < 2 * size, (stored, size)
    assert ws.checkpoints.usage().total <= stored


def test_pruning_keeps_the_store_within_its_budget_oldest_first(made: Any) -> None:
    ws, files = made(budget_bytes=60_000, keep=2)
    files.write_many({f"f{i}.txt": bytes([65 + i]) * 10_000 for i in range(3)})
    first = ws.checkpoint("first")
    pruned_all: list[str] = []
    for round_ in range(6):
        files.write_many({"f0.txt": bytes([97 + round_]) * 10_000})
        cp = ws.checkpoint()
        pruned_all += cp.pruned
        assert ws.checkpoints.usage().total <= 60_000
    kept = ws.checkpoints.list()
    assert first.id in pruned_all and first.id not in [c.id for c in kept]
    ids_in_order = [c.id for c in kept]
    assert len(kept) >= 2 and ids_in_order == sorted(ids_in_order, key=lambda i: int(i.split("-")[0]))
    assert any("pruned" in note for note in ws.checkpoints.notes)
    # the oldest remaining checkpoint (rebased after its parent was pruned) restores completely
    oldest = kept[0]
    ws.filesystem.write_file("f2.txt", "changed")
    ws.restore(oldest)
    assert files.read("f2.txt") == b"C" * 10_000
    with pytest.raises(CheckpointNotFoundError):
        ws.restore(first)


def test_a_checkpoint_taken_while_files_are_written_holds_whole_versions(made: Any, provider: str) -> None:
    """Checkpoints are taken while a writer rewrites every file: each stored file is one whole
    version, each file left out is reported as being written. A file is stored only when it stood
    still long enough to be read alike twice; a writer that never pauses can rightly have every
    file left out (how often depends on the machine's speed and load), so the writer starts
    without pauses and pauses longer between rounds after each checkpoint that overlapped its
    writes yet stored nothing, until checkpoints that overlapped writes stored files."""
    ws, files = made()
    names = [f"w{i}.txt" for i in range(8)]
    size = 256 << 10 if provider == "local" else 32 << 10  # object stores: fewer bytes per PUT
    files.write_many({n: b"0" * size for n in names})
    stop = threading.Event()
    writes = [0]  # files written so far
    pause = [0.0]  # seconds the writer rests between rounds

    def writer() -> None:
        version = 0
        while not stop.wait(pause[0]):
            version = (version + 1) % 10
            for n in names:
                if provider == "local":  # in place: truncated, then written (what most programs do)
                    with open(os.path.join(ws.filesystem.base_path, n), "wb") as f:
                        f.write(str(version).encode() * size)
                else:
                    ws.filesystem.write_file(n, str(version).encode() * size)
                writes[0] += 1

    store = ws.checkpoints.store

    def stored_whole(cp: Any) -> int:
        """The files ``cp`` stored, each checked to be one whole version."""
        state = store.state(next(m for m in store.manifests() if m.id == cp.id))
        stored = 0
        for n in names:
            rec = state.get(n)
            if rec is None:
                assert any(e.path == n and "being written" in e.reason for e in cp.excluded), (n, cp.excluded)
                continue
            data = b"".join(store.read_blob(rec.sha))  # checked against its SHA-256 as read
            assert len(data) == rec.size
            assert data == b"" or (len(data) == size and len(set(data)) == 1), (n, len(data), set(data))
            stored += 1
        return stored

    thread = threading.Thread(target=writer)
    thread.start()
    taken = overlapped = seen = 0
    try:
        started = time.monotonic()
        while True:
            elapsed = time.monotonic() - started
            enough = elapsed >= 1.5 and taken >= (4 if provider == "local" else 2) and seen > 0
            if enough or elapsed > 60:
                break
            before = writes[0]
            cp = ws.checkpoints.take(reason="test", force=True)
            taken += 1
            if writes[0] > before:  # files were written while this checkpoint read them
                overlapped += 1
                stored = stored_whole(cp)
                seen += stored
                if not stored:
                    pause[0] = min(1.0, max(0.01, 2 * pause[0]))
    finally:
        stop.set()
        thread.join()
    # not vacuous: checkpoints overlapped the writes and stored files (each checked above)
    assert overlapped > 0 and seen > 0, (taken, overlapped, seen, writes[0], pause[0])


def test_restore_waits_for_an_agent_write_in_progress(made: Any) -> None:
    ws, files = made()
    files.write_many({"a.txt": b"original"})
    cp = ws.checkpoint()
    fs = ws.filesystem
    key = path_key(fs, "a.txt")
    holding = threading.Event()

    def agent_write() -> None:  # what a file tool does: the path's write lock around its write
        with write_locks.hold(key, 10, "a.txt"):
            holding.set()
            fs.write_file("a.txt", "agent, part 1")
            time.sleep(0.8)
            fs.write_file("a.txt", "agent, done")

    thread = threading.Thread(target=agent_write)
    thread.start()
    holding.wait(5)
    started = time.monotonic()
    report = ws.restore(cp, paths=["a.txt"])
    waited = time.monotonic() - started
    thread.join()
    assert waited >= 0.5
    assert report.restored == ("a.txt",)
    assert files.read("a.txt") == b"original"  # written after the agent's write, not inside it


def test_a_forged_manifest_is_ignored_and_a_damaged_copy_is_never_restored(made: Any) -> None:
    ws, files = made()
    files.write_many({"a.txt": b"mine"})
    cp = ws.checkpoint()
    store = ws.checkpoints.store
    forged = Manifest(id="99-abcdef", seq=99, created=time.time(), reason="forged", files={})
    store.fs.write_file("manifests/99-abcdef.json.gz", forged.encode(b"someone else's key, 32 bytes!!!"))
    assert [c.id for c in ws.checkpoints.list()] == [cp.id]
    assert "signature does not match" in store.damaged["99-abcdef"]
    sha = hashlib.sha256(b"mine").hexdigest()
    store.fs.write_file(store.blob_path(sha), b"evil")
    ws.filesystem.write_file("a.txt", "agent's")
    with pytest.raises(CheckpointDamagedError):
        ws.restore(cp)
    assert files.read("a.txt") == b"agent's"  # untouched


def test_naming_checkpoints_and_unchanged_workspaces(made: Any) -> None:
    ws, files = made()
    with pytest.raises(CheckpointNotFoundError, match="No checkpoint yet"):
        ws.changes()
    files.write_many({"a.txt": b"a"})
    first = ws.checkpoint("base")
    same = ws.checkpoints.take()
    assert not same.new and same.id == first.id  # nothing changed: the latest is returned
    second = ws.checkpoint("base")  # a label always makes a new one
    assert second.new and ws.checkpoints.get("base").id == second.id
    assert ws.checkpoints.get(f"#{first.seq}").id == first.id and ws.checkpoints.get(-1).id == second.id
    with pytest.raises(CheckpointNotFoundError, match="No checkpoint 'nope'"):
        ws.checkpoints.get("nope")
    with pytest.raises(InvalidArgumentError):
        ws.checkpoint("two\nlines")
