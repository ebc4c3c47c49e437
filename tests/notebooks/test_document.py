"""The notebook document: nbformat read/validate/write, stable ids, edits that leave every other
cell as it was, and clear errors for what is not a notebook."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest

from ws_jupyter import LocalFilesystem
from ws_jupyter.errors import CellNotFoundError, FilesystemError, FileTooLargeError, NotebookError, StaleFileError
from ws_jupyter.notebooks import Notebook, cell_source, is_notebook_path

from .samples import analysis_notebook, kitchen_sink, versioned, write

REPO_NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def all_samples() -> list[tuple[str, str]]:
    """(name, JSON text): the repo's notebooks, generated ones, and every nbformat 4.x version."""
    out = [(p.name, p.read_text("utf-8")) for p in REPO_NOTEBOOKS]
    out += [("analysis", write(analysis_notebook())), ("kitchen_sink", write(kitchen_sink()))]
    out += [(f"v4.{m}-noids", versioned(m, ids=False)) for m in range(6)]
    out.append(("v4.5-ids", versioned(5, ids=True)))
    return out


SAMPLES = all_samples()
IDS = [name for name, _ in SAMPLES]


def test_the_repo_notebooks_are_among_the_samples():
    assert len(REPO_NOTEBOOKS) >= 4
    assert {"quickstart.ipynb", "agent_prototyping.ipynb"} <= set(IDS)


@pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning")
@pytest.mark.parametrize(("name", "text"), SAMPLES, ids=IDS)
def test_read_matches_nbformat_and_writes_back_identical(name, text):
    nb = Notebook.parse(text, name)
    ref = nbformat.reads(text, as_version=4)
    assert nb.problem is None
    assert nb.cell_sources() == [c.source for c in ref.cells]
    assert [c.cell_type for c in nb.cells] == [c.cell_type for c in ref.cells]
    if nb.ids_filled:  # 4.5 without ids: filled in, deterministically
        assert name == "v4.5-noids"
        assert [c.id for c in nb.cells] == ["cell-0", "cell-1", "cell-2"]
        assert [c.id for c in Notebook.parse(text).cells] == ["cell-0", "cell-1", "cell-2"]
    else:
        # a notebook saved the way Jupyter saves it comes back byte for byte
        assert nb.dumps() == text


@pytest.mark.parametrize("minor", range(5))
def test_ids_are_absent_before_4_5_and_upgrade_the_notebook_when_present(minor):
    nb = Notebook.parse(versioned(minor, ids=False))
    assert not nb.has_cell_ids and all("id" not in c for c in nb.cells) and nb.problem is None
    assert nb.normalised == ()
    # ids under 4.0-4.4 (what Colab saves): upgraded to 4.5 as Jupyter does on save, ids kept
    colab = Notebook.parse(versioned(minor, ids=True))
    assert colab.problem is None and colab.has_cell_ids and colab.nbformat_version == "4.5"
    assert [c["id"] for c in colab.cells] == [f"v{minor}-{i}" for i in range(3)]
    assert colab.normalised == (f"nbformat 4.{minor} -> 4.5 (its cells have ids, which need 4.5)",)
    assert json.loads(colab.dumps())["nbformat_minor"] == 5


def _cells(nb: Notebook) -> list[dict[str, Any]]:
    return [json.loads(json.dumps(c)) for c in nb.cells]


EDITS = ["replace", "replace_type", "insert_first", "insert_after", "append", "delete_first", "delete_last"]


@pytest.mark.parametrize("edit", EDITS)
@pytest.mark.parametrize(("name", "text"), SAMPLES, ids=IDS)
def test_edits_validate_and_keep_every_other_cell(name, text, edit, tmp_path):
    fs = LocalFilesystem(tmp_path)
    (tmp_path / "nb.ipynb").write_text(text, "utf-8")
    nb = Notebook.load(fs, "nb.ipynb")
    before = _cells(nb)
    n = len(before)
    code = next((i for i, c in enumerate(before) if c["cell_type"] == "code"), 0)
    if edit == "replace":
        changed, kept = code, [i for i in range(n) if i != code]
        nb.replace_cell(code, 'print("new")\nx = 1')
    elif edit == "replace_type":
        changed, kept = code, [i for i in range(n) if i != code]
        nb.replace_cell(code, "# now *markdown*", "markdown")
    elif edit == "insert_first":
        nb.insert_cell(0, "first", "markdown")
        changed, kept = 0, list(range(n))
    elif edit == "insert_after":
        nb.insert_cell(1, "after = 0", "code")
        changed, kept = 1, list(range(n))
    elif edit == "append":
        nb.insert_cell(n, "raw end", "raw")
        changed, kept = n, list(range(n))
    elif edit == "delete_first":
        nb.delete_cell(0)
        changed, kept = None, list(range(1, n))
    else:
        nb.delete_cell(n - 1)
        changed, kept = None, list(range(n - 1))
    nb.save(fs)
    saved = (tmp_path / "nb.ipynb").read_text("utf-8")
    reread = nbformat.reads(saved, as_version=4)
    nbformat.validate(reread)  # raises if invalid
    after = [json.loads(json.dumps(c)) for c in reread.cells]
    others = [c for i, c in enumerate(after) if i != changed]
    # every other cell is byte-identical in source, metadata, outputs, attachments and id
    assert others == [before[i] for i in kept]
    if changed is None:
        return
    new = after[changed]
    if edit.startswith("replace"):
        old = before[code]
        assert new.get("id") == old.get("id") and new["metadata"] == old["metadata"]
        if new["cell_type"] == "code":
            assert new["outputs"] == [] and new["execution_count"] is None
        else:
            assert new["cell_type"] == "markdown" and "outputs" not in new
    else:
        if reread.nbformat_minor >= 5:
            assert new["id"] and new["id"] not in {c.get("id") for c in others}
        else:
            assert "id" not in new
        if new["cell_type"] == "code":
            assert new["outputs"] == [] and new["execution_count"] is None


def test_replace_keeps_attachments_between_text_cell_types():
    nb = Notebook.parse(write(kitchen_sink()))
    attachments = copy.deepcopy(nb.cells[0]["attachments"])
    nb.replace_cell(0, "now raw", "raw")
    assert nb.cells[0]["attachments"] == attachments and nb.cells[0].cell_type == "raw"
    nb.validate()


def test_lookup_by_id_and_index():
    nb = Notebook.parse(write(analysis_notebook()), "a.ipynb")
    assert nb.index_of("c3-d") == 3 and nb.locate(cell_id="c3-d") == 3 and nb.locate(cell_index=2) == 2
    assert nb.ref(3).label == "cell 3" and nb.ref(3).id == "c3-d"
    with pytest.raises(CellNotFoundError, match=r"No cell with id 'zz' in a.ipynb \(ids: c0-a, c1-b"):
        nb.index_of("zz")
    with pytest.raises(CellNotFoundError, match="No cell 9: a.ipynb has cells 0-4"):
        nb.locate(cell_index=9)
    with pytest.raises(CellNotFoundError, match="cell_id 'c3-d' is cell 3, not cell 1"):
        nb.locate("c3-d", 1)
    with pytest.raises(CellNotFoundError, match="No cell -1"):
        nb.locate(cell_index=-1)
    old = Notebook.parse(versioned(4, ids=False), "old.ipynb")
    with pytest.raises(CellNotFoundError, match="nbformat 4.4, whose cells have no ids; use cell_index"):
        old.index_of("cell-1")


def test_bad_edits_are_refused_and_change_nothing():
    nb = Notebook.parse(write(analysis_notebook()))
    before = _cells(nb)
    with pytest.raises(NotebookError, match="unknown cell type 'python'"):
        nb.insert_cell(0, "x", "python")
    with pytest.raises(NotebookError, match="unknown cell type"):
        nb.replace_cell(1, "x", "heading")
    with pytest.raises(CellNotFoundError):
        nb.insert_cell(99, "x", "code")
    with pytest.raises(CellNotFoundError):
        nb.delete_cell(5)
    with pytest.raises(NotebookError, match="must be a string"):
        nb.replace_cell(1, None)  # type: ignore[arg-type]
    assert _cells(nb) == before


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("print('hi')", "invalid JSON"),
        ("", "invalid JSON"),
        ("{}", "without an 'nbformat' field"),
        ("[1, 2]", "without an 'nbformat' field"),
        ('{"nbformat": 4}', "no 'cells' list"),
        ('{"nbformat": 99, "cells": []}', "unsupported notebook format 99"),
        ('{"nbformat": "4", "cells": []}', "unsupported notebook format"),
        ('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [1]}', "not a readable notebook"),
        ("[" * 100_000, "nested too deeply"),
    ],
)
def test_what_is_not_a_notebook_gets_a_clear_error(text, message):
    with pytest.raises(NotebookError, match=message) as info:
        Notebook.parse(text, "x.ipynb")
    assert info.value.code == "INVALID_NOTEBOOK" and info.value.path == "x.ipynb"


def test_not_utf8_is_a_notebook_error():
    with pytest.raises(NotebookError, match="not UTF-8"):
        Notebook.parse(b'{"nbformat": 4, "cells": ["\xff"]}')


def test_nbformat_3_is_read_as_4_with_stable_ids():
    v3 = nbformat.v3
    old = v3.new_notebook(worksheets=[v3.new_worksheet(cells=[v3.new_code_cell(input="print(1)"),
                                                                v3.new_text_cell("markdown", source="# hi")])])
    text = json.dumps(old)
    nb = Notebook.parse(text)
    assert nb.source_version == (3, 0) and nb.node.nbformat == 4 and nb.problem is None
    assert nb.cell_sources() == ["print(1)", "# hi"]
    assert [c.id for c in nb.cells] == [c.id for c in Notebook.parse(text).cells] == ["cell-0", "cell-1"]


def test_repeated_ids_are_made_unique_deterministically():
    data = json.loads(versioned(5, ids=True))
    data["cells"][1]["id"] = data["cells"][0]["id"]
    nb = Notebook.parse(json.dumps(data))
    assert nb.ids_filled and len({c.id for c in nb.cells}) == 3 and nb.cells[1].id == "cell-1"
    nb.validate()


def test_new_notebook_and_validation_before_writing(tmp_path):
    fs = LocalFilesystem(tmp_path)
    nb = Notebook.new([("markdown", "# T"), ("code", "1 + 1"), ("raw", "r")])
    text = nb.save(fs, "sub/new.ipynb")
    assert nbformat.reads(text, as_version=4).metadata.kernelspec.name == "python3"
    nb.cells[1]["execution_count"] = "five"  # something nbformat rejects
    with pytest.raises(NotebookError, match="not a valid notebook"):
        nb.save(fs, "sub/new.ipynb")
    assert (tmp_path / "sub/new.ipynb").read_text("utf-8") == text  # untouched


def test_save_refuses_a_file_changed_since_it_was_read(tmp_path):
    fs = LocalFilesystem(tmp_path)
    (tmp_path / "nb.ipynb").write_text(write(analysis_notebook()), "utf-8")
    nb = Notebook.load(fs, "nb.ipynb")
    nb.delete_cell(0)
    os.utime(tmp_path / "nb.ipynb", (1, 1))
    with pytest.raises(StaleFileError):
        nb.save(fs, expected_mtime=nb.stat.mtime)
    assert len(nbformat.read(tmp_path / "nb.ipynb", as_version=4).cells) == 5


def test_load_refuses_huge_and_special_files(tmp_path):
    fs = LocalFilesystem(tmp_path)
    with open(tmp_path / "big.ipynb", "wb") as f:
        f.truncate(1 << 30)  # sparse: 1 GiB of nothing
    with pytest.raises(FileTooLargeError, match="big.ipynb is 1,073,741,824 bytes"):
        Notebook.load(fs, "big.ipynb")  # refused before anything is read
    (tmp_path / "small.ipynb").write_text(write(analysis_notebook()), "utf-8")
    with pytest.raises(FileTooLargeError):
        Notebook.load(fs, "small.ipynb", max_bytes=4096)
    assert Notebook.load(fs, "small.ipynb").digest == hashlib.sha256((tmp_path / "small.ipynb").read_bytes()).hexdigest()
    os.mkfifo(tmp_path / "pipe.ipynb")
    with pytest.raises(FilesystemError, match="Not a regular file"):
        Notebook.load(fs, "pipe.ipynb")  # no hang waiting for a writer


def test_helpers():
    assert is_notebook_path("a/B.IPYNB") and not is_notebook_path("a.ipynb.txt")
    assert cell_source({"source": ["a\n", "b"]}) == "a\nb"
    assert cell_source({"source": 3}) == "" and cell_source("nonsense") == ""
    nb = Notebook.parse(write(analysis_notebook()), "a.ipynb")
    assert repr(nb) == "Notebook('a.ipynb', 5 cells, nbformat 4.5)" and nb.language == "python"
