"""Hostile files: FIFOs, device symlinks, outside symlinks, huge sparse files and endless lines.

Each test replays the attack in a child process (tests/security/conftest.py) with a timeout and an
address-space limit: on the code before the bounded reader, the FIFO ``.gitignore`` hung listing,
grep and indexing forever, the ``/dev/zero`` one read until memory ran out, an 8 GB sparse file
made whole-file reads fail with MemoryError, and a line of gigabytes made line splitting quadratic.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..helpers import write
from .conftest import replay

GIB = 1 << 30


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_fifo_gitignore_does_not_hang_list_grep_or_index(workdir, engine):
    write(workdir, "src/app.py", "needle = 1\n")
    _fifo(workdir / ".gitignore")
    _fifo(workdir / "src" / ".gitignore")
    r = replay(
        f"""
        ws, t = tools_of({str(workdir)!r}, bm25=True, auto_index_paths=["."])
        emit(str(t["workspace_list_files"].run({{}})))
        emit(str(t["workspace_grep"].run({{"pattern": "needle"}})))
        emit(ws.rebuild_search_index().indexed)
        """,
        timeout=90,
        WS_JUPYTER_GREP_ENGINE=engine if engine == "python" else "",
    )
    assert r.finished, "a FIFO .gitignore hung the call"
    listing, grep, indexed = r.results
    assert "app.py" in listing
    assert grep.startswith("1 match across 1 file") and "src/app.py:1:1: needle = 1" in grep
    assert "src/app.py" in indexed


def test_dev_zero_gitignore_is_not_read(workdir):
    write(workdir, "a.txt", "needle\n")
    os.symlink("/dev/zero", workdir / ".gitignore")
    write(workdir, "sub/b.txt", "needle\n")
    os.symlink("/dev/zero", workdir / "sub" / ".gitignore")
    r = replay(
        f"""
        ws, t = tools_of({str(workdir)!r})
        emit(str(t["workspace_list_files"].run({{}})))
        emit(str(t["workspace_grep"].run({{"pattern": "needle"}})))
        emit(str(t["workspace_grep"].run({{"pattern": "needle", "path": "sub"}})))
        """,
        memory_bytes=2 * GIB,
    )
    assert r.finished and r.returncode == 0, r.stderr
    listing, grep, grep_sub = r.results
    assert "a.txt" in listing and "b.txt" in listing
    assert grep.startswith("2 matches across 2 files")
    assert grep_sub.startswith("1 match across 1 file")


def test_gitignore_symlinked_outside_is_not_used_as_rules(workdir, tmp_path):
    outside = tmp_path / "rules"
    outside.write_text("*\n")
    write(workdir, "kept.txt", "needle\n")
    write(workdir, "pkg/kept2.txt", "needle\n")
    os.symlink(outside, workdir / ".gitignore")
    os.symlink(outside, workdir / "pkg" / ".gitignore")
    r = replay(
        f"""
        ws, t = tools_of({str(workdir)!r})
        emit(str(t["workspace_list_files"].run({{}})))
        emit(str(t["workspace_grep"].run({{"pattern": "needle"}})))
        emit(str(t["workspace_grep"].run({{"pattern": "needle", "path": "pkg"}})))
        """
    )
    assert r.finished, r.stderr
    listing, grep, grep_pkg = r.results
    assert "kept.txt" in listing and "kept2.txt" in listing
    assert grep.startswith("2 matches across 2 files")
    assert grep_pkg.startswith("1 match across 1 file")


def _sparse(path: Path, size: int, head: bytes = b"") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(size)


def test_huge_sparse_file_gives_clear_errors_not_memory_errors(workdir):
    _sparse(workdir / "big.txt", 8 * GIB, b"hello\n")
    write(workdir, "skills/huge/SKILL.md", "---\nname: huge\ndescription: A skill with a huge reference.\n---\nBody\n")
    _sparse(workdir / "skills/huge/references/big.md", 8 * GIB, b"# big\n")
    _sparse(workdir / "skills/bloated/SKILL.md", 8 * GIB, b"---\nname: bloated\ndescription: x\n---\n")
    r = replay(
        f"""
        ws, t = tools_of({str(workdir)!r}, skills=["skills"])
        emit(str(t["workspace_edit_file"].run({{"path": "big.txt", "old_string": "hello", "new_string": "bye"}})))
        emit(str(t["workspace_read_file"].run({{"path": "big.txt", "encoding": "base64"}})))
        emit(str(t["workspace_read_file"].run({{"path": "big.txt", "encoding": "hex"}})))
        emit(str(t["skill_read"].run({{"skill_name": "huge", "path": "references/big.md"}})))
        emit([i.message for i in ws.skills.issues()])
        """,
        memory_bytes=3 * GIB,
        timeout=120,
    )
    assert r.finished and r.returncode == 0, r.stderr
    edit, b64, hexed, skill_read, issues = r.results
    assert edit.startswith("Error: File too large: big.txt is 8,589,934,592 bytes"), edit
    # only what the output budget can show is read
    assert b64.startswith("big.txt (8589934592 bytes, base64)\n") and "[output truncated" in b64
    assert hexed.startswith("big.txt (8589934592 bytes, hex)\n") and "[output truncated" in hexed
    assert skill_read.startswith("Error: File too large:"), skill_read
    assert any("bloated" in m and "too large" in m.lower() for m in issues), issues
    assert (workdir / "big.txt").stat().st_size == 8 * GIB  # untouched


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_endless_line_is_read_and_searched_in_one_pass(workdir, engine):
    # 64 KiB of text, then 2 GiB without a newline (sparse zeros: cheap to make, and binary to grep)
    head = b"".join(b"line %d of text\n" % i for i in range(4000))
    head += b"x" * (64 * 1024 - len(head))
    _sparse(workdir / "log.txt", 2 * GIB, head)
    # and a text-only variant: 64 KiB of text, then 64 MiB of one line of letters
    with open(workdir / "one_line.txt", "wb") as fh:
        fh.write(head)
        block = b"abcdefghij" * (1 << 20)
        for _ in range(6):
            fh.write(block)
        fh.write(b"NEEDLE\n")
    r = replay(
        f"""
        ws, t = tools_of({str(workdir)!r})
        emit(str(t["workspace_read_file"].run({{"path": "log.txt", "limit": 1}})))
        emit(str(t["workspace_read_file"].run({{"path": "one_line.txt", "offset": 4001, "limit": 1}})))
        emit(str(t["workspace_grep"].run({{"pattern": "line 3999 of"}})))
        emit(str(t["workspace_grep"].run({{"pattern": "NEEDLE", "path": "one_line.txt"}})))
        """,
        memory_bytes=3 * GIB,
        timeout=240,
        WS_JUPYTER_GREP_ENGINE=engine if engine == "python" else "",
    )
    assert r.finished and r.returncode == 0, r.stderr
    first, long_line, grep, needle = r.results
    # lines are counted in the first 64 MiB only: there, log.txt's endless line is still going on
    assert first.startswith(
        "log.txt (lines 1-1 of an unknown number (not counted past the first 64 MiB), 2147483648 bytes)\n"
        "     1→line 0 of text"
    ), first
    assert long_line.startswith("one_line.txt (lines 4001-4001 of 4001,")
    # log.txt has NUL bytes after its first 64 KiB: skipped as binary, like ripgrep does
    assert grep.startswith("1 match across 1 file") and "one_line.txt:4000:1: line 3999 of text" in grep
    assert needle.startswith("0 matches") or needle.startswith("1 match")


def test_hostile_gitignore_made_after_a_kept_tree_scan_is_still_seen(workdir):
    # ripgrep's .gitignore check is kept per tree and reused while nothing in it changed (ctime of
    # every directory and .gitignore): a FIFO made later, a .gitignore grown in place past the
    # limit or swapped for a /dev/zero link must each be seen on the next search.
    write(workdir, "src/app.py", "needle = 1\n")
    write(workdir, "lib/.gitignore", "*.log\n")
    write(workdir, "lib/deep/mod.py", "needle = 2\n")
    old = os.stat(workdir).st_ctime + 0  # the scan is kept only for directories settled 1 s
    r = replay(
        f"""
        import os, time
        from ws_jupyter.tools.grep import rules_scan
        while time.time() < {old} + 1.5:
            time.sleep(0.1)
        ws, t = tools_of({str(workdir)!r})
        grep = lambda: str(t["workspace_grep"].run({{"pattern": "needle"}}))
        emit(grep())
        emit({str(workdir)!r} in rules_scan._scans)
        emit(grep())  # from the kept scan
        os.mkfifo({str(workdir / "src" / ".gitignore")!r})
        emit(grep())
        os.unlink({str(workdir / "src" / ".gitignore")!r})
        emit(grep())
        while time.time() < os.stat({str(workdir / "src")!r}).st_ctime + 1.5:
            time.sleep(0.1)
        emit(grep())
        emit({str(workdir)!r} in rules_scan._scans)
        with open({str(workdir / "lib" / ".gitignore")!r}, "a") as f:
            f.truncate(64 << 20)  # grown in place: no directory changes
        emit(grep())
        os.unlink({str(workdir / "lib" / ".gitignore")!r})
        os.symlink("/dev/zero", {str(workdir / "lib" / ".gitignore")!r})
        emit(grep())
        """,
        timeout=120,
        memory_bytes=2 * GIB,
    )
    assert r.finished and r.returncode == 0, r.stderr
    first, kept, again, fifo, removed, settled, kept_again, grown, dev_zero = r.results
    both = ("2 matches across 2 files", "src/app.py:1:1: needle = 1", "lib/deep/mod.py:1:1: needle = 2")
    for out in (first, again, fifo, removed, settled, grown, dev_zero):
        assert out.startswith(both[0]) and both[1] in out and both[2] in out, out
    assert kept and kept_again
