"""Race on listing and stat: a directory swapped for a symlink to outside, again and again.

A process in the sandbox can exchange a workspace directory with a symlink to a host directory
(``renameat2(RENAME_EXCHANGE)`` in a loop). Before, ``readdir``/``walk``/``stat``/``exists``
re-resolved names by path after the containment check, so ``list_files`` returned the outside
directory's listing and ``file_stat`` an outside file's size (128-455 leaks per 1,094 calls).
They now work through directory descriptors opened with ``O_NOFOLLOW`` from the root.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.filesystem import walk

from ..helpers import write

SECRET_SIZE = 777_777

SWAPPER = textwrap.dedent(
    """
    import ctypes, os, sys, time
    libc = ctypes.CDLL(None, use_errno=True)
    a, b, seconds = sys.argv[1].encode(), sys.argv[2].encode(), float(sys.argv[3])
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    if hasattr(libc, "renameat2"):
        swap = lambda: libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    else:
        swap = lambda: libc.syscall(316, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    n, end = 0, time.monotonic() + seconds
    print("ready", flush=True)
    while time.monotonic() < end:
        if swap() == 0:
            n += 1
    print(n, flush=True)
    """
)


@contextlib.contextmanager
def swapping(a: Path, b: Path, seconds: float = 120) -> Iterator[None]:
    """A background process exchanges ``a`` and ``b`` (``renameat2(RENAME_EXCHANGE)``) in a loop
    while the block runs (for ``seconds`` at most)."""
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(a), str(b), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert swapper.stdout is not None and swapper.stdout.readline().strip() == "ready"
        yield
    finally:
        swapper.kill()
        swapper.wait()


def _has_renameat2() -> bool:
    import ctypes

    return sys.platform.startswith("linux") and ctypes.CDLL(None) is not None


@pytest.mark.skipif(not _has_renameat2(), reason="needs Linux renameat2")
def test_swapping_a_directory_for_a_symlink_never_leaks_outside(tmp_path: Path):
    root = Path(os.path.realpath(tmp_path))
    ws_dir = root / "ws"
    outside = root / "outside"
    write(outside, "SECRET_listing.txt", "s")
    with open(outside / "f.txt", "wb") as fh:  # same name as the inside file, another size
        fh.truncate(SECRET_SIZE)
    write(outside, "only_outside.txt", "s")
    write(outside, "sub/SECRET_deep.txt", "s")
    write(ws_dir, "d/f.txt", "inside\n")
    write(ws_dir, "d/sub/inner.txt", "inside\n")
    os.symlink(outside, ws_dir / "link")

    fs = LocalFilesystem(ws_dir)
    ws = Workspace(filesystem=fs)
    tools = {t.name: t for t in ws.tools()}
    leaks: list[str] = []
    calls = 0
    deadline = time.monotonic() + 25
    with swapping(ws_dir / "d", ws_dir / "link"):
        while calls < 3000 and time.monotonic() < deadline:
            calls += 1
            outputs: list[str] = []
            for call in (
                lambda: str(tools["workspace_list_files"].run({"path": "d", "max_depth": 3})),
                lambda: str(tools["workspace_file_stat"].run({"path": "d/f.txt"})),
                lambda: str(tools["workspace_grep"].run({"pattern": "s", "path": "d/only_outside.txt"})),
                lambda: repr(fs.readdir("d", recursive=True)),
                lambda: repr([e.path for e in walk(fs, "d")]),
                lambda: repr(fs.stat("d/f.txt").size),
                lambda: repr(fs.exists("d/only_outside.txt")),
            ):
                try:
                    outputs.append(call())
                except OSError as exc:  # a refused or vanished path is fine; its message is checked
                    outputs.append(str(exc))
            for out in outputs:
                if "SECRET" in out or str(SECRET_SIZE) in out or out == "True" or str(outside) in out:
                    leaks.append(out[:200])
    assert calls > 50
    assert not leaks, f"{len(leaks)} leaks in {calls} rounds, e.g. {leaks[:3]}"


@pytest.mark.skipif(not _has_renameat2(), reason="needs Linux renameat2")
def test_copy_and_move_under_a_swapped_directory_stay_inside(tmp_path: Path):
    """copy_file(recursive) and move_file used to work on host paths: with ``d`` swapped for a
    symlink to outside, a tree copy pulled the outside directory into the workspace and a move
    took an outside file in (or put a workspace file out). The workspace is inspected only
    between swapping bursts, when ``d`` is a directory again (the check must not race itself)."""
    root = Path(os.path.realpath(tmp_path))
    ws_dir = root / "ws"
    outside = root / "outside"
    write(outside, "SECRET_listing.txt", "s")
    write(outside, "f.txt", "SECRET outside\n")
    write(ws_dir, "d/f.txt", "inside\n")
    write(ws_dir, "d/sub/inner.txt", "inside\n")
    os.symlink(outside, ws_dir / "link")
    before = sorted(p.name for p in outside.iterdir())
    fs = LocalFilesystem(ws_dir)
    problems: list[str] = []
    rounds = 0
    for burst in range(8):
        with swapping(ws_dir / "d", ws_dir / "link"):
            for _ in range(40):
                rounds += 1
                for op in (
                    lambda: fs.copy_file("d", "copy", recursive=True),
                    lambda: fs.move_file("d/f.txt", "moved.txt"),
                    lambda: fs.move_file("moved.txt", "d/f.txt"),
                    lambda: fs.write_file("x.txt", "mine\n"),
                    lambda: fs.move_file("x.txt", "d/x.txt"),
                ):
                    try:
                        op()
                    except OSError:
                        pass  # refused or vanished mid-swap: fine, as long as nothing crossed
        if (ws_dir / "d").is_symlink():  # stopped mid-exchange: put the directory back
            os.rename(ws_dir / "d", ws_dir / "tmp-link")
            os.rename(ws_dir / "link", ws_dir / "d")
            os.rename(ws_dir / "tmp-link", ws_dir / "link")
        if "SECRET" in _inside_text(ws_dir):
            problems.append(f"burst {burst}: outside content inside the workspace")
        now = sorted(p.name for p in outside.iterdir())
        if now != before:
            problems.append(f"burst {burst}: outside changed: {now}")
            break
        if (ws_dir / "copy").is_dir():
            fs.rmdir("copy", recursive=True)
    assert not problems, f"{len(problems)} problems in {rounds} rounds, e.g. {problems[:3]}"
    assert rounds == 8 * 40


def _inside_text(ws_dir: Path) -> str:
    """Names and contents of the workspace's real files (never through a symlink; entries that
    vanish under the swapper are skipped)."""
    seen: list[str] = []
    for top, dirs, files in os.walk(ws_dir):  # os.walk does not follow symlinked directories
        for name in files:
            path = os.path.join(top, name)
            try:
                if os.path.islink(path):
                    continue
                with open(path, "rb") as fh:
                    seen.append(name + fh.read(4096).decode(errors="replace"))
            except OSError:
                continue
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(top, d))]
    return " ".join(seen)
