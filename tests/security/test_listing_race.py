"""Race on listing and stat: a directory swapped for a symlink to outside, again and again.

A process in the sandbox can exchange a workspace directory with a symlink to a host directory
(``renameat2(RENAME_EXCHANGE)`` in a loop). Before, ``readdir``/``walk``/``stat``/``exists``
re-resolved names by path after the containment check, so ``list_files`` returned the outside
directory's listing and ``file_stat`` an outside file's size (128-455 leaks per 1,094 calls).
They now work through directory descriptors opened with ``O_NOFOLLOW`` from the root.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
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
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(ws_dir / "d"), str(ws_dir / "link"), "60"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert swapper.stdout is not None and swapper.stdout.readline().strip() == "ready"
    leaks: list[str] = []
    calls = 0
    deadline = time.monotonic() + 25
    try:
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
    finally:
        swapper.kill()
        swapper.wait()
    assert calls > 50
    assert not leaks, f"{len(leaks)} leaks in {calls} rounds, e.g. {leaks[:3]}"
