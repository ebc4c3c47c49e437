"""Race on grep: a workspace directory swapped for a symlink to a host directory, again and again.

ripgrep opens files by path. A background process exchanging ``d`` with a symlink to a host
directory (``renameat2(RENAME_EXCHANGE)`` in a loop) made it read host files after grep's
containment check: 9 of 387 grep calls returned a host file's content. ripgrep now runs confined
(bubblewrap, or Landlock) so that only the workspace is there to read; without either, the
race-free Python engine searches. Each available mode is replayed here for 1,000 rounds (about 23
leaks expected before the fix), within a time bound the swapper outlives.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from ws_jupyter import LocalFilesystem
from ws_jupyter.tools import grep as grep_mod
from ws_jupyter.tools.grep import confine as grep_confine

from ..helpers import write
from .test_listing_race import _has_renameat2, swapping

SECRET = "SECRET_4f1d"
ROUNDS = 1000
#: Seconds of rounds at most (a loaded machine does fewer): the swapper runs longer than that.
SECONDS = 720


def _modes() -> list[str]:
    return [m for m in grep_confine.MODES if grep_confine.usable(m)] or ["python"]


@pytest.fixture
def swapped_tree(tmp_path: Path):
    """A workspace whose ``d`` is exchanged with ``link`` (a symlink to a host directory holding
    same-named files with a secret) by a background process; yields (workspace dir, outside)."""
    root = Path(os.path.realpath(tmp_path))
    ws_dir, outside = root / "ws", root / "outside"
    for i in range(30):
        write(ws_dir, f"d/f{i:02d}.txt", "needle inside\n" * 3)
        write(outside, f"f{i:02d}.txt", f"needle {SECRET}\n")
    write(outside, f"only_{SECRET}.txt", "needle\n")
    write(outside, ".gitignore", "*.txt\n!f0*.txt\n")
    os.symlink(outside, ws_dir / "link")
    with swapping(ws_dir / "d", ws_dir / "link", seconds=SECONDS + 60):
        yield ws_dir, outside


@pytest.mark.slow
@pytest.mark.timeout(SECONDS + 180)
@pytest.mark.skipif(not _has_renameat2(), reason="needs Linux renameat2")
@pytest.mark.skipif(grep_mod.find_ripgrep() is None, reason="ripgrep is not installed")
@pytest.mark.parametrize("mode", _modes())
def test_grep_never_reads_a_host_file_while_a_directory_is_swapped(swapped_tree, mode, monkeypatch):
    ws_dir, outside = swapped_tree
    monkeypatch.setattr(grep_confine, "MODES", (mode,) if mode != "python" else ())
    fs = LocalFilesystem(ws_dir)
    calls = (
        dict(pattern="needle"),
        dict(pattern="needle", path="d"),
        dict(pattern="needle", path="d/f01.txt"),
        dict(pattern="needle", files_only=True, respect_gitignore=False),
        dict(pattern="needle", context_lines=1, path="d/*.txt"),
    )
    engines: Counter[str] = Counter()
    leaks: list[str] = []
    deadline = time.monotonic() + SECONDS
    rounds = 0
    while rounds < ROUNDS and time.monotonic() < deadline:
        call = calls[rounds % len(calls)]
        rounds += 1
        try:
            result = grep_mod.search(fs, **call)  # type: ignore[arg-type]
        except OSError as exc:  # a refused or vanished path is fine; its message is checked
            out = str(exc)
        else:
            engines[result.engine] += 1
            summary, body = grep_mod.format_result(result, 1)
            out = summary + body + repr(result.file_counts)
        if SECRET in out or str(outside) in out:
            leaks.append(out[:300])
    assert not leaks, f"{len(leaks)} leaks in {rounds} rounds ({mode}), e.g. {leaks[:3]}"
    # About half the calls name a path below ``d`` and are refused while it is a symlink. The
    # Python engine takes over whenever the swap wins a race between ripgrep's steps (the search
    # directory a symlink when bubblewrap enters it, a file gone before its lines are extracted):
    # how often depends on the load. ripgrep must still have done a good part of the searching,
    # or this test would not test it.
    completed = sum(engines.values())
    assert rounds == ROUNDS, f"only {rounds} of {ROUNDS} rounds within {SECONDS} s ({mode})"
    assert completed > rounds // 4, (rounds, engines)
    if mode == "python":
        assert engines["python"] == completed, engines
    else:
        assert engines["ripgrep"] >= completed / 5, engines


@pytest.mark.skipif(grep_mod.find_ripgrep() is None, reason="ripgrep is not installed")
@pytest.mark.parametrize("mode", [m for m in grep_confine.MODES if grep_confine.usable(m)])
def test_confined_ripgrep_reads_the_workspace_only(tmp_path: Path, mode, monkeypatch):
    """No race needed to see it: whatever path ripgrep is given (absolute, through a symlink, the
    workspace's parent), only the files below the workspace root can be opened; nothing can be
    written either."""
    monkeypatch.setattr(grep_confine, "MODES", (mode,))
    root = Path(os.path.realpath(tmp_path))
    ws_dir = root / "ws"
    write(ws_dir, "in.txt", "needle inside\n")
    write(root, "host.txt", f"needle {SECRET}\n")
    os.symlink(root / "host.txt", ws_dir / "link.txt")
    os.symlink(root, ws_dir / "up")
    rg = grep_confine.Confined(str(grep_mod.find_ripgrep()), str(ws_dir))
    proc = rg.popen(
        ["--no-config", "-L", "-n", "needle", str(ws_dir), str(root / "host.txt"), "/etc/passwd"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc is not None
    out, err = proc.communicate(timeout=60)
    assert b"in.txt:1:needle inside" in out
    assert SECRET.encode() not in out and b"root:" not in out
    assert err.count(b"os error") >= 2  # refused, not silently skipped
    find = grep_confine.Confined(shutil.which("find") or "find", str(ws_dir)).popen(
        [str(ws_dir), "-fprint", str(ws_dir / "written.txt")], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    if find is not None:  # find runs confined too (rules scan); it cannot write
        find.communicate(timeout=60)
        assert not (ws_dir / "written.txt").exists()


def test_without_confinement_grep_uses_the_python_engine(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(grep_confine, "MODES", ())
    write(tmp_path, "a.txt", "needle\n")
    result = grep_mod.search(LocalFilesystem(tmp_path), "needle")
    assert result.engine == "python" and result.total_matches == 1
