"""The example skills in skills/ are valid, complete, and their scripts really run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ws_jupyter.skills import LocalSkillSource, WorkspaceSkills

from .conftest import EXAMPLE_SKILLS, REPO_ROOT


@pytest.fixture(scope="module")
def skills() -> WorkspaceSkills:
    return WorkspaceSkills(LocalSkillSource(REPO_ROOT), ["skills"], refresh_interval=None, strict=True)


def test_all_three_are_valid_without_warnings(skills: WorkspaceSkills) -> None:
    skills.refresh()  # strict: raises on any problem
    assert skills.names() == ["data-cleaning", "notebook-review", "plotting-style"]
    assert skills.issues() == []
    for skill in skills.list():
        assert skill.warnings == (), skill.name
        assert skill.license == "Apache-2.0"
        assert skill.metadata["version"] == "1.0"
        assert len(skill.description) > 80  # descriptions say what and when


def test_layouts(skills: WorkspaceSkills) -> None:
    cleaning = skills.get("data-cleaning")
    plotting = skills.get("plotting-style")
    review = skills.get("notebook-review")
    assert cleaning is not None and plotting is not None and review is not None
    assert cleaning.scripts == ("scripts/profile_table.py",)
    assert cleaning.references == ("references/pandas-recipes.md",)
    assert plotting.references == ("references/chart-choice.md", "references/color-palettes.md")
    assert plotting.assets == ("assets/ws.mplstyle",)
    assert review.scripts == ("scripts/nb_lint.py",)
    assert review.assets == ("assets/review-template.md",)
    assert cleaning.allowed_tools == ("workspace_execute_command", "workspace_read_file")
    # every file named in the instructions exists in the skill
    for skill in (cleaning, plotting, review):
        for rel in skill.references + skill.scripts + skill.assets:
            assert rel in skill.instructions, (skill.name, rel)


def test_profile_table_script(tmp_path: Path) -> None:
    csv_path = tmp_path / "raw.csv"
    csv_path.write_text(
        "id,city,amount,when\n"
        "1, Paris,10,2024-01-02\n"
        "2,NY,n/a,2024-01-03\n"
        "2,NY,n/a,2024-01-03\n"
        "3,NY,12,2024-02-01\n"
        "4,Lyon,11,not a date\n"
        "5,Lyon,9,2024-03-01\n"
        "6,Lyon,10,2024-03-02\n"
        "7,Lyon,500,2024-03-03\n"
    )
    script = EXAMPLE_SKILLS / "data-cleaning" / "scripts" / "profile_table.py"
    out = tmp_path / "report.md"
    md = subprocess.run(
        [sys.executable, str(script), str(csv_path), "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "- duplicate rows: 1" in md.stdout
    assert "| city | text | 0 (0%) | 3 |" in md.stdout
    assert "leading/trailing spaces" in md.stdout
    assert out.read_text() == md.stdout
    report = json.loads(
        subprocess.run(
            [sys.executable, str(script), str(csv_path), "--json"], capture_output=True, text=True, check=True
        ).stdout
    )
    columns = {c["name"]: c for c in report["columns"]}
    assert report["rows"] == 8
    assert columns["amount"]["type"] == "integer" and columns["amount"]["missing"] == 2
    assert columns["amount"]["max"] == 500 and any("outliers" in f for f in columns["amount"]["flags"])
    assert any(f.startswith("mixed types") for f in columns["when"]["flags"])
    failed = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "missing.csv")], capture_output=True, text=True
    )
    assert failed.returncode == 2 and "cannot read" in failed.stderr


def test_nb_lint_script(tmp_path: Path) -> None:
    def cell(source: str, count: int | None, outputs: list[dict] | None = None) -> dict:
        return {
            "cell_type": "code",
            "source": source,
            "execution_count": count,
            "outputs": outputs or [],
            "metadata": {},
        }

    bad = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            cell("import pandas as pd", 2),
            cell(
                "df = pd.read_csv('/home/ana/data.csv')\npassword = 'hunter22'",
                1,
                [{"output_type": "error", "ename": "KeyError", "evalue": "x", "traceback": []}],
            ),
            cell("import numpy as np", None),
        ],
    }
    path = tmp_path / "bad.ipynb"
    path.write_text(json.dumps(bad))
    script = EXAMPLE_SKILLS / "notebook-review" / "scripts" / "nb_lint.py"
    result = subprocess.run(
        [sys.executable, str(script), str(path), "--json"], capture_output=True, text=True
    )
    assert result.returncode == 1
    messages = [(f["cell"], f["level"], f["message"]) for f in json.loads(result.stdout)["findings"]]
    text = "\n".join(f"{c} {lvl} {m}" for c, lvl, m in messages)
    assert "1 warning the first cell should be a Markdown title" in text
    assert "2 error error output left in the notebook: KeyError" in text
    assert "2 error looks like a hard-coded credential" in text
    assert "2 warning absolute path" in text
    assert "2 error executed out of order (count 1 after 2)" in text
    assert "3 warning code cell was never executed" in text
    assert "3 warning imports after other code" in text

    good = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {"cell_type": "markdown", "source": "# Sales analysis", "metadata": {}},
            cell("import pandas as pd", 1),
            cell("df = pd.read_csv('data/sales.csv')", 2),
        ],
    }
    path.write_text(json.dumps(good))
    clean = subprocess.run([sys.executable, str(script), str(path)], capture_output=True, text=True)
    assert clean.returncode == 0 and clean.stdout.strip() == "0 findings (0 errors)"


def test_mplstyle_asset_is_a_valid_style_file(skills: WorkspaceSkills) -> None:
    data = skills.get_asset("plotting-style", "ws.mplstyle")
    assert data is not None
    for line in data.decode().splitlines():
        if line.strip() and not line.startswith("#"):
            key, sep, value = line.partition(":")
            assert sep and key.strip() and value.strip(), line
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return  # matplotlib is not a dependency; the syntax check above still ran
    import matplotlib.pyplot as plt

    with plt.style.context(str(EXAMPLE_SKILLS / "plotting-style" / "assets" / "ws.mplstyle")):
        assert plt.rcParams["axes.spines.top"] is False
