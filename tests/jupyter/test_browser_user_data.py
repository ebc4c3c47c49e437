"""Sharing data with the agent, in JupyterLab in a real (headless) Chromium: the Shared with the
agent list renders its rows and Revoke removes one; a waiting ``user_variable_request`` shows the
variable, its type and size and the agent's reason in the tool activity panel, and a click on
Approve lets the copy run. Screenshots go to test-artifacts/browser/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from .lab import CHROMIUM, CHROMIUM_FLAGS, JupyterLab, LabPage, browser_unavailable

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "browser"
_why_not = browser_unavailable()
if _why_not:
    pytestmark.append(pytest.mark.skip(reason=_why_not))

CELLS = [
    "%ws init shared-ws --isolation auto",
    "import pandas as pd\nsales = pd.DataFrame({'region': ['north', 'south', 'west'], 'amount': [10.5, 3.0, 7.25]})\n"
    "notes = {'owner': 'ann'}\n%ws share sales notes",
    "%ws share",
    "from ws_jupyter.jupyter.widgets import ToolActivity\npanel = ToolActivity(ws)\npanel",
    "import threading\nrequest = {t.name: t for t in ws.tools()}['user_variable_request']\nresults = []\n"
    "threading.Thread(target=lambda: results.append(request.run({'name': 'sales', 'reason': 'totals per region'}))).start()",
]


@pytest.fixture(scope="module")
def page(kernel_prefix: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabPage]:
    from playwright.sync_api import sync_playwright

    root = tmp_path_factory.mktemp("lab-root")
    nb = new_notebook(
        cells=[new_code_cell(c) for c in CELLS],
        metadata={
            "kernelspec": {
                "name": "ws-jupyter",
                "display_name": "Python 3 (ws-jupyter)",
                "language": "python",
            }
        },
    )
    nbformat.write(nb, root / "share.ipynb")
    server = JupyterLab(
        root, tmp_path_factory.mktemp("lab-state"), jupyter_path=str(kernel_prefix / "share" / "jupyter")
    )
    with server, sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        context = chromium.new_context(viewport={"width": 1360, "height": 1000})
        tab = context.new_page()
        tab.set_default_timeout(60_000)
        lp = LabPage(tab, server, ARTIFACTS)
        lp.open_notebook("share.ipynb")
        try:
            lp.run_all()
        except Exception:
            lp.screenshot("user-data-failed")
            raise
        yield lp
        chromium.close()


def test_a_waiting_copy_shows_what_it_copies_and_approve_runs_it(page: LabPage) -> None:
    panel = page.cell("from ws_jupyter.jupyter.widgets import ToolActivity").locator(".ws-tool-activity")
    waiting = panel.locator(":text('waiting:')")
    waiting.wait_for(timeout=60_000)
    text = panel.inner_text()
    assert "user_variable_request" in text
    assert "Copy sales (pandas.DataFrame, 3 rows x 2 columns" in text
    assert "The agent's reason: totals per region" in text
    page.screenshot("user-data-approval", panel)
    panel.locator(".ws-approve").click()
    panel.locator(".ws-call-row", has_text="user_variable_request").locator(":text('done')").wait_for(
        timeout=60_000
    )
    assert panel.locator(".ws-approve").count() == 0


def test_shared_list_renders_and_revoke_removes_a_row(page: LabPage) -> None:
    cells = page.page.locator(".jp-CodeCell")
    widget = None
    for i in range(cells.count()):
        c = cells.nth(i)
        if c.locator(".jp-InputArea-editor").inner_text().strip() == "%ws share":
            widget = c.locator(".ws-shared-variables")
    assert widget is not None
    widget.wait_for()
    text = widget.inner_text()
    assert "Shared with the agent" in text and "2 variables" in text
    assert "sales" in text and "pandas.DataFrame" in text and "notes" in text and "dict" in text
    page.screenshot("user-data-shared", widget)
    widget.locator(".ws-revoke").first.click()  # rows are sorted: notes first
    page.page.wait_for_function(
        "(el) => el.innerText.includes('1 variable,') && !el.innerText.includes('notes')",
        arg=widget.element_handle(),
        timeout=30_000,
    )
