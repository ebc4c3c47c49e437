"""The documentation site, built as ``scripts/docs.sh`` builds it — ``mkdocs build --strict``, so a
broken link or anchor, a page left out of the navigation or an API reference to a name that does
not exist fails here — from the session's notebook runs (the runs tests/jupyter/test_notebooks.py
checks; nothing is executed twice). Where bubblewrap works, the build runs without a network.
Then: the pages are there, every public name has its reference entry, the notebooks show their
outputs, and no page loads anything from another host — statically, and in headless Chromium.
"""

from __future__ import annotations

import functools
import html
import http.server
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..notebook_runs import REPO_ROOT, docs_build

pytestmark = pytest.mark.slow

GUIDE = (
    "index",
    "install",
    "jupyter",
    "workspace",
    "files",
    "checkpoints",
    "skills",
    "sandbox",
    "kernels",
    "tools",
    "user-data",
    "frameworks",
    "search",
    "scaling-out",
    "benchmarks",
    "dependencies",
    "architecture",
    "development",
)
REFERENCE = (
    "index",
    "workspace",
    "filesystem",
    "checkpoints",
    "sandbox",
    "kernels",
    "search",
    "skills",
    "tools",
    "notebooks",
    "userdata",
    "jupyter",
    "errors",
)


def _kernels_package() -> str:
    """Where the kernels package's own names are documented (``ws_jupyter.kernels`` is the old path
    once ``ws_jupyter.sandbox.kernels`` exists)."""
    return (
        "ws_jupyter.sandbox.kernels"
        if importlib.util.find_spec("ws_jupyter.sandbox.kernels")
        else "ws_jupyter.kernels"
    )


#: Packages whose ``__all__`` is public API, each name documented under the package's own path
#: (or, for a name ``ws_jupyter`` exports too, under ``ws_jupyter.NAME``; errors under ``ws_jupyter.errors``).
PUBLIC_PACKAGES = (
    "ws_jupyter",
    "ws_jupyter.filesystem",
    "ws_jupyter.sandbox",
    _kernels_package(),
    "ws_jupyter.notebooks",
    "ws_jupyter.search",
    "ws_jupyter.skills",
    "ws_jupyter.tools",
    "ws_jupyter.userdata",
    "ws_jupyter.jupyter.widgets",
)


def _network_isolated(argv: list[str]) -> list[str]:
    """``argv`` without a network (only loopback) when bubblewrap works here, else as it is."""
    from ws_jupyter import LocalSandbox

    detection = LocalSandbox.detect_isolation()
    if not (detection.available and detection.backend == "bwrap" and shutil.which("bwrap")):
        return argv
    return ["bwrap", "--dev-bind", "/", "/", "--unshare-net", "--die-with-parent", "--", *argv]


@pytest.fixture(scope="module")
def site(notebook_runs: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    for name in notebook_runs.names():
        notebook_runs.run(name)
    out = tmp_path_factory.mktemp("site")
    env = {
        **os.environ,
        "WS_JUPYTER_SKIP_SETUP": "1",
        "WS_JUPYTER_DOCS_CACHE": str(tmp_path_factory.mktemp("docs-cache")),
    }
    argv = [
        "bash",
        "scripts/docs.sh",
        "--no-execute",
        "--executed",
        str(notebook_runs.root),
        "--site-dir",
        str(out),
    ]
    started = time.monotonic()
    done = subprocess.run(
        _network_isolated(argv), cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"the docs build failed:\n{done.stdout[-4000:]}\n{done.stderr[-8000:]}"
    print(f"docs build: {time.monotonic() - started:.1f} s")
    return out


def _page(site: Path, rel: str) -> str:
    return (site / rel).read_text(encoding="utf-8")


def _text(site: Path, rel: str) -> str:
    """A page's text as a reader sees it (tags, such as the highlighter's, taken out)."""
    return html.unescape(re.sub(r"<[^>]+>", "", _page(site, rel)))


def test_every_page_is_built(site: Path) -> None:
    for name in GUIDE:
        assert (site / f"{name}.html").is_file(), name
    for name in REFERENCE:
        assert (site / "reference" / f"{name}.html").is_file(), name
    for name in docs_build().notebook_names():
        assert (site / "notebooks" / name.replace(".ipynb", ".html")).is_file(), name
    index = _page(site, "index.html")
    assert "One <em>workspace</em> for Jupyter users" in index  # README's introduction, included
    assert "%ws search when is the cache cleared" in _text(site, "index.html")  # and its tour
    assert 'id="what-is-rendered-and-how"' in _page(site, "jupyter.html")
    assert "<h1" in _page(site, "architecture.html") and "Where to put X" in _page(site, "architecture.html")


def test_every_public_name_has_a_reference_entry(site: Path) -> None:
    anchors: set[str] = set()
    for page in (site / "reference").glob("*.html"):
        anchors |= set(re.findall(r'id="(ws_jupyter[\w.]*)"', _page(site, f"reference/{page.name}")))
    face = importlib.import_module("ws_jupyter")
    missing = []
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            accepted = {f"{package}.{name}", f"ws_jupyter.errors.{name}"}
            if name in face.__all__:
                accepted.add(f"ws_jupyter.{name}")
            if not accepted & anchors:
                missing.append(f"{package}.{name}")
    assert not missing, f"no API reference entry (add `::: NAME` to a page of docs/reference/): {missing}"
    assert 'id="ws_jupyter.Workspace.from_directory"' in _page(site, "reference/workspace.html")
    # members, with their docstrings
    assert "A filesystem, a sandbox, search, skills and agent tools behind one object." in _text(
        site, "reference/workspace.html"
    )


def test_notebook_pages_show_the_outputs_of_a_run(site: Path) -> None:
    quickstart = _text(site, "notebooks/quickstart.html")
    assert "5 cities; the largest is Osaka (19,059,856 people)" in quickstart  # a command's output
    assert "1 match across 1 file" in quickstart  # %ws grep
    assert "jp-OutputArea-output" in _page(site, "notebooks/quickstart.html")
    interpreter = _page(site, "notebooks/code_interpreter.html")
    assert re.search(r'<img [^>]*src="data:image/png;base64,', interpreter)  # the matplotlib plot
    for name in docs_build().notebook_names():
        page = _page(site, "notebooks/" + name.replace(".ipynb", ".html"))
        assert "cdnjs.cloudflare.com" not in page and "application/vnd.jupyter.widget-state+json" not in page
        assert "jp-OutputArea-output" in page, name


def test_no_page_loads_anything_from_another_host(site: Path) -> None:
    fetching = {
        str(path.relative_to(site)): found
        for path in site.rglob("*.html")
        if (found := docs_build().remote_fetches(path.read_text(encoding="utf-8")))
    }
    assert not fetching
    for sheet in site.rglob("*.css"):
        assert not re.search(r"url\(\s*['\"]?(https?:)?//", sheet.read_text(encoding="utf-8")), sheet
    assert "fonts.googleapis.com" not in _page(site, "index.html")


def test_the_network_check_finds_what_fetches() -> None:
    check = docs_build().remote_fetches
    assert check('<script src="https://cdn.example/x.js"></script>')
    assert check('<link rel="stylesheet" href="//cdn.example/x.css">')
    assert check('<img srcset="a.png 1x, https://cdn.example/b.png 2x">')
    assert check("<style>@import 'https://cdn.example/x.css';</style>")
    assert check('<div style="background: url(https://cdn.example/x.png)"></div>')
    assert check('<script>import("https://cdn.example/m.mjs")</script>')
    assert not check('<a href="https://example.org/">a link the reader may follow</a>')
    assert not check('<img src="data:image/png;base64,AAAA"><script src="assets/x.js"></script>')


@pytest.fixture
def served(site: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.mark.browser
def test_reading_the_site_requests_nothing_off_the_machine(served: str) -> None:
    from ..jupyter.lab import CHROMIUM, CHROMIUM_FLAGS, browser_unavailable

    why_not = browser_unavailable()
    if why_not:
        pytest.skip(why_not)
    from playwright.sync_api import sync_playwright

    requested: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda request: requested.append(request.url))
            for path in ("index.html", "notebooks/code_interpreter.html", "reference/workspace.html"):
                page.goto(served + path)
                page.wait_for_load_state("networkidle")
            assert page.locator("#ws_jupyter\\.Workspace").count() == 1
            search = page.locator("input.md-search__input")
            search.click()
            search.type("bubblewrap", delay=20)  # the search index and its worker come from the site
            page.locator(".md-search-result__item").first.wait_for(timeout=30_000)
        finally:
            browser.close()
    assert requested and not [url for url in requested if not url.startswith((served, "data:"))]
