"""A restore never writes through a symlink planted in the workspace, and a checkpoint never
records what lies outside it."""

from __future__ import annotations

import os
from pathlib import Path

from ws_jupyter import LocalFilesystem, Workspace


def _ws(root: Path) -> Workspace:
    ws = Workspace(filesystem=LocalFilesystem(root), bm25=False, checkpoints=False)
    ws.init()
    return ws


def test_a_folder_swapped_for_a_symlink_is_not_written_through(workdir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("not yours\n")
    (workdir / "sub").mkdir()
    (workdir / "sub" / "victim.txt").write_text("workspace copy\n")
    (workdir / "a.txt").write_text("a\n")
    ws = _ws(workdir)
    try:
        cp = ws.checkpoint()
        # the agent replaces the folder by a link to a folder outside, and a file by a link to one
        for p in (workdir / "sub" / "victim.txt", workdir / "a.txt"):
            p.unlink()
        (workdir / "sub").rmdir()
        (workdir / "sub").symlink_to(outside)
        (workdir / "a.txt").symlink_to(outside / "victim.txt")
        changes = {c.path: (c.change, c.detail) for c in ws.changes(cp)}
        assert changes["sub"] == ("modified", "dir -> link") and changes["a.txt"] == (
            "modified",
            "file -> link",
        )
        report = ws.restore(cp)
        assert {p for p, _ in report.skipped} == {"sub", "a.txt"}
        assert (outside / "victim.txt").read_text() == "not yours\n"
        assert sorted(os.listdir(outside)) == ["victim.txt"]
        report = ws.restore(cp, remove_new=True)  # the links go, the real files come back
        assert not (workdir / "sub").is_symlink() and not (workdir / "a.txt").is_symlink()
        assert (workdir / "sub" / "victim.txt").read_text() == "workspace copy\n"
        assert (workdir / "a.txt").read_text() == "a\n"
        assert (outside / "victim.txt").read_text() == "not yours\n"
        assert sorted(os.listdir(outside)) == ["victim.txt"]
    finally:
        ws.destroy()


def test_a_link_to_outside_is_recorded_as_a_link_not_as_its_target(workdir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret\n")
    (workdir / "leak").symlink_to(secret)
    ws = _ws(workdir)
    try:
        cp = ws.checkpoint()
        assert cp.files == 0 and cp.bytes == 0
        store = ws.checkpoints.store
        state = store.state(store.manifests()[-1])
        assert state["leak"].kind == "link" and state["leak"].sha is None
        assert ws.checkpoints.usage().blob_bytes == 0  # the secret was never read
    finally:
        ws.destroy()
