"""The walker's ``stat=False`` mode used by list_files and grep: same entries, no sizes."""

from __future__ import annotations

import os

from ws_jupyter import LocalFilesystem
from ws_jupyter.filesystem.walk import walk

from ..helpers import write


def test_names_only_walk_matches_the_full_walk(workdir):
    for rel in ["a/b/c.txt", "a/d.py", "e.md", "Z/y.txt", ".hidden/h", "ign/x.log"]:
        write(workdir, rel)
    (workdir / ".gitignore").write_text("ign/\n")
    os.symlink("a", workdir / "link-a")
    os.symlink("e.md", workdir / "link-e")
    fs = LocalFilesystem(workdir)
    full = list(walk(fs, ".", max_depth=3))
    names = list(walk(fs, ".", max_depth=3, stat=False))
    assert [(e.path, e.type, e.depth, e.is_symlink, e.symlink_target) for e in names] == [
        (e.path, e.type, e.depth, e.is_symlink, e.symlink_target) for e in full
    ]
    plain = [e for e in names if not e.is_symlink]
    assert plain and all(e.size is None and e.mtime is None for e in plain)
    assert next(e for e in full if e.path == "e.md").size == 1


def test_list_files_tells_same_looking_names_apart(workdir, fs_tools):
    """Two names that differ only by Unicode normalisation were listed as the same name: each gets
    its exact, escaped form. The same name in two directories is no twin; a zero-width character
    is a twin too."""
    from ws_jupyter import WORKSPACE_TOOLS as T

    write(workdir, "docs/cafe\u0301.md")
    write(workdir, "docs/caf\u00e9.md")
    write(workdir, "caf\u00e9.md")
    write(workdir, "read\u200bme.txt")
    write(workdir, "readme.txt")
    out = fs_tools.run(T.FILESYSTEM.LIST_FILES)
    lines = out.splitlines()
    assert "\tcafe\u0301.md  [same-looking name: cafe\\u0301.md]" in lines
    assert "\tcaf\u00e9.md  [same-looking name: caf\\u00e9.md]" in lines
    assert "caf\u00e9.md" in lines  # alone in its directory: as it is
    assert "read\u200bme.txt  [same-looking name: read\\u200bme.txt]" in lines
    assert "readme.txt  [same-looking name: readme.txt]" in lines
