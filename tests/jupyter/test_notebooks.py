"""Every notebook in notebooks/ runs top to bottom with nbclient on the ws-jupyter kernel.

Each runs in a folder of its own inside a temp dir (its workspaces are created there), and the
outputs are checked cell by cell: what a reader of the notebook would see. The runs are the
session's ``notebook_runs`` (tests/notebook_runs.py): the documentation site is built from them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
WIDGET = "application/vnd.jupyter.widget-view+json"


def cell(nb: Any, source_start: str) -> Any:
    found = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(source_start)]
    assert found, f"no cell starting with {source_start!r}"
    return found[0]


def text(c: Any) -> str:
    parts = []
    for out in c.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            parts.append(out.data.get("text/plain", ""))
        elif out.output_type == "error":
            parts.append(f"ERROR {out.ename}: {out.evalue}")
    return "".join(parts)


def has_widget(c: Any, class_name: str) -> bool:
    return any(
        out.output_type in ("execute_result", "display_data")
        and WIDGET in out.data
        and out.data["text/plain"].startswith(class_name)
        for out in c.outputs
    )


def html(c: Any) -> str:
    return "".join(
        out.data.get("text/html", "")
        for out in c.outputs
        if out.output_type in ("execute_result", "display_data")
    )


def no_errors(nb: Any) -> None:
    for c in nb.cells:
        if c.cell_type == "code":
            assert not [o for o in c.outputs if o.output_type == "error"], c.source


def test_notebooks_are_all_tested() -> None:
    tested = {
        "quickstart.ipynb",
        "agent_prototyping.ipynb",
        "skills.ipynb",
        "teaching_demo.ipynb",
        "notebook_agent.ipynb",
        "code_interpreter.ipynb",
        "user_data.ipynb",
        "live_notebook.ipynb",
    }
    assert {p.name for p in NOTEBOOKS.glob("*.ipynb")} == tested


def test_notebooks_are_saved_without_outputs() -> None:
    for path in NOTEBOOKS.glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), path.name


@pytest.mark.slow
def test_quickstart(notebook_runs: Any) -> None:
    nb, _folder = notebook_runs.run("quickstart.ipynb")
    no_errors(nb)
    assert "Workspace quickstart → ws" in text(cell(nb, "%ws init workspace"))
    listing = text(cell(nb, "%ws ls"))
    assert (
        "summary.py" in listing and "cities.csv" in listing and "3 directories, 3 files" in listing
    )  # skills/ was created by init
    assert "<details open" in html(cell(nb, "%ws ls"))
    assert "6  # TODO: handle missing populations" in text(cell(nb, "%ws cat analysis/summary.py"))
    assert text(cell(nb, "%ws grep TODO")).startswith("1 match across 1 file")
    assert "5 cities; the largest is Osaka (19,059,856 people)" in text(
        cell(nb, "%ws run python3 analysis/summary.py")
    )
    assert "lines: 6" in text(cell(nb, "%%ws run")) and "Osaka,Japan,19059856" in text(cell(nb, "%%ws run"))
    assert text(cell(nb, "top = 3")).count("\n") >= 4  # header + 3 rows + status line
    assert has_widget(cell(nb, "ticker = %ws bg"), "ProcessOutput")
    assert "running" in text(cell(nb, "import time")) and "python3 -u ticker.py" in text(
        cell(nb, "import time")
    )
    assert "tick" in text(cell(nb, "%ws logs"))
    assert "4 files indexed" in text(cell(nb, "%ws index"))
    search = cell(nb, "%ws search which city")
    assert "README.md" in text(search) and "<mark" in html(search)
    assert "csv-summary" in text(cell(nb, "ws.skills.refresh()"))
    skill = cell(nb, "%ws skill csv-summary")
    assert any(
        "text/html" in o.data and "Summarising a CSV file" in o.data["text/html"]
        for o in skill.outputs
    )
    assert "workspace_execute_command" in text(cell(nb, "%ws tools"))
    assert "2→Lagos,Nigeria,15388000" in text(cell(nb, "%ws call workspace_read_file"))
    assert has_widget(cell(nb, "%ws call workspace_execute_command"), "ToolCallPanel")  # waits for a click
    assert has_widget(cell(nb, "%ws ui"), "Dashboard")


@pytest.mark.slow
def test_agent_prototyping(notebook_runs: Any) -> None:
    nb, folder = notebook_runs.run("agent_prototyping.ipynb")
    no_errors(nb)
    assert "'workspace_execute_command'" in text(cell(nb, "from ws_jupyter.tools import to_anthropic"))
    assert '"type": "function"' in text(cell(nb, "%ws tools --format openai"))
    assert text(cell(nb, 'by_name = {t.name: t for t in tools}\nprint(by_name["workspace_grep"]')).startswith(
        "1 match across 1 file"
    )
    assert 'Error: Invalid arguments: "offset" must be an integer' in text(
        cell(nb, 'print(by_name["workspace_read_file"].run({"path": "src/stats.py", "offset"')
    )
    hooks = text(cell(nb, "call_log = []"))
    assert hooks.startswith("Deleting files is not allowed in this workspace.\nstats.py\n")
    assert "-> workspace_execute_command {'command': 'rm -rf src'" in hooks
    assert text(cell(nb, "def approve_safe_commands")).strip() == "Tool call refused by user."
    assert has_widget(cell(nb, "from ws_jupyter.jupyter.widgets import ToolActivity"), "ToolActivity")
    approved = text(cell(nb, "import time\n\ndeadline"))
    assert "ZeroDivisionError" in approved  # the approved command ran (the tests fail before the fix)
    transcript = text(cell(nb, "ws.set_tools_config"))
    for expected in (
        "-> workspace_grep",
        "-> workspace_read_file",
        "-> workspace_edit_file",
        "-> workspace_execute_command",
        "Replaced 1 occurrence in src/stats.py",
        "ok: mean() of an empty list",
        "assistant: Done: the tests pass.",
    ):
        assert expected in transcript
    assert 'raise ValueError("mean() of an empty list")' in text(cell(nb, "%ws cat src/stats.py"))
    assert (folder / "agent-workspace" / "src" / "stats.py").read_text().count("ValueError") == 1


@pytest.mark.slow
def test_skills(notebook_runs: Any) -> None:
    nb, _folder = notebook_runs.run("skills.ipynb")
    no_errors(nb)
    listing = text(cell(nb, "changes = ws.skills.refresh()"))
    assert "chart-review" in listing and "sql-style" in listing
    assert "Broken_Skill" in listing and "'description' is required" in listing  # reported, skipped
    assert any(
        has_widget(c, "SkillsBrowser")
        for c in nb.cells
        if c.cell_type == "code" and c.source.strip() == "%ws skills"
    )
    assert "Every axis has a label **with units**" in text(cell(nb, "%ws skill chart-review"))
    assert "Okabe-Ito" in text(cell(nb, "%ws skill chart-review --file"))
    assert "palettes.md" in text(cell(nb, "for hit in ws.skills.search"))
    assert "'local'" in text(cell(nb, 'skill = ws.skills.get("sql-style")'))
    assert "Invalid skill at skills/Broken_Skill/SKILL.md" in text(cell(nb, "[issue.message"))
    assert "# Reviewing a chart" in text(cell(nb, '%ws call skill {"name": "chart-review"}'))
    assert "[sql-style]" in text(cell(nb, "%ws call skill_search"))
    assert "missing x label" in text(cell(nb, "%ws call skill_read"))
    assert 'Skill "no-such-skill" not found. Available skills: chart-review' in text(
        cell(nb, '%ws call skill {"name": "no-such-skill"}')
    )


@pytest.mark.slow
def test_teaching_demo(notebook_runs: Any) -> None:
    from ws_jupyter.sandbox.local import LocalSandbox

    nb, folder = notebook_runs.run("teaching_demo.ipynb")
    no_errors(nb)
    isolation = text(cell(nb, "isolation = ws.sandbox")).split(":")[1].strip()
    detection = LocalSandbox.detect_isolation()
    assert isolation == (detection.backend if detection.available else "none")  # --isolation auto
    assert re.search(r"\n  search +bm25, vector, hybrid\n", text(cell(nb, "%reload_ext ws_jupyter\n%ws init classroom")))
    if isolation == "bwrap":
        assert "the file reached the disk outside the workspace: False" in text(
            cell(nb, "from pathlib import Path")
        )
        assert "no network: OSError" in text(cell(nb, "%%ws run python3\nimport socket"))
    assert not (folder / "outside-the-workspace.txt").exists()
    assert "the secret is not visible to commands" in text(cell(nb, "import os"))
    steps = cell(nb, "%%ws run python3\nimport time")
    assert (
        "step 5/5" in text(steps) and len([o for o in steps.outputs if o.output_type == "stream"]) >= 3
    )  # streamed
    assert has_widget(cell(nb, "counter = %ws bg"), "ProcessOutput")
    assert text(cell(nb, "%ws search how do leaves")).startswith(" 1. notes/photosynthesis.md")
    assert text(cell(nb, "%ws search why does the sea")).startswith(" 1. notes/tides.md")
    assert has_widget(cell(nb, "%ws ui"), "Dashboard")
    assert text(cell(nb, "%ws kill")).startswith("Killed PID")


@pytest.mark.slow
def test_notebook_agent(notebook_runs: Any) -> None:
    nb, folder = notebook_runs.run("notebook_agent.ipynb")
    no_errors(nb)
    assert text(cell(nb, "import subprocess")) == "['stream', 'error']"  # the failing run, kept
    read = text(cell(nb, "tools = {t.name: t for t in ws.tools()}"))
    assert read.startswith("analysis.ipynb (4 cells, python, ")
    assert "[2] code " in read and "3 share = len(dry) / len(wet)" in read
    assert "» error: ZeroDivisionError: division by zero" in read and "----> 3 share" in read
    fix = text(cell(nb, "import re"))
    assert re.search(r"Replaced cell 2 \(code, id \w+\) in analysis.ipynb: 3 lines; outputs cleared", fix)
    after = text(cell(nb, 'print(tools["workspace_read_file"].run({"path": "analysis.ipynb", "offset": 2'))
    assert "2 share = len(dry) / len(rain)" in after and "» error" not in after
    refused = text(cell(nb, 'print(tools["workspace_notebook_edit"].run({"path": "analysis.ipynb", "cell_id": "nope"'))
    assert "Error: No cell with id 'nope' in analysis.ipynb" in refused and "The notebook was not changed." in refused
    assert "Error: analysis.ipynb is a notebook" in refused
    result = html(cell(nb, "fixed = Notebook.load"))
    assert "<h1>Rainfall</h1>" in result and "38% of the months were dry" in result
    assert "ZeroDivisionError" not in result and "#cell-id=" in result
    saved = nbformat.read(folder / "notebook-agent" / "analysis.ipynb", as_version=4)
    nbformat.validate(saved)
    assert [o.text for o in saved.cells[2].outputs] == ["38% of the months were dry\n"]


@pytest.mark.slow
def test_code_interpreter(notebook_runs: Any) -> None:
    nb, folder = notebook_runs.run("code_interpreter.ipynb")
    no_errors(nb)
    assert "'workspace_execute_code'" in text(cell(nb, "from ws_jupyter import WORKSPACE_TOOLS as T"))
    assert has_widget(cell(nb, "from ws_jupyter.jupyter.widgets import KernelActivity"), "KernelActivity")
    transcript = text(cell(nb, "transcript = run_agent("))
    assert "[c1] 18 rows, 3 regions" in transcript
    assert "[c2] Out[2]: {'north':" in transcript and "'stdev_units'" in transcript
    assert "[c3] [image 1: image/png" in transcript
    assert "assistant: Done. west has the highest revenue (9,802.5)" in transcript
    plot = cell(nb, "from IPython.display import Image")
    assert any("image/png" in o.get("data", {}) for o in plot.outputs)
    cells_state = text(cell(nb, "activity.refresh()"))
    assert cells_state.count("'ok'") >= 3 and "'image/png'" in cells_state
    assert "('west', {'mean_units': 159.2" in text(cell(nb, "%%ws py"))
    assert "default" in text(cell(nb, "%ws kernel list"))
    slow = text(cell(nb, "slow = "))
    assert "[timed out after 1 s: the kernel was interrupted (its state is kept)]" in slow
    assert slow.rstrip().endswith("]: 18")
    ran = text(cell(nb, "from ws_jupyter.notebooks import Notebook"))
    assert ran.startswith("Ran data/report.ipynb in a fresh kernel: all 2 code cells ok (")
    assert "outputs saved" in ran and "total units 2425" in ran
    report = nbformat.read(folder / "interpreter-workspace" / "data" / "report.ipynb", as_version=4)
    nbformat.validate(report)
    assert report.cells[2].outputs[0]["text"] == "total units 2425\n"


@pytest.mark.slow
def test_user_data(notebook_runs: Any) -> None:
    nb, _folder = notebook_runs.run("user_data.ipynb")
    no_errors(nb)
    shared = text(cell(nb, "%ws share orders api_key"))
    assert "Shared with the agent: orders" in shared and "not shared: api_key (the name looks like a secret)" in shared
    (listing,) = [c for c in nb.cells if c.cell_type == "code" and c.source == "%ws share"]
    assert has_widget(listing, "SharedVariables")
    assert has_widget(cell(nb, "from ws_jupyter import WORKSPACE_TOOLS as T"), "ToolActivity")
    run = text(cell(nb, "import time"))
    assert run.startswith("Copy orders (pandas.DataFrame, 500 rows x 4 columns, ")
    assert "The agent's reason: to compute revenue per region" in run
    assert "--- user_variables_list\n1 shared variable (read-only):" in run
    assert "placed" in run and "Europe/Paris" in run  # the inspection
    assert "Copied into the sandbox kernel 'default' as orders (pandas.DataFrame" in run
    assert "--- workspace_execute_code" in run and "revenue" in run
    fetched = text(cell(nb, "%ws fetch summary"))
    assert fetched.startswith("Fetched summary from the sandbox kernel 'default' as summary: pandas.DataFrame, 3 rows")
    assert text(cell(nb, "mine = orders")).strip() == "np.True_"
    refused = text(cell(nb, "%ws fetch model"))
    assert "Model, which has no safe format" in refused and "What can be copied" in refused
    assert "No longer shared with the agent: orders" in text(cell(nb, "%ws unshare --all"))
def test_live_notebook_says_what_is_missing_without_a_page(notebook_runs: Any) -> None:
    """Headless (nbclient answers no comm) the live demo says the page is missing and how to get
    it, and its agent stops instead of waiting; tests/jupyter/test_live.py runs it in JupyterLab."""
    nb, _folder = notebook_runs.run("live_notebook.ipynb")
    no_errors(nb)
    status = text(cell(nb, "%ws live"))
    assert "Not connected to the notebook page" in status and "jupyter labextension list" in status
    assert "pip install ws-jupyter" in status
    assert "the agent has nothing to look at, so it stops here" in text(cell(nb, "link = live_notebook(ws)"))
    assert text(cell(nb, "prices = [12.5")).strip() == "17.875"
