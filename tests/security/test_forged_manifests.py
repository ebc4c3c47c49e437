"""Forged versioned-skill manifests.

A skill store is content-addressed, but anyone who can write into it (it often lives in the
workspace, at ``.ws/skill-store``) can add a manifest blob with its right digest and point a
skill's history at it. Before, ``export()`` joined the manifest's file paths to the destination
as they were: ``../../x`` and absolute paths wrote outside it. Every manifest field is now checked
before use.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from ws_jupyter.errors import SkillError
from ws_jupyter.skills import VersionedSkillSource

from ..helpers import write


def _store(tmp_path: Path) -> tuple[VersionedSkillSource, str]:
    root = Path(os.path.realpath(tmp_path))
    write(root, "src/demo/SKILL.md", "---\nname: demo\ndescription: A demo skill.\n---\nDo it.\n")
    write(root, "src/demo/references/a.md", "# a\n")
    store = VersionedSkillSource(root / "store")
    return store, store.publish(root / "src" / "demo")


def _forge(store: VersionedSkillSource, files: list[dict], name: str = "demo") -> str:
    """A manifest with the given entries, stored under its true digest and made current."""
    payload = json.dumps({"format": 1, "name": name, "files": files}, sort_keys=True).encode()
    digest = store.blobs.put(payload)
    assert digest == hashlib.sha256(payload).hexdigest()
    refs = store.root / "refs" / "demo.json"
    history = json.loads(refs.read_text())
    history["history"].append({"version": digest, "published_at": 2e9, "message": None})
    refs.write_text(json.dumps(history))
    return digest


def _entry(store: VersionedSkillSource, path: object, data: bytes = b"pwned\n", **extra: object) -> dict:
    return {"path": path, "blob": store.blobs.put(data), "size": len(data), **extra}


@pytest.mark.parametrize(
    "evil",
    ["../../escaped.txt", "references/../../../escaped.txt", "/ABSOLUTE/escaped.txt", "./x", "a//b", ".ssh/k"],
)
def test_export_of_a_forged_manifest_writes_nothing_outside(tmp_path, evil):
    store, _ = _store(tmp_path)
    evil = evil.replace("/ABSOLUTE", str(tmp_path))
    skill_md = _entry(store, "SKILL.md", b"---\nname: demo\ndescription: x\n---\n")
    _forge(store, [skill_md, _entry(store, evil)])
    dest = tmp_path / "out" / "deep"
    with pytest.raises(SkillError, match="not a valid skill manifest"):
        store.export("demo", dest)
    assert not list(tmp_path.rglob("escaped.txt"))
    assert not (dest / "demo").exists()
    # serving refuses the version too: nothing of it is listed or read
    with pytest.raises(SkillError):
        store.readdir("demo")


def test_forged_blob_ids_sizes_and_names_are_refused(tmp_path):
    store, good = _store(tmp_path)
    md = _entry(store, "SKILL.md", b"---\nname: demo\ndescription: x\n---\n")
    cases = [
        [md, {"path": "x.md", "blob": "../../../etc/passwd", "size": 1}],
        [md, {"path": "x.md", "blob": md["blob"], "size": -1}],
        [md, {"path": "x.md", "blob": md["blob"], "size": 10**12}],
        [md, {"path": 7, "blob": md["blob"], "size": md["size"]}],
        [md, md],
        [md, _entry(store, "a"), _entry(store, "a/b")],
    ]
    for files in cases:
        _forge(store, files)
        with pytest.raises(SkillError):
            store.export("demo", tmp_path / "out")
    # a manifest of another skill cannot be served under this one's name
    _forge(store, [md], name="other")
    with pytest.raises(SkillError, match="not of 'demo'"):
        store.export("demo", tmp_path / "out2")
    # a blob whose size differs from the manifest's is corrupted, not served short
    wrong = dict(md, size=md["size"] + 1)
    _forge(store, [wrong])
    with pytest.raises(SkillError, match="manifest says"):
        store.read_file("demo/SKILL.md")
    assert store.resolve_version("demo", good[:8]) == good  # the genuine version is still there


def test_a_blob_that_is_a_fifo_or_a_symlink_is_not_read(tmp_path):
    store, version = _store(tmp_path)
    manifest = store.manifest(version)
    entry = manifest.file("references/a.md")
    assert entry is not None
    blob = store.blobs.path_for(entry.blob)
    os.chmod(blob, 0o644)
    blob.unlink()
    os.mkfifo(blob)
    with pytest.raises(SkillError, match="unreadable"):
        store.read_file("demo/references/a.md")
    blob.unlink()
    blob.symlink_to("/dev/zero")
    with pytest.raises(SkillError, match="unreadable"):
        store.read_file("demo/references/a.md")
