"""The host-trusted file rules: what a scan finds, its bounds, and which writes count."""

from __future__ import annotations

import os
from pathlib import Path

from ws_jupyter import LocalFilesystem
from ws_jupyter.filesystem.host_trusted import (
    GIT_DIRECTORY,
    VIRTUAL_ENVIRONMENT,
    scan,
    submodule_paths,
    write_reason,
)


def make(root: Path, *paths: str) -> None:
    for p in paths:
        target = root / p
        if p.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("x")


def test_scan_finds_each_kind_and_does_not_search_inside(workdir):
    make(
        workdir,
        ".git/config",
        ".git/sub/.vscode/x",  # inside .git: not searched
        ".envrc",
        "a/.idea/workspace.xml",
        "a/b/.gitattributes",
        "env/pyvenv.cfg",
        "env/lib/.envrc",  # inside a virtual environment: not searched
        "bare/HEAD",
        "bare/objects/",
        "bare/refs/",
        "node_modules/x/.git/config",  # skipped folder
        "plain/readme.md",
    )
    os.symlink(workdir / ".git", workdir / "a" / ".hg")
    found = {e.rel: e for e in scan(str(workdir)).entries}
    assert set(found) == {".git", ".envrc", "a/.idea", "a/b/.gitattributes", "env", "bare", "a/.hg"}
    assert found["env"].reason == VIRTUAL_ENVIRONMENT and found["bare"].reason == GIT_DIRECTORY
    assert found["a/.hg"].symlink and not found[".git"].symlink and found[".git"].is_dir
    assert found[".envrc"].path == str(workdir / ".envrc")


def test_scan_bounds_are_reported(workdir):
    make(workdir, "1/2/3/4/.git/config", "1/2/3/4/5/.envrc")
    got = scan(str(workdir))
    assert [e.rel for e in got.entries] == ["1/2/3/4/.git"] and got.complete  # depth 4 is the deepest
    many = workdir / "many"
    for i in range(30):
        (many / f"d{i}").mkdir(parents=True)
    cut = scan(str(workdir), max_directories=10)
    assert not cut.complete and "10 folders" in cut.note
    assert not scan(str(workdir), max_entries=0).complete


def test_submodule_paths_stay_inside_the_repository(workdir):
    (workdir / ".gitmodules").write_text(
        '[submodule "a"]\n\tpath = lib/a\n\turl = x\n[submodule "b"]\n\tpath = "../out"\n'
        '[submodule "c"]\n\tpath = /etc\n[submodule "d"]\n\tpath = d\n'
    )
    assert submodule_paths(str(workdir)) == [str(workdir / "lib" / "a"), str(workdir / "d")]


def test_write_reason_follows_symlinks_and_folder_kinds(workdir):
    make(workdir, ".git/config", "venv/pyvenv.cfg", "bare/HEAD", "bare/objects/", "bare/refs/", "src/a.py")
    os.symlink(".git", workdir / "innocent")
    fs = LocalFilesystem(str(workdir))
    assert write_reason(fs, "src/a.py") is None
    assert write_reason(fs, "src/new/b.py") is None
    assert write_reason(fs, "innocent/config") is not None
    assert write_reason(fs, "venv/lib/x.pth") == VIRTUAL_ENVIRONMENT
    assert write_reason(fs, "bare/config") == GIT_DIRECTORY
    assert write_reason(fs, "new/HEAD") == GIT_DIRECTORY  # would complete a git directory
    assert write_reason(fs, "x/.pre-commit-config.yaml") is not None
