"""Every filesystem method against >= 500 generated hostile paths: nothing outside is read or written.

For each (method, path): the outside tree must stay byte-for-byte identical (names, modes,
sizes, mtimes, content hashes), no result may contain outside content or names, the workspace
must not gain a copy of outside content, and failures must be typed ``WorkspaceError``s — never a
bare ``OSError``/``TypeError`` from deep inside.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ws_jupyter import LocalFilesystem
from ws_jupyter.errors import InvalidPathError, PathEscapeError, WorkspaceError

from .hostile_paths import build_layout, hostile_paths, leaks, reset_workspace, secret_copies, snapshot

METHODS = {
    "read_file": lambda fs, p: fs.read_file(p),
    "read_file_binary": lambda fs, p: fs.read_file(p, encoding="binary"),
    "write_file": lambda fs, p: fs.write_file(p, "PWNED " + p[:20]),
    "write_file_no_overwrite": lambda fs, p: fs.write_file(p, b"PWNED", overwrite=False),
    "write_file_expected_mtime": lambda fs, p: fs.write_file(p, "PWNED", expected_mtime=0.0),
    "append_file": lambda fs, p: fs.append_file(p, "PWNED"),
    "delete_file": lambda fs, p: fs.delete_file(p),
    "delete_file_force": lambda fs, p: fs.delete_file(p, force=True),
    "copy_to": lambda fs, p: fs.copy_file("safe.txt", p),
    "copy_from": lambda fs, p: fs.copy_file(p, "copied.txt"),
    "copy_tree_from": lambda fs, p: fs.copy_file(p, "copied_tree", recursive=True),
    "move_to": lambda fs, p: fs.move_file("safe.txt", p),
    "move_from": lambda fs, p: fs.move_file(p, "moved.txt"),
    "readdir": lambda fs, p: fs.readdir(p),
    "readdir_recursive": lambda fs, p: fs.readdir(p, recursive=True),
    "mkdir": lambda fs, p: fs.mkdir(p),
    "mkdir_flat": lambda fs, p: fs.mkdir(p, recursive=False),
    "rmdir": lambda fs, p: fs.rmdir(p),
    "rmdir_recursive_force": lambda fs, p: fs.rmdir(p, recursive=True, force=True),
    "exists": lambda fs, p: fs.exists(p),
    "stat": lambda fs, p: fs.stat(p),
    "host_path": lambda fs, p: fs.host_path(p),
}

#: Methods acting on the final symlink itself (not its target): removing/moving a link that
#: points outside is an operation on the workspace entry, so it may succeed.
NOFOLLOW = {"delete_file", "delete_file_force", "move_from", "move_to", "rmdir", "rmdir_recursive_force"}
SYMLINK_NAMES = {"link_file", "link_dir", "dangling", "dangling_abs", "sub/up"}


def test_generator_covers_the_required_categories(tmp_path):
    cases = hostile_paths(tmp_path)
    assert len(cases) >= 500
    kinds = {c.kind for c in cases}
    assert kinds == {"escape", "invalid", "other"}
    paths = [c.path for c in cases]
    assert any(p.startswith("../") for p in paths)
    assert any(p.startswith("/") for p in paths)
    assert "link_dir/newdir/x.txt" in paths and "dangling" in paths and "sub/up/outside/secret.txt" in paths
    assert any("\x00" in p for p in paths) and any(len(p) > 4000 for p in paths)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_no_access_outside(tmp_path, method):
    root = Path(os.path.realpath(tmp_path))
    ws, outside = build_layout(root)
    before = snapshot(outside)
    fs = LocalFilesystem(ws)
    call = METHODS[method]
    failures: list[str] = []
    for case in hostile_paths(root):
        reset_workspace(ws, outside)
        try:
            result = call(fs, case.path)
        except WorkspaceError as exc:
            result = None
            bare = case.path.rstrip("/").removeprefix("./").replace("//", "/")
            refused = isinstance(exc, (PathEscapeError, InvalidPathError))
            if case.kind == "invalid" and not isinstance(exc, InvalidPathError):
                failures.append(f"{case.path!r}: expected InvalidPathError, got {exc!r}")
            if case.kind == "escape" and not refused and not (method in NOFOLLOW and bare in SYMLINK_NAMES):
                # "not found"-style errors are acceptable only where nothing was touched; an escape
                # must be refused as such so the model learns why
                failures.append(f"{case.path!r}: expected PathEscapeError, got {exc!r}")
            if leaks(str(exc).replace(case.path, "")):
                failures.append(f"{case.path!r}: error message leaks outside content: {exc}")
        except Exception as exc:  # a bare error from deep inside is a defect
            failures.append(f"{case.path!r}: untyped {type(exc).__name__}: {exc}")
            continue
        else:
            bare = case.path.rstrip("/").removeprefix("./").replace("//", "/")
            if case.kind == "escape" and method == "exists" and result is not False:
                failures.append(f"{case.path!r}: exists() should be False, got {result!r}")
            elif (
                case.kind in ("escape", "invalid")
                and method != "exists"
                and not (method in NOFOLLOW and bare in SYMLINK_NAMES)
            ):
                failures.append(f"{case.path!r}: {method} succeeded on an escaping path -> {result!r}")
        if leaks(repr(result).replace(repr(case.path)[1:-1], "")):
            failures.append(f"{case.path!r}: result leaks outside content")
        after = snapshot(outside)
        if after != before:
            changed = sorted(set(after.items()) ^ set(before.items()))
            failures.append(f"{case.path!r}: outside changed: {changed[:3]}")
            before = after
        for copy in secret_copies(ws):
            failures.append(f"{case.path!r}: outside content copied into {copy}")
    reset_workspace(ws, outside)  # leave no very deep trees behind for pytest's temp cleanup
    shown = [f[:300] for f in failures[:15]]
    assert failures == [], f"{len(failures)} problems, first ones:\n" + "\n".join(shown)
