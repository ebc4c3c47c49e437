"""Notebooks through the agent tools: read_file renders cells (images as media), the new
workspace_notebook_edit tool with every write-tool safety net, and write_file/edit_file refusing
anything that would leave an invalid notebook — file untouched."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import nbformat
import pytest

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import LocalFilesystem, ToolResult
from ws_jupyter.text.tokens import count_tokens

from ..notebooks.samples import analysis_notebook, kitchen_sink, png_bytes, versioned, write
from .conftest import box

EDIT = T.FILESYSTEM.NOTEBOOK_EDIT
READ = T.FILESYSTEM.READ_FILE


@pytest.fixture
def nb_path(workdir: Path) -> Path:
    path = workdir / "analysis.ipynb"
    path.write_text(write(analysis_notebook()), "utf-8")
    return path


def cells_of(path: Path) -> list[dict]:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    return [json.loads(json.dumps(c)) for c in nb.cells]


# --- reading ----------------------------------------------------------------------------------


def test_read_renders_cells_with_ids_types_counts_and_outputs(fs_tools, nb_path):
    out = fs_tools.run(READ, path="analysis.ipynb")
    assert isinstance(out, ToolResult)
    text = out.text
    assert text.startswith("analysis.ipynb (5 cells, python, ")
    assert "[0] markdown c0-a\n1 # City sizes\n\n3 Load the table" in text  # a blank line: no number
    assert "[1] code c1-b In[2]\n1 import pandas as pd\n2 df = pd.read_csv('data/cities.csv')\n3 df.head()" in text
    assert "» Out[2]:\n    city      country  population\n0  Lagos" in text
    assert "» text/html 848 B" in text  # rich output named by MIME type and size
    assert "<table" not in text and '"source"' not in text
    assert "» display image 1: png 96x64" in text and "<Figure size" not in text  # the image, not its repr
    assert "» error: ZeroDivisionError: division by zero\nCell In[4], line 2" in text
    assert "----> 2 share = total / count" in text and "\x1b[" not in text
    assert "[4] markdown c4-e\nThe largest city is **Osaka**." in text  # one line: bare
    # the plot comes back as an image, like an image file read
    assert len(out.media) == 1 and out.media[0].mime_type == "image/png"
    assert out.media[0].to_bytes() == png_bytes(96, 64)


def test_offset_and_limit_count_cells(fs_tools, nb_path):
    out = fs_tools.run(READ, path="analysis.ipynb", offset=3, limit=1)
    assert isinstance(out, str)  # no image in cell 3
    assert "[3] code c3-d In[4]" in out and re.findall(r"^\[(\d+)\]", out, re.M) == ["3"]
    assert out.endswith("[cell 3 of 5 shown; continue with offset=4]")
    out = fs_tools.run(READ, path="analysis.ipynb", offset=0, limit=2)
    assert "[0] markdown" in out and "[1] code" in out and "[2] code" not in out
    assert out.endswith("[cells 0-1 of 5 shown; continue with offset=2]")
    out = fs_tools.run(READ, path="analysis.ipynb", offset=9)
    assert "offset 9 is past the last cell: the notebook has 5 cells (0-4)" in out


def test_over_budget_stops_at_a_cell_and_says_where_to_continue(make_ws, workdir):
    big = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"x{i} = {i}\nprint(x{i})") for i in range(60)])
    (workdir / "big.ipynb").write_text(write(big), "utf-8")
    tools = box(make_ws(tools={READ: {"max_output_tokens": 300}}))
    seen, offset = [], 0
    for _ in range(20):
        out = tools.run(READ, path="big.ipynb", offset=offset)
        assert count_tokens(out) <= 300
        seen += [int(n) for n in re.findall(r"^\[(\d+)\] code", out, re.M)]
        m = re.search(r"continue with offset=(\d+)\]$", out)
        if not m:
            break
        offset = int(m[1])
    assert seen == list(range(60))  # every cell once, in order


def test_one_cell_over_budget_is_cut_with_a_note(make_ws, workdir):
    huge = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("\n".join(f"v{i} = {i}" for i in range(2000)))])
    (workdir / "huge.ipynb").write_text(write(huge), "utf-8")
    out = box(make_ws(tools={READ: {"max_output_tokens": 500}})).run(READ, path="huge.ipynb")
    assert count_tokens(out) <= 500
    m = re.search(r"\[cell 0 was cut to fit the output budget \(\d+ more lines\); read the rest with cell=0, "
                  r"offset=(\d+), or continue with offset=1\]", out)
    assert m


def test_a_cell_longer_than_a_read_is_paged_by_its_lines(make_ws, workdir):
    source = "\n".join(f"v{i} = {i}" for i in range(2000))
    huge = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source, execution_count=1, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="finished\n")])])
    (workdir / "huge.ipynb").write_text(write(huge), "utf-8")
    tools = box(make_ws(tools={READ: {"max_output_tokens": 500}}))
    out = tools.run(READ, path="huge.ipynb")
    offset = int(re.search(r"read the rest with cell=0, offset=(\d+)", out).group(1))
    seen = [int(n) for n in re.findall(r"^(\d+) v", out, re.M)]
    for _ in range(100):
        out = tools.run(READ, path="huge.ipynb", cell=0, offset=offset)
        assert count_tokens(out) <= 500 and re.search(r"^\[0\] code \S+ In\[1\] lines \d+-\d+ of 2000$", out, re.M)
        seen += [int(n) for n in re.findall(r"^(\d+) v", out, re.M)]
        m = re.search(r"continue with cell=0, offset=(\d+)\]$", out)
        if m is None:
            break
        offset = int(m.group(1))
    assert seen == list(range(1, 2001))  # every line once, in order, numbered as in the cell
    assert "» stdout:\nfinished" in out  # the outputs follow the last line
    out = tools.run(READ, path="huge.ipynb", cell=0, offset=1990, limit=3)
    assert "lines 1990-1992 of 2000\n1990 v1989 = 1989\n1991 v1990 = 1990\n1992 v1991 = 1991\n" in out
    assert tools.run(READ, path="huge.ipynb", cell=3).startswith("Error: No cell 3")
    assert "offset 2001 is past the last line of cell 0" in tools.run(READ, path="huge.ipynb", cell=0, offset=2001)


def test_raw_returns_the_json(fs_tools, nb_path):
    out = fs_tools.run(READ, path="analysis.ipynb", raw=True, limit=5)
    assert out.startswith("analysis.ipynb (lines 1-5 of ")
    assert '     2→ "cells": [' in out
    assert fs_tools.run(READ, path="analysis.ipynb", encoding="utf-8", limit=1).endswith("     1→{")


def test_kitchen_sink_is_summarised_and_bounded(fs_tools, workdir):
    (workdir / "k.ipynb").write_text(write(kitchen_sink()), "utf-8")
    out = fs_tools.run(READ, path="k.ipynb")
    text = out.text if isinstance(out, ToolResult) else out
    assert "[1] raw " in text and "raw text: {{ not rendered }}" in text
    assert "» stdout:\nhello\n» stderr:\nwarn" in text
    assert "» stdout:\n100%" in text and "50%" not in text  # \r redraws resolved
    assert "step 0: loss=1.0000" in text and "… (188 more lines)" in text and "step 199" in text
    assert "step 100:" not in text
    assert "» image/svg+xml 41 B" in text and "application/json 16 B" in text
    assert "IntSlider(value=0)" in text and "application/vnd.jupyter.widget-view+json" in text
    assert "[8] code " in text  # an empty cell still has its header
    assert "'naïve — “quotes” \"escaped\" \\\\ back'" in text


def test_images_follow_the_media_config(make_ws, nb_path):
    out = box(make_ws(tools={READ: {"media_types": ["image/jpeg"]}})).run(READ, path="analysis.ipynb")
    assert isinstance(out, str) and "image/png 96x64, " in out and "(not attached)" in out
    out = box(make_ws(tools={READ: {"max_media_bytes": 10}})).run(READ, path="analysis.ipynb")
    assert isinstance(out, str) and "(not attached: over max_media_bytes)" in out


def test_a_broken_notebook_is_shown_as_text_with_the_reason(fs_tools, workdir):
    (workdir / "bad.ipynb").write_text('{"cells": [', "utf-8")
    out = fs_tools.run(READ, path="bad.ipynb")
    assert out.startswith("bad.ipynb (11 bytes)\n[not readable as a notebook: bad.ipynb is not a notebook: invalid JSON")
    assert out.endswith('     1→{"cells": [')


def test_text_files_still_refuse_offset_zero(fs_tools, workdir):
    (workdir / "a.txt").write_text("x\n")
    assert fs_tools.run(READ, path="a.txt", offset=0) == 'Error: Invalid arguments: "offset" must be an integer >= 1 (got 0)'


@pytest.mark.parametrize("minor", range(6))
def test_every_format_version_reads(fs_tools, workdir, minor):
    (workdir / "v.ipynb").write_text(versioned(minor, ids=False), "utf-8")
    out = fs_tools.run(READ, path="v.ipynb")
    if minor < 5:
        assert f"nbformat 4.{minor}: no cell ids" in out and "[1] code In[1]\n" in out
    else:
        assert "[1] code cell-1 In[1]" in out and "ids shown are kept at the next edit" in out
    assert "» stdout:\n42" in out


# --- workspace_notebook_edit ------------------------------------------------------------------


def test_replace_keeps_id_and_metadata_and_clears_outputs(fs_tools, nb_path):
    before = cells_of(nb_path)
    fs_tools.run(READ, path="analysis.ipynb")
    out = fs_tools.run(EDIT, path="analysis.ipynb", cell_id="c3-d", new_source="count = len(df)\nshare = total / count")
    assert out == "Replaced cell 3 (code, id c3-d) in analysis.ipynb: 2 lines; outputs cleared"
    after = cells_of(nb_path)
    assert after[3]["id"] == "c3-d" and after[3]["metadata"] == before[3]["metadata"]
    assert after[3]["source"] == "count = len(df)\nshare = total / count"
    assert after[3]["outputs"] == [] and after[3]["execution_count"] is None
    assert [c for i, c in enumerate(after) if i != 3] == [c for i, c in enumerate(before) if i != 3]


def test_insert_after_a_cell_first_and_at_the_end(fs_tools, nb_path):
    out = fs_tools.run(EDIT, path="analysis.ipynb", cell_index=1, new_source="df.info()", cell_type="code", edit_mode="insert")
    assert re.fullmatch(r"Inserted cell 2 \(code, id [0-9a-f]{8}\) after cell 1 in analysis.ipynb; it now has 6 cells", out)
    out = fs_tools.run(EDIT, path="analysis.ipynb", new_source="# Intro", cell_type="markdown", edit_mode="insert")
    assert out.startswith("Inserted cell 0 (markdown") and "at the top" in out
    out = fs_tools.run(EDIT, path="analysis.ipynb", cell_index=7, new_source="done", cell_type="raw")
    assert out.startswith("Inserted cell 7 (raw") and "at the end" in out
    cells = cells_of(nb_path)
    assert [c["source"] for c in cells][:4] == ["# Intro", cells[1]["source"], cells[2]["source"], "df.info()"]
    assert cells[7]["cell_type"] == "raw" and len({c["id"] for c in cells}) == 8


def test_delete(fs_tools, nb_path):
    before = cells_of(nb_path)
    assert fs_tools.run(EDIT, path="analysis.ipynb", cell_id="c0-a", new_source="", edit_mode="delete") == (
        "Deleted cell 0 (markdown, id c0-a) from analysis.ipynb; it now has 4 cells"
    )
    assert cells_of(nb_path) == before[1:]


def test_replace_can_change_the_type(fs_tools, nb_path):
    out = fs_tools.run(EDIT, path="analysis.ipynb", cell_index=2, new_source="*plot*", cell_type="markdown")
    assert out == "Replaced cell 2 (markdown, id c2-c) in analysis.ipynb: 1 line; type changed from code, outputs cleared"
    cell = cells_of(nb_path)[2]
    assert cell["cell_type"] == "markdown" and "outputs" not in cell and cell["id"] == "c2-c"


def test_insert_on_a_new_path_creates_the_notebook(fs_tools, workdir):
    out = fs_tools.run(EDIT, path="nb/new.ipynb", new_source="print('hi')", cell_type="code", edit_mode="insert")
    assert re.fullmatch(r"Created notebook nb/new.ipynb with cell 0 \(code, id [0-9a-f]{8}\)", out)
    nb = nbformat.read(workdir / "nb/new.ipynb", as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat_minor == 5 and [c.source for c in nb.cells] == ["print('hi')"]


@pytest.mark.parametrize("minor", [0, 4])
def test_edits_of_old_formats_add_no_ids(fs_tools, workdir, minor):
    (workdir / "old.ipynb").write_text(versioned(minor, ids=False), "utf-8")
    fs_tools.run(EDIT, path="old.ipynb", cell_index=0, new_source="x = 1", cell_type="code", edit_mode="insert")
    fs_tools.run(EDIT, path="old.ipynb", cell_index=0, new_source="# changed")
    nb = nbformat.read(workdir / "old.ipynb", as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat_minor == minor and all("id" not in c for c in nb.cells)
    assert [c.source for c in nb.cells][:2] == ["# changed", "x = 1"]


REFUSALS = [
    ({"cell_id": "nope", "new_source": "x"}, "Error: No cell with id 'nope' in analysis.ipynb (ids: c0-a, c1-b, c2-c, c3-d, c4-e). The notebook was not changed."),
    ({"cell_index": 9, "new_source": "x"}, "Error: No cell 9: analysis.ipynb has cells 0-4. The notebook was not changed."),
    ({"cell_index": 9, "new_source": "x", "edit_mode": "delete"}, "Error: No cell 9: analysis.ipynb has cells 0-4. The notebook was not changed."),
    ({"cell_id": "c1-b", "cell_index": 2, "new_source": "x"}, "Error: cell_id 'c1-b' is cell 1, not cell 2: give one of them. The notebook was not changed."),
    ({"cell_index": -1, "new_source": "x"}, 'Error: Invalid arguments: "cell_index" must be an integer >= 0 (got -1)'),
    ({"cell_index": 1, "new_source": "x", "cell_type": "python"}, 'Error: Invalid arguments: "cell_type" must be one of code, markdown, raw (got \'python\')'),
    ({"cell_index": 1, "new_source": "x", "edit_mode": "move"}, 'Error: Invalid arguments: "edit_mode" must be one of replace, insert, delete (got \'move\')'),
    ({"cell_index": 1, "new_source": "x", "edit_mode": "insert"}, "Error: cell_type is required when edit_mode is 'insert' (code, markdown or raw)"),
    ({"new_source": "x"}, "Error: give cell_id or cell_index of the cell to replace"),
    ({"cell_id": "c1-b"}, 'Error: Invalid arguments: "new_source" is required'),
]


@pytest.mark.parametrize(("args", "message"), REFUSALS)
def test_invalid_edits_are_refused_and_change_nothing(fs_tools, nb_path, args, message):
    before = nb_path.read_bytes()
    out = fs_tools.run(EDIT, path="analysis.ipynb", **args)
    assert out == message and getattr(out, "is_error", False)
    assert nb_path.read_bytes() == before


def test_an_invalid_notebook_is_not_edited(fs_tools, workdir):
    data = json.loads(versioned(5, ids=True))
    del data["cells"][1]["outputs"][0]["name"]  # a stream output must name its stream
    (workdir / "old.ipynb").write_text(json.dumps(data), "utf-8")
    before = (workdir / "old.ipynb").read_bytes()
    out = fs_tools.run(EDIT, path="old.ipynb", cell_index=0, new_source="x")
    assert out.startswith("Error: old.ipynb is not a valid notebook (")
    assert "'name' is a required property" in out
    assert (workdir / "old.ipynb").read_bytes() == before
    assert fs_tools.run(EDIT, path="a.py", cell_index=0, new_source="x").startswith("Error: a.py is not a notebook")
    assert fs_tools.run(EDIT, path="gone.ipynb", cell_index=0, new_source="x") == "Error: File not found: gone.ipynb"


def test_read_before_write_per_cell(make_ws, nb_path):
    tools = box(make_ws(tools={EDIT: {"require_read_before_write": True}}))
    before = nb_path.read_bytes()
    assert tools.run(EDIT, path="analysis.ipynb", cell_index=1, new_source="x") == (
        'File "analysis.ipynb" has not been read. You must read a file before writing to it.'
    )
    tools.run(READ, path="analysis.ipynb", offset=3, limit=2)
    assert tools.run(EDIT, path="analysis.ipynb", cell_index=1, new_source="x") == (
        'Cell 1 of "analysis.ipynb" has not been read (read so far: cells 3-4). Read it before editing.'
    )
    assert nb_path.read_bytes() == before
    assert tools.run(EDIT, path="analysis.ipynb", cell_index=4, new_source="x").startswith("Replaced cell 4")


def test_stale_notebook_is_refused(fs_tools, nb_path):
    fs_tools.run(READ, path="analysis.ipynb")
    nb = nbformat.read(nb_path, as_version=4)
    nb.cells[0].source = "# edited in JupyterLab"
    nbformat.write(nb, nb_path)
    os.utime(nb_path, (1_000_000, 1_000_000))
    changed = nb_path.read_bytes()
    out = fs_tools.run(EDIT, path="analysis.ipynb", cell_index=1, new_source="x")
    assert out.startswith('File "analysis.ipynb" was modified since it was last read')
    assert nb_path.read_bytes() == changed


def test_concurrent_inserts_all_land(fs_tools, nb_path):
    def insert(i: int) -> None:
        fs_tools.run(EDIT, path="analysis.ipynb", cell_index=4, new_source=f"# note {i}", cell_type="markdown",
                     edit_mode="insert")

    threads = [threading.Thread(target=insert, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sources = [c["source"] for c in cells_of(nb_path)]
    assert len(sources) == 17 and sorted(s for s in sources if s.startswith("# note")) == sorted(
        f"# note {i}" for i in range(12)
    )


def test_approval_enabled_and_read_only(make_ws, nb_path, workdir):
    tools = box(make_ws(tools={EDIT: {"require_approval": True}}))
    assert tools[EDIT].require_approval is True
    assert tools.run(EDIT, path="analysis.ipynb", cell_index=0, new_source="x").startswith(
        "Error: workspace_notebook_edit requires approval"
    )
    assert tools[EDIT].run({"path": "analysis.ipynb", "cell_index": 0, "new_source": "x"}, approved=False) == (
        "Tool call refused by user."
    )
    assert cells_of(nb_path)[0]["source"].startswith("# City sizes")
    assert EDIT not in box(make_ws(tools={EDIT: {"enabled": False}}))
    read_only = box(make_ws(filesystem=LocalFilesystem(workdir, read_only=True)))
    assert EDIT not in read_only and READ in read_only
    renamed = box(make_ws(tools={EDIT: {"name": "NotebookEdit"}}))
    assert renamed["NotebookEdit"].workspace_tool_name == EDIT


def test_schema_is_strict_mode_valid(fs_tools):
    schema = fs_tools[EDIT].input_schema
    assert schema["required"] == ["path", "new_source", "cell_id", "cell_index", "cell_type", "edit_mode"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["edit_mode"]["enum"] == ["replace", "insert", "delete", None]


# --- write_file and edit_file on notebooks ---------------------------------------------------


def test_write_file_refuses_a_non_notebook_and_names_the_edit_tool(fs_tools, workdir, nb_path):
    out = fs_tools.run(T.FILESYSTEM.WRITE_FILE, path="new.ipynb", content="print('hi')")
    assert out.startswith("Error: new.ipynb is a notebook: its content must be notebook JSON that nbformat accepts")
    assert "workspace_notebook_edit" in out and out.is_error and not (workdir / "new.ipynb").exists()
    before = nb_path.read_bytes()
    for content in ["", "{}", '{"nbformat": 4, "nbformat_minor": 5, "cells": [{"cell_type": "code"}], "metadata": {}}']:
        out = fs_tools.run(T.FILESYSTEM.WRITE_FILE, path="analysis.ipynb", content=content)
        assert out.startswith("Error: analysis.ipynb "), out
        assert nb_path.read_bytes() == before


def test_write_file_accepts_notebook_json(fs_tools, workdir):
    text = write(kitchen_sink())
    assert fs_tools.run(T.FILESYSTEM.WRITE_FILE, path="k.ipynb", content=text) == f"Wrote {len(text.encode())} bytes to k.ipynb"
    assert (workdir / "k.ipynb").read_text("utf-8") == text


def test_edit_file_with_a_quote_edits_the_cell_and_leaves_a_valid_notebook(fs_tools, nb_path):
    before = cells_of(nb_path)
    out = fs_tools.run(T.FILESYSTEM.EDIT_FILE, path="analysis.ipynb", old_string="'data/cities.csv'",
                       new_string='"data/cities.csv"')
    assert out == (
        "Replaced 1 occurrence in analysis.ipynb [cell 1]:2; the cell's outputs were cleared:\n"
        '1 import pandas as pd\n2 df = pd.read_csv("data/cities.csv")\n3 df.head()'
    )
    after = cells_of(nb_path)  # nbformat reads and validates it
    assert after[1]["source"] == "import pandas as pd\ndf = pd.read_csv(\"data/cities.csv\")\ndf.head()"
    assert after[1]["outputs"] == [] and after[1]["id"] == "c1-b"
    assert [c for i, c in enumerate(after) if i != 1] == [c for i, c in enumerate(before) if i != 1]


def test_edit_file_ambiguity_is_reported_by_cell(fs_tools, nb_path):
    out = fs_tools.run(T.FILESYSTEM.EDIT_FILE, path="analysis.ipynb", old_string="df", new_string="frame")
    assert out.startswith("The specified text appears 4 times (cell 1 line 2, cell 1 line 3, cell 2 line 1, cell 3 line 1)")


def test_a_corrupting_json_edit_is_refused(fs_tools, nb_path):
    before = nb_path.read_bytes()
    out = fs_tools.run(T.FILESYSTEM.EDIT_FILE, path="analysis.ipynb", old_string='"nbformat_minor": 5',
                       new_string='"nbformat_minor": "five"')
    assert out.startswith("Error: analysis.ipynb ") and "The edit was not applied." in out
    out = fs_tools.run(T.FILESYSTEM.EDIT_FILE, path="analysis.ipynb", old_string='"cell_type": "raw"\n', new_string="x")
    assert out.startswith("The specified text was not found")
    out = fs_tools.run(T.FILESYSTEM.EDIT_FILE, path="analysis.ipynb", old_string='"id": "c0-a",', new_string='"id": "c0-a"')
    assert "invalid JSON" in out and "The edit was not applied." in out
    assert nb_path.read_bytes() == before
    # a metadata edit in the JSON that stays valid is applied
    out = fs_tools.run(T.FILESYSTEM.EDIT_FILE, path="analysis.ipynb", old_string='"version": "3.11.2"',
                       new_string='"version": "3.12.0"')
    assert out.startswith("Replaced 1 occurrence in the JSON of analysis.ipynb (line ")
    assert '→   "version": "3.12.0"' in out
    assert nbformat.read(nb_path, as_version=4).metadata.language_info.version == "3.12.0"


def test_hostile_notebook_files(fs_tools, workdir):
    os.mkfifo(workdir / "pipe.ipynb")
    assert fs_tools.run(READ, path="pipe.ipynb").startswith("Error: ")
    assert fs_tools.run(EDIT, path="pipe.ipynb", cell_index=0, new_source="x").startswith("Error: ")
    os.symlink("/dev/zero", workdir / "zero.ipynb")
    assert "outside the workspace" in fs_tools.run(READ, path="zero.ipynb")
    with open(workdir / "sparse.ipynb", "wb") as f:
        f.truncate(200 << 20)
    out = fs_tools.run(READ, path="sparse.ipynb")
    assert "binary file not readable as text" in out and "File too large: sparse.ipynb is 209,715,200 bytes" in out
    assert fs_tools.run(EDIT, path="sparse.ipynb", cell_index=0, new_source="x").startswith(
        "Error: File too large: sparse.ipynb is 209,715,200 bytes"
    )


def _v3(languages: list[str]) -> str:
    v3 = nbformat.v3
    cells = [v3.new_code_cell(input=f"x{i} = {i}", language=lang) for i, lang in enumerate(languages)]
    return json.dumps(v3.new_notebook(worksheets=[v3.new_worksheet(cells=cells)]))


def test_nbformat_3_cell_languages_are_kept_or_the_edit_refused(fs_tools, workdir):
    """nbformat 3 code cells name their language; nbformat 4 (what an edit writes) has no such
    field and nbformat's upgrade drops it. One language for all becomes the notebook's
    language_info; several are never silently lost: the edit is refused, and the read says so."""
    (workdir / "one.ipynb").write_text(_v3(["python", "python"]), "utf-8")
    out = fs_tools.run(EDIT, path="one.ipynb", cell_index=1, new_source="y = 2")
    assert not out.startswith("Error"), out
    written = nbformat.read(workdir / "one.ipynb", as_version=4)
    assert written.metadata.language_info.name == "python"
    assert [c.source for c in written.cells] == ["x0 = 0", "y = 2"]

    (workdir / "mixed.ipynb").write_text(_v3(["python", "r", "python"]), "utf-8")
    before = (workdir / "mixed.ipynb").read_bytes()
    read = fs_tools.run("workspace_read_file", path="mixed.ipynb")
    assert "[nbformat 3 code cells in several languages (python: cells 0, 2; r: cell 1)" in read
    out = fs_tools.run(EDIT, path="mixed.ipynb", cell_index=1, new_source="y <- 2")
    assert out.startswith("Error: ") and "several languages (python: cells 0, 2; r: cell 1)" in out, out
    assert "no per-cell language" in out
    assert (workdir / "mixed.ipynb").read_bytes() == before


def test_a_colab_notebook_is_edited_and_made_valid_as_jupyter_saves_it(fs_tools, workdir):
    from ..notebooks.wild import colab

    (workdir / "colab.ipynb").write_text(colab(), "utf-8")
    before = json.loads(colab())
    out = fs_tools.run(EDIT, path="colab.ipynb", cell_id="sum000006", new_source="print(3)")
    assert out.startswith("Replaced cell 5 (code, id sum000006) in colab.ipynb: 1 line; outputs cleared")
    assert out.endswith(
        "; the file was also made valid as Jupyter does when it saves: nbformat 4.0 -> 4.5 (its cells have ids, "
        "which need 4.5); execution_count dropped from 2 markdown cells"
    )
    after = json.loads((workdir / "colab.ipynb").read_text("utf-8"))
    nbformat.validate(nbformat.from_dict(after))
    assert after["nbformat_minor"] == 5 and [c["id"] for c in after["cells"]] == [c["id"] for c in before["cells"]]
    for old, new in zip(before["cells"][:5], after["cells"][:5]):  # every field the schema allows is kept
        assert new == {k: v for k, v in old.items() if not (k == "execution_count" and old["cell_type"] == "markdown")}
    assert after["metadata"] == before["metadata"]
