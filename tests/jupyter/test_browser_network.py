"""The dashboard's Network tab in JupyterLab in a real (headless) Chromium: a notebook puts its
sandbox in network allow mode (a 127.0.0.1 server standing in for the internet), the tab lists
the allowed and the denied attempt, and a later command's attempt appears while it is open.
Screenshots go to test-artifacts/browser/."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..sandbox.conftest import requires_bwrap
from .lab import CHROMIUM, CHROMIUM_FLAGS, JupyterLab, LabPage, browser_unavailable

pytestmark = [pytest.mark.browser, pytest.mark.slow, requires_bwrap]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"
_why_not = browser_unavailable()
if _why_not:
    pytestmark.append(pytest.mark.skip(reason=_why_not))

CELLS = [
    # the test internet: a server on 127.0.0.1, known to the proxy as site.test and other.test
    "import http.server, threading\n"
    "from ws_jupyter.sandbox.network.testing import fake_internet\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    def do_GET(self):\n"
    "        self.send_response(200); self.send_header('Content-Length', '3'); self.end_headers(); self.wfile.write(b'ok\\n')\n"
    "    def log_message(self, *a): pass\n"
    "server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
    "threading.Thread(target=server.serve_forever, daemon=True).start()\n"
    "port = server.server_address[1]\n"
    "fake = fake_internet({'site.test': '127.0.0.1', 'other.test': '127.0.0.1'}); fake.__enter__()",
    "from ws_jupyter import LocalFilesystem, LocalSandbox, Workspace\n"
    "from ws_jupyter.jupyter.widgets import Dashboard\n"
    "import os; os.makedirs('netws', exist_ok=True)\n"
    "ws = Workspace(filesystem=LocalFilesystem('netws'), bm25=False,\n"
    "               sandbox=LocalSandbox(working_directory=os.path.abspath('netws'), isolation='bwrap',\n"
    "                                    network=[f'site.test:{port}']))\n"
    "ws.init()\n"
    'get = lambda host: f"python -c \\"import urllib.request as u; print(u.urlopen(\'http://{host}:{port}/\').read())\\""\n'
    "ws.sandbox.execute_command(get('site.test')); r = ws.sandbox.execute_command(get('other.test'))\n"
    "print(r.network_note)",
    # the tab on screen; a command 3 s later, while it is shown, makes one more denied attempt
    "dash = Dashboard(ws); dash.show('Network')\n"
    "threading.Timer(3, lambda: ws.sandbox.execute_command(get('other.test'))).start()\n"
    "dash",
]


def _notebook(path: Path) -> None:
    import nbformat
    from nbformat import v4

    kernelspec = {"name": "ws-jupyter", "display_name": "Python 3 (ws-jupyter)", "language": "python"}
    nbformat.write(
        v4.new_notebook(cells=[v4.new_code_cell(c) for c in CELLS], metadata={"kernelspec": kernelspec}), path
    )


@pytest.fixture(scope="module")
def lab(kernel_prefix: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    root = tmp_path_factory.mktemp("lab-net")
    _notebook(root / "network.ipynb")
    server = JupyterLab(
        root, tmp_path_factory.mktemp("lab-net-state"), jupyter_path=str(kernel_prefix / "share" / "jupyter")
    )
    with server:
        yield server
    if ARTIFACTS.exists():
        shutil.copy(server.log_path, ARTIFACTS / "jupyterlab-network.log")


def test_the_network_tab_shows_allowed_and_denied_attempts_live(lab: JupyterLab) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium: Any = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        page = chromium.new_context(viewport={"width": 1360, "height": 1000}).new_page()
        page.set_default_timeout(60_000)
        lp = LabPage(page, lab, ARTIFACTS)
        try:
            lp.open_notebook("network.ipynb")
            lp.run_all()
            assert (
                "denied by the allow-list" in lp.cell("from ws_jupyter import LocalFilesystem").inner_text()
            )
            table = page.locator(".ws-network-log")
            table.locator(":text('other.test')").first.wait_for()
            text = table.inner_text()
            assert "DENIED" in text and "not in the allow-list" in text and "allowed" in text
            assert "site.test:" in text
            before = text.count("other.test")
            page.wait_for_function(  # redrawn by the widget, not by re-running a cell
                "([el, n]) => el.innerText.split('other.test').length - 1 > n",
                arg=[table.element_handle(), before],
            )
            lp.screenshot("dashboard-network", page.locator(".ws-dashboard"))
        except Exception:
            lp.screenshot("dashboard-network-failed")
            raise
        finally:
            chromium.close()
