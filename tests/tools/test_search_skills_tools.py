"""workspace_search / workspace_index and the skill tools, over real indexes and SKILL.md folders."""

from __future__ import annotations

import re

import pytest

from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.tools.types import ToolErrorText

from .conftest import box


@pytest.fixture
def search_ws(workdir):
    (workdir / "docs").mkdir()
    (workdir / "docs" / "cooking.md").write_text(
        "# Cooking\n\nBoil the pasta in salted water.\nDrain it.\n\nServe with tomato sauce and basil.\n"
    )
    (workdir / "docs" / "gardening.md").write_text("# Garden\n\nWater the tomato plants every morning.\n")
    (workdir / "docs" / "cars.md").write_text("# Cars\n\nCheck the tyre pressure monthly.\n")
    ws = Workspace(filesystem=LocalFilesystem(workdir), auto_index_paths=["docs"])
    ws.init()
    yield ws
    ws.destroy()


def test_search_output(search_ws):
    out = box(search_ws).run("workspace_search", query="pasta sauce", top_k=2)
    blocks, summary = out.rsplit("\n---\n", 1)
    assert summary == "1 result (bm25 search)"
    # the hit's line range, numbered as read_file numbers lines (blank context left out)
    assert blocks == (
        "docs/cooking.md:3-6\n3→Boil the pasta in salted water.\n4→Drain it.\n5→\n"
        "6→Serve with tomato sauce and basil."
    )


def test_search_several_results_and_zero(search_ws):
    tools = box(search_ws)
    out = tools.run("workspace_search", query="tomato")
    assert out.endswith("---\n2 results (bm25 search)")
    assert re.search(r"^docs/gardening\.md:3-3\n3→Water the tomato plants every morning\.$", out, re.M)
    assert tools.run("workspace_search", query="spaceship") == "0 results (bm25 search)"


def test_unavailable_mode_falls_back(search_ws):
    out = box(search_ws).run("workspace_search", query="tyre", mode="hybrid")
    assert out.endswith("---\n1 result (bm25 search) (hybrid search is not available here; used bm25)")


def test_snippets_are_bounded_by_the_token_budget(workdir, search_ws):
    from ws_jupyter import WORKSPACE_TOOLS as T
    from ws_jupyter.text.tokens import count_tokens

    search_ws.set_tools_config({T.SEARCH.SEARCH: {"max_output_tokens": 120}})
    tools = box(search_ws)
    assert tools.run("workspace_index", path="notes/long.md", content="needle " + "word " * 5000).startswith(
        "Indexed the text as notes/long.md ("
    )
    out = tools.run("workspace_search", query="needle", top_k=1)
    assert out.startswith("notes/long.md [indexed text]:1-1\n1→needle word")
    assert count_tokens(out) <= 150


def test_index_then_search(search_ws):
    tools = box(search_ws)
    assert tools.run("workspace_index", path="./notes/meeting.md", content="Budget review on Friday.\n") == (
        "Indexed the text as notes/meeting.md"
    )
    assert tools.run("workspace_search", query="budget friday").startswith(
        "notes/meeting.md [indexed text]:1-1\n1→Budget review"
    )
    long_text = "".join(f"paragraph {i} about quarterly planning and hiring.\n" for i in range(400))
    assert tools.run("workspace_index", path="notes/long.md", content=long_text).startswith(
        "Indexed the text as notes/long.md ("
    )
    assert tools.run("workspace_index", path="../x", content="x").startswith("Error: Invalid path")


@pytest.fixture
def skills_ws(workdir):
    skill = workdir / "skills" / "data-cleaning"
    (skill / "references").mkdir(parents=True)
    (skill / "scripts").mkdir()
    (skill / "SKILL.md").write_text(
        "---\nname: data-cleaning\ndescription: Clean tabular data before analysis.\n---\n"
        "1. Drop duplicate rows.\n2. Normalise column names.\n"
    )
    (skill / "references" / "checklist.md").write_text(
        "# Checklist\n\nMissing values: impute or drop.\nOutliers: inspect.\n"
    )
    (skill / "scripts" / "clean.py").write_text("print('clean')\n")
    (skill / "scripts" / "blob.bin").write_bytes(b"\x00\x01\x02")
    ws = Workspace(filesystem=LocalFilesystem(workdir), skills=["skills"], bm25=False)
    yield ws
    ws.destroy()


def test_skill_tool(skills_ws):
    tools = box(skills_ws)
    assert tools.run("skill", name="data-cleaning") == (
        "1. Drop duplicate rows.\n2. Normalise column names.\n\n"
        "## References\n- references/checklist.md\n\n"
        "## Scripts\n- scripts/blob.bin\n- scripts/clean.py"
    )
    out = tools.run("skill", name="nope")
    assert out == 'Skill "nope" not found. Available skills: data-cleaning (skills/data-cleaning)'
    assert isinstance(out, ToolErrorText)


def test_skill_search(skills_ws):
    tools = box(skills_ws)
    out = tools.run("skill_search", query="outliers")
    assert re.fullmatch(
        r"\[data-cleaning\] references/checklist\.md \(lines \d+-\d+\) \(score: \d\.\d\d\)\n.*Outliers: inspect\.",
        out,
        re.S,
    ), out
    assert tools.run("skill_search", query="quantum chromodynamics") == "No results found."


def test_skill_read(skills_ws):
    tools = box(skills_ws)
    assert tools.run(
        "skill_read", skill_name="data-cleaning", path="references/checklist.md", start_line=3, end_line=3
    ) == ("references/checklist.md (lines 3-3 of 4)\nMissing values: impute or drop.")
    assert tools.run("skill_read", skill_name="data-cleaning", path="clean.py") == "print('clean')\n"
    assert tools.run("skill_read", skill_name="data-cleaning", path="scripts/blob.bin") == (
        "Binary file: skills/data-cleaning/scripts/blob.bin (3 bytes)"
    )
    missing = tools.run("skill_read", skill_name="data-cleaning", path="nope.md")
    assert missing.startswith(
        'File "nope.md" not found in skill "data-cleaning".\nAvailable files: SKILL.md, '
    )
    past = tools.run("skill_read", skill_name="data-cleaning", path="references/checklist.md", start_line=50)
    assert "The file has been fully read; stop paginating." in past
    assert tools.run("skill_read", skill_name="data-cleaning", path="../../etc/passwd").startswith(
        "Error: Invalid file path"
    )
