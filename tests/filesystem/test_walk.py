"""The shared walker: gitignore at every level, hidden files, symlinks, order, and the generic
(provider-agnostic) path agreeing with the fast local one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ws_jupyter import LocalFilesystem
from ws_jupyter.errors import InvalidArgumentError, NotADirectory
from ws_jupyter.filesystem.walk import IgnoreRules, walk


class ProtocolOnly:
    """Exposes only the filesystem protocol, forcing the walker's generic readdir-based path."""

    def __init__(self, fs: LocalFilesystem) -> None:
        self._fs = fs

    def stat(self, path):
        return self._fs.stat(path)

    def readdir(self, path="."):
        return self._fs.readdir(path)

    def read_file(self, path, encoding="utf-8"):
        return self._fs.read_file(path, encoding)


@pytest.fixture
def tree(workdir: Path) -> LocalFilesystem:
    fs = LocalFilesystem(workdir)
    files = {
        "README.md": "",
        "Makefile": "",
        "app.log": "",
        "keep.log": "",
        "build/out.o": "",
        "src/main.py": "",
        "src/gen/auto.py": "",
        "src/Util.py": "",
        "src/zeta/z.py": "",
        "src/sub/keep.tmp": "",
        "src/sub/drop.tmp": "",
        "src/.env": "SECRET=1",
        ".hidden/x.txt": "",
        ".git/config": "",
        ".git/info/exclude": "local-only.txt\n",
        "local-only.txt": "",
        "docs/a.md": "",
    }
    for p, c in files.items():
        fs.write_file(p, c)
    fs.write_file(".gitignore", "# comment\n*.log\n!keep.log\nbuild/\n")
    fs.write_file("src/.gitignore", "gen/\n")
    fs.write_file("src/sub/.gitignore", "*.tmp\n!keep.tmp\n")
    return fs


def paths(fs, *args, **kw):
    return [e.path for e in walk(fs, *args, **kw)]


def test_gitignore_at_every_level_and_tree_order(tree):
    assert paths(tree) == [
        "docs",
        "docs/a.md",
        "src",
        "src/sub",
        "src/sub/keep.tmp",
        "src/zeta",
        "src/zeta/z.py",
        "src/main.py",
        "src/Util.py",
        "keep.log",
        "Makefile",
        "README.md",
    ]


def test_generic_walk_matches_local(tree):
    for kwargs in ({}, {"include_hidden": True}, {"respect_gitignore": False}, {"max_depth": 1}):
        assert paths(ProtocolOnly(tree), **kwargs) == paths(tree, **kwargs), kwargs


def test_hidden_and_git(tree):
    got = paths(tree, include_hidden=True)
    assert ".gitignore" in got and "src/.env" in got and ".hidden/x.txt" in got
    assert not any(p == ".git" or p.startswith(".git/") for p in got)
    assert "local-only.txt" not in got  # .git/info/exclude honoured
    assert "local-only.txt" in paths(tree, respect_gitignore=False)


def test_no_gitignore(tree):
    got = paths(tree, respect_gitignore=False)
    assert {"app.log", "build/out.o", "src/gen/auto.py", "src/sub/drop.tmp"} <= set(got)


def test_start_below_root_applies_ancestor_rules(tree):
    assert paths(tree, "src") == [
        "src/sub",
        "src/sub/keep.tmp",
        "src/zeta",
        "src/zeta/z.py",
        "src/main.py",
        "src/Util.py",
    ]
    assert paths(tree, "src/sub") == ["src/sub/keep.tmp"]


def test_explicitly_targeted_ignored_directory_is_walked(tree):
    assert paths(tree, "build") == ["build/out.o"]
    assert paths(tree, "src/gen") == ["src/gen/auto.py"]


def test_depth_and_skip_dir(tree):
    assert paths(tree, max_depth=1) == ["docs", "src", "keep.log", "Makefile", "README.md"]
    assert "src/zeta/z.py" not in paths(tree, skip_dir=lambda e: e.name == "zeta")
    entries = list(walk(tree))
    assert {e.depth for e in entries if e.path.count("/") == 2} == {3}
    with pytest.raises(InvalidArgumentError):
        list(walk(tree, max_depth=0))


def test_walk_a_file_is_an_error(tree):
    with pytest.raises(NotADirectory):
        list(walk(tree, "README.md"))


def test_entries_carry_metadata(tree):
    by_path = {e.path: e for e in walk(tree, include_hidden=True)}
    env = by_path["src/.env"]
    assert env.type == "file" and env.size == len("SECRET=1") and env.mtime and env.name == ".env"
    assert by_path["src"].is_dir and by_path["src"].size is None


def test_symlinks(workdir: Path, tmp_path: Path):
    fs = LocalFilesystem(workdir)
    fs.write_file("real/a.txt", "a")
    outside = Path(os.path.realpath(tmp_path)) / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "secret.txt").write_text("s")
    os.symlink("real", workdir / "alias")
    os.symlink(outside, workdir / "out")
    os.symlink("..", workdir / "real" / "loop")
    plain = paths(fs)
    assert "alias" in plain and "alias/a.txt" not in plain  # not followed by default
    followed = paths(fs, follow_symlinks=True)
    assert "real/a.txt" in followed
    assert not any(p.startswith("out/") for p in followed)  # never outside
    assert len(followed) == len(set(followed))  # the loop is visited once
    entry = next(e for e in walk(fs) if e.path == "out")
    assert entry.is_symlink and entry.symlink_target == str(outside) and entry.size is None


def test_ignore_rules_negation_and_directories():
    rules = IgnoreRules().with_file(".", "*.csv\n!keep.csv\ndata/\n").with_file("sub", "!x.csv\n")
    assert rules.is_ignored("a.csv", False)
    assert not rules.is_ignored("keep.csv", False)
    assert rules.is_ignored("data", True) and not rules.is_ignored("data", False)
    assert not rules.is_ignored("sub/x.csv", False)  # deeper rule wins
    assert rules.is_ignored("sub/y.csv", False)
    assert not IgnoreRules().with_file(".", "# only a comment\n\n")  # empty rule files add nothing


def test_walk_and_stat_agree_on_mtime(tree):
    """One microsecond-resolution float everywhere, so the index manifest never sees two values."""
    for entry in walk(tree, include_hidden=True):
        assert entry.mtime == tree.stat(entry.path).mtime, entry.path
