"""workspace_grep on notebooks: cell sources, cell-relative locations, outputs only when asked,
the same output from ripgrep and the Python walk, and tree order across both kinds of file."""

from __future__ import annotations

import pytest
from nbformat import v4

from ws_jupyter import LocalFilesystem
from ws_jupyter.tools import grep as grep_mod
from ws_jupyter.tools.grep import confine as grep_confine

from ..helpers import write
from ..notebooks.samples import analysis_notebook, kitchen_sink
from ..notebooks.samples import write as nb_text

# ripgrep is used only where it can be confined to the workspace
RG = grep_mod.find_ripgrep() if grep_confine.mode() is not None else None
ENGINES = ["python", pytest.param("ripgrep", marks=pytest.mark.skipif(RG is None, reason="no ripgrep"))]


@pytest.fixture
def tree(workdir):
    write(workdir, "a.ipynb", nb_text(analysis_notebook()))
    write(workdir, "sub/k.ipynb", nb_text(kitchen_sink()))
    write(workdir, "b.py", "total = 1\ncount = 2\n")
    write(workdir, "sub/z.md", "count things\n")
    write(workdir, "broken.ipynb", '{"cells": [ "count me in the text"\n')
    write(workdir, ".hidden/h.ipynb", nb_text(analysis_notebook()))
    write(workdir, ".gitignore", "ignored/\n")
    write(workdir, "ignored/i.ipynb", nb_text(analysis_notebook()))
    return workdir


def run(workdir, engine, pattern, path=".", **kw):
    fs = LocalFilesystem(workdir)
    result = grep_mod.search(fs, pattern, path, engine=engine, **kw)
    summary, body = grep_mod.format_result(result, kw.get("context_lines", 0))
    return summary + ("\n---\n" + body if body else "")


@pytest.mark.parametrize("engine", ENGINES)
def test_cell_relative_locations_in_tree_order(tree, engine):
    assert run(tree, engine, "count") == (
        "5 matches across 4 files\n---\n"
        "sub/z.md:1:1: count things\n"
        "a.ipynb [cell 3]:2:1: count = 0\n"
        "a.ipynb [cell 3]:3:17: share = total / count\n"
        "b.py:2:1: count = 2\n"
        'broken.ipynb:1:14: {"cells": [ "count me in the text"'  # not a notebook: searched as text
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_context_stays_inside_the_cell(tree, engine):
    assert run(tree, engine, "share", context_lines=2) == (
        "1 match across 1 file\n---\n"
        "a.ipynb [cell 3]:1- total = df.population.sum()\n"
        "a.ipynb [cell 3]:2- count = 0\n"
        "a.ipynb [cell 3]:3:1: share = total / count"
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_sources_not_json_and_outputs_only_when_asked(tree, engine):
    # the JSON around the cells is not searched
    assert run(tree, engine, '"cell_type"|execution_count|image/png', "a.ipynb").startswith("0 matches")
    # a line with quotes matches as written, not as escaped in the JSON
    assert run(tree, engine, r'"escaped" \\\\ back', "sub").endswith(
        "sub/k.ipynb [cell 9]:1:23: x = 'naïve — “quotes” \"escaped\" \\\\ back'"
    )
    assert run(tree, engine, "Lagos").startswith("0 matches")  # only in an output
    assert run(tree, engine, "Lagos|hello", notebook_outputs=True) == (
        "4 matches across 2 files\n---\n"
        "sub/k.ipynb [cell 2]:1:8: print('hello')\n"
        "sub/k.ipynb [cell 2 output]:1:1: hello\n"
        "sub/k.ipynb [cell 5 output]:2:4: 0  Lagos      Nigeria    15388000\n"
        "a.ipynb [cell 1 output]:2:4: 0  Lagos      Nigeria    15388000"
    )
    # html and tracebacks' markup are not output text; the traceback lines are
    assert run(tree, engine, "<table", notebook_outputs=True).startswith("0 matches")
    assert "a.ipynb [cell 3 output]" in run(tree, engine, "most recent call", notebook_outputs=True)


@pytest.mark.parametrize("engine", ENGINES)
def test_hidden_ignored_globs_and_single_files(tree, engine):
    assert ".hidden/" not in run(tree, engine, "count") and "ignored/" not in run(tree, engine, "count")
    assert ".hidden/h.ipynb [cell 3]:2:1: count = 0" in run(tree, engine, "count", include_hidden=True)
    assert run(tree, engine, "count", "**/*.ipynb") == (
        "3 matches across 2 files\n---\n"
        "a.ipynb [cell 3]:2:1: count = 0\n"
        "a.ipynb [cell 3]:3:17: share = total / count\n"
        'broken.ipynb:1:14: {"cells": [ "count me in the text"'
    )
    assert run(tree, engine, "City", "a.ipynb") == "1 match across 1 file\n---\na.ipynb [cell 0]:1:3: # City sizes"


@pytest.mark.parametrize("engine", ENGINES)
def test_max_count_is_per_notebook_and_the_cap_holds(workdir, engine):
    cells = [v4.new_code_cell("\n".join(f"hit {i}-{j}" for j in range(30))) for i in range(50)]
    write(workdir, "many.ipynb", nb_text(v4.new_notebook(cells=cells)))
    write(workdir, "z.txt", "hit z\n")
    out = run(workdir, engine, "hit", max_count=3)
    assert out == (
        "4 matches across 2 files\n---\n"
        "many.ipynb [cell 0]:1:1: hit 0-0\nmany.ipynb [cell 0]:2:1: hit 0-1\nmany.ipynb [cell 0]:3:1: hit 0-2\n"
        "z.txt:1:1: hit z"
    )
    result = grep_mod.search(LocalFilesystem(workdir), "hit", engine=engine)
    assert result.match_count == grep_mod.MAX_MATCHES and result.truncated
    assert {f.path for f in result.files} == {f"many.ipynb [cell {i}]" for i in range(34)}


def test_the_tool_and_its_include_outputs_option(tree):
    from ws_jupyter import Workspace

    with Workspace(filesystem=LocalFilesystem(tree)) as ws:
        tool = {t.name: t for t in ws.tools()}["workspace_grep"]
        assert tool.run({"pattern": "Osaka", "path": "a.ipynb"}) == (
            "1 match across 1 file\n---\na.ipynb [cell 4]:1:23: The largest city is **Osaka**."
        )
        assert "[cell 1 output]" in tool.run({"pattern": "Osaka", "include_outputs": True})
        assert "include_outputs" in tool.input_schema["required"]


@pytest.mark.parametrize("engine", ENGINES)
def test_totals_files_only_and_offset_count_notebooks_as_files(tree, engine):
    fs = LocalFilesystem(tree)
    listed = grep_mod.search(fs, "count", engine=engine, files_only=True)
    summary, body = grep_mod.format_result(listed, 0)
    assert summary == "4 files with 5 matches"
    assert body == "sub/z.md: 1\na.ipynb: 2\nb.py: 1\nbroken.ipynb: 1"
    first = grep_mod.search(fs, "count", engine=engine, max_matches=2)
    summary, body = grep_mod.format_result(first, 0)
    assert summary == "5 matches across 4 files (showing matches 1-2; continue with offset=2)"
    assert body == "sub/z.md:1:1: count things\na.ipynb [cell 3]:2:1: count = 0"
    rest = grep_mod.search(fs, "count", engine=engine, offset=2)
    _, body = grep_mod.format_result(rest, 0)
    assert body.split("\n")[0] == "a.ipynb [cell 3]:3:17: share = total / count"


@pytest.mark.skipif(RG is None, reason="no ripgrep")
def test_notebooks_come_from_the_kept_tree_scan_and_follow_changes(tree, monkeypatch):
    # The ripgrep engine lists notebooks with its .gitignore check (tools/grep/rules_scan.py), whose
    # result is reused while no directory changed: a notebook added later must still be found.
    import os
    import time

    from ws_jupyter.tools.grep import rules_scan

    settled = max(os.stat(root).st_ctime for root, _, _ in os.walk(tree)) + 1.2
    while time.time() < settled:
        time.sleep(0.05)
    assert "a.ipynb [cell 3]:2:1: count = 0" in run(tree, "ripgrep", "count")
    assert os.path.realpath(tree) in rules_scan._scans
    write(tree, "sub/new.ipynb", nb_text(analysis_notebook()))
    out = run(tree, "ripgrep", "count")
    assert out.startswith("7 matches across 5 files") and "sub/new.ipynb [cell 3]:2:1: count = 0" in out
    assert ".hidden/" not in out and "ignored/" not in out
    # without the .gitignore rules no scan runs: ripgrep lists the notebooks, ignored ones included
    assert "ignored/i.ipynb [cell 3]:2:1: count = 0" in run(tree, "ripgrep", "count", respect_gitignore=False)
    # a scan of more entries than _MAX_ENTRIES serves its own search but is not kept
    monkeypatch.setattr(rules_scan, "_MAX_ENTRIES", 2)
    rules_scan._scans.pop(os.path.realpath(tree), None)
    settled = max(os.stat(root).st_ctime for root, _, _ in os.walk(tree)) + 1.2
    while time.time() < settled:
        time.sleep(0.05)
    assert run(tree, "ripgrep", "count").startswith("7 matches across 5 files")
    assert os.path.realpath(tree) not in rules_scan._scans
