"""Edits of a notebook that moves under the agent: its own edits keep what it has seen, another
writer's change is refused as stale, and an edit by index never lands on a cell it did not see."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from ws_jupyter import WORKSPACE_TOOLS as T

from ..notebooks.samples import analysis_notebook, write
from .conftest import box

EDIT = T.FILESYSTEM.NOTEBOOK_EDIT
READ = T.FILESYSTEM.READ_FILE
EDIT_FILE = T.FILESYSTEM.EDIT_FILE

#: A second writer in its own process, as JupyterLab saving: a Markdown cell inserted at the top.
JUPYTERLAB_SAVE = """
import sys, nbformat
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
cell = nbformat.v4.new_markdown_cell("## Inserted in JupyterLab")
cell.id = "from-lab"
nb.cells.insert(0, cell)
nbformat.write(nb, path)
"""


def _lab_insert(path: Path) -> None:
    subprocess.run([sys.executable, "-c", JUPYTERLAB_SAVE, str(path)], check=True, timeout=60)


def _ids(path: Path) -> list[str]:
    return [c["id"] for c in json.loads(path.read_text("utf-8"))["cells"]]


@pytest.fixture
def seven(workdir: Path) -> Path:
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Notes") if i % 3 == 0 else nbformat.v4.new_code_cell(f"step_{i} = {i}")
        for i in range(7)
    ])
    for i, cell in enumerate(nb.cells):
        cell.id = f"c{i}"
    path = workdir / "moving.ipynb"
    path.write_text(write(nb), "utf-8")
    return path


@pytest.mark.parametrize("require_read", [False, True])
def test_own_edits_keep_the_read_and_another_writer_is_refused(make_ws, seven, require_read):
    tools = box(make_ws(tools={EDIT: {"require_read_before_write": require_read}}))
    tools.run(READ, path="moving.ipynb")
    # consecutive edits with no outside change all go through (none needs a new read)
    for i in (4, 5, 1, 4):
        out = tools.run(EDIT, path="moving.ipynb", cell_index=i, new_source=f"edited_{i} = True")
        assert out.startswith(f"Replaced cell {i}"), out
    out = tools.run(EDIT, path="moving.ipynb", cell_index=2, edit_mode="insert", cell_type="code", new_source="new = 1")
    assert out.startswith("Inserted cell 3"), out
    # the cells below the insert moved: what was seen moved with them
    assert tools.run(EDIT, path="moving.ipynb", cell_index=5, new_source="moved = 1").startswith("Replaced cell 5")
    assert _ids(seven)[5] == "c4"
    # another process inserts a cell at the top and saves: the next edit is refused, file untouched
    _lab_insert(seven)
    before = seven.read_bytes()
    out = tools.run(EDIT, path="moving.ipynb", cell_index=6, new_source="overwrites the wrong cell")
    assert "was modified since it was last read" in out
    assert seven.read_bytes() == before
    # after a new read the same edit lands on the cell now at that index
    tools.run(READ, path="moving.ipynb")
    assert tools.run(EDIT, path="moving.ipynb", cell_index=6, new_source="ok = 1").startswith("Replaced cell 6")


def test_an_index_not_read_in_this_version_is_refused(fs_tools, seven):
    fs_tools.run(READ, path="moving.ipynb")
    _lab_insert(seven)
    fs_tools.run(READ, path="moving.ipynb", offset=0, limit=3)  # the new version, in part
    before = seven.read_bytes()
    out = fs_tools.run(EDIT, path="moving.ipynb", cell_index=5, new_source="x = 1")
    assert out.startswith("Error: cell 5 has not been read: nothing was changed.")
    assert "name the cell by cell_id" in out and seven.read_bytes() == before
    # by id the cell is unambiguous
    assert fs_tools.run(EDIT, path="moving.ipynb", cell_id="c4", new_source="x = 1").startswith("Replaced cell 5")


def test_edit_file_in_a_cell_keeps_the_read_too(make_ws, workdir):
    (workdir / "a.ipynb").write_text(write(analysis_notebook()), "utf-8")
    tools = box(make_ws(tools={EDIT_FILE: {"require_read_before_write": True}}))
    tools.run(READ, path="a.ipynb")
    assert tools.run(EDIT_FILE, path="a.ipynb", old_string="count = 0", new_string="count = 1").startswith("Replaced")
    assert tools.run(EDIT_FILE, path="a.ipynb", old_string="count = 1", new_string="count = 2").startswith("Replaced")


def _agent_view(text: str, first: int, last: int) -> dict[int, str]:
    cells = json.loads(text)["cells"]
    return {i: cells[i]["id"] for i in range(first, min(last, len(cells) - 1) + 1)}


def _read(tools: Any, path: Path, rng: random.Random, view: dict[int, str], moved: bool) -> dict[int, str]:
    """The agent reads a random window; returns what it has seen: reads of one version add up,
    a new version (``moved``) starts over."""
    first = rng.randrange(0, 4)
    limit = rng.choice([None, 3, 5])
    args: dict[str, Any] = {"offset": first} if limit is None else {"offset": first, "limit": limit}
    text = path.read_text("utf-8")
    assert "[" in str(tools.run(READ, path=path.name, **args))
    n = len(json.loads(text)["cells"])
    shown = _agent_view(text, first, n - 1 if limit is None else first + limit - 1)
    return shown if moved else {**view, **shown}


def test_random_interleavings_never_edit_a_cell_the_agent_did_not_see(make_ws, workdir):
    """100 random sequences of agent reads and edits (by id and by index: replace, insert,
    delete) interleaved with another writer's inserts and deletes: no successful edit by index
    lands on a cell other than the one the agent saw at that index."""
    tools = box(make_ws())
    path = workdir / "random.ipynb"
    landed_wrong = succeeded = refused = 0
    for seq in range(100):
        rng = random.Random(seq)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"v{seq}_{i} = {i}") for i in range(8)])
        for i, cell in enumerate(nb.cells):
            cell.id = f"s{seq}c{i}"
        path.write_text(write(nb), "utf-8")
        counter = 0
        view = _read(tools, path, rng, {}, moved=True)
        moved = False  # the file changed under the agent since its last read
        for _ in range(12):
            op = rng.random()
            if op < 0.25:  # the other writer
                data = json.loads(path.read_text("utf-8"))
                counter += 1
                if rng.random() < 0.5 or len(data["cells"]) < 3:
                    new = {"id": f"out{seq}-{counter}", "cell_type": "code", "metadata": {}, "outputs": [],
                           "execution_count": None, "source": [f"outside_{counter} = 1"]}
                    data["cells"].insert(rng.randrange(0, len(data["cells"]) + 1), new)
                else:
                    del data["cells"][rng.randrange(0, len(data["cells"]))]
                path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", "utf-8")
                moved = True
                continue
            if op < 0.35:
                view, moved = _read(tools, path, rng, view, moved), False
                continue
            ids_now = _ids(path)
            mode = rng.choice(["replace", "replace", "insert", "delete"])
            by_id = rng.random() < 0.3
            believed = rng.randrange(0, 10)
            args = {"path": "random.ipynb", "edit_mode": mode, "new_source": f"agent = {counter}"}
            if mode == "insert":
                args["cell_type"] = "code"
            if by_id:
                if not view:
                    continue
                believed = rng.choice(sorted(view))
                args["cell_id"] = view[believed]
            else:
                args["cell_index"] = believed
            out = str(tools.run(EDIT, **args))
            if out.startswith(("Replaced", "Inserted", "Deleted")):
                succeeded += 1
                appended = mode == "replace" and believed == len(ids_now)
                if not by_id and not appended and (believed >= len(ids_now) or view.get(believed) != ids_now[believed]):
                    landed_wrong += 1
                # the agent's own picture after its edit (what the tool's answer tells it)
                after = _ids(path)
                view = {i: cid for i, cid in enumerate(after) if cid in set(view.values()) or cid not in ids_now}
            else:
                refused += 1
                if "modified since" in out or "deleted after" in out or "not been read" in out or "is not the cell" in out:
                    view, moved = _read(tools, path, rng, view, moved), False
    print("interleavings:", succeeded, "succeeded,", refused, "refused")
    assert landed_wrong == 0
    assert succeeded > 150 and refused > 50  # both paths were really taken
