"""Skill sources through a real LocalFilesystem (containment applies) and Workspace wiring:
workspace.skills, skill_source, resolver filesystems and SkillsContext resolvers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ws_jupyter import LocalFilesystem, RequestContext, Workspace
from ws_jupyter.errors import SkillPathError, WorkspaceNotReadyError
from ws_jupyter.skills import (
    FilesystemSkillSource,
    LocalSkillSource,
    SkillsContext,
    SkillSource,
    SkillWarning,
    VersionedSkillSource,
    WorkspaceSkills,
)

from .conftest import EXAMPLE_SKILLS, write_skill


def test_sources_satisfy_the_protocol(root: Path, tmp_path: Path) -> None:
    for source in (
        LocalSkillSource(root),
        FilesystemSkillSource(LocalFilesystem(root)),
        VersionedSkillSource(tmp_path / "store"),
    ):
        assert isinstance(source, SkillSource)


def test_local_source_basics(root: Path) -> None:
    write_skill(root / "skills", "alpha", files={"references/a.md": "a"})
    source = LocalSkillSource(root)
    assert source.exists("skills/alpha/SKILL.md") and not source.exists("skills/nope")
    assert not source.exists("bad\x00path")
    assert [e.name for e in source.readdir("skills/alpha")] == ["SKILL.md", "references"]
    st = source.stat("skills/alpha/references/a.md")
    assert st.type == "file" and st.size == 1 and st.path == "skills/alpha/references/a.md"
    assert source.read_file("skills/alpha/references/a.md") == b"a"
    assert source.realpath("skills/alpha") == str(root / "skills" / "alpha")
    with pytest.raises(FileNotFoundError):
        source.read_file("skills/nope.md")
    with pytest.raises(IsADirectoryError):
        source.read_file("skills")
    with pytest.raises(NotADirectoryError):
        source.readdir("skills/alpha/SKILL.md")
    assert source.fingerprint("skills/nope") is None


def test_filesystem_source_respects_containment(root: Path, tmp_path: Path) -> None:
    outside = Path(os.path.realpath(tmp_path)) / "outside"
    write_skill(outside, "escaped")
    secret = outside / "secret.md"
    secret.write_text("TOP SECRET")
    ws_dir = root / "ws"
    skill = write_skill(ws_dir / "skills", "inside", files={"references/ok.md": "fine\n"})
    os.symlink(outside / "escaped", ws_dir / "skills" / "escaped")  # a whole skill outside the workspace
    os.symlink(secret, skill / "references" / "leak.md")  # a reference outside the workspace
    fs = LocalFilesystem(ws_dir)
    skills = WorkspaceSkills(
        FilesystemSkillSource(fs), ["skills", "/etc", "../outside"], refresh_interval=None
    )
    with pytest.warns(SkillWarning, match="not found"):
        assert skills.names() == ["inside"]
    inside = skills.get("inside")
    assert inside is not None and inside.references == ("references/ok.md",)
    assert skills.get_reference("inside", "ok.md") == "fine\n"
    with pytest.raises(SkillPathError):
        skills.get_reference("inside", "leak.md")
    with pytest.raises(SkillPathError):
        skills.read_file("inside", "../../../outside/secret.md")
    assert {i.kind for i in skills.issues()} == {"missing"}  # /etc and ../outside are unreachable


def test_workspace_wires_skills_through_its_filesystem(root: Path) -> None:
    write_skill(root / "skills", "alpha", files={"references/r.md": "ref"})
    ws = Workspace(filesystem=LocalFilesystem(root), skills="skills")
    assert ws.skills is not None and ws.skills is ws.skills
    assert isinstance(ws.skills.source, FilesystemSkillSource)
    ws.init()
    assert ws.skills.names() == ["alpha"]
    assert ws.get_info().skills == {"count": 1}
    ws.destroy()
    with pytest.raises(WorkspaceNotReadyError):
        _ = ws.skills


def test_workspace_without_skills_has_none(root: Path) -> None:
    assert Workspace(filesystem=LocalFilesystem(root)).skills is None


def test_skills_only_workspace_reads_the_current_directory(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(root / "skills", "solo")
    monkeypatch.chdir(root)
    with Workspace(skills=["skills"]) as ws:
        assert ws.skills is not None
        assert isinstance(ws.skills.source, LocalSkillSource)
        assert ws.skills.names() == ["solo"]


def test_skill_source_replaces_the_filesystem(root: Path, tmp_path: Path) -> None:
    write_skill(root / "skills", "on-disk")
    store = VersionedSkillSource(tmp_path / "store")
    store.publish(EXAMPLE_SKILLS / "data-cleaning")
    with Workspace(filesystem=LocalFilesystem(root), skills=["."], skill_source=store) as ws:
        assert ws.skills is not None and ws.skills.names() == ["data-cleaning"]
        assert ws.skills.get_script("data-cleaning", "profile_table.py").startswith("#!/usr/bin/env python3")  # type: ignore[union-attr]


def test_resolver_filesystem_and_paths(root: Path) -> None:
    for user in ("alice", "bob"):
        write_skill(root / user / "skills", f"{user}-skill")
    filesystems = {user: LocalFilesystem(root / user) for user in ("alice", "bob")}
    seen: list[SkillsContext] = []

    def paths(ctx: SkillsContext) -> list[str]:
        seen.append(ctx)
        return ["skills"]

    ws = Workspace(filesystem=lambda ctx: filesystems[ctx["user"]], skills=paths)
    assert ws.skills is not None
    alice, bob = RequestContext(user="alice"), RequestContext(user="bob")
    assert ws.skills.names(request_context=alice) == ["alice-skill"]
    assert ws.skills.names(request_context=bob) == ["bob-skill"]
    assert ws.skills.names(request_context=alice) == ["alice-skill"]
    assert seen[0].workspace is ws and seen[0].request_context is alice
    ws.destroy()
