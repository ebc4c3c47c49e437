"""Notebooks shaped like shared ones (``wild.py``): what a read shows of them, what grep and
search get as their text, and how little of the file a one-cell edit changes."""

from __future__ import annotations

import base64
import difflib
import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.notebooks.document import Notebook, cell_source
from ws_jupyter.notebooks.layout import scan
from ws_jupyter.notebooks.outputs import outputs_text
from ws_jupyter.notebooks.render import render_notebook
from ws_jupyter.notebooks.text import cell_texts

from .wild import colab, data_uri, displays, executed_error, fixtures, heavy, long_cell, numeric

ATTACH = ("image/png", "image/jpeg")


def rendered(text: str, name: str = "nb.ipynb") -> Any:
    return render_notebook(Notebook.parse(text, name), label=name, attach=ATTACH)


def test_the_fixtures_have_the_shapes_they_claim():
    c = colab()
    assert c.startswith('{\n  "nbformat": 4,\n  "nbformat_minor": 0,')  # Colab: 2 spaces, its key order
    raw = json.loads(c)
    assert all("id" in cell for cell in raw["cells"])
    assert any(cell["cell_type"] == "markdown" and "execution_count" in cell for cell in raw["cells"])
    assert len(raw["cells"][3]["outputs"]) >= 300
    h = heavy()
    images = sum(len(o["data"]["image/png"]) for cell in json.loads(h)["cells"] for o in cell.get("outputs", []))
    assert len(h) >= 5 << 20 and images >= 4.9 * (1 << 20)
    for text in fixtures().values():
        assert Notebook.parse(text).problem is None


# --- Markdown and HTML outputs ------------------------------------------------------------------


def test_markdown_and_html_displays_read_as_their_text():
    text = rendered(displays()).text
    assert "» display:\n## Answer\n\nThe **first principal component** explains 72% of the variance." in text
    assert "» Out[2]:\nSummary\nRevenue grew 12% in Q3.\n- north: 4\n- south: 7" in text
    assert "» display:\nalpha | 1\nbeta | 2" in text
    assert "IPython.core.display" not in text and "<" not in text.split("\n", 1)[1]
    assert "alert" not in text and "color: red" not in text  # script and style are not text
    c = rendered(colab()).text
    assert "**Step 8.** The model explains part 8" in c and "Markdown object" not in c


def test_grep_and_search_get_the_text_of_markdown_and_html_outputs():
    nb = Notebook.parse(displays())
    found = {t.index: t.text for t in cell_texts(nb, outputs=True) if t.part == "outputs"}
    assert "first principal component" in found[0]
    assert "Revenue grew 12% in Q3." in found[1] and "alert" not in found[1]
    assert "beta | 2" in found[2]


# --- streams ------------------------------------------------------------------------------------


def test_consecutive_chunks_of_a_stream_read_as_one_output():
    nb = Notebook.parse(colab())
    r = render_notebook(nb).text
    block = r.split("[3] code curl00004 In[3]\n", 1)[1].split("\n[4]", 1)[0]
    assert block.count("» stdout") == 1
    lines = [ln for ln in block.split("\n")[2:] if not ln.startswith("…")]
    assert lines and all(re.fullmatch(r'\{"token": "tok\d{3}", "t": \d+\.\d\d\}', ln) for ln in lines)
    text = outputs_text(nb.cells[3]["outputs"])
    assert text.count("\n") == 300 and all(re.fullmatch(r'\{"token": "tok\d{3}".*\}', ln) for ln in text.split("\n")[:-1])


# --- numbering ----------------------------------------------------------------------------------


def _sources_from(text: str) -> dict[int, str]:
    """The cell sources an agent recovers from a rendering: a source line that starts with a
    number is ``n text`` (the number stripped), else it is the one line of the cell."""
    out: dict[int, list[str]] = {}
    current = None
    for line in text.split("\n")[1:]:
        m = re.match(r"^\[(\d+)\] ", line)
        if m:
            current = int(m.group(1))
            out[current] = []
            continue
        if current is None or line.startswith(("»", "[")):
            current = None if line.startswith("»") else current
            continue
        n = re.match(r"^(\d+)(?: (.*))?$", line)
        out[current].append(n.group(2) or "" if n else line)
    return {i: "\n".join(lines) for i, lines in out.items()}


@pytest.mark.parametrize("name", ["numeric.ipynb", "colab.ipynb", "displays.ipynb", "executed_error.ipynb"])
def test_numbering_is_unambiguous(name):
    text = fixtures()[name]
    nb = Notebook.parse(text)
    recovered = _sources_from(render_notebook(nb).text)
    assert recovered == {i: cell_source(c) for i, c in enumerate(nb.cells)}


def test_one_line_cells_starting_with_a_number_are_numbered():
    text = rendered(numeric()).text
    assert "[0] code n0\n1 1 - pca.explained_variance_ratio_.sum()\n" in text
    assert "[2] code n2\n1 3\n" in text and "[3] code n3\n1  4 + 4\n" in text
    assert "[5] code n5\n1 42" in text


# --- data-URI images ----------------------------------------------------------------------------


def test_a_data_uri_image_in_markdown_is_a_label_and_an_attached_image():
    text = data_uri()
    r = rendered(text)
    assert "3 ![diagram]([image 1: png 7." in r.text and "KB])\n\n5 The encoder feeds the decoder." in r.text
    assert "base64" not in r.text and "iVBOR" not in r.text
    payload = re.search(r"base64,([A-Za-z0-9+/=]+)", text).group(1)
    assert len(r.images) == 1 and r.images[0].data == base64.b64decode(payload)
    unattached = render_notebook(Notebook.parse(text)).text  # no image types asked for: named only
    assert re.search(r"!\[diagram\]\(\[image png 7\.\d KB\]\)", unattached)
    (md,) = [t for t in cell_texts(Notebook.parse(text)) if t.cell_type == "markdown"]
    assert "iVBOR" not in md.text and "[image png" in md.text and md.text.count("\n") == 4


# --- normalisation ------------------------------------------------------------------------------


def test_colab_notebook_reads_valid_and_says_what_is_true():
    nb = Notebook.parse(colab(), "colab.ipynb")
    assert nb.problem is None and nb.has_cell_ids and nb.source_version == (4, 0)
    assert nb.normalised == (
        "nbformat 4.0 -> 4.5 (its cells have ids, which need 4.5)",
        "execution_count dropped from 2 markdown cells",
    )
    head = render_notebook(nb, label="colab.ipynb").text.split("\n[0]", 1)[0]
    assert "no cell ids" not in head
    assert "nbformat 4.0 with cell ids, written as 4.5 at the next edit" in head
    assert "an edit makes it valid as Jupyter does when it saves" in head


# --- one-cell edits: the bytes of everything else -------------------------------------------------

SHAPES = sorted(fixtures())


def _edit_target(text: str) -> int:
    """The cell to edit: a small code cell without outputs when there is one, else cell 1."""
    cells = json.loads(text)["cells"]
    for i, c in enumerate(cells):
        if c["cell_type"] == "code" and not c.get("outputs") and len(cell_source(c)) < 200:
            return i
    return 1


@pytest.mark.parametrize("name", SHAPES)
def test_a_one_cell_edit_changes_only_that_cell(name, tmp_path):
    text = fixtures()[name]
    (tmp_path / name).write_text(text, "utf-8")
    index = _edit_target(text)
    ws = Workspace(filesystem=LocalFilesystem(tmp_path))
    try:
        tools = {t.name: t for t in ws.tools()}
        tools[T.FILESYSTEM.READ_FILE].run({"path": name, "limit": 1, "offset": index})
        out = str(tools[T.FILESYSTEM.NOTEBOOK_EDIT].run({"path": name, "cell_index": index, "new_source": "edited = 1"}))
    finally:
        ws.destroy()
    assert out.startswith(f"Replaced cell {index}"), out
    after = (tmp_path / name).read_text("utf-8")
    nbformat.validate(nbformat.reads(after, as_version=4))
    old, new = scan(text), scan(after)
    assert old is not None and new is not None and len(old.cells) == len(new.cells)
    normalised = Notebook.parse(text).normalised
    for k, ((a, b), (c, d)) in enumerate(zip(old.cells, new.cells)):
        if k == index:
            assert json.loads(after[c:d])["source"] == ["edited = 1"]
        elif normalised and old.raw_cells[k]["cell_type"] == "markdown":
            # only the key the schema forbids is gone
            assert {**json.loads(text[a:b]), "execution_count": None} == {**json.loads(after[c:d]), "execution_count": None}
        else:
            assert after[c:d] == text[a:b], f"cell {k} changed"
    # around the cells: the file's bytes (its indent and key order), the version only when it must
    outside_old = text[: old.cells[0][0]].replace('"nbformat_minor": 0', '"nbformat_minor": 5')
    assert after[: new.cells[0][0]] == outside_old
    assert after[new.cells[-1][1] :] == text[old.cells[-1][1] :]
    changed = [ln for ln in difflib.unified_diff(text.splitlines(), after.splitlines(), lineterm="", n=0)
               if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    cell_lines = text[old.cells[index][0] : old.cells[index][1]].count("\n") + 1
    extra = 1 + 2 * sum(1 for c in old.raw_cells if c["cell_type"] == "markdown") if normalised else 0
    assert len(changed) <= cell_lines + 3 + extra


def test_executed_and_long_fixtures_are_readable():
    assert "[5] code e-after5 In[15]" in rendered(executed_error()).text
    assert "[1] code long" in rendered(long_cell(50)).text


def test_heavy_fixture_file(tmp_path: Path):
    (tmp_path / "heavy.ipynb").write_text(heavy(), "utf-8")
    nb = Notebook.load(LocalFilesystem(tmp_path), "heavy.ipynb")
    assert any("zebra" in t.text for t in cell_texts(nb))
