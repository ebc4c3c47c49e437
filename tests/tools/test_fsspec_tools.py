"""The agent tools end to end on an object-storage workspace: a real S3 API server (moto on
127.0.0.1) behind FsspecFilesystem — write, read, edit, grep, search, list — and what the walker,
grep's Python engine and the incremental indexer do there."""

from __future__ import annotations

import pytest

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import Workspace

from .conftest import box

pytest.importorskip("fsspec", reason="fsspec is not installed (pip install 'ws-jupyter[s3]')")

from ws_jupyter.filesystem.fsspec_fs import FsspecFilesystem


@pytest.fixture
def s3_ws(s3):
    fs = FsspecFilesystem(f"s3://{s3.new_bucket()}/project", storage_options=s3.storage_options())
    fs.write_file(".gitignore", "build/\n*.log\n")
    fs.write_file(
        "docs/cooking.md", "# Cooking\n\nBoil the pasta in salted water.\nServe with tomato sauce.\n"
    )
    fs.write_file("docs/garden.md", "# Garden\n\nWater the tomato plants every morning.\n")
    fs.write_file("src/app.py", "def main():\n    print('hello')\n")
    fs.write_file("build/out.txt", "tomato in an ignored directory\n")
    fs.write_file("run.log", "tomato in an ignored file\n")
    ws = Workspace(filesystem=fs, auto_index_paths=["docs", "src"])
    ws.init()
    yield ws
    ws.destroy()


def test_write_read_edit_roundtrip(s3_ws):
    tools = box(s3_ws)
    out = tools.run(T.FILESYSTEM.WRITE_FILE, path="notes/plan.md", content="step one\nstep two\n")
    assert "notes/plan.md" in out and not out.startswith("Error")
    read = tools.run(T.FILESYSTEM.READ_FILE, path="notes/plan.md")
    assert "step one" in read and "step two" in read
    edit = tools.run(T.FILESYSTEM.EDIT_FILE, path="notes/plan.md", old_string="step two", new_string="step 2")
    assert not edit.startswith("Error"), edit
    assert s3_ws.filesystem.read_file("notes/plan.md") == "step one\nstep 2\n"


def test_edit_refused_after_an_external_change(s3_ws):
    tools = box(s3_ws)
    tools.run(T.FILESYSTEM.READ_FILE, path="src/app.py")
    fs = s3_ws.filesystem
    fs.fs.pipe_file(fs.root + "/src/app.py", b"def main():\n    print('changed elsewhere')\n")
    out = tools.run(T.FILESYSTEM.EDIT_FILE, path="src/app.py", old_string="main", new_string="start")
    assert "modified since it was last read" in out or "modified externally" in out, out
    assert "changed elsewhere" in fs.read_file("src/app.py")


def test_grep_uses_the_python_engine_and_the_gitignore(s3_ws):
    tools = box(s3_ws)
    out = tools.run(T.FILESYSTEM.GREP, pattern="tomato")
    assert out.startswith("2 matches across 2 files"), out
    assert "docs/cooking.md:4:" in out and "docs/garden.md:3:" in out
    assert "build/" not in out and "run.log" not in out
    from ws_jupyter.tools.grep import search

    assert search(s3_ws.filesystem, "tomato").engine == "python"


def test_list_files_respects_gitignore(s3_ws):
    out = box(s3_ws).run(T.FILESYSTEM.LIST_FILES, path=".")
    assert "docs" in out and "cooking.md" in out and "app.py" in out
    assert "build" not in out and "run.log" not in out


def test_search_and_incremental_index(s3_ws):
    tools = box(s3_ws)
    out = tools.run(T.SEARCH.SEARCH, query="pasta sauce")
    assert "docs/cooking.md" in out
    again = s3_ws.rebuild_search_index()
    assert again.unchanged == 3 and not again.indexed  # nothing re-read: size, mtime and ETag equal


def test_index_sees_a_same_second_same_size_change_by_its_etag(s3_ws):
    """S3's LastModified has whole seconds: a change of the same size within the same second
    keeps size and mtime; only the ETag tells the indexer the file changed."""
    fs = s3_ws.filesystem
    key = fs.root + "/docs/garden.md"
    for i in range(30):
        first, second = (
            f"# Garden\n\nWater the {w} plants every morning.\n".encode()
            for w in (f"bean{i:02d}", f"pea{i:02d}x")
        )
        fs.fs.pipe_file(key, first)
        assert s3_ws.rebuild_search_index(["docs/garden.md"]).indexed == ["docs/garden.md"]
        seen = fs.stat("docs/garden.md").mtime
        fs.fs.pipe_file(key, second)  # same size
        if fs.stat("docs/garden.md").mtime != seen:
            continue  # the second write landed in the next second: try again
        report = s3_ws.rebuild_search_index(["docs/garden.md"])
        assert report.indexed == ["docs/garden.md"], report
        assert "docs/garden.md" in box(s3_ws).run(T.SEARCH.SEARCH, query=f"pea{i:02d}x")
        return
    pytest.skip("no second write landed within the first one's second in 30 tries (a very slow server)")


def test_instructions_name_the_object_store_and_the_sandbox_limit(s3_ws):
    text = s3_ws.filesystem.get_instructions()
    assert text.startswith('Object-storage workspace at "s3://') and "sync_to" in text


def test_read_file_on_a_stalled_server_is_an_error_within_the_deadline(s3):
    """``workspace_read_file`` on a server that stopped answering: the tool's error text within
    the filesystem's deadline (it waited for minutes of retried read timeouts)."""
    import time

    from ..filesystem.test_fsspec import stalling_s3

    proxy, fs = stalling_s3(s3, timeout=2)
    ws = Workspace(filesystem=fs, bm25=False)
    ws.init()
    try:
        proxy.stall()
        t0 = time.monotonic()
        out = box(ws).run(T.FILESYSTEM.READ_FILE, path="a.txt")
        took = time.monotonic() - t0
    finally:
        proxy.cut()
        ws.destroy()
    assert took < 5, f"the read took {took:.1f}s"
    assert out.startswith("Error") and "unavailable" in out and "within the 2s deadline" in out, out


def test_write_file_to_a_directory_path_is_refused(s3_ws):
    """``newdir/`` used to be written as a file ``newdir`` on object storage."""
    out = box(s3_ws).run(T.FILESYSTEM.WRITE_FILE, path="newdir/", content="x")
    assert out.startswith("Error") and 'cannot end with "/"' in out, out
    assert not s3_ws.filesystem.exists("newdir")
