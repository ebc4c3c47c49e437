"""Notebooks on the Jupyter side: %ws cat renders cells (checked in the HTML), %ws grep and
%ws search show cell locations with links that open JupyterLab at the cell, and the file browser
previews a notebook the same way, a search hit marking its cell."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ..notebooks.samples import analysis_notebook, kitchen_sink, versioned, write


def ws(shell: Any, line: str) -> Any:
    return shell.run_line_magic("ws", line)


def html_of(shell: Any, obj: Any) -> str:
    data, _ = shell.display_formatter.format(obj)
    return str(data.get("text/html", ""))


@pytest.fixture
def nb_ip(ws_ip: Any, ws_dir: Path) -> Any:
    (ws_dir / "analysis.ipynb").write_text(write(analysis_notebook()), "utf-8")
    (ws_dir / "kitchen.ipynb").write_text(write(kitchen_sink()), "utf-8")
    (ws_dir / "old.ipynb").write_text(versioned(4, ids=False), "utf-8")
    return ws_ip


def cells_in(html: str) -> list[str]:
    return re.findall(r'data-cell-index="(\d+)"', html)


def test_cat_renders_cells(nb_ip):
    view = ws(nb_ip, "cat analysis.ipynb")
    html = html_of(nb_ip, view)
    assert cells_in(html) == ["0", "1", "2", "3", "4"]
    assert "<h1>City sizes</h1>" in html and "<strong>Osaka</strong>" in html  # Markdown rendered
    # highlighted in JupyterLab's editor colours, defined once for the view (they follow the theme)
    assert '<span class="ws-hl-keyword" style="color: var(--ws-hl-keyword)">import</span>' in html
    assert html.count("--ws-hl-keyword: color-mix(") == 1
    assert "In [2]" in html and "0  Lagos      Nigeria" in html  # a result, compactly
    assert 'src="data:image/png;base64,' in html  # the plot, inline
    assert "<table border" not in html and "text/html 848 B" in html  # HTML outputs named, not embedded
    assert "ZeroDivisionError: division by zero" in html and "\x1b[" not in html
    assert re.search(r'href="[^"]*\banalysis.ipynb#cell-id=c3-d"', html)  # opens JupyterLab at the cell
    assert "5 cells · python · nbformat 4.5" in html
    text = repr(view)
    assert text.startswith("analysis.ipynb (5 cells, python, ") and "[3] code c3-d In[4]" in text


def test_cat_kitchen_sink_html_is_safe_and_complete(nb_ip):
    html = html_of(nb_ip, ws(nb_ip, "cat kitchen.ipynb"))
    assert cells_in(html) == [str(i) for i in range(10)]
    assert 'src="data:image/png;base64,' in html.split('data-cell-index="1"')[0]  # the attachment
    assert "raw text: {{ not rendered }}" in html
    assert "… (188 more lines)" in html and "step 100:" not in html
    assert "<svg" not in html and "image/svg+xml 41 B" in html
    assert "IntSlider(value=0)" in html
    assert "naïve — “quotes”" in html


def test_markdown_html_is_not_run(nb_ip, ws_dir):
    from nbformat import v4

    nb = v4.new_notebook(cells=[v4.new_markdown_cell("<script>alert(1)</script>\n\n[x](javascript:alert(1))")])
    (ws_dir / "evil.ipynb").write_text(write(nb), "utf-8")
    html = html_of(nb_ip, ws(nb_ip, "cat evil.ipynb"))
    assert "<script>" not in html and "&lt;script&gt;" in html and 'href="javascript:' not in html


def test_cat_cells_raw_and_old_formats(nb_ip):
    html = html_of(nb_ip, ws(nb_ip, "cat analysis.ipynb --cells 2:3"))
    assert cells_in(html) == ["2", "3"] and "cells 2-3 shown" in html and "cells 0-1 not shown" in html
    assert cells_in(html_of(nb_ip, ws(nb_ip, "cat analysis.ipynb --cells 4"))) == ["4"]
    raw = ws(nb_ip, "cat analysis.ipynb --raw")
    assert '"cell_type": "markdown",' in repr(raw) and type(raw).__name__ == "FileView"
    html = html_of(nb_ip, ws(nb_ip, "cat old.ipynb"))
    assert cells_in(html) == ["0", "1", "2"] and "#cell-id=" not in html and re.search(r'href="[^"]*\bold.ipynb"', html)
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="has 5 cells"):
        ws(nb_ip, "cat analysis.ipynb --cells 9:10")
    with pytest.raises(UsageError, match="--cells is for notebooks"):
        ws(nb_ip, "cat notes.txt --cells 1")


def test_grep_shows_cell_locations_and_links_to_the_cell(nb_ip):
    view = ws(nb_ip, "grep count analysis.ipynb")
    text = repr(view)
    assert text == (
        "2 matches across 1 file\n---\n"
        "analysis.ipynb [cell 3]:2:1: count = 0\n"
        "analysis.ipynb [cell 3]:3:17: share = total / count"
    )
    html = html_of(nb_ip, view)
    assert re.search(r'href="[^"]*\banalysis.ipynb#cell-id=c3-d"', html) and "analysis.ipynb [cell 3]" in html
    assert "<mark" in html
    assert "[cell 1 output]" in repr(ws(nb_ip, "grep Lagos --outputs"))
    assert repr(ws(nb_ip, "grep Lagos")).startswith("0 matches")


def test_search_shows_cell_locations_and_links(nb_ip):
    ws(nb_ip, "index analysis.ipynb")
    view = ws(nb_ip, "search largest city Osaka --mode bm25 -k 3")
    text = repr(view)
    assert "analysis.ipynb [cell 4]:1-1" in text
    html = html_of(nb_ip, view)
    assert re.search(r'href="[^"]*\banalysis.ipynb#cell-id=c4-e"', html) and "analysis.ipynb [cell 4]:1-1" in html


def test_file_browser_previews_a_notebook_and_search_hits_mark_the_cell(workspace, ws_dir):
    from ws_jupyter.jupyter.widgets import FileBrowser, SearchPanel

    (ws_dir / "analysis.ipynb").write_text(write(analysis_notebook()), "utf-8")
    browser = FileBrowser(workspace)
    try:
        browser.select("analysis.ipynb")
        assert cells_in(browser.preview.value) == ["0", "1", "2", "3", "4"]
        assert "<h1>City sizes</h1>" in browser.preview.value
        workspace.rebuild_search_index(["."])
        panel = SearchPanel(workspace, file_browser=browser)
        try:
            rows = panel.search("share total count", mode="bm25")
            assert rows[0]["location"] == "analysis.ipynb [cell 3]:3-3" and rows[0]["cell"] == 3
            panel.open_result(0)
            assert browser.selected == "analysis.ipynb" and browser.selected_cell == 3
            marked = re.search(r'data-cell-index="3"[^>]*style="border-left: 3px solid rgba\(255, 200, 0', browser.preview.value)
            assert marked, browser.preview.value[:400]
            assert "analysis.ipynb [cell 3]:3-3" in panel.results_box.children[0].description
        finally:
            panel.close()
    finally:
        browser.close()


def test_cat_notebook_code_copies_cleanly(nb_ip, ws_dir):
    """Copying a notebook cell's code from %ws cat gives the code itself: indentation kept, blank
    lines empty (no zero-width character that would make the pasted code a SyntaxError)."""
    import html as html_lib

    from nbformat import v4

    source = "def f(x):\n\n    if x:\n        return 1\n\n    return 2"
    (ws_dir / "blank.ipynb").write_text(write(v4.new_notebook(cells=[v4.new_code_cell(source)])), "utf-8")
    html = html_of(nb_ip, ws(nb_ip, "cat blank.ipynb"))
    assert not re.search("[\u200b-\u200d\u2060\ufeff]|&#8203;|&#x200b;|&ZeroWidthSpace;", html, re.I)
    code = re.findall(r"user-select: none[^>]*>\d+</td><td[^>]*>(.*?)</td></tr>", html)
    assert "\n".join(html_lib.unescape(re.sub(r"<[^>]+>", "", c)) for c in code) == source


def test_hit_links_name_the_cell(nb_ip):
    """Grep, search and the notebook view link a cell the same way: #cell-id= when the cell has an id."""
    from ws_jupyter.jupyter.views.common import cell_link

    link = cell_link("/w", "nb.ipynb", "[1]", "ab 12", line=3)
    assert re.search(r'href="[^"]*nb\.ipynb#cell-id=ab%2012"', link) and 'title="nb.ipynb:3"' in link
    plain = cell_link("/w", "nb.ipynb", "[1]", None)
    assert "#" not in re.search(r'href="([^"]*)"', plain).group(1)
    assert "<a " not in cell_link(None, "nb.ipynb", "[1]", "ab12")  # no host path: plain text
