"""Skill search: substring fallback without an engine; a real SearchEngine (BM25, and hybrid with
real Chroma) when configured; index kept in step with refresh; skill docs kept apart from files."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from ws_jupyter.search.engine import SearchEngine
from ws_jupyter.skills import LocalSkillSource, WorkspaceSkills

from .conftest import skill_md, write_skill


@pytest.fixture
def corpus(root: Path) -> Path:
    write_skill(
        root / "skills",
        "git-helper",
        description="Helps with git branches, rebases and merge conflicts.",
        body="# Git\n\nResolve merge conflicts by reading both sides.\nNever force-push shared branches.",
        files={"references/rebase.md": "# Rebase\n\nInteractive rebase lets you squash commits.\n"},
    )
    write_skill(
        root / "skills",
        "sql-tuning",
        description="Speeds up slow SQL queries with indexes and query plans.",
        body="# SQL\n\nRead the query plan first.\nAdd an index on filtered columns.",
        files={"references/explain.md": "# EXPLAIN\n\nEXPLAIN ANALYZE shows the real plan and timings.\n"},
    )
    write_skill(
        root / "skills",
        "pdf-forms",
        description="Fills PDF forms and extracts text from PDF files.",
        body="# PDF\n\nUse the form fields listed in forms.md.",
        files={"forms.md": "# Form fields\n\nName, date and signature fields.\n"},
    )
    write_skill(
        root / "skills",
        "csv-tools",
        description="Cleans CSV exports.",
        body="Trim cells.",
    )
    return root


def bm25_factory() -> SearchEngine:
    return SearchEngine(bm25=True, index_name="skills_test")


class HashingEmbedder:
    """A small deterministic embedder (hashed bag of words, L2-normalised): tests the vector path
    without loading the real model."""

    batch = True
    dimension = 64

    def __call__(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vec = [0.0] * self.dimension
            for word in re.findall(r"\w+", text.lower()):
                vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
            norm = math.sqrt(sum(v * v for v in vec)) or 1.0
            out.append([v / norm for v in vec])
        return out


# -- substring fallback -----------------------------------------------------------------------------


def test_substring_search_without_engine(corpus: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    skills = make_skills()
    results = skills.search("merge conflicts")
    assert results[0].skill_name == "git-helper" and results[0].source == "SKILL.md"
    assert results[0].score == 1.0
    assert results[0].score_details["mode"] == "substring"
    # line ranges are in file coordinates and the content is those lines
    text = (corpus / "skills" / "git-helper" / "SKILL.md").read_text().splitlines()
    start, end = results[0].line_range  # type: ignore[misc]
    assert "merge conflicts" in text[start - 1].lower()
    assert results[0].content == "\n".join(text[start - 1 : end])


def test_substring_scoring_and_filters(corpus: Path, make_skills: Callable[..., WorkspaceSkills]) -> None:
    skills = make_skills()
    ref = skills.search("interactive rebase")
    assert (ref[0].skill_name, ref[0].source, ref[0].score) == ("git-helper", "references/rebase.md", 0.8)
    terms = skills.search("plan timings unrelatedword")
    assert terms[0].source == "references/explain.md" and 0 < terms[0].score < 0.8
    # root-level text docs (forms.md) are searched like references
    assert skills.search("signature fields")[0].source == "forms.md"
    assert skills.search("merge conflicts", skill_names=["sql-tuning"]) == []
    assert {r.skill_name for r in skills.search("query", skill_names=["sql-tuning", "git-helper"])} == {
        "sql-tuning"
    }
    assert all(r.source == "SKILL.md" for r in skills.search("rebase", include_references=False))
    assert len(skills.search("the", top_k=2)) == 2
    assert skills.search("merge conflicts", min_score=0.9)[0].score == 1.0
    assert all(r.score >= 0.9 for r in skills.search("merge conflicts", min_score=0.9))
    assert (
        skills.search("   ") == []
        and skills.search("zzzz-nothing") == []
        and skills.search("x", top_k=0) == []
    )


# -- with a real search engine ----------------------------------------------------------------------


def test_engine_search_bm25(corpus: Path) -> None:
    made: list[SearchEngine] = []

    def factory() -> SearchEngine:
        made.append(bm25_factory())
        return made[-1]

    skills = WorkspaceSkills(
        LocalSkillSource(corpus), ["skills"], search_engine_factory=factory, refresh_interval=None
    )
    assert made == []  # the engine is created at the first search, not before
    results = skills.search("squash commits interactive rebase")
    assert len(made) == 1
    top = results[0]
    assert (top.skill_name, top.source) == ("git-helper", "references/rebase.md")
    assert top.score > 0 and top.score_details["bm25"]["rank"] == 1
    start, end = top.line_range  # type: ignore[misc]
    assert start <= 3 <= end  # in file coordinates; the content is exactly those lines
    lines = (corpus / "skills" / "git-helper" / "references" / "rebase.md").read_text().splitlines()
    assert top.content == "\n".join(lines[start - 1 : end])
    assert "Interactive rebase lets you squash commits." in top.content
    # one hit per skill file, every file indexed under its own id, apart from any file index
    assert len({(r.skill_path, r.source) for r in results}) == len(results)
    assert sorted(made[0].sources()) == [
        "skill:skills/csv-tools:SKILL.md",
        "skill:skills/git-helper:SKILL.md",
        "skill:skills/git-helper:references/rebase.md",
        "skill:skills/pdf-forms:SKILL.md",
        "skill:skills/pdf-forms:forms.md",
        "skill:skills/sql-tuning:SKILL.md",
        "skill:skills/sql-tuning:references/explain.md",
    ]
    names = skills.search("query plan index", skill_names=["sql-tuning"])
    assert names and {r.skill_name for r in names} == {"sql-tuning"}
    only_md = skills.search("explain analyze timings", include_references=False)
    assert all(r.source == "SKILL.md" for r in only_md)
    assert len(skills.search("pdf sql git csv", top_k=2)) == 2
    skills.search("again")
    assert len(made) == 1  # reused


def test_engine_index_follows_refresh(corpus: Path) -> None:
    engines: list[SearchEngine] = []

    def factory() -> SearchEngine:
        engines.append(bm25_factory())
        return engines[-1]

    skills = WorkspaceSkills(
        LocalSkillSource(corpus), ["skills"], search_engine_factory=factory, refresh_interval=None
    )
    assert skills.search("kubernetes") == []
    write_skill(
        corpus / "skills", "k8s", description="Deploys to kubernetes clusters.", body="Use kubectl apply."
    )
    skills.refresh()
    assert skills.search("kubernetes kubectl")[0].skill_name == "k8s"
    (corpus / "skills" / "k8s" / "SKILL.md").write_text(
        skill_md("k8s", description="Deploys with helm charts.")
    )
    skills.refresh()
    assert [r.skill_name for r in skills.search("helm charts")] == ["k8s"]
    assert all(r.skill_name != "k8s" for r in skills.search("kubectl"))
    for p in sorted((corpus / "skills" / "k8s").rglob("*"), reverse=True):
        p.unlink()
    (corpus / "skills" / "k8s").rmdir()
    skills.refresh()
    assert skills.search("helm charts") == []
    assert not any("k8s" in s for s in engines[0].sources())
    # unchanged skills are not re-indexed: same ids, nothing removed
    before = set(engines[0].ids())
    skills.refresh()
    skills.search("rebase")
    assert set(engines[0].ids()) == before


def test_zero_evidence_bm25_falls_back_to_substring(root: Path) -> None:
    # two files that both contain every query term: BM25 idf is 0, so its scores carry no signal
    write_skill(root / "skills", "one", description="Palette colours.", body="palette colours")
    write_skill(root / "skills", "two", description="Palette colours too.", body="colour palette guide")
    skills = WorkspaceSkills(
        LocalSkillSource(root), ["skills"], search_engine_factory=bm25_factory, refresh_interval=None
    )
    results = skills.search("colour palette")
    assert results and results[0].skill_name == "two"
    assert results[0].score_details["mode"] == "substring"


@pytest.mark.slow
def test_engine_search_hybrid_with_chroma(corpus: Path) -> None:
    def factory() -> SearchEngine:
        return SearchEngine(bm25=True, embedder=HashingEmbedder(), index_name="skills_hybrid")

    skills = WorkspaceSkills(
        LocalSkillSource(corpus), ["skills"], search_engine_factory=factory, refresh_interval=None
    )
    hybrid = skills.search("slow SQL query plans")
    assert hybrid[0].skill_name == "sql-tuning"
    assert "fusion" in hybrid[0].score_details
    vector = skills.search("EXPLAIN ANALYZE real plan timings", mode="vector")
    assert vector[0].source == "references/explain.md" and "vector" in vector[0].score_details
    skills.close()


def test_workspace_keeps_skill_docs_out_of_file_search(corpus: Path) -> None:
    from ws_jupyter import LocalFilesystem, Workspace

    (corpus / "notes.md").write_text("Merge conflicts happened in the release branch.\n")
    with Workspace(
        filesystem=LocalFilesystem(corpus), skills=["skills"], bm25=True, auto_index_paths=["notes.md"]
    ) as ws:
        assert ws.skills is not None
        assert ws.skills.search("merge conflicts")[0].skill_name == "git-helper"
        ids = [r.id for r in ws.search("merge conflicts", top_k=20)]
        assert ids == ["notes.md"]
        ws.index("manual.md", "resolve merge conflicts manually")
        assert all(r.source.startswith("skill:") is False for r in ws.search("merge conflicts", top_k=20))
        assert ws.skills.search("merge conflicts")[0].skill_name == "git-helper"
