"""Helpers for skills tests: real skill folders written into temporary directories."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from ws_jupyter.skills import LocalSkillSource, WorkspaceSkills

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_SKILLS = REPO_ROOT / "skills"


def skill_md(
    name: str, description: str = "Does a thing when asked.", body: str = "Follow these steps.", **extra: str
) -> str:
    lines = ["---", f"name: {name}", f"description: {description}"]
    lines += [f"{key}: {value}" for key, value in extra.items()]
    return "\n".join([*lines, "---", body, ""])


def write_skill(
    parent: Path,
    name: str,
    *,
    folder: str | None = None,
    text: str | None = None,
    files: Mapping[str, str | bytes] | None = None,
    **frontmatter: str,
) -> Path:
    """Create ``parent/<folder or name>/SKILL.md`` (+ extra files) and return the folder."""
    root = parent / (folder or name)
    root.mkdir(parents=True, exist_ok=True)
    (root / "SKILL.md").write_text(
        text if text is not None else skill_md(name, **frontmatter), encoding="utf-8"
    )
    for rel, content in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A real (symlink-free) temporary directory to hold skills."""
    path = Path(os.path.realpath(tmp_path)) / "project"
    path.mkdir()
    return path


@pytest.fixture
def make_skills(root: Path) -> Callable[..., WorkspaceSkills]:
    """``make_skills(["skills"], **options)``: WorkspaceSkills over ``root`` on the host disk."""

    def make(paths: object = ("skills",), **options: object) -> WorkspaceSkills:
        options.setdefault("refresh_interval", None)
        return WorkspaceSkills(LocalSkillSource(root), paths, **options)  # type: ignore[arg-type]

    return make
