"""Same-named skills: local > managed (.ws/skills) > external; two of one kind -> one clear error."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from ws_jupyter.errors import DuplicateSkillError, SkillValidationError
from ws_jupyter.skills import SkillWarning, WorkspaceSkills

from .conftest import write_skill

LOCAL = "skills"
MANAGED = ".ws/skills"
EXTERNAL = ".venv/lib/python3.11/site-packages/acme/skills"
NPM = "node_modules/@acme/tools/skills"


def make_pdf(root: Path, where: str, body: str) -> None:
    write_skill(root / where, "pdf", body=body)


@pytest.mark.parametrize(
    ("places", "winner"),
    [
        ([LOCAL, MANAGED, EXTERNAL], LOCAL),
        ([EXTERNAL, MANAGED, LOCAL], LOCAL),  # configuration order does not matter
        ([MANAGED, EXTERNAL], MANAGED),
        ([EXTERNAL, LOCAL], LOCAL),
        ([NPM, MANAGED], MANAGED),
    ],
)
def test_kind_ranking(
    root: Path, make_skills: Callable[..., WorkspaceSkills], places: list[str], winner: str
) -> None:
    for place in places:
        make_pdf(root, place, f"from {place}")
    skills = make_skills(places)
    chosen = skills.get("pdf")
    assert chosen is not None
    assert chosen.instructions == f"from {winner}"
    assert chosen.path == f"{winner}/pdf"
    # list() shows every candidate, best first
    assert skills.list()[0].path == f"{winner}/pdf"
    assert len(skills.list()) == len(places)
    assert skills.issues() == []
    # a path bypasses the tie-break
    for place in places:
        assert skills.get(f"{place}/pdf").instructions == f"from {place}"  # type: ignore[union-attr]


def test_two_skills_of_one_kind_is_an_error_naming_both(
    root: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    make_pdf(root, "skills", "first")
    make_pdf(root, "more-skills", "second")
    write_skill(root / "skills", "other")
    skills = make_skills(["skills", "more-skills"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [s.name for s in skills.list()] == ["other", "pdf", "pdf"]
        for _ in range(3):
            with pytest.raises(DuplicateSkillError) as info:
                skills.get("pdf")
            skills.refresh()
    message = str(info.value)
    assert '"more-skills/pdf"' in message and '"skills/pdf"' in message
    assert "Two local skills are named" in message
    assert "pass its path" in message
    assert info.value.code == "DUPLICATE_SKILL"
    assert info.value.paths == ("more-skills/pdf", "skills/pdf")  # type: ignore[attr-defined]
    # reported once at discovery time, not at every call
    duplicates = [w for w in caught if issubclass(w.category, SkillWarning) and "Two local" in str(w.message)]
    assert len(duplicates) == 1
    (issue,) = skills.issues()
    assert issue.kind == "duplicate" and issue.name == "pdf" and issue.is_error
    # other skills and explicit paths keep working
    assert skills.get("other") is not None
    assert skills.get("skills/pdf").instructions == "first"  # type: ignore[union-attr]
    assert skills.has("pdf")


def test_duplicate_error_disappears_when_fixed(
    root: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    make_pdf(root, "skills", "first")
    make_pdf(root, "more-skills", "second")
    skills = make_skills(["skills", "more-skills"])
    with pytest.warns(SkillWarning):
        skills.list()
    (root / "more-skills" / "pdf" / "SKILL.md").unlink()
    (root / "more-skills" / "pdf").rmdir()
    assert skills.refresh().removed == ("pdf",)
    assert skills.get("pdf").instructions == "first"  # type: ignore[union-attr]
    assert skills.issues() == [issue for issue in skills.issues() if issue.kind != "duplicate"]


def test_lower_ranked_duplicates_do_not_block_the_winner(
    root: Path, make_skills: Callable[..., WorkspaceSkills]
) -> None:
    make_pdf(root, "skills", "local")
    make_pdf(root, EXTERNAL, "ext one")
    make_pdf(root, NPM, "ext two")
    skills = make_skills(["skills", EXTERNAL, NPM])
    assert skills.get("pdf").instructions == "local"  # type: ignore[union-attr]
    assert skills.issues() == []


def test_strict_mode_raises_at_refresh(root: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    make_pdf(root, "skills", "first")
    make_pdf(root, "more-skills", "second")
    skills = make_skills(["skills", "more-skills"], strict=True)
    with pytest.warns(SkillWarning), pytest.raises(DuplicateSkillError):
        skills.refresh()
    write_skill(root / "bad", "broken", text="---\nname: Broken\ndescription: x\n---\n")
    strict = make_skills(["bad"], strict=True)
    with pytest.warns(SkillWarning), pytest.raises(SkillValidationError) as info:
        strict.refresh()
    assert "lowercase" in str(info.value)
