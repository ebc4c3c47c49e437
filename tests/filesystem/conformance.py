"""The filesystem contract, written once.

Any provider proves itself by subclassing :class:`FilesystemConformance` and supplying a ``fs``
fixture over an empty root (and ``make_external_change`` to modify a file behind its back).
Each method is checked for success and for every documented error, with the exact error class
*and* code, and with the builtin base a Python user would catch.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone

import pytest

from ws_jupyter.errors import (
    DirectoryNotEmpty,
    DirectoryNotFound,
    FileEncodingError,
    FileExists,
    FileNotFound,
    InvalidArgumentError,
    InvalidPathError,
    IsADirectory,
    NotADirectory,
    StaleFileError,
    WorkspaceError,
)
from ws_jupyter.filesystem.types import FileEntry, FileStat


def raises(cls: type[WorkspaceError], code: str):
    """pytest.raises that also pins the stable error code."""

    class _Ctx:
        def __enter__(self):
            self._ctx = pytest.raises(cls)
            self.info = self._ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            result = self._ctx.__exit__(*exc)
            assert self.info.value.code == code, f"expected code {code}, got {self.info.value.code}"
            return result

    return _Ctx()


class FilesystemConformance:
    """Behaviour every WorkspaceFilesystem must show. Subclasses provide the ``fs`` fixture."""

    # --- read_file / write_file ------------------------------------------------------------------

    def test_write_then_read_text_and_bytes(self, fs):
        fs.write_file("hello.txt", "Hello, wörld\n")
        assert fs.read_file("hello.txt") == "Hello, wörld\n"
        assert fs.read_file("hello.txt", encoding="binary") == "Hello, wörld\n".encode()
        fs.write_file("blob.bin", b"\x00\x01\xff")
        assert fs.read_file("blob.bin", encoding="binary") == b"\x00\x01\xff"

    def test_read_other_encoding(self, fs):
        fs.write_file("latin.txt", "café".encode("latin-1"))
        assert fs.read_file("latin.txt", encoding="latin-1") == "café"

    def test_read_non_utf8_as_text_is_a_typed_error(self, fs):
        fs.write_file("latin.txt", "café".encode("latin-1"))
        with raises(FileEncodingError, "EENCODING") as info:
            fs.read_file("latin.txt")
        assert isinstance(info.value, ValueError)
        assert "latin.txt" in str(info.value) and "binary" in str(info.value)

    def test_read_unknown_encoding(self, fs):
        fs.write_file("a.txt", "x")
        with raises(InvalidArgumentError, "INVALID_ARGUMENT"):
            fs.read_file("a.txt", encoding="no-such-codec")

    def test_read_missing(self, fs):
        with raises(FileNotFound, "ENOENT") as info:
            fs.read_file("nope.txt")
        assert isinstance(info.value, FileNotFoundError)
        assert info.value.path == "nope.txt"
        assert str(info.value) == "File not found: nope.txt"

    def test_read_directory(self, fs):
        fs.mkdir("d")
        with raises(IsADirectory, "EISDIR") as info:
            fs.read_file("d")
        assert isinstance(info.value, IsADirectoryError)

    def test_write_creates_parents(self, fs):
        fs.write_file("a/b/c/d.txt", "deep")
        assert fs.read_file("a/b/c/d.txt") == "deep"
        assert fs.stat("a/b/c").type == "directory"

    def test_write_non_recursive_missing_parent(self, fs):
        with raises(DirectoryNotFound, "ENOENT") as info:
            fs.write_file("missing/x.txt", "x", recursive=False)
        assert info.value.path == "missing"
        assert not fs.exists("missing")

    def test_write_parent_is_a_file(self, fs):
        fs.write_file("f", "x")
        with raises(NotADirectory, "ENOTDIR"):
            fs.write_file("f/x.txt", "x")
        assert fs.read_file("f") == "x"

    def test_write_overwrites_by_default(self, fs):
        fs.write_file("a.txt", "one")
        fs.write_file("a.txt", "two")
        assert fs.read_file("a.txt") == "two"

    def test_write_no_overwrite(self, fs):
        fs.write_file("a.txt", "one")
        with raises(FileExists, "EEXIST") as info:
            fs.write_file("a.txt", "two", overwrite=False)
        assert isinstance(info.value, FileExistsError)
        assert fs.read_file("a.txt") == "one"
        fs.write_file("new.txt", "fresh", overwrite=False)
        assert fs.read_file("new.txt") == "fresh"

    def test_write_onto_directory(self, fs):
        fs.mkdir("d")
        with raises(IsADirectory, "EISDIR"):
            fs.write_file("d", "x")

    def test_write_rejects_non_text_content(self, fs):
        with raises(InvalidArgumentError, "INVALID_ARGUMENT"):
            fs.write_file("a.txt", 42)  # type: ignore[arg-type]
        assert not fs.exists("a.txt")

    def test_expected_mtime_matches(self, fs):
        fs.write_file("a.txt", "one")
        st = fs.stat("a.txt")
        fs.write_file("a.txt", "two", expected_mtime=st.mtime)
        assert fs.read_file("a.txt") == "two"
        # a datetime works too
        st = fs.stat("a.txt")
        fs.write_file("a.txt", "three", expected_mtime=st.modified_at)
        assert fs.read_file("a.txt") == "three"

    def test_expected_mtime_stale(self, fs):
        fs.write_file("a.txt", "one")
        seen = fs.stat("a.txt").mtime
        time.sleep(0.01)
        self.make_external_change(fs, "a.txt", "external")
        with raises(StaleFileError, "ESTALE") as info:
            fs.write_file("a.txt", "mine", expected_mtime=seen)
        assert "a.txt" in str(info.value)
        assert fs.read_file("a.txt") == "external"

    def test_expected_mtime_missing_file_writes(self, fs):
        fs.write_file("new.txt", "x", expected_mtime=datetime(2020, 1, 1, tzinfo=timezone.utc))
        assert fs.read_file("new.txt") == "x"

    # --- append --------------------------------------------------------------------------------------

    def test_append_creates_and_appends(self, fs):
        fs.append_file("logs/run.log", "a\n")
        fs.append_file("logs/run.log", b"b\n")
        assert fs.read_file("logs/run.log") == "a\nb\n"

    def test_append_to_directory(self, fs):
        fs.mkdir("d")
        with raises(IsADirectory, "EISDIR"):
            fs.append_file("d", "x")

    def test_a_file_path_cannot_name_a_directory(self, fs):
        """``newdir/`` is a directory by its form: writing it as a file is refused (it used to
        write a file ``newdir`` on object stores and on the disk), whether ``newdir`` exists."""
        for path in ("newdir/", "newdir/.", "sub/deep/"):
            for write in (fs.write_file, fs.append_file):
                with raises(InvalidPathError, "EINVAL") as info:
                    write(path, "x")
                assert 'cannot end with "/"' in str(info.value)
        assert not fs.exists("newdir") and not fs.exists("sub")
        fs.mkdir("d")
        with raises(InvalidPathError, "EINVAL"):
            fs.write_file("d/", "x")
        assert fs.stat("d").type == "directory"

    # --- delete --------------------------------------------------------------------------------------

    def test_delete_file(self, fs):
        fs.write_file("a.txt", "x")
        fs.delete_file("a.txt")
        assert not fs.exists("a.txt")

    def test_delete_missing(self, fs):
        with raises(FileNotFound, "ENOENT"):
            fs.delete_file("nope.txt")
        fs.delete_file("nope.txt", force=True)

    def test_delete_directory_refused(self, fs):
        fs.mkdir("d")
        with raises(IsADirectory, "EISDIR"):
            fs.delete_file("d")
        assert fs.exists("d")

    # --- copy / move -----------------------------------------------------------------------------------

    def test_copy_file(self, fs):
        fs.write_file("a.txt", "content")
        fs.copy_file("a.txt", "sub/b.txt")
        assert fs.read_file("sub/b.txt") == "content"
        assert fs.read_file("a.txt") == "content"

    def test_copy_no_overwrite(self, fs):
        fs.write_file("a.txt", "new")
        fs.write_file("b.txt", "old")
        with raises(FileExists, "EEXIST"):
            fs.copy_file("a.txt", "b.txt", overwrite=False)
        assert fs.read_file("b.txt") == "old"

    def test_copy_missing_source(self, fs):
        with raises(FileNotFound, "ENOENT") as info:
            fs.copy_file("nope.txt", "b.txt")
        assert info.value.path == "nope.txt"

    def test_copy_directory_needs_recursive(self, fs):
        fs.write_file("d/x.txt", "x")
        with raises(IsADirectory, "EISDIR"):
            fs.copy_file("d", "e")
        fs.copy_file("d", "e", recursive=True)
        assert fs.read_file("e/x.txt") == "x"

    def test_copy_directory_into_itself_refused(self, fs):
        fs.write_file("d/x.txt", "x")
        with raises(InvalidArgumentError, "INVALID_ARGUMENT"):
            fs.copy_file("d", "d/inner", recursive=True)

    def test_move_file(self, fs):
        fs.write_file("a.txt", "x")
        fs.move_file("a.txt", "moved/b.txt")
        assert not fs.exists("a.txt")
        assert fs.read_file("moved/b.txt") == "x"

    def test_move_directory(self, fs):
        fs.write_file("d/x.txt", "x")
        fs.move_file("d", "e")
        assert fs.read_file("e/x.txt") == "x"
        assert not fs.exists("d")

    def test_move_no_overwrite(self, fs):
        fs.write_file("a.txt", "a")
        fs.write_file("b.txt", "b")
        with raises(FileExists, "EEXIST"):
            fs.move_file("a.txt", "b.txt", overwrite=False)
        assert fs.read_file("a.txt") == "a" and fs.read_file("b.txt") == "b"

    def test_move_missing(self, fs):
        with raises(FileNotFound, "ENOENT"):
            fs.move_file("nope", "x")

    def test_move_file_onto_directory_refused(self, fs):
        fs.write_file("a.txt", "a")
        fs.mkdir("d")
        with raises(IsADirectory, "EISDIR"):
            fs.move_file("a.txt", "d")
        assert fs.read_file("a.txt") == "a"

    # --- mkdir / rmdir ---------------------------------------------------------------------------------

    def test_mkdir(self, fs):
        fs.mkdir("a/b/c")
        assert fs.stat("a/b/c").type == "directory"
        fs.mkdir("a/b/c")  # existing directory is fine

    def test_mkdir_over_file(self, fs):
        fs.write_file("f", "x")
        with raises(FileExists, "EEXIST"):
            fs.mkdir("f")

    def test_mkdir_non_recursive_missing_parent(self, fs):
        with raises(DirectoryNotFound, "ENOENT"):
            fs.mkdir("x/y", recursive=False)
        fs.mkdir("x", recursive=False)
        fs.mkdir("x/y", recursive=False)
        assert fs.stat("x/y").type == "directory"

    def test_rmdir_empty(self, fs):
        fs.mkdir("d")
        fs.rmdir("d")
        assert not fs.exists("d")

    def test_rmdir_not_empty(self, fs):
        fs.write_file("d/x.txt", "x")
        with raises(DirectoryNotEmpty, "ENOTEMPTY") as info:
            fs.rmdir("d")
        assert isinstance(info.value, OSError)
        assert fs.exists("d/x.txt")
        fs.rmdir("d", recursive=True)
        assert not fs.exists("d")

    def test_rmdir_missing(self, fs):
        with raises(DirectoryNotFound, "ENOENT"):
            fs.rmdir("nope")
        fs.rmdir("nope", force=True)

    def test_rmdir_on_file(self, fs):
        fs.write_file("f", "x")
        with raises(NotADirectory, "ENOTDIR"):
            fs.rmdir("f")

    def test_rmdir_root_refused(self, fs):
        fs.write_file("keep.txt", "x")
        with raises(InvalidArgumentError, "INVALID_ARGUMENT"):
            fs.rmdir(".", recursive=True)
        assert fs.read_file("keep.txt") == "x"

    # --- readdir -------------------------------------------------------------------------------------

    def test_readdir(self, fs):
        fs.write_file("b.txt", "bb")
        fs.write_file("a.py", "a")
        fs.mkdir("sub")
        entries = fs.readdir(".")
        assert [e.name for e in entries] == ["a.py", "b.txt", "sub"]
        by_name = {e.name: e for e in entries}
        assert by_name["b.txt"] == FileEntry("b.txt", "file", 2, False, None)
        assert by_name["sub"].type == "directory" and by_name["sub"].size is None

    def test_readdir_recursive_and_extension(self, fs):
        fs.write_file("a.py", "")
        fs.write_file("sub/b.py", "")
        fs.write_file("sub/c.txt", "")
        fs.write_file("sub/deeper/d.py", "")
        names = [e.name for e in fs.readdir(".", recursive=True)]
        assert names == ["a.py", "sub", "sub/b.py", "sub/c.txt", "sub/deeper", "sub/deeper/d.py"]
        assert [e.name for e in fs.readdir(".", recursive=True, extension="py")] == [
            "a.py",
            "sub/b.py",
            "sub/deeper/d.py",
        ]
        assert [e.name for e in fs.readdir(".", recursive=True, extension=".txt")] == ["sub/c.txt"]
        assert [e.name for e in fs.readdir(".", recursive=True, max_depth=1)] == ["a.py", "sub"]

    def test_readdir_errors(self, fs):
        fs.write_file("f", "x")
        with raises(NotADirectory, "ENOTDIR"):
            fs.readdir("f")
        with raises(DirectoryNotFound, "ENOENT") as info:
            fs.readdir("nope")
        assert str(info.value) == "Directory not found: nope"
        with raises(InvalidArgumentError, "INVALID_ARGUMENT"):
            fs.readdir(".", recursive=True, max_depth=0)

    # --- exists / stat -----------------------------------------------------------------------------------

    def test_exists(self, fs):
        fs.write_file("a.txt", "x")
        assert fs.exists("a.txt") and fs.exists(".") and not fs.exists("b.txt")

    def test_stat_file_and_dir(self, fs):
        before = datetime.now(timezone.utc).timestamp() - 5
        fs.write_file("dir/data.json", '{"a": 1}')
        st = fs.stat("dir/data.json")
        assert isinstance(st, FileStat)
        assert (st.name, st.path, st.type, st.size, st.mime_type) == (
            "data.json",
            "dir/data.json",
            "file",
            8,
            "application/json",
        )
        assert st.modified_at.tzinfo is not None and st.modified_at.timestamp() > before
        d = fs.stat("dir")
        assert d.type == "directory" and d.mime_type is None and d.path == "dir"

    def test_stat_unknown_extension_mime(self, fs):
        fs.write_file("blob.zzz9", b"\x00")
        assert fs.stat("blob.zzz9").mime_type == "application/octet-stream"

    def test_stat_missing(self, fs):
        with raises(FileNotFound, "ENOENT"):
            fs.stat("nope")

    # --- info --------------------------------------------------------------------------------------------

    def test_info(self, fs):
        info = fs.get_info()
        assert info.id == fs.id and info.provider == fs.provider and info.read_only is False

    # hook for providers
    @staticmethod
    def make_external_change(fs, path: str, content: str) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


def host_write(host_path: str, content: str) -> None:
    """Change a file behind the filesystem's back (another process, an editor)."""
    with open(host_path, "w") as fh:
        fh.write(content)
    st = os.stat(host_path)
    os.utime(host_path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
