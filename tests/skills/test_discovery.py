"""Discovery: direct skill paths, parent folders, globs, trailing slashes, SKILL.md paths,
nested layouts, symlink dedupe, source kinds and file listings — on real folders."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from ws_jupyter.skills import LocalSkillSource, WorkspaceSkills
from ws_jupyter.skills.discovery import classify_source_kind, discover_skills, watched_changed

from .conftest import write_skill


def names(skills: WorkspaceSkills) -> list[str]:
    return [s.name for s in skills.list()]


@pytest.fixture
def layout(root: Path) -> Path:
    skills = root / "skills"
    write_skill(skills, "alpha", files={"references/guide.md": "# Guide\n", "scripts/run.py": "print(1)\n"})
    write_skill(skills, "beta", files={"assets/logo.svg": "<svg/>", "assets/deep/inner/x.txt": "x"})
    (skills / "not-a-skill").mkdir()
    (skills / "not-a-skill" / "README.md").write_text("no SKILL.md here")
    return root


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (["skills"], ["alpha", "beta"]),  # parent folder
        (["skills/"], ["alpha", "beta"]),  # trailing slash
        (["./skills//"], ["alpha", "beta"]),
        (["skills/alpha"], ["alpha"]),  # direct skill path
        (["skills/alpha/"], ["alpha"]),
        (["skills/alpha/SKILL.md"], ["alpha"]),  # the SKILL.md itself
        (["skills/*"], ["alpha", "beta"]),  # glob of skill folders
        (["**/skills"], ["alpha", "beta"]),  # glob of parent folders
        (["**/SKILL.md"], ["alpha", "beta"]),
        (["skills/{alpha,beta}"], ["alpha", "beta"]),  # braces
        (["{skills/{alpha,gamma},nowhere}"], ["alpha"]),  # nested braces
        (["skills/a*"], ["alpha"]),
        (["skills/alpha", "skills"], ["alpha", "beta"]),  # overlapping patterns: no duplicates
    ],
)
def test_discovery_variants(
    layout: Path, make_skills: Callable[..., WorkspaceSkills], paths: list[str], expected: list[str]
) -> None:
    skills = make_skills(paths)
    assert names(skills) == expected
    assert skills.issues() == []


def test_absolute_path_and_single_string(layout: Path) -> None:
    skills = WorkspaceSkills(LocalSkillSource("/"), str(layout / "skills"), refresh_interval=None)
    assert names(skills) == ["alpha", "beta"]
    assert skills.get("alpha").path == str(layout / "skills" / "alpha")  # type: ignore[union-attr]


def test_nested_layouts_are_found(root: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    write_skill(root / "skills" / "data" / "cleaning", "dedupe")
    write_skill(root / "skills" / "data" / "viz" / "charts", "bar-charts")
    write_skill(root / "skills", "top")
    skills = make_skills(["skills"])
    assert names(skills) == ["bar-charts", "dedupe", "top"]
    assert skills.get("bar-charts").path == "skills/data/viz/charts/bar-charts"  # type: ignore[union-attr]


def test_scan_depth_is_bounded(root: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    write_skill(root / "skills" / "a" / "b" / "c", "three-down")
    write_skill(root / "skills" / "a" / "b" / "c" / "d" / "e", "five-down")
    assert names(make_skills(["skills"], max_depth=4)) == ["three-down"]
    assert names(make_skills(["skills"], max_depth=6)) == ["five-down", "three-down"]


def test_skill_folders_are_not_searched_for_nested_skills(
    root: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    outer = write_skill(root / "skills", "outer")
    write_skill(outer / "references", "inner")
    assert names(make_skills(["skills"])) == ["outer"]


def test_hidden_and_cache_folders_are_skipped_by_scans(
    root: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    write_skill(root / "skills" / ".archive", "old")
    write_skill(root / "skills" / "node_modules", "vendored")
    write_skill(root / "skills" / "__pycache__", "cached")
    write_skill(root / "skills", "live")
    assert names(make_skills(["skills"])) == ["live"]
    # naming a hidden folder explicitly still works
    assert names(make_skills(["skills/.archive"])) == ["old"]


def test_globstar_finds_managed_dot_folders_but_not_pruned_trees(
    root: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    write_skill(root / ".ws" / "skills", "managed-one")
    write_skill(root / "node_modules" / "pkg" / "skills", "from-npm")
    write_skill(root / ".git" / "skills", "in-git")
    write_skill(root / "skills", "local-one")
    assert names(make_skills(["**/skills"])) == ["local-one", "managed-one"]
    # a literal segment enters a pruned folder
    assert names(make_skills(["node_modules/*/skills"])) == ["from-npm"]


def test_globstar_depth_is_bounded(root: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    write_skill(root / "a" / "b" / "c" / "d" / "e" / "f" / "skills", "deep")
    assert names(make_skills(["**/skills"], max_depth=4)) == []
    assert names(make_skills(["**/skills"], max_depth=8)) == ["deep"]


def test_missing_paths_are_reported_once_not_raised(
    root: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    write_skill(root / "skills", "alpha")
    skills = make_skills(["skills", "nope", "skills/ghost/SKILL.md"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert names(skills) == ["alpha"]
        skills.refresh()
        skills.list()
    issues = skills.issues()
    assert [(i.kind, i.path) for i in issues] == [("missing", "nope"), ("missing", "skills/ghost/SKILL.md")]
    assert all(not i.is_error for i in issues)
    assert len([w for w in caught if "not found" in str(w.message)]) == 2  # once each, not per call


def test_a_file_path_is_reported(root: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    (root / "notes.txt").write_text("x")
    skills = make_skills(["notes.txt"])
    with pytest.warns(UserWarning, match="is a file"):
        assert skills.list() == []


def test_symlinked_skill_folder_is_deduplicated_by_real_path(
    root: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    real = write_skill(root / "shared", "pdf")
    (root / "skills").mkdir()
    os.symlink(real, root / "skills" / "pdf")
    skills = make_skills(["skills", "shared"])
    listed = skills.list()
    assert [s.name for s in listed] == ["pdf"]
    assert listed[0].real_path == str(real)
    # every path that reaches it finds the same skill
    assert skills.get("skills/pdf") is skills.get("shared/pdf") is listed[0]
    assert skills.issues() == []


def test_symlinked_parent_folder(root: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    write_skill(root / "real-skills", "alpha")
    os.symlink(root / "real-skills", root / "skills")
    assert names(make_skills(["skills"])) == ["alpha"]


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("skills/pdf", "local"),
        (".ws/skills/pdf", "managed"),
        ("/home/u/proj/.ws/skills/pdf", "managed"),
        ("node_modules/@acme/skills/pdf", "external"),
        ("/venv/lib/python3.11/site-packages/pkg/skills/pdf", "external"),
        ("/usr/lib/python3/dist-packages/pkg/skills/pdf", "external"),
        ("my.ws/skills/pdf", "local"),
    ],
)
def test_source_kind_classification(path: str, kind: str) -> None:
    assert classify_source_kind(path) == kind


def test_file_listings(layout: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    skills = make_skills(["skills"])
    alpha = skills.get("alpha")
    beta = skills.get("beta")
    assert alpha is not None and beta is not None
    assert alpha.references == ("references/guide.md",)
    assert alpha.scripts == ("scripts/run.py",)
    assert alpha.assets == ()
    assert beta.assets == ("assets/deep/inner/x.txt", "assets/logo.svg")
    assert beta.files[0] == "SKILL.md"


def test_listing_skips_hidden_caches_and_escaping_symlinks(
    root: Path, tmp_path: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    outside = Path(os.path.realpath(tmp_path)) / "secret.txt"
    outside.write_text("top secret")
    folder = write_skill(
        root / "skills",
        "alpha",
        files={
            "references/a.md": "a",
            "references/.hidden.md": "h",
            "scripts/__pycache__/x.cpython-311.pyc": b"\x00",
            "notes.md": "root-level doc",
        },
    )
    os.symlink(outside, folder / "references" / "leak.md")
    os.symlink(folder / "references" / "a.md", folder / "references" / "alias.md")
    os.symlink(root, folder / "assets")  # a symlinked folder is never descended
    skill = make_skills(["skills"]).get("alpha")
    assert skill is not None
    assert skill.references == ("references/a.md", "references/alias.md")
    assert skill.scripts == ()
    assert skill.assets == ()
    assert skill.other_files == ("notes.md",)
    assert any("leak.md" in w and "outside the skill folder" in w for w in skill.warnings)


def test_discovery_result_watches_what_it_read(layout: Path) -> None:
    source = LocalSkillSource(layout)
    result = discover_skills(source, ["skills"])
    assert [loc.path for loc in result.locations] == ["skills/alpha", "skills/beta"]
    assert "skills" in result.watched and "skills/not-a-skill" in result.watched
    assert not watched_changed(source, result.watched)
    write_skill(layout / "skills" / "not-a-skill", "late")
    assert watched_changed(source, result.watched)
