"""Hostile notebooks: JSON nested deep enough to exhaust nbformat's recursion, small files of a
huge number of tiny outputs, and numbers JSON cannot hold.

Replayed in a child process (tests/security/conftest.py). Before the shape bounds of
``ws_jupyter.notebooks.document``, a 1 KB notebook of 500 nested arrays made ``workspace_read_file``,
``workspace_notebook_edit`` and a grep of the *whole workspace* answer ``Error: RecursionError``
(nbformat's ``from_dict`` recursed past the limit); a 2 MB notebook of 50,000 one-letter outputs
held a read for 10 s and an edit for 36 s of CPU (the limit on bytes did not bound nbformat's
per-output work); and an edit of a notebook holding ``1e400`` wrote ``Infinity``, which no JSON
reader — JupyterLab's included — accepts.
"""

from __future__ import annotations

import json

from ..helpers import write
from .conftest import replay


def _code_cell(cid: str, outputs: list | None = None) -> dict:
    return {
        "cell_type": "code", "id": cid, "source": "x = 1", "metadata": {},
        "outputs": outputs or [], "execution_count": None,
    }


def _notebook(cells: list, metadata: str = "{}") -> str:
    return '{"nbformat": 4, "nbformat_minor": 5, "metadata": ' + metadata + ', "cells": ' + json.dumps(cells) + "}"


def test_deeply_nested_notebook_gets_clean_answers_and_does_not_break_grep(workdir):
    deep = "[" * 500 + "]" * 500
    write(workdir, "deep.ipynb", _notebook([_code_cell("a")], '{"x": ' + deep + "}"))
    write(workdir, "notes.txt", "needle here\n")
    r = replay(
        f"""
        ws, t = tools_of({str(workdir)!r})
        emit(str(t["workspace_read_file"].run({{"path": "deep.ipynb"}})))
        emit(str(t["workspace_notebook_edit"].run({{"path": "deep.ipynb", "cell_index": 0, "new_source": "y"}})))
        emit(str(t["workspace_grep"].run({{"pattern": "needle"}})))
        emit(str(t["workspace_grep"].run({{"pattern": "nbformat", "path": "deep.ipynb"}})))
        """,
        timeout=120,
    )
    assert r.finished and r.returncode == 0, r.stderr
    read, edit, grep, grep_nb = r.results
    assert not any("RecursionError" in out for out in r.results), r.results
    assert "not handled as a notebook: JSON nested deeper than 100 levels" in read
    assert "showing the file as text" in read and '"nbformat": 4' in read
    assert edit.startswith("Error: ") and "The notebook was not changed." in edit
    assert grep.startswith("1 match across 1 file") and "notes.txt:1:1: needle here" in grep
    assert grep_nb.startswith("1 match across 1 file")  # searched as its text
    assert "[[[[" in (workdir / "deep.ipynb").read_text()  # untouched


def test_a_small_notebook_of_many_tiny_outputs_is_not_parsed_cell_by_cell(workdir):
    outputs = [{"output_type": "stream", "name": "stdout", "text": "a"}] * 12_000
    text = _notebook([_code_cell("a", outputs), _code_cell("b")])
    write(workdir, "flood.ipynb", text)
    assert len(text) < 1 << 20  # far under the 64 MiB limit on bytes
    r = replay(
        f"""
        ws, t = tools_of({str(workdir)!r})
        emit(str(t["workspace_read_file"].run({{"path": "flood.ipynb", "limit": 5}})))
        emit(str(t["workspace_notebook_edit"].run({{"path": "flood.ipynb", "cell_id": "b", "new_source": "y"}})))
        emit(str(t["workspace_grep"].run({{"pattern": "x = 1", "path": "flood.ipynb"}})))
        """,
        timeout=240,
    )
    assert r.finished and r.returncode == 0, r.stderr
    read, edit, grep = r.results
    assert "not handled as a notebook: more than 10,000 cells and outputs" in read, read[:300]
    assert "showing the file as text" in read
    assert edit.startswith("Error: ") and "more than 10,000 cells and outputs" in edit
    assert "The notebook was not changed." in edit
    assert grep.startswith("1 match across 1 file")  # as text: one JSON line holds both cells
    assert (workdir / "flood.ipynb").read_text() == text


def test_numbers_json_cannot_hold_are_never_written(workdir):
    """A number no JSON reader can hold (1e400 is Infinity as a double) is never written as one:
    an edit that leaves it untouched keeps its bytes as they were; an edit that would have to write
    it out again is refused and changes nothing."""
    text = _notebook([_code_cell("a")], '{"scale": 1e400, "ok": 1.5}')
    write(workdir, "inf.ipynb", text)
    inside = '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code", "id": "b", '
    inside += '"metadata": {"v": 1e400}, "source": ["x = 1"], "outputs": [], "execution_count": null}]}'
    write(workdir, "cell.ipynb", inside)
    r = replay(
        f"""
        ws, t = tools_of({str(workdir)!r})
        emit(str(t["workspace_read_file"].run({{"path": "inf.ipynb"}})))
        emit(str(t["workspace_notebook_edit"].run({{"path": "inf.ipynb", "cell_id": "a", "new_source": "y"}})))
        emit(str(t["workspace_edit_file"].run({{"path": "inf.ipynb", "old_string": "y", "new_string": "z"}})))
        emit(str(t["workspace_read_file"].run({{"path": "cell.ipynb"}})))
        emit(str(t["workspace_notebook_edit"].run({{"path": "cell.ipynb", "cell_id": "b", "new_source": "y"}})))
        """,
        timeout=120,
    )
    assert r.finished and r.returncode == 0, r.stderr
    read, edit, text_edit, _read_cell, cell_edit = r.results
    assert "[0] code a" in read
    assert not edit.startswith("Error") and not text_edit.startswith("Error"), (edit, text_edit)
    after = (workdir / "inf.ipynb").read_text()
    assert '"scale": 1e400' in after and "Infinity" not in after and "NaN" not in after
    assert json.loads(after)["cells"][0]["source"] in (["z"], "z")
    assert cell_edit.startswith("Error: ") and "NaN or Infinity" in cell_edit, cell_edit
    assert "The notebook was not changed." in cell_edit
    assert (workdir / "cell.ipynb").read_text() == inside


def test_a_notebook_view_of_megabyte_cells_is_bounded(workdir):
    # %ws cat and the file browser preview draw a notebook in the kernel: Markdown through
    # markdown-it and code through Pygments cost ~0.1 ms a character on text like this, so before
    # the per-cell and per-view budgets these cells held the kernel for minutes.
    attachment = {"a": {"image/png": "iVBORw0KGgo" + "A" * 2001}}  # PNG's magic bytes, then zeros
    cells = [
        {"cell_type": "markdown", "id": "m", "source": "[" * 1_500_000, "metadata": {}},
        {**_code_cell("c"), "source": "+-" * 750_000},
        {"cell_type": "markdown", "id": "att", "source": "![x](attachment:a) " * 900, "metadata": {},
         "attachments": attachment},
    ] + [{"cell_type": "markdown", "id": f"s{i}", "source": "[" * 19_000, "metadata": {}} for i in range(40)]
    write(workdir, "big.ipynb", _notebook(cells))
    r = replay(
        f"""
        from ws_jupyter import LocalFilesystem
        from ws_jupyter.jupyter.files import load_file_view
        view = load_file_view(LocalFilesystem({str(workdir)!r}), "big.ipynb")
        bundle = view._repr_mimebundle_()
        html = bundle["text/html"]
        emit([len(html), html.count('src="data:image'), html.count("more characters"), html.count("goes on past"),
              html.count('class="ws-nb-markdown"')])
        """,
        timeout=150,
    )
    assert r.finished, "drawing the notebook held the kernel past the timeout"
    assert r.returncode == 0, r.stderr
    size, images, more, cut_lines, rendered = r.results[0]
    assert size < 3_000_000
    assert images == 1  # the attachment once, however often the cell refers to it
    assert more == 1 and cut_lines == 1
    assert rendered < 8  # the 100,000-character budget: the rest are drawn as plain text


def test_a_notebook_run_keeps_the_notebook_readable_as_cells(workdir):
    # workspace_run_notebook kept every output up to 4 MB a cell: a display loop saved one output
    # per call, so a run could write a notebook past the 10,000 cells and outputs it is read as.
    r = replay(
        f"""
        import json
        from ws_jupyter import LocalSandbox
        from ws_jupyter.notebooks import Notebook
        ws, t = tools_of({str(workdir)!r}, sandbox=LocalSandbox(working_directory={str(workdir)!r}))
        code = "from IPython.display import display\\nfor i in range(1200): display({{'text/plain': 'z'}}, raw=True)"
        Notebook.new([("code", code), ("code", "print('second')")]).save(ws.filesystem, "run.ipynb")
        try:
            emit(str(t["workspace_run_notebook"].run({{"path": "run.ipynb", "timeout": 120}}, approved=True)))
        finally:
            ws.destroy()
        """,
        timeout=240,
    )
    assert r.finished and r.returncode == 0, r.stderr
    assert r.results[0].startswith("Ran run.ipynb"), r.results[0]
    cells = json.loads((workdir / "run.ipynb").read_text())["cells"]
    assert len(cells[0]["outputs"]) <= 501
    assert "500 outputs for this cell" in "".join(cells[0]["outputs"][-1]["text"])
    assert cells[1]["outputs"][0]["text"] == ["second\n"]
