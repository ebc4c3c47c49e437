"""Notebooks in the search index: cell by cell, outputs left out by default, cell locations in
results and tools, .ipynb_checkpoints never indexed, and incremental like any file."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbformat import v4

from ws_jupyter import LocalFilesystem, Workspace

from ..notebooks.samples import write

PHRASE = "reservoir levels dropped sharply during the August heatwave"


def study_notebook() -> nbformat.NotebookNode:
    """A notebook whose markdown cell 3 holds PHRASE, behind a long output and the HTML of an
    earlier search (which mentions other words of the query) — what raw-JSON indexing got wrong."""
    search_html = (
        "<div class='ws-search'><b>3 results</b> for <i>heatwave temperatures</i>: "
        "<a href='#'>notes.md:1-4</a> <mark>temperature</mark> anomaly of the <mark>heatwave</mark></div>"
    )
    cells = [
        v4.new_markdown_cell("# Water study\n\nDaily readings from the city sensors."),
        v4.new_code_cell("readings = load()\nreadings.describe()", execution_count=1, outputs=[
            v4.new_output("stream", name="stdout", text="".join(f"sensor {i:03d}: ok, calibrated\n" for i in range(300))),
        ]),
        v4.new_code_cell("%ws search heatwave temperatures", execution_count=2, outputs=[
            v4.new_output("display_data", data={"text/html": search_html,
                                                "text/plain": "3 results: temperature anomaly of the heatwave; zyzzyva"}),
        ]),
        v4.new_markdown_cell(f"## Findings\n{PHRASE}.\nSee the plot below."),
        v4.new_code_cell("plot(readings)\nsummary = readings.mean()", execution_count=3),
    ]
    nb = v4.new_notebook(cells=cells)
    for i, c in enumerate(nb.cells):
        c.id = f"study-{i}"
    return nb


@pytest.fixture
def tree(workdir: Path) -> Path:
    (workdir / "study.ipynb").write_text(write(study_notebook()), "utf-8")
    (workdir / "notes.md").write_text("# Notes\n\nTemperature anomaly notes.\n")
    return workdir


def make(root: Path, **kw):
    return Workspace(filesystem=LocalFilesystem(root), auto_index_paths=["."], **kw)


def test_cells_are_documents_with_cell_metadata(tree, hash_embedder):
    with make(tree, embedder=hash_embedder) as ws:
        engine = ws._engine()
        ids = sorted(i for i in engine.ids() if i.startswith("study.ipynb"))
        assert ids == [f"study.ipynb#cell-{i}" for i in range(5)]  # sources only
        hit = ws.search(PHRASE, mode="bm25", top_k=1)[0]
        assert hit.id == "study.ipynb#cell-3" and hit.source == "study.ipynb" and hit.cell == 3
        assert hit.metadata["cell_id"] == "study-3" and hit.metadata["cell_type"] == "markdown"
        assert hit.content == f"## Findings\n{PHRASE}.\nSee the plot below."
        assert hit.line_range == (2, 2) and hit.location == "study.ipynb [cell 3]:2-2"
        assert '"source"' not in hit.content and "cell_type" not in hit.content


@pytest.mark.slow
def test_a_markdown_only_phrase_is_found_by_every_mode_with_the_real_model(tree):
    with make(tree, embedder="default") as ws:
        for mode in ("bm25", "vector", "hybrid"):
            hits = ws.search(PHRASE, mode=mode, top_k=3)
            assert hits[0].location == "study.ipynb [cell 3]:2-2", (mode, [h.id for h in hits])


def test_outputs_are_not_indexed_by_default(tree, hash_embedder):
    with make(tree, embedder=hash_embedder) as ws:
        # words that only the outputs contain (the echoed search result, the stream)
        assert ws.search("zyzzyva", mode="bm25") == []
        assert ws.search("calibrated", mode="bm25") == []
        for hit in ws.search("heatwave temperature anomaly", mode="hybrid", top_k=10):
            assert hit.metadata.get("part", "source") == "source"
            assert "<mark>" not in hit.content and "ws-search" not in hit.content


def test_text_outputs_can_be_included_but_never_html(tree):
    with make(tree, index_notebook_outputs=True) as ws:
        hit = ws.search("zyzzyva", mode="bm25")[0]
        assert hit.id == "study.ipynb#cell-2-outputs" and hit.location == "study.ipynb [cell 2 output]:1-1"
        assert "<mark>" not in hit.content and hit.content.startswith("3 results: temperature anomaly")
        assert ws.search("calibrated", mode="bm25")[0].id.startswith("study.ipynb#cell-1-outputs")
    # switching the option back re-reads the notebook on the next pass: outputs leave the index
    with make(tree) as ws:
        assert ws.search("zyzzyva", mode="bm25") == []
        assert ws.search(PHRASE, mode="bm25")[0].id == "study.ipynb#cell-3"


def test_incremental_reindexing_of_notebooks(tree, hash_embedder):
    with make(tree, embedder=hash_embedder) as ws:
        ws.search("x", mode="vector")
        texts = hash_embedder.texts
        report = ws.rebuild_search_index()
        assert report.unchanged == 2 and report.indexed == [] and hash_embedder.texts == texts
        os.utime(tree / "study.ipynb", (2_000_000, 2_000_000))  # touched, same content
        report = ws.rebuild_search_index()
        assert report.touched == 1 and report.indexed == [] and hash_embedder.texts == texts
        # one cell edited: one document re-embedded, the others kept
        nb = nbformat.read(tree / "study.ipynb", as_version=4)
        nb.cells[4].source = "plot(readings)\nsummary = readings.median()"
        nbformat.write(nb, tree / "study.ipynb")
        report = ws.rebuild_search_index()
        assert report.indexed == ["study.ipynb"]
        ws.search("median", mode="vector")
        assert hash_embedder.texts == texts + 2  # the changed cell and the query
        assert ws.search("median", mode="bm25")[0].id == "study.ipynb#cell-4"


def test_checkpoints_are_never_indexed(tree):
    ck = tree / ".ipynb_checkpoints"
    ck.mkdir()
    (ck / "study-checkpoint.ipynb").write_text(write(study_notebook()), "utf-8")
    sub = tree / "sub" / ".ipynb_checkpoints"
    sub.mkdir(parents=True)
    (sub / "x-checkpoint.ipynb").write_text(write(study_notebook()), "utf-8")
    for paths in (["."], ["**/*.ipynb"], [".ipynb_checkpoints"], ["sub/.ipynb_checkpoints/x-checkpoint.ipynb"]):
        with Workspace(filesystem=LocalFilesystem(tree), auto_index_paths=paths) as ws:
            sources = set(ws._engine().sources())
            assert not any(".ipynb_checkpoints" in s for s in sources), (paths, sources)
            ws.rebuild_search_index(paths=paths)
            assert not any(".ipynb_checkpoints" in s for s in ws._engine().sources())


def test_a_broken_notebook_is_indexed_as_text(tree):
    (tree / "broken.ipynb").write_text('{"cells": [ "unfinished json about aquifers', "utf-8")
    with make(tree) as ws:
        hit = ws.search("aquifers", mode="bm25")[0]
        assert hit.id == "broken.ipynb" and hit.cell is None and hit.location == "broken.ipynb:1-1"


def test_search_tool_and_index_tool_show_cell_locations(tree):
    with make(tree) as ws:
        tools = {t.name: t for t in ws.tools()}
        out = tools["workspace_search"].run({"query": PHRASE, "mode": "bm25", "top_k": 1})
        assert out.startswith(f"study.ipynb [cell 3]:2-2\n1→## Findings\n2→{PHRASE}.\n")
        assert out.endswith("1 result (bm25 search)")
        # workspace_index with notebook JSON indexes cells too
        tools["workspace_index"].run({"path": "mem/extra.ipynb", "content": write(study_notebook())})
        ids = [h.id for h in ws.search(PHRASE, mode="bm25", top_k=5)]
        assert "mem/extra.ipynb#cell-3" in ids


def test_long_cells_are_chunked_within_the_cell(workdir):
    long_md = "\n".join(f"line {i} about topic{i}" for i in range(600))
    nb = v4.new_notebook(cells=[v4.new_markdown_cell("intro"), v4.new_markdown_cell(long_md)])
    (workdir / "long.ipynb").write_text(write(nb), "utf-8")
    with make(workdir) as ws:
        hit = ws.search("topic590", mode="bm25")[0]
        assert hit.id.startswith("long.ipynb#cell-1-chunk-") and hit.cell == 1
        assert hit.line_range == (591, 591) and hit.location == "long.ipynb [cell 1]:591-591"
