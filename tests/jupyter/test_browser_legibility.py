"""What a user reads in JupyterLab, measured in a real (headless) Chromium: contrast and fit.

One JupyterLab and one notebook serve the module. The notebook shows a notebook file with
highlighted code (``%ws cat``), a plain file, an HTML table the sandbox kernel displayed (as a
DataFrame does) in ``ExecutionView`` and ``KernelActivity``, a ``ToolActivity`` log with two calls
waiting for approval, and a ``ToolCallPanel``. The tests then switch JupyterLab's theme and
narrow the window, and measure: the contrast of every highlighted token and every piece of text
in the outputs (computed styles, as the browser resolves the theme's variables), the colours of
the sandbox's HTML frame as drawn (pixels: the frame's document cannot be styled from outside),
and whether anything is clipped.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .lab import CHROMIUM, CHROMIUM_FLAGS, JupyterLab, LabPage, browser_unavailable

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "browser"
THEMES = ("JupyterLab Light", "JupyterLab Dark")
AA = 4.5  # WCAG 2 AA contrast for normal text

_why_not = browser_unavailable()
if _why_not:
    pytestmark.append(pytest.mark.skip(reason=_why_not))

# Code with every kind of token the highlighter colours.
CODE = '''import os, sys as system
from collections import deque

@decorator(level=3)
class Reader(Base):
    """Reads things."""
    LIMIT = 0x1F + 2.5e3  # a comment
    def read(self, path: str = "a\\tb", *args) -> None:
        name = f"{path!r}: {len(args)}"
        if not path or path is None and True:
            raise ValueError('bad') from None
        return [print(x) for x in range(10) if x % 2 == 0]
'''
TABLE = (
    '<table border="1" class="dataframe"><thead><tr style="text-align: right;"><th></th><th>city</th>'
    "<th>population</th></tr></thead><tbody>"
    + "".join(f"<tr><th>{i}</th><td>City {i}</td><td>{i * 1000}</td></tr>" for i in range(5))
    + "</tbody></table>"
)
CELLS = [
    "%ws init legible --name legible --isolation none",
    "import nbformat\nCODE = " + repr(CODE) + "\nopen('legible/code.py', 'w').write(CODE)\n"
    "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell('# Title\\n\\nSome *text* and `code`.'),"
    " nbformat.v4.new_code_cell(CODE)])\n"
    "nb.metadata['kernelspec'] = {'name': 'python3', 'language': 'python', 'display_name': 'Python 3'}\n"
    "nbformat.write(nb, 'legible/nb.ipynb')",
    "%ws cat nb.ipynb",
    "%ws cat code.py",
    "TABLE = " + repr(TABLE) + "\n"
    "r = ws.sandbox.kernels.execute('from IPython.display import HTML, display\\n"
    "display(HTML(' + repr(TABLE) + '))\\nprint(\"printed\")\\n1/0')\nr",
    "from ws_jupyter.jupyter.widgets import KernelActivity, ToolActivity\nKernelActivity(ws)",
    "import threading\nactivity = ToolActivity(ws)\ntools = {t.name: t for t in ws.tools()}\n"
    "tools['workspace_read_file'].run({'path': 'code.py', 'limit': 3})\n"
    "tools['workspace_grep'].run({'pattern': 'some_really_long_pattern_name_that_goes_on_and_on_and_on'})\n"
    "for words in (40, 3):  # two calls wait for approval in the log\n"
    "    threading.Thread(target=tools['workspace_execute_command'].run,"
    " args=({'command': 'echo ' + 'word ' * words},)).start()\n"
    "activity",
    '%ws call workspace_execute_command {"command": "echo approved and a few more words to make it long"}',
]


@pytest.fixture(scope="module")
def page(kernel_prefix: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabPage]:
    from playwright.sync_api import sync_playwright

    root = tmp_path_factory.mktemp("legibility-root")
    kernelspec = {"name": "ws-jupyter", "display_name": "Python 3 (ws-jupyter)", "language": "python"}
    cells = [
        {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [], "source": src}
        for i, src in enumerate(CELLS)
    ]
    (root / "legible.ipynb").write_text(
        json.dumps({"cells": cells, "metadata": {"kernelspec": kernelspec}, "nbformat": 4, "nbformat_minor": 5})
    )
    lab = JupyterLab(root, tmp_path_factory.mktemp("legibility-state"), jupyter_path=str(kernel_prefix / "share" / "jupyter"))
    with lab, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        context = browser.new_context(viewport={"width": 1360, "height": 1000})
        lp = LabPage(context.new_page(), lab, ARTIFACTS)
        lp.page.set_default_timeout(60_000)
        try:
            lp.open_notebook("legible.ipynb")
            lp.run_all()
            lp.page.wait_for_function(
                "() => document.querySelectorAll('.ws-tool-activity .ws-deny').length >= 2"
                " && document.querySelector('.ws-kernel-activity iframe')"
            )
        except Exception:
            lp.screenshot("legibility-failed")
            raise
        yield lp
        browser.close()
    if ARTIFACTS.exists():
        shutil.copy(lab.log_path, ARTIFACTS / "jupyterlab-legibility.log")


def test_highlighted_code_and_all_output_text_reach_4_5_to_1_in_both_themes(page: LabPage) -> None:
    low: dict[str, list[dict[str, Any]]] = {}
    kinds: dict[str, set[str]] = {}
    try:
        for theme in THEMES:
            page.set_theme(theme)
            tokens = page.text_contrast(".ws-notebook td span")
            assert len(tokens) > 40, theme
            # and every other text in the outputs: plain file, statuses, widgets, buttons
            everything = page.text_contrast(".jp-OutputArea-output, .jp-OutputArea-output *")
            assert len(everything) > 150, theme
            low[theme] = [t for t in tokens + everything if t["ratio"] < AA]
            kinds[theme] = {c for t in tokens for c in t["cls"].split() if c.startswith("ws-hl-")}
            page.screenshot(f"legible-code-{theme.split()[-1].lower()}", page.cell("%ws cat nb.ipynb"))
    finally:
        page.set_theme("JupyterLab Light")
    assert all(not found for found in low.values()), {theme: found[:8] for theme, found in low.items()}
    # every kind of token the code holds was coloured (and so measured)
    expected = {"keyword", "builtin", "def", "meta", "string", "string-2", "number", "comment", "operator"}
    for theme in THEMES:
        assert {f"ws-hl-{k}" for k in expected} <= kinds[theme], (theme, sorted(kinds[theme]))


_PIXELS_JS = """async (png) => {
  // (background luminance, contrast of the text) of a screenshot: the background is the most
  // common colour, the text the pixel farthest from it (glyph stems reach the full colour)
  const image = new Image();
  image.src = 'data:image/png;base64,' + png;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.width;
  canvas.height = image.height;
  const ctx = canvas.getContext('2d');
  ctx.drawImage(image, 0, 0);
  const data = ctx.getImageData(0, 0, image.width, image.height).data;
  const ch = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  const counts = new Map();
  const lums = [];
  for (let i = 0; i < data.length; i += 4) {
    const lum = 0.2126 * ch(data[i]) + 0.7152 * ch(data[i + 1]) + 0.0722 * ch(data[i + 2]);
    lums.push(lum);
    const key = Math.round(lum * 1000);
    counts.set(key, (counts.get(key) || 0) + 1);
  }
  const bg = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0] / 1000;
  const text = lums.reduce((far, lum) => Math.abs(lum - bg) > Math.abs(far - bg) ? lum : far, bg);
  const [hi, lo] = [Math.max(bg, text), Math.min(bg, text)];
  return [bg, (hi + 0.05) / (lo + 0.05)];
}"""


def _frame_colours(page: LabPage, frame: Any) -> tuple[float, float]:
    """(background luminance, text contrast) of an iframe as drawn on the screen."""
    frame.scroll_into_view_if_needed()
    png = base64.b64encode(frame.screenshot()).decode("ascii")
    bg, contrast = page.page.evaluate(_PIXELS_JS, png)
    return float(bg), float(contrast)


def test_sandbox_html_follows_the_dark_theme(page: LabPage) -> None:
    """A DataFrame's HTML, shown in its sandboxed frame, is not a white block on the dark theme."""
    frames = {
        "execution": page.cell("TABLE =").locator("iframe").first,
        "kernel activity": page.page.locator(".ws-kernel-activity iframe").first,
    }
    try:
        for theme in THEMES:
            page.set_theme(theme)
            for where, frame in frames.items():
                bg, contrast = _frame_colours(page, frame)
                dark = theme.endswith("Dark")
                assert (bg < 0.05) if dark else (bg > 0.8), (theme, where, bg)
                assert contrast >= AA, (theme, where, contrast)
            page.screenshot(f"legible-frame-{theme.split()[-1].lower()}", page.cell("TABLE ="))
    finally:
        page.set_theme("JupyterLab Light")


_CLIPPED_JS = """(roots) => {
  const bad = [];
  for (const root of document.querySelectorAll(roots)) {
    if (root.offsetParent === null) continue;
    const box = root.getBoundingClientRect();
    if (root.scrollWidth > root.clientWidth + 1) bad.push(root.className.match(/ws-[a-z-]+/)[0] + ' overflows by ' + (root.scrollWidth - root.clientWidth) + ' px');
    for (const el of root.querySelectorAll('*')) {
      if (el.offsetParent === null || el.closest('.ws-snapshot')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0) continue;
      const what = el.tagName + ' "' + (el.textContent || '').trim().slice(0, 30) + '"';
      if (r.right > box.right + 1 || r.left < box.left - 1) bad.push(what + ' sticks out of its widget');
      const style = getComputedStyle(el);
      if (el.scrollWidth > el.clientWidth + 1 && style.overflowX !== 'auto' && style.overflowX !== 'scroll') bad.push(what + ' is clipped');
    }
  }
  return bad;
}"""


def test_widgets_fit_a_900px_window_zoomed_to_150_percent(page: LabPage) -> None:
    """150 % zoom of a 900 px window lays the page out in 600 CSS pixels: the same viewport here.
    The tool log's columns and the approval buttons must all be inside their widget, unclipped."""
    lp = page.page
    lp.set_viewport_size({"width": 600, "height": 1000})
    try:
        for theme in THEMES:  # the themes' fonts and paddings differ a little
            page.set_theme(theme)
            lp.wait_for_timeout(300)  # JupyterLab lays the notebook out again after a resize
            bad = lp.evaluate(_CLIPPED_JS, ".ws-tool-activity, .ws-tool-call, .ws-kernel-activity")
            assert bad == [], (theme, bad[:40])
            for scope in (page.cell("import threading"), page.cell("%ws call")):
                for deny in scope.locator(".ws-deny").all():
                    deny.scroll_into_view_if_needed()
                    button = deny.bounding_box()
                    area = scope.locator(".jp-OutputArea").bounding_box()
                    assert button is not None and area is not None
                    assert button["x"] >= area["x"] and button["x"] + button["width"] <= area["x"] + area["width"]
                    assert deny.evaluate("b => b.scrollWidth <= b.clientWidth") and deny.inner_text().strip() == "Deny"
        page.screenshot("legible-tool-activity-600px", page.cell("import threading"))
        page.screenshot("legible-tool-call-600px", page.cell("%ws call"))
    finally:
        page.set_theme("JupyterLab Light")
        lp.set_viewport_size({"width": 1360, "height": 1000})
