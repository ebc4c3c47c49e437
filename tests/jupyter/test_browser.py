"""JupyterLab in a real (headless) Chromium: the quickstart notebook runs and its widgets respond.

Marked ``browser`` (still part of the test command). One JupyterLab and one browser serve the
module; the quickstart runs once ("Run All Cells", like a user), then each test interacts with what
it rendered: the file tree expands on a click and previews a file, a background process's output
grows live and Kill stops it, a search shows results, Approve lets a waiting tool call run.
A second notebook (``ux.ipynb``) holds what a new user trips over: code views (alignment, clean
copies, in the light and dark themes), a 2-million-line command, widgets at a 900 px wide
notebook, a workspace error, and the notebook reopened without its kernel.
Screenshots go to test-artifacts/browser/.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .lab import CELL_IN_VIEW, JupyterLab, LabPage, browser_unavailable, launch_chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "browser"

_why_not = browser_unavailable()
if _why_not:
    pytestmark.append(pytest.mark.skip(reason=_why_not))


@pytest.fixture(scope="module")
def lab(kernel_prefix: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    root = tmp_path_factory.mktemp("lab-root")
    shutil.copy(REPO / "notebooks" / "quickstart.ipynb", root / "quickstart.ipynb")
    shutil.copy(REPO / "notebooks" / "code_interpreter.ipynb", root / "code_interpreter.ipynb")
    (root / "hello.ipynb").write_text(
        '{"cells": [{"cell_type": "code", "execution_count": null, "id": "c1", "metadata": {}, "outputs": [],'
        ' "source": ["print(6 * 7)"]}], "metadata": {"kernelspec": {"name": "ws-jupyter", "display_name":'
        ' "Python 3 (ws-jupyter)", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}'
    )
    _write_ux_notebook(root / "ux.ipynb")
    server = JupyterLab(
        root, tmp_path_factory.mktemp("lab-state"), jupyter_path=str(kernel_prefix / "share" / "jupyter")
    )
    with server:
        yield server
    shutil.copy(server.log_path, ARTIFACTS / "jupyterlab.log") if ARTIFACTS.exists() else None


@pytest.fixture(scope="module")
def browser(lab: JupyterLab) -> Iterator[Any]:
    with launch_chromium() as chromium:
        yield chromium


def new_page(browser: Any, lab: JupyterLab) -> LabPage:
    context = browser.new_context(viewport={"width": 1360, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    return LabPage(page, lab, ARTIFACTS)


def test_harness_runs_a_trivial_notebook(browser: Any, lab: JupyterLab) -> None:
    lp = new_page(browser, lab)
    lp.open_notebook("hello.ipynb")
    # the status bar names our kernel and reaches Idle (it may flicker to Busy right after start-up)
    lp.page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.jp-StatusBar-TextItem'))"
        ".some(e => e.textContent.trim() === 'Python 3 (ws-jupyter) | Idle')",
        timeout=60_000,
    )
    lp.run_all()
    output = lp.page.locator(".jp-OutputArea-output").first
    assert output.inner_text().strip() == "42"
    lp.screenshot("hello")
    lp.page.context.close()


@pytest.fixture(scope="module")
def quickstart(browser: Any, lab: JupyterLab) -> Iterator[LabPage]:
    """The quickstart, opened and run top to bottom the way a user does (Run All Cells)."""
    lp = new_page(browser, lab)
    lp.open_notebook("quickstart.ipynb")
    try:
        lp.run_all()
        lp.page.wait_for_selector(".ws-dashboard")
    except Exception:
        lp.screenshot("quickstart-failed")
        raise
    yield lp
    lp.page.context.close()


def _ticks(text: str) -> int:
    found = re.findall(r"tick (\d+)", text)
    return int(found[-1]) if found else 0


def test_quickstart_outputs_render(quickstart: LabPage) -> None:
    page = quickstart.page
    assert (
        page.locator(
            ".jp-OutputArea-output .ws-error, .jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr'] :text('Traceback')"
        ).count()
        == 0
    )
    tree = quickstart.cell("%ws ls").locator(".ws-tree")
    assert "summary.py" in tree.inner_text() and tree.locator("details").count() >= 2
    search = quickstart.cell("%ws search which city").locator(".ws-search")
    assert "README.md" in search.inner_text() and search.locator("mark").count() >= 1
    for selector in (".ws-process-output", ".ws-tool-call", ".ws-dashboard"):
        assert page.locator(selector).count() >= 1, selector
    quickstart.screenshot("quickstart-search", search)
    # the whole window, a few cells in, the file panel closed: the picture of ws-jupyter at work
    # on the README
    toggle = "() => window.jupyterapp.commands.execute('application:toggle-left-area')"
    quickstart.page.evaluate(toggle)
    quickstart.cell("%ws grep TODO").evaluate("(cell) => cell.scrollIntoView({block: 'start'})")
    quickstart.screenshot("jupyter-quickstart")
    quickstart.page.evaluate(toggle)


def test_background_output_grows_live_and_kill_stops_it(quickstart: LabPage) -> None:
    widget = quickstart.cell("ticker = %ws bg").locator(".ws-process-output").first
    output = widget.locator("pre")
    first = _ticks(output.inner_text())
    deadline = time.monotonic() + 15
    while _ticks(output.inner_text()) < first + 3:  # a tick every 0.5 s, drawn as it comes
        assert time.monotonic() < deadline, "the output did not grow"
        time.sleep(0.2)
    assert "running" in widget.inner_text()
    quickstart.screenshot("jupyter-background-process", widget)
    widget.locator("button", has_text="Kill").click()
    quickstart.page.wait_for_function(
        "(el) => /killed/.test(el.innerText)", arg=widget.element_handle(), timeout=15_000
    )
    stopped = _ticks(output.inner_text())
    time.sleep(1.5)
    assert _ticks(output.inner_text()) == stopped  # nothing more after the kill
    assert widget.locator("button", has_text="Kill").is_disabled()


def test_tree_expands_on_click_and_shows_a_preview(quickstart: LabPage) -> None:
    dashboard = quickstart.page.locator(".ws-dashboard")
    dashboard.locator(".lm-TabBar-tab", has_text="Files").click()
    select = dashboard.locator(".ws-file-tree select")
    labels = select.evaluate("s => Array.from(s.options).map(o => o.textContent)")
    assert not any("summary.py" in label for label in labels)
    folder = next(i for i, label in enumerate(labels) if "analysis/" in label)
    select.select_option(index=folder)  # a click on the folder
    quickstart.page.wait_for_function(
        "(s) => Array.from(s.options).some(o => o.textContent.includes('summary.py'))",
        arg=select.element_handle(),
    )
    labels = select.evaluate("s => Array.from(s.options).map(o => o.textContent)")
    select.select_option(index=next(i for i, label in enumerate(labels) if "summary.py" in label))
    preview = dashboard.locator(".ws-file-preview")
    preview.locator(":text('TODO: handle missing populations')").wait_for()
    assert "analysis/summary.py" in preview.inner_text()
    quickstart.screenshot("jupyter-file-browser", dashboard)


def test_search_panel_shows_results(quickstart: LabPage) -> None:
    dashboard = quickstart.page.locator(".ws-dashboard")
    dashboard.locator(".lm-TabBar-tab", has_text="Search").click()
    box = dashboard.locator(".ws-search-panel input[type='text']").first
    box.fill("largest city population")
    box.press("Enter")
    hits = dashboard.locator(".ws-search-hit")
    hits.first.wait_for()
    assert hits.count() >= 1
    assert dashboard.locator(".ws-search-panel mark").count() >= 1
    quickstart.screenshot("search-panel", dashboard)
    hits.first.click()  # opens the hit in the Files tab
    dashboard.locator(".ws-file-preview mark, .ws-file-preview").first.wait_for()
    assert dashboard.locator(".lm-TabBar-tab.lm-mod-current", has_text="Files").count() == 1


def test_approve_lets_the_pending_tool_call_run(quickstart: LabPage) -> None:
    panel = quickstart.cell("%ws call workspace_execute_command").locator(".ws-tool-call")
    assert "waiting for approval" in panel.inner_text()
    quickstart.screenshot("tool-call-waiting", panel)
    panel.locator(".ws-approve").click()
    panel.locator(":text('done')").wait_for(timeout=30_000)
    assert "5 cities; the largest is Osaka" in panel.inner_text()
    quickstart.screenshot("tool-call-approved", panel)


def test_skill_renders_from_its_markdown(quickstart: LabPage) -> None:
    output = quickstart.cell("%ws skill csv-summary").locator(".jp-OutputArea")
    markdown = output.locator(".jp-OutputArea-output .ws-skill")  # rendered inert, as HTML
    assert markdown.count() == 1 and output.locator("pre").count() == 0  # not raw Markdown in a <pre>
    assert markdown.locator("h3").inner_text().strip() == "csv-summary"  # the title once
    assert (
        markdown.locator("ol li").count() == 3
        and "Read the file with csv.DictReader." in markdown.inner_text()
    )
    quickstart.screenshot("skill-markdown", output)


def test_dashboard_process_and_agent_tabs_render(quickstart: LabPage) -> None:
    dashboard = quickstart.page.locator(".ws-dashboard")
    dashboard.locator(".lm-TabBar-tab", has_text="Processes").click()
    monitor = dashboard.locator(".ws-process-monitor")
    monitor.locator(":text('python3 -u ticker.py')").first.wait_for()
    assert "killed" in monitor.inner_text()  # killed by the earlier test, seen by the live table
    quickstart.screenshot("dashboard-processes", dashboard)
    dashboard.locator(".lm-TabBar-tab", has_text="Agent tools").click()
    activity = dashboard.locator(".ws-tool-activity")
    activity.locator(":text('workspace_read_file')").first.wait_for()
    assert "workspace_execute_command" in activity.inner_text()  # the call approved earlier
    quickstart.screenshot("dashboard-agent-tools", dashboard)


# --- ux.ipynb: what a new user trips over ------------------------------------------------------

CODE = "def f(x):\n\n    if x:\n        return 1\n\n    return 2\n"

UX_CELLS = [
    "%ws init ux --name ux --isolation none",
    "%%ws write code.py\n" + CODE,
    "%ws cat code.py",
    "%ws grep return -C 1",
    # a notebook holding the same code, shown by %ws cat as cells
    "import nbformat\nnbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("
    + repr(CODE.rstrip("\n"))
    + ")]), 'ux/nb.ipynb')",
    "%ws cat nb.ipynb",
    "%ws checkpoint base",
    "%%ws write code.py\n# changed: <b>not bold</b>\n" + CODE,
    "%ws changes --diff",
    "%ws ui",
    "%ws run seq 1 2000000",
    "p = %ws bg sh -c 'echo started; sleep 1; echo finished'",
    '%ws call workspace_execute_command {"command": "echo approved"}',
    "%ws cat nope.csv",  # the error stops Run All: last
]

INVISIBLE = "[\\u200b-\\u200d\\u2060\\ufeff]"


def _write_ux_notebook(path: Path) -> None:
    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": f"u{i}",
            "metadata": {},
            "outputs": [],
            "source": src,
        }
        for i, src in enumerate(UX_CELLS)
    ]
    kernelspec = {"name": "ws-jupyter", "display_name": "Python 3 (ws-jupyter)", "language": "python"}
    path.write_text(
        json.dumps(
            {"cells": cells, "metadata": {"kernelspec": kernelspec}, "nbformat": 4, "nbformat_minor": 5}
        )
    )


@pytest.fixture(scope="module")
def ux(browser: Any, lab: JupyterLab) -> Iterator[LabPage]:
    lp = new_page(browser, lab)
    lp.open_notebook("ux.ipynb")
    try:
        lp.run_all()
        lp.page.wait_for_function(
            "() => /finished/.test(document.querySelector('.ws-process-output').innerText)"
        )
    except Exception:
        lp.screenshot("ux-failed")
        raise
    yield lp
    lp.page.context.close()


def _fits(page: Any, root: str) -> list[str]:
    """Visible buttons whose label does not fit, and lists sticking out of their box (1 px: rounding)."""
    return list(
        page.evaluate(
            """(root) => {
              const bad = [];
              for (const b of document.querySelectorAll(root + ' button')) {
                if (b.offsetParent === null) continue;
                if (b.scrollWidth > b.clientWidth + 1) bad.push('button ' + (b.textContent.trim() || b.title) + ' ' + b.scrollWidth + '>' + b.clientWidth);
              }
              for (const s of document.querySelectorAll(root + ' select')) {
                if (s.offsetParent === null) continue;
                const box = s.closest('.widget-box').getBoundingClientRect();
                if (s.getBoundingClientRect().right > box.right + 1) bad.push('list past its box');
              }
              for (const t of document.querySelectorAll(root + ' .lm-TabBar-tab')) {
                if (t.scrollWidth > t.clientWidth + 1) bad.push('tab ' + t.textContent);
              }
              return bad;
            }""",
            root,
        )
    )


def test_code_views_align_and_copy_cleanly_in_both_themes(ux: LabPage) -> None:
    page = ux.page
    try:
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            ux.set_theme(theme)
            cells = page.evaluate(
                """() => Array.from(document.querySelectorAll('.ws-jupyter td, .ws-snapshot td')).map(td => ({
                    inline: td.style.textAlign, computed: getComputedStyle(td).textAlign,
                    code: td.cellIndex === 1 && !!td.closest('.ws-file, .ws-grep, .ws-notebook')}))"""
            )
            assert len(cells) > 20
            # every cell says its alignment (JupyterLab's CSS right-aligns td), and code is left-aligned
            assert all(c["inline"] and c["computed"] == c["inline"] for c in cells), theme
            assert all(c["computed"] == "left" for c in cells if c["code"]), theme
            texts = page.evaluate(
                "() => Array.from(document.querySelectorAll('.jp-OutputArea-output')).map(e => e.innerText)"
            )
            assert not [t for t in texts if re.search(INVISIBLE, t)], theme  # pasted code must run
            copied = (
                ux.cell("%ws cat code.py")
                .locator(".ws-file")
                .evaluate(
                    "el => Array.from(el.querySelectorAll('tr')).map(r => r.cells[1].innerText).join('\\n')"
                )
            )
            assert copied + "\n" == CODE  # indentation and blank lines, nothing else
            in_notebook = (
                ux.cell("%ws cat nb.ipynb")
                .locator(".ws-notebook .ws-nb-cell")
                .evaluate(
                    "el => Array.from(el.querySelectorAll('tr')).map(r => r.cells[1].innerText).join('\\n')"
                )
            )
            assert in_notebook + "\n" == CODE  # a notebook's code cell copies the same way
            grep = ux.cell("%ws grep return").locator(".ws-grep")
            assert "    return 1" in grep.inner_text()
            ux.screenshot(f"code-views-{theme.split()[-1].lower()}", ux.cell("%ws cat code.py"))
    finally:
        ux.set_theme("JupyterLab Light")


def test_widgets_fit_their_labels_in_a_900px_notebook(ux: LabPage, quickstart: LabPage) -> None:
    for lp in (ux, quickstart):
        lp.page.set_viewport_size({"width": 900, "height": 1000})
    try:
        panel = ux.cell("%ws call workspace_execute_command").locator(".ws-tool-call")
        assert panel.locator(".ws-approve").is_visible() and panel.locator(".ws-deny").is_visible()
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            ux.set_theme(theme)
            assert _fits(ux.page, ".jp-OutputArea-output") == [], theme
        dashboard = quickstart.page.locator(".ws-dashboard")
        for tab in ("Files", "Run", "Processes", "Search", "Skills", "Changes", "Agent tools"):
            dashboard.locator(".lm-TabBar-tab", has_text=tab).click()
            quickstart.page.wait_for_function(
                "(t) => document.querySelector('.ws-dashboard .lm-TabBar-tab.lm-mod-current').textContent === t",
                arg=tab,
            )
            assert _fits(quickstart.page, ".ws-dashboard") == [], tab
        quickstart.screenshot("dashboard-900px", dashboard)
    finally:
        ux.set_theme("JupyterLab Light")
        for lp in (ux, quickstart):
            lp.page.set_viewport_size({"width": 1360, "height": 1000})


def test_changes_since_a_checkpoint_render_as_inert_text_with_restore_buttons(ux: LabPage) -> None:
    view = ux.cell("%ws changes --diff").locator(".ws-changes")
    assert "modified" in view.inner_text() and "code.py" in view.inner_text()
    assert "+# changed: <b>not bold</b>" in view.locator("pre").inner_text()  # the diff, as text
    assert view.locator("pre b").count() == 0
    dashboard = ux.cell("%ws ui").locator(".ws-dashboard")
    dashboard.locator(".lm-TabBar-tab", has_text="Changes").click()
    panel = dashboard.locator(".ws-changes-panel")
    panel.wait_for(state="visible")
    assert "code.py" in panel.inner_text() and "outside" in panel.inner_text()
    assert panel.locator("button", has_text="Restore all").is_visible()
    panel.locator(".ws-change-diff").first.click()
    diff = panel.locator("pre")
    diff.wait_for(state="visible")
    assert "+# changed: <b>not bold</b>" in diff.inner_text() and diff.locator("b").count() == 0
    ux.screenshot("changes-tab", panel)


def test_huge_output_is_bounded_with_the_count_and_the_tail(ux: LabPage) -> None:
    cell = ux.cell("%ws run seq 1 2000000")
    outputs = cell.locator(".jp-OutputArea")
    assert outputs.evaluate("el => el.getBoundingClientRect().height") < 3000  # was 5 million pixels
    text = outputs.inner_text()
    assert "… 1,999,870 lines not shown (all of it is in the result: r = _; r.stdout, r.stderr) …" in text
    assert text.split("…")[0].split()[-1] == "100" and "1999999\n2000000" in text and "exit 0" in text
    assert "keeps running" not in text


def test_workspace_errors_are_one_line(ux: LabPage) -> None:
    error = ux.cell("%ws cat nope.csv").locator(".jp-OutputArea-output")
    assert error.count() == 1
    text = error.inner_text().strip()
    assert text == "FileNotFound: %ws cat: File not found: nope.csv"  # no traceback through magics.py


def test_reopened_notebook_shows_the_widget_snapshots(ux: LabPage, lab: JupyterLab) -> None:
    """Runs last on ux.ipynb: it saves the notebook, shuts its kernel down and opens it again."""
    import urllib.request

    page = ux.page
    snapshots = page.locator(".ws-snapshot")
    assert snapshots.count() > 1 and all(s.is_hidden() for s in snapshots.all())  # live widgets shown
    # the process's snapshot (not the first one on the page: %ws ui's is above it) follows the
    # widget: the process finished after the cell ended
    page.wait_for_function(
        "(el) => /exited \\(0\\)[\\s\\S]*finished/.test(el.textContent)",
        arg=ux.cell("p = %ws bg").locator(".ws-snapshot").element_handle(),
        timeout=30_000,
    )
    ux.save()
    for kernel in lab.api("/api/kernels"):
        request = urllib.request.Request(
            f"{lab.url}/api/kernels/{kernel['id']}?token={lab.token}", method="DELETE"
        )
        urllib.request.urlopen(request, timeout=30).close()
    ux.open_notebook("ux.ipynb")  # a new kernel: the widgets' models are gone
    process = ux.cell("p = %ws bg").locator(".ws-snapshot")
    process.wait_for(state="visible")
    assert "exited (0)" in process.inner_text() and "started\nfinished" in process.inner_text()
    call = ux.cell("%ws call workspace_execute_command").locator(".ws-snapshot")
    assert call.is_visible() and "workspace_execute_command" in call.inner_text()
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.jupyter-widgets')).every(e => e.offsetParent === null || !/model not found/.test(e.textContent))"
    )
    assert page.locator(":text('model not found'):visible").count() == 0
    ux.screenshot("reopened-snapshots")


def test_paths_in_outputs_open_the_file_in_jupyterlab(quickstart: LabPage) -> None:
    """Runs last: it leaves an editor tab in front of the notebook."""
    link = quickstart.cell("%ws ls").locator(".ws-tree a", has_text="summary.py")
    link.click()
    tab = quickstart.page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text="summary.py")
    tab.wait_for(timeout=30_000)
    editor = quickstart.page.locator(".jp-FileEditor").first
    editor.locator(".cm-line", has_text="TODO: handle missing populations").wait_for(timeout=30_000)
    assert "largest = max(rows" in editor.inner_text()


def test_a_search_hit_on_a_notebook_cell_opens_the_notebook(browser: Any, lab: JupyterLab) -> None:
    """%ws search finds a notebook cell; its link opens the notebook in JupyterLab, and (the
    notebook being open) takes it to that cell through JupyterLab 4's #cell-id= fragment."""
    import nbformat
    from nbformat import v4

    study = lab.root_dir / "study"
    study.mkdir(exist_ok=True)
    kernelspec = {"name": "ws-jupyter", "display_name": "Python 3 (ws-jupyter)", "language": "python"}
    cells = [v4.new_markdown_cell(f"## Part {i}\n\n" + "Filler text about sensors. " * 40) for i in range(12)]
    cells.append(v4.new_markdown_cell("## Findings\nThe reservoir levels dropped sharply in August."))
    nb = v4.new_notebook(cells=cells, metadata={"kernelspec": kernelspec})
    for i, c in enumerate(nb.cells):
        c.id = f"study-{i}"
    nbformat.write(nb, study / "study.ipynb")
    driver = v4.new_notebook(
        cells=[v4.new_code_cell("%ws init study --name nbsearch"), v4.new_code_cell("%ws index"),
               v4.new_code_cell("%ws search reservoir levels August --mode bm25 -k 1")],
        metadata={"kernelspec": kernelspec},
    )
    nbformat.write(driver, lab.root_dir / "nbsearch.ipynb")

    lp = new_page(browser, lab)
    try:
        lp.open_notebook("nbsearch.ipynb")
        lp.run_all()
        hit = lp.page.locator(".ws-search a").first
        assert hit.inner_text() == "study.ipynb [cell 12]:2-2"  # workspace-relative, line within the cell
        href = hit.get_attribute("href")  # JupyterLab rewrites it to its /files/ URL, fragment kept
        assert "/study/study.ipynb" in href and href.endswith("#cell-id=study-12")
        hit.click()  # opens the notebook
        tab = lp.page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text="study.ipynb")
        tab.wait_for(timeout=30_000)
        lp.page.locator(".jp-NotebookPanel .jp-Cell", has_text="reservoir levels dropped").first.wait_for(
            state="attached", timeout=30_000
        )
        # JupyterLab 4.6 applies the fragment of a link that *opens* a notebook before laying it out
        # (it shows the top); with the notebook open, the same link goes to the cell
        lp.page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text="nbsearch.ipynb").click()
        hit.click()
        lp.page.wait_for_function(CELL_IN_VIEW, arg=["", "reservoir levels dropped"], timeout=30_000)
        lp.screenshot("notebook-search-hit-opened")
    except Exception:
        lp.screenshot("notebook-search-hit-failed")
        raise
    finally:
        lp.page.context.close()


def test_kernel_activity_shows_the_agents_executions_and_plot(browser: Any, lab: JupyterLab) -> None:
    """The code interpreter demo: the agent's three executions appear as cells, the plot in the last."""
    lp = new_page(browser, lab)
    try:
        lp.open_notebook("code_interpreter.ipynb")
        lp.run_all()
        widget = lp.cell("from ws_jupyter.jupyter.widgets import KernelActivity").locator(
            ".ws-kernel-activity"
        )
        widget.wait_for()
        cells = widget.locator(".ws-kernel-cell")
        lp.page.wait_for_function(
            "(el) => el.querySelectorAll('.ws-kernel-cell').length >= 3 && el.querySelector('img[src^=\"data:image/png\"]')",
            arg=widget.element_handle(),
            timeout=60_000,
        )
        text = widget.inner_text()
        assert "18 rows, 3 regions" in text and "csv.DictReader" in text and "agent" in text
        assert cells.nth(2).locator("img[src^='data:image/png']").count() == 1
        assert cells.nth(2).locator("img").evaluate("img => img.naturalWidth") > 100  # a real plot, decoded
        cells.nth(2).locator("img").scroll_into_view_if_needed()  # the plot in view, for the README
        lp.screenshot("jupyter-kernel-activity", widget)
    except Exception:
        lp.screenshot("code-interpreter-failed")
        raise
    finally:
        lp.page.context.close()
