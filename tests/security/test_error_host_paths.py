"""Host paths in error messages under a directory/symlink swap race.

``os.path.realpath`` raises ``OSError(EINVAL)`` naming the host path when a component turns from a
symlink into a directory between its ``lstat`` and its ``readlink``; the tools printed it as
``Error: OSError: [Errno 22] Invalid argument: '/host/.../ws/d'`` (15 of 1,150 calls). OSErrors now
become workspace errors naming the workspace path (``filesystem/oserrors.py``), and the tools'
last-resort formatting never prints an OSError's file names.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.filesystem.oserrors import describe_os_error, os_error
from ws_jupyter.tools.wrappers import error_output

from ..helpers import write
from .test_listing_race import _has_renameat2, swapping

ROUNDS = 1000


@pytest.mark.skipif(not _has_renameat2(), reason="needs Linux renameat2")
def test_no_tool_message_names_a_host_path_while_directories_are_swapped(tmp_path: Path):
    root = Path(os.path.realpath(tmp_path))
    ws_dir, outside = root / "ws", root / "outside"
    write(ws_dir, "d/f.txt", "inside\n")
    write(ws_dir, "d/sub/g.txt", "inside\n")
    write(outside, "f.txt", "outside\n")
    os.symlink(outside, ws_dir / "link")
    ws = Workspace(filesystem=LocalFilesystem(ws_dir), bm25=False)
    tools = {t.name: t for t in ws.tools()}
    calls = (
        ("workspace_read_file", {"path": "d/f.txt"}),
        ("workspace_file_stat", {"path": "d/sub/g.txt"}),
        ("workspace_list_files", {"path": "d/sub"}),
        ("workspace_grep", {"pattern": "inside", "path": "d/sub"}),
        ("workspace_read_file", {"path": "link/f.txt"}),
    )
    leaks: list[str] = []
    errors = 0
    try:
        with swapping(ws_dir / "d", ws_dir / "link"):
            for i in range(ROUNDS):
                name, args = calls[i % len(calls)]
                out = str(tools[name].run(args))
                errors += out.startswith("Error")
                if str(root) in out:
                    leaks.append(out[:200])
    finally:
        ws.destroy()
    assert errors > 0  # the race was met (refusals name the workspace path)
    assert not leaks, f"{len(leaks)} of {ROUNDS} messages name a host path, e.g. {leaks[:3]}"


def test_os_errors_become_workspace_errors_without_host_paths():
    err = os_error(OSError(errno.EINVAL, "Invalid argument", "/srv/host/ws/d"), "d")
    assert str(err) == "Invalid argument: d" and err.code == "EINVAL" and err.path == "d"
    assert (
        type(os_error(FileNotFoundError(errno.ENOENT, "x", "/srv/host/ws/a"), "a")).__name__ == "FileNotFound"
    )
    text = describe_os_error(OSError(errno.ELOOP, "Too many levels of symbolic links", "/srv/a", "/srv/b"))
    assert text == "OSError: Too many levels of symbolic links (ELOOP)"
    assert str(error_output(OSError(errno.EINVAL, "Invalid argument", "/srv/host/ws/d"))) == (
        "Error: OSError: Invalid argument (EINVAL)"
    )
