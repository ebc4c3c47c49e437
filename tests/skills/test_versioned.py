"""VersionedSkillSource: publish a folder -> version id, serve any version, same content stored once,
atomic writes, and serving published skills through WorkspaceSkills."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ws_jupyter.errors import (
    FileExists,
    FileNotFound,
    SkillError,
    SkillNotFoundError,
    SkillPathError,
    SkillValidationError,
)
from ws_jupyter.skills import BlobStore, LocalSkillSource, VersionedSkillSource, WorkspaceSkills

from .conftest import EXAMPLE_SKILLS, skill_md, write_skill


@pytest.fixture
def store(tmp_path: Path) -> VersionedSkillSource:
    return VersionedSkillSource(Path(os.path.realpath(tmp_path)) / "store")


@pytest.fixture
def folder(root: Path) -> Path:
    return write_skill(
        root / "skills",
        "report",
        body="v1 instructions",
        files={
            "references/style.md": "style\n",
            "scripts/run.sh": "#!/bin/sh\necho ran\n",
            "assets/a.bin": b"\x00\x01",
        },
    )


def test_publish_returns_a_content_address(store: VersionedSkillSource, folder: Path) -> None:
    version = store.publish(folder, message="first")
    assert len(version) == 64 and all(c in "0123456789abcdef" for c in version)
    assert store.publish(folder) == version  # same content -> same id, no new history entry
    assert [v.id for v in store.history("report")] == [version]
    assert store.latest_version("report") == store.current_version("report") == version
    manifest = store.manifest(version)
    assert manifest.name == "report"
    assert [f.path for f in manifest.files] == [
        "SKILL.md",
        "assets/a.bin",
        "references/style.md",
        "scripts/run.sh",
    ]
    assert store.history("report")[0].message == "first"


def test_same_content_is_stored_once(store: VersionedSkillSource, folder: Path, root: Path) -> None:
    store.publish(folder)
    blobs_v1 = set(store.blobs.digests())
    assert len(blobs_v1) == 5  # 4 files + the manifest
    (folder / "SKILL.md").write_text(skill_md("report", body="v2 instructions"))
    store.publish(folder)
    blobs_v2 = set(store.blobs.digests())
    assert len(blobs_v2 - blobs_v1) == 2  # only the changed SKILL.md and the new manifest
    # identical files in another skill share blobs too
    write_skill(root / "skills", "copy", files={"references/style.md": "style\n"})
    store.publish(root / "skills" / "copy")
    assert len(set(store.blobs.digests()) - blobs_v2) == 2  # its SKILL.md and manifest only


def test_serve_current_and_pinned_versions(store: VersionedSkillSource, folder: Path) -> None:
    v1 = store.publish(folder)
    (folder / "SKILL.md").write_text(skill_md("report", body="v2 instructions"))
    (folder / "references" / "style.md").unlink()
    (folder / "references" / "new.md").write_text("new ref\n")
    v2 = store.publish(folder)
    assert v1 != v2
    assert b"v2 instructions" in store.read_file("report/SKILL.md")
    assert [e.name for e in store.readdir("report/references")] == ["new.md"]
    old = store.pinned(report=v1[:8])  # a unique prefix is enough
    assert b"v1 instructions" in old.read_file("report/SKILL.md")
    assert old.read_file("report/references/style.md") == b"style\n"
    assert not old.exists("report/references/new.md")
    assert store.read_version_file(v1, "references/style.md") == b"style\n"
    assert [v.id for v in store.versions("report")] == [v1, v2]


def test_source_protocol_over_the_virtual_tree(store: VersionedSkillSource, folder: Path) -> None:
    version = store.publish(folder)
    assert [e.name for e in store.readdir(".")] == ["report"]
    assert [e.name for e in store.readdir("/")] == ["report"]
    entries = {e.name: e for e in store.readdir("report")}
    assert set(entries) == {"SKILL.md", "assets", "references", "scripts"}
    assert entries["references"].type == "directory" and entries["SKILL.md"].type == "file"
    st = store.stat("report/references/style.md")
    assert st.type == "file" and st.size == 6 and st.path == "report/references/style.md"
    assert store.stat("report").type == "directory"
    assert store.exists("report/SKILL.md") and not store.exists("report/nope") and not store.exists("ghost")
    assert store.realpath("report/references") == f"report@{version}/references"
    with pytest.raises(FileNotFound):
        store.read_file("report/nope.md")
    with pytest.raises(FileNotFound):
        store.stat("ghost/SKILL.md")
    with pytest.raises(IsADirectoryError):
        store.read_file("report/references")
    with pytest.raises(NotADirectoryError):
        store.readdir("report/SKILL.md")
    with pytest.raises(FileNotFoundError):
        store.readdir("report/nope")


def test_rollback_makes_an_old_version_current(store: VersionedSkillSource, folder: Path) -> None:
    v1 = store.publish(folder)
    (folder / "SKILL.md").write_text(skill_md("report", body="v2"))
    v2 = store.publish(folder)
    assert store.set_current("report", v1[:10]) == v1
    assert store.current_version("report") == v1
    assert [v.id for v in store.history("report")] == [v1, v2, v1]
    assert [v.id for v in store.versions("report")] == [v2, v1]  # by when each last became current


def test_bad_version_references(store: VersionedSkillSource, folder: Path) -> None:
    store.publish(folder)
    with pytest.raises(SkillNotFoundError, match="at least 4 hex digits"):
        store.resolve_version("report", "ab")
    with pytest.raises(SkillNotFoundError, match="has no version"):
        store.resolve_version("report", "ffffffff")
    with pytest.raises(SkillNotFoundError, match="No published versions"):
        store.resolve_version("ghost", "abcd")
    with pytest.raises(SkillNotFoundError):
        VersionedSkillSource(store.root, versions={"report": "zzzz"})


def test_publish_validates_the_folder(store: VersionedSkillSource, root: Path, tmp_path: Path) -> None:
    empty = root / "empty"
    empty.mkdir()
    with pytest.raises(SkillValidationError, match=r"has no SKILL\.md"):
        store.publish(empty)
    bad = write_skill(root, "bad", text=skill_md("other"))
    with pytest.raises(SkillValidationError, match="must match the skill's folder name"):
        store.publish(bad)
    secret = Path(os.path.realpath(tmp_path)) / "secret.txt"
    secret.write_text("secret")
    leaky = write_skill(root, "leaky")
    os.symlink(secret, leaky / "leak.txt")
    with pytest.raises(SkillPathError, match="outside the skill folder"):
        store.publish(leaky)
    assert store.names() == []  # nothing half-published


def test_publish_skips_hidden_and_cache_files(store: VersionedSkillSource, root: Path) -> None:
    skill = write_skill(
        root,
        "clean",
        files={".env": "SECRET=1", "scripts/__pycache__/a.pyc": b"x", ".git/config": "x", "notes.md": "n"},
    )
    os.symlink(skill / "notes.md", skill / "alias.md")  # an inside symlink is published as content
    version = store.publish(skill)
    assert [f.path for f in store.manifest(version).files] == ["SKILL.md", "alias.md", "notes.md"]


def test_publish_keeps_exactly_the_files_a_skill_lists(store: VersionedSkillSource, root: Path) -> None:
    litter = {
        ".DS_Store": "x",
        "Thumbs.db": "x",
        "x.pyc": b"x",
        "build.pyc/inner.txt": "x",
        "node_modules/dep/index.js": "x",
        "references/.draft.md": "x",
    }
    kept = {"references/guide.md": "g", "scripts/run.py": "print(1)", "notes.md": "n"}
    skill = write_skill(root, "tidy", files={**litter, **kept})
    listed = WorkspaceSkills(LocalSkillSource(root), ["tidy"], refresh_interval=None).get("tidy")
    assert listed is not None
    published = [f.path for f in store.manifest(store.publish(skill)).files]
    assert sorted(published) == sorted(listed.files) == sorted(["SKILL.md", *kept])


def test_corruption_is_detected_not_served(store: VersionedSkillSource, folder: Path) -> None:
    version = store.publish(folder)
    entry = store.manifest(version).file("references/style.md")
    assert entry is not None
    blob = store.blobs.path_for(entry.blob)
    blob.chmod(0o644)
    blob.write_bytes(b"tampered")
    with pytest.raises(SkillError) as info:
        store.read_file("report/references/style.md")
    assert info.value.code == "BLOB_CORRUPTED"
    blob.unlink()
    with pytest.raises(SkillError) as missing:
        store.read_file("report/references/style.md")
    assert missing.value.code == "BLOB_MISSING"


def test_writes_are_atomic_and_blobs_read_only(store: VersionedSkillSource, folder: Path) -> None:
    store.publish(folder)
    leftovers = [p for p in store.root.rglob(".tmp-*")]
    assert leftovers == []
    for digest in store.blobs.digests():
        mode = store.blobs.path_for(digest).stat().st_mode
        assert not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    history = json.loads((store.root / "refs" / "report.json").read_text())
    assert history["name"] == "report" and len(history["history"]) == 1


def test_concurrent_publishers_threads_and_processes(store: VersionedSkillSource, root: Path) -> None:
    folders = []
    for i in range(4):
        folders.append(write_skill(root / f"variant-{i}", "shared", body=f"variant {i}"))
    errors: list[BaseException] = []

    def publish(path: Path) -> None:
        try:
            VersionedSkillSource(store.root).publish(path)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=publish, args=(f,)) for f in folders]
    script = (
        "import sys; from ws_jupyter.skills import VersionedSkillSource; "
        "VersionedSkillSource(sys.argv[1]).publish(sys.argv[2])"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(store.root), str(f)]) for f in folders]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    assert errors == []
    history = store.history("shared")
    assert {v.id for v in history} == {store.publish(f) for f in folders}
    assert len(history) >= 4  # every publish recorded, none lost to a race
    json.loads((store.root / "refs" / "shared.json").read_text())  # never torn


def test_export_materialises_a_runnable_copy(
    store: VersionedSkillSource, folder: Path, tmp_path: Path
) -> None:
    (folder / "scripts" / "run.sh").chmod(0o755)
    version = store.publish(folder)
    out = Path(os.path.realpath(tmp_path)) / "exported"
    path = store.export("report", out)
    assert path == out / "report"
    assert (path / "references" / "style.md").read_text() == "style\n"
    result = subprocess.run([str(path / "scripts" / "run.sh")], capture_output=True, text=True, check=True)
    assert result.stdout == "ran\n"
    with pytest.raises(FileExists):
        store.export("report", out, version=version)


def test_blob_store_rejects_bad_digests(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "b")
    digest = blobs.put(b"hello")
    assert blobs.get(digest) == b"hello" and blobs.has(digest)
    assert not blobs.has("../../etc/passwd")
    with pytest.raises(SkillError) as info:
        blobs.get("../../etc/passwd")
    assert info.value.code == "INVALID_BLOB_ID"


def test_workspace_skills_over_published_versions(store: VersionedSkillSource, folder: Path) -> None:
    v1 = store.publish(folder)
    for example in sorted(EXAMPLE_SKILLS.iterdir()):
        store.publish(example)
    skills = WorkspaceSkills(store, ["."], refresh_interval=None)
    assert skills.names() == ["data-cleaning", "notebook-review", "plotting-style", "report"]
    assert skills.issues() == []
    report = skills.get("report")
    assert report is not None and report.instructions == "v1 instructions"
    assert report.references == ("references/style.md",)
    assert skills.get_reference("report", "style.md") == "style\n"
    assert skills.get_asset("report", "a.bin") == b"\x00\x01"
    with pytest.raises(SkillPathError):
        skills.get_reference("report", "../data-cleaning/SKILL.md")
    assert skills.search("v1 instructions")[0].skill_name == "report"
    # publishing a new version is picked up by refresh (the version id is the change token)
    (folder / "SKILL.md").write_text(skill_md("report", body="v2 instructions"))
    v2 = store.publish(folder)
    assert skills.refresh().changed == ("report",)
    assert skills.get("report").instructions == "v2 instructions"  # type: ignore[union-attr]
    assert not skills.refresh()
    # a pinned view serves the old version side by side
    pinned = WorkspaceSkills(store.pinned(report=v1), ["."], refresh_interval=None)
    assert pinned.get("report").instructions == "v1 instructions"  # type: ignore[union-attr]
    assert pinned.get("report").real_path == f"report@{v1}"  # type: ignore[union-attr]
    assert skills.get("report").real_path == f"report@{v2}"  # type: ignore[union-attr]
