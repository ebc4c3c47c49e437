"""LocalFilesystem: the shared contract, plus what only a host directory has (containment, symlinks,
allowed paths, read-only, instructions, lifecycle)."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from ws_jupyter import LocalFilesystem
from ws_jupyter.errors import (
    FilesystemNotReadyError,
    InvalidArgumentError,
    InvalidPathError,
    NotADirectory,
    PathEscapeError,
    ReadOnlyError,
)

from .conformance import FilesystemConformance, host_write, raises


class TestLocalConformance(FilesystemConformance):
    @pytest.fixture
    def fs(self, workdir: Path) -> LocalFilesystem:
        return LocalFilesystem(workdir)

    @staticmethod
    def make_external_change(fs, path, content):
        host_write(os.path.join(fs.base_path, path), content)


@pytest.fixture
def fs(workdir: Path) -> LocalFilesystem:
    return LocalFilesystem(workdir)


@pytest.fixture
def outside(workdir: Path) -> Path:
    out = workdir.parent / "outside"
    out.mkdir()
    (out / "secret.txt").write_text("TOP SECRET")
    (out / "dir").mkdir()
    (out / "dir" / "inner.txt").write_text("inner")
    return out


# --- containment ------------------------------------------------------------------------------


def test_dotdot_escape(fs, outside):
    with raises(PathEscapeError, "EACCES") as info:
        fs.read_file("../outside/secret.txt")
    assert isinstance(info.value, PermissionError)
    assert str(info.value) == 'Permission denied: "../outside/secret.txt" is outside the workspace'


def test_dotdot_inside_is_fine(fs):
    fs.write_file("a/b.txt", "x")
    assert fs.read_file("a/../a/./b.txt") == "x"
    assert fs.stat("a/../a/b.txt").path == "a/b.txt"


def test_absolute_inside_accepted(fs, workdir):
    fs.write_file("src/app.py", "print(1)")
    assert fs.read_file(str(workdir / "src" / "app.py")) == "print(1)"
    assert fs.stat(str(workdir / "src" / "app.py")).path == "src/app.py"


def test_absolute_outside_hint_suggests_relative_form(fs):
    fs.write_file("src/app.py", "x")
    with raises(PathEscapeError, "EACCES") as info:
        fs.read_file("/src/app.py")
    assert str(info.value) == (
        'Permission denied: "/src/app.py" is outside the workspace; use a relative path like "src/app.py"'
    )


def test_absolute_outside_generic_hint(fs):
    with raises(PathEscapeError, "EACCES") as info:
        fs.read_file("/etc/passwd")
    assert "without a leading" in str(info.value)


def test_home_expansion_is_outside(fs):
    with raises(PathEscapeError, "EACCES"):
        fs.read_file("~/.bashrc")


def test_symlink_file_outside(fs, workdir, outside):
    os.symlink(outside / "secret.txt", workdir / "link")
    with raises(PathEscapeError, "EACCES") as info:
        fs.read_file("link")
    assert "symlink" in str(info.value)
    with raises(PathEscapeError, "EACCES"):
        fs.write_file("link", "pwned")
    assert (outside / "secret.txt").read_text() == "TOP SECRET"


def test_symlink_dir_outside_blocks_new_files(fs, workdir, outside):
    """A symlinked ancestor of a file that does not exist yet must not lead outside."""
    os.symlink(outside / "dir", workdir / "linkdir")
    for op in (
        lambda: fs.write_file("linkdir/new.txt", "x"),
        lambda: fs.write_file("linkdir/deeper/new.txt", "x"),
        lambda: fs.mkdir("linkdir/newdir"),
        lambda: fs.append_file("linkdir/log.txt", "x"),
        lambda: fs.copy_file("linkdir/inner.txt", "copy.txt"),
    ):
        with raises(PathEscapeError, "EACCES"):
            op()
    assert sorted(os.listdir(outside / "dir")) == ["inner.txt"]
    assert not (workdir / "copy.txt").exists()


def test_dangling_symlink_outside(fs, workdir, outside):
    os.symlink(outside / "new.txt", workdir / "dangling")
    with raises(PathEscapeError, "EACCES"):
        fs.write_file("dangling", "x")
    assert not (outside / "new.txt").exists()
    assert fs.exists("dangling") is False


def test_exists_is_false_for_escapes(fs, outside):
    assert fs.exists("../outside/secret.txt") is False
    assert fs.exists(str(outside / "secret.txt")) is False
    assert fs.exists("bad\x00path") is False


def test_symlink_inside_is_followed(fs, workdir):
    fs.write_file("real/data.txt", "data")
    os.symlink("real", workdir / "alias")
    os.symlink("real/data.txt", workdir / "data-link")
    assert fs.read_file("alias/data.txt") == "data"
    fs.write_file("data-link", "new")
    # writing through an inside link updates the target and keeps the link
    assert os.path.islink(workdir / "data-link")
    assert fs.read_file("real/data.txt") == "new"


def test_readdir_reports_symlinks_without_touching_outside(fs, workdir, outside):
    fs.write_file("real/x.txt", "x")
    os.symlink("real", workdir / "alias")
    os.symlink(outside / "dir", workdir / "out")
    entries = {e.name: e for e in fs.readdir(".")}
    assert entries["alias"].is_symlink and entries["alias"].type == "directory"
    assert entries["alias"].symlink_target == "real"
    assert entries["out"].is_symlink and entries["out"].symlink_target == str(outside / "dir")
    names = [e.name for e in fs.readdir(".", recursive=True)]
    assert "out/inner.txt" not in names  # never descends outside
    assert "alias/x.txt" not in names  # each real directory once
    assert "real/x.txt" in names


def test_delete_symlink_removes_link_not_target(fs, workdir, outside):
    os.symlink(outside / "secret.txt", workdir / "link")
    fs.delete_file("link")
    assert not os.path.lexists(workdir / "link")
    assert (outside / "secret.txt").read_text() == "TOP SECRET"


def test_rmdir_recursive_does_not_follow_symlinks(fs, workdir, outside):
    fs.mkdir("d")
    os.symlink(outside / "dir", workdir / "d" / "out")
    fs.rmdir("d", recursive=True)
    assert (outside / "dir" / "inner.txt").read_text() == "inner"


def test_invalid_paths(fs):
    with raises(InvalidPathError, "EINVAL") as info:
        fs.read_file("a\x00b")
    assert isinstance(info.value, ValueError)
    with raises(InvalidPathError, "EINVAL"):
        fs.write_file("\ud800", "x")
    with raises(InvalidPathError, "EINVAL"):
        fs.read_file(123)  # type: ignore[arg-type]


def test_name_too_long_is_a_typed_error(fs):
    with pytest.raises(Exception) as info:
        fs.write_file("a" * 300, "x")
    assert getattr(info.value, "code", None) == "ENAMETOOLONG"


def test_uncontained_allows_outside(workdir, outside):
    fs = LocalFilesystem(workdir, contained=False)
    assert fs.read_file(str(outside / "secret.txt")) == "TOP SECRET"
    assert "Containment is disabled" in fs.get_instructions()


# --- allowed paths --------------------------------------------------------------------------------


def test_allowed_paths(workdir, outside):
    fs = LocalFilesystem(workdir, allowed_paths=[str(outside / "dir")])
    assert fs.read_file(str(outside / "dir" / "inner.txt")) == "inner"
    fs.write_file(str(outside / "dir" / "made.txt"), "ok")
    assert (outside / "dir" / "made.txt").read_text() == "ok"
    assert fs.stat(str(outside / "dir" / "made.txt")).path == str(outside / "dir" / "made.txt")
    with raises(PathEscapeError, "EACCES"):
        fs.read_file(str(outside / "secret.txt"))
    assert "allowed paths" in fs.get_instructions()


def test_relative_allowed_path_resolves_against_base(workdir, outside):
    fs = LocalFilesystem(workdir, allowed_paths=["../outside/dir"])
    assert fs.allowed_paths == (str(outside / "dir"),)
    assert fs.read_file("../outside/dir/inner.txt") == "inner"


def test_symlink_inside_allowed_path_cannot_escape(workdir, outside, tmp_path):
    """Unlike a lexical check, the real path is checked under allowed roots too."""
    elsewhere = Path(os.path.realpath(tmp_path)) / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "private.txt").write_text("private")
    os.symlink(elsewhere, outside / "dir" / "hop")
    fs = LocalFilesystem(workdir, allowed_paths=[str(outside / "dir")])
    with raises(PathEscapeError, "EACCES"):
        fs.read_file(str(outside / "dir" / "hop" / "private.txt"))


def test_set_allowed_paths(workdir, outside):
    fs = LocalFilesystem(workdir)
    assert not fs.exists(str(outside / "secret.txt"))
    fs.set_allowed_paths([str(outside)])
    assert fs.exists(str(outside / "secret.txt"))
    fs.set_allowed_paths(lambda current: [p for p in current if p != str(outside)])
    assert fs.allowed_paths == ()
    assert not fs.exists(str(outside / "secret.txt"))


# --- read-only --------------------------------------------------------------------------------------


def test_read_only_refuses_every_mutation(workdir):
    (workdir / "a.txt").write_text("a")
    (workdir / "d").mkdir()
    fs = LocalFilesystem(workdir, read_only=True)
    mutations = {
        "write_file": lambda: fs.write_file("a.txt", "x"),
        "append_file": lambda: fs.append_file("a.txt", "x"),
        "delete_file": lambda: fs.delete_file("a.txt"),
        "copy_file": lambda: fs.copy_file("a.txt", "b.txt"),
        "move_file": lambda: fs.move_file("a.txt", "b.txt"),
        "mkdir": lambda: fs.mkdir("new"),
        "rmdir": lambda: fs.rmdir("d"),
    }
    for op, call in mutations.items():
        with raises(ReadOnlyError, "EROFS") as info:
            call()
        assert isinstance(info.value, PermissionError)
        assert op in str(info.value)
    assert fs.read_file("a.txt") == "a"
    assert [e.name for e in fs.readdir(".")] == ["a.txt", "d"]
    assert fs.exists("a.txt") and fs.stat("d").type == "directory"
    assert sorted(os.listdir(workdir)) == ["a.txt", "d"]
    assert fs.get_info().read_only is True
    assert "read-only" in fs.get_instructions()


# --- atomic writes and metadata -----------------------------------------------------------------------


def test_write_keeps_permissions_and_leaves_no_temp_files(fs, workdir):
    fs.write_file("run.sh", "#!/bin/sh\necho hi\n")
    os.chmod(workdir / "run.sh", 0o755)
    fs.write_file("run.sh", "#!/bin/sh\necho bye\n")
    assert stat.S_IMODE(os.stat(workdir / "run.sh").st_mode) == 0o755
    assert sorted(os.listdir(workdir)) == ["run.sh"]


def test_failed_no_overwrite_leaves_no_temp_files(fs, workdir):
    fs.write_file("a.txt", "a")
    with pytest.raises(FileExistsError):
        fs.write_file("a.txt", "b", overwrite=False)
    assert sorted(os.listdir(workdir)) == ["a.txt"]


def test_fsync_option_writes(workdir):
    fs = LocalFilesystem(workdir, fsync=True)
    fs.write_file("durable.txt", "x")
    fs.append_file("durable.txt", "y")
    assert fs.read_file("durable.txt") == "xy"


def test_reading_a_fifo_does_not_block(fs, workdir):
    os.mkfifo(workdir / "pipe")
    with pytest.raises(Exception) as info:
        fs.read_file("pipe")
    assert getattr(info.value, "code", None) == "EINVAL"


def test_host_and_relative_path_helpers(fs, workdir):
    fs.write_file("a/b.txt", "x")
    host = fs.host_path("a/b.txt")
    assert host == str(workdir / "a" / "b.txt")
    assert fs.relative_path(host) == "a/b.txt"
    with raises(PathEscapeError, "EACCES"):
        fs.host_path("../x")


def test_concurrent_writers_never_tear(fs):
    """Many threads rewriting one file: every read sees one complete version."""
    versions = [f"{i}:".encode() + bytes([65 + i]) * 200_000 for i in range(8)]
    stop = threading.Event()
    torn: list[bytes] = []

    def writer(data: bytes) -> None:
        while not stop.is_set():
            fs.write_file("shared.bin", data)

    fs.write_file("shared.bin", versions[0])
    threads = [threading.Thread(target=writer, args=(v,)) for v in versions]
    for t in threads:
        t.start()
    for _ in range(200):
        got = fs.read_file("shared.bin", encoding="binary")
        if got not in versions:
            torn.append(got[:20])
    stop.set()
    for t in threads:
        t.join()
    assert torn == []


# --- lifecycle, info, instructions ------------------------------------------------------------------


def test_lazy_base_creation_and_lifecycle(tmp_path):
    base = tmp_path / "later" / "ws"
    fs = LocalFilesystem(base)
    assert fs.status == "pending" and not base.exists()
    fs.write_file("x.txt", "x")
    assert base.is_dir() and fs.status == "ready"
    fs.destroy()
    assert fs.status == "destroyed"
    assert (base / "x.txt").read_text() == "x"  # destroy never deletes files
    with raises(FilesystemNotReadyError, "ENOTREADY"):
        fs.read_file("x.txt")
    fs.destroy()  # idempotent


def test_base_path_that_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    fs = LocalFilesystem(tmp_path / "f")
    with raises(NotADirectory, "ENOTDIR"):
        fs.init()
    assert fs.status == "error"


def test_tilde_base_path_expanded(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    fs = LocalFilesystem("~/proj")
    assert fs.base_path == str(tmp_path / "proj")


def test_instructions_default_override_and_function(workdir):
    fs = LocalFilesystem(workdir)
    default = fs.get_instructions()
    assert str(workdir) in default and "relative" in default
    assert (
        LocalFilesystem(workdir, instructions="Only touch data/.").get_instructions() == "Only touch data/."
    )
    assert LocalFilesystem(workdir, instructions="").get_instructions() == ""
    seen = {}

    def custom(default_text, ctx):
        seen["ctx"] = ctx
        return default_text + " Extra."

    fn_fs = LocalFilesystem(workdir, instructions=custom)
    assert fn_fs.get_instructions({"user": "a"}) == default + " Extra."
    assert seen["ctx"] == {"user": "a"}
    with raises(InvalidArgumentError, "INVALID_ARGUMENT"):
        LocalFilesystem(workdir, instructions=42)  # type: ignore[arg-type]


def test_info(workdir):
    fs = LocalFilesystem(workdir, allowed_paths=["/opt"], id="fs-1")
    info = fs.get_info()
    assert (info.id, info.name, info.provider, info.base_path, info.read_only) == (
        "fs-1",
        "LocalFilesystem",
        "local",
        str(workdir),
        False,
    )
    assert info.metadata == {"contained": True, "allowed_paths": ["/opt"]}


def test_very_deep_trees_do_not_hit_the_recursion_limit(fs):
    """Listing, walking and removing a 1500-level tree (deeper than Python's recursion limit)."""
    from ws_jupyter.filesystem.walk import walk

    deep = "x/" * 1500 + "leaf.txt"
    fs.write_file(deep, "deep")
    try:
        assert fs.read_file(deep) == "deep"
        names = [e.name for e in fs.readdir(".", recursive=True, max_depth=5000)]
        assert len(names) == 1501 and names[-1] == deep
        assert sum(1 for _ in walk(fs)) == 1501
    finally:
        fs.rmdir("x", recursive=True)  # also keeps pytest's own (recursive) temp cleanup working
    assert not fs.exists("x")
