"""Time bounds on huge files: a 4 GiB sparse file (a text header, then a hole of zeros).

``workspace_read_file {limit: 1}`` counted every line of it for its header (16 s per GiB); the
Python grep engine read all of it to find it binary (the hole, without a newline, is one endless
line, and the NUL check ran on whole lines: ~1.5 s per GiB); a grep of that one file used the
Python engine even with ripgrep installed. Now lines are counted in the first 64 MiB only (then
"of about N" / "of an unknown number"), reading for grep ends at the first NUL byte, and one file
is searched by (confined) ripgrep. Bytes read are measured, not time (the machine is shared).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.tools import grep as grep_mod
from ws_jupyter.tools.files.read_file import COUNT_LINES_BYTES
from ws_jupyter.tools.grep import confine as grep_confine

GIB = 1 << 30
MIB = 1 << 20


class CountingFilesystem(LocalFilesystem):
    """A local filesystem that counts the bytes its callers read."""

    bytes_read = 0

    def open_read(self, path: str) -> Iterator[bytes]:
        for chunk in super().open_read(path):
            self.bytes_read += len(chunk)
            yield chunk


@pytest.fixture
def sparse_4gib(tmp_path: Path) -> Path:
    head = b"".join(b"line %d of the header\n" % i for i in range(4000))  # ~90 KiB: past 64 KiB
    with open(tmp_path / "big.log", "wb") as fh:
        fh.write(head)
        fh.truncate(4 * GIB)
    return tmp_path


def test_read_file_window_of_a_4_gib_sparse_file_stops_counting(sparse_4gib: Path):
    fs = CountingFilesystem(sparse_4gib)
    ws = Workspace(filesystem=fs, bm25=False)
    read = next(t for t in ws.tools() if t.name == "workspace_read_file")
    try:
        out = str(read.run({"path": "big.log", "limit": 1}))
        assert out.startswith(
            "big.log (lines 1-1 of an unknown number (not counted past the first 64 MiB), 4294967296 bytes)\n"
            "     1→line 0 of the header"
        ), out[:300]
        assert fs.bytes_read <= COUNT_LINES_BYTES + 2 * MIB, fs.bytes_read
        fs.bytes_read = 0
        out = str(read.run({"path": "big.log", "offset": 3999, "limit": 2}))
        assert out.startswith("big.log (lines 3999-4000 of an unknown number") and "line 3999 of" in out
        assert fs.bytes_read <= COUNT_LINES_BYTES + 2 * MIB, fs.bytes_read
    finally:
        ws.destroy()


def test_read_file_of_many_lines_past_the_count_limit_gives_an_estimate(tmp_path: Path):
    line = b"a log line of forty bytes, more or less\n"
    with open(tmp_path / "lines.log", "wb") as fh:
        block = line * 100_000
        while fh.tell() < COUNT_LINES_BYTES + 8 * MIB:
            fh.write(block)
    total = (tmp_path / "lines.log").stat().st_size // len(line)
    ws = Workspace(filesystem=LocalFilesystem(tmp_path), bm25=False)
    read = next(t for t in ws.tools() if t.name == "workspace_read_file")
    try:
        out = str(read.run({"path": "lines.log", "limit": 2}))
        assert out.startswith(f"lines.log (lines 1-2 of about {total} (estimated from the first 64 MiB),")
        out = str(read.run({"path": "lines.log", "offset": total - 1}))  # the end: counted exactly
        assert out.startswith(f"lines.log (lines {total - 1}-{total} of {total},")
    finally:
        ws.destroy()


def test_python_grep_decides_binary_at_the_first_nul(sparse_4gib: Path):
    fs = CountingFilesystem(sparse_4gib)
    result = grep_mod.search(fs, "header", "big.log", engine="python")
    assert result.binary_skipped == 1 and result.total_matches == 0
    assert fs.bytes_read <= 2 * MIB, fs.bytes_read
    fs.bytes_read = 0
    result = grep_mod.search(fs, "nowhere", engine="python")  # walking: the same
    assert result.total_matches == 0 and fs.bytes_read <= 2 * MIB, fs.bytes_read


@pytest.mark.skipif(
    grep_mod.find_ripgrep() is None or grep_confine.mode() is None,
    reason="needs ripgrep and a confinement (Landlock or bubblewrap)",
)
def test_one_file_is_searched_by_ripgrep(sparse_4gib: Path):
    (sparse_4gib / "notes.txt").write_text("first\nsecond match\n")
    fs = LocalFilesystem(sparse_4gib)
    result = grep_mod.search(fs, "match", "notes.txt")
    assert result.engine == "ripgrep"
    assert grep_mod.format_result(result, 0) == ("1 match across 1 file", "notes.txt:2:8: second match")
    result = grep_mod.search(fs, "header", "big.log")
    assert result.engine == "ripgrep" and result.binary_skipped == 1
    assert grep_mod.format_result(result, 0)[0] == "0 matches across 0 files (1 file skipped: binary)"


@pytest.mark.skipif(
    grep_mod.find_ripgrep() is None or grep_confine.mode() is None,
    reason="needs ripgrep and a confinement (Landlock or bubblewrap)",
)
def test_ripgrep_memory_is_capped_and_the_python_engine_takes_over(tmp_path: Path, monkeypatch):
    """ripgrep keeps a whole line in memory: a file of one endless line would take its size in
    memory. The confined ripgrep has a heap limit; past it, the Python engine (lines cut at 4 MiB)
    searches."""
    monkeypatch.setattr(grep_confine, "MEMORY_LIMIT", 64 * MIB)
    with open(tmp_path / "endless.txt", "wb") as fh:
        fh.write(b"NEEDLE at the start\n")
        block = b"abcdefghij" * MIB
        for _ in range(16):  # 160 MiB without a newline
            fh.write(block)
    fs = LocalFilesystem(tmp_path)
    for path in (".", "endless.txt"):
        result = grep_mod.search(fs, "NEEDLE", path)
        assert result.engine == "python", path
        assert grep_mod.format_result(result, 0) == (
            "1 match across 1 file",
            "endless.txt:1:1: NEEDLE at the start",
        )
    (tmp_path / "endless.txt").unlink()
    (tmp_path / "small.txt").write_text("NEEDLE\n")
    assert grep_mod.search(fs, "NEEDLE").engine == "ripgrep"  # an ordinary search fits
