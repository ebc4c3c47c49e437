"""A disposable JupyterLab and a headless Chromium driven by Playwright, for the browser tests.

``JupyterLab`` starts ``jupyter lab`` on a free port with a random token and private config, data,
runtime and IPython directories (the "news" announcements turned off, the extension manager
read-only, no update checks), serving a root directory; ``stop()`` ends it and its kernels.
Playwright drives Debian's ``/usr/bin/chromium`` (never a downloaded browser) with the flags from
JUPYTER.md. ``LabPage`` wraps a page with the few JupyterLab gestures the tests need: open a
notebook, wait until the kernel is idle, run all cells, find a cell's output, switch the theme,
save, take screenshots — and measure what a user sees: the contrast of rendered text.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "CELL_IN_VIEW",
    "CHROMIUM",
    "CHROMIUM_FLAGS",
    "JupyterLab",
    "LabPage",
    "browser_unavailable",
    "launch_chromium",
]

#: ``page.wait_for_function(CELL_IN_VIEW, arg=[panel_text, cell_text])``: the visible notebook whose
#: text has ``panel_text`` shows the cell with ``cell_text`` and no longer its first cell (a link to
#: a cell scrolled there).
CELL_IN_VIEW = """([panelText, cellText]) => {
    const panel = Array.from(document.querySelectorAll('.jp-NotebookPanel'))
        .find(p => p.offsetParent !== null && p.innerText.includes(panelText));
    if (!panel) return false;
    const view = panel.querySelector('.jp-WindowedPanel-outer, .jp-Notebook').getBoundingClientRect();
    const cells = Array.from(panel.querySelectorAll('.jp-Cell'));
    const seen = c => { const r = c.getBoundingClientRect(); return r.bottom > view.top && r.top < view.bottom; };
    const hit = cells.find(c => c.innerText.includes(cellText));
    return Boolean(hit && seen(hit) && !seen(cells[0]));
}"""

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def browser_unavailable() -> str | None:
    """Why the browser tests cannot run here (None when they can)."""
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing: run scripts/setup.sh as root (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed: run scripts/setup.sh (pip install -e '.[dev]')"
    if shutil.which("jupyter-lab", path=str(Path(sys.executable).parent)) is None:
        return "jupyterlab is not installed: run scripts/setup.sh"
    return None


@contextlib.contextmanager
def launch_chromium() -> Iterator[Any]:
    """Debian's headless Chromium under Playwright (never a downloaded browser), closed after."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class JupyterLab:
    """One JupyterLab server with isolated directories. Use as a context manager."""

    def __init__(
        self, root_dir: Path, state_dir: Path, *, jupyter_path: str | None = None, python: str | None = None
    ) -> None:
        self.root_dir = root_dir
        self.python = python or sys.executable  # another environment's Jupyter server (e.g. with RTC)
        self.state_dir = state_dir
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        self.jupyter_path = jupyter_path
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = state_dir / "jupyterlab.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON"))}
        for name in ("config", "data", "runtime", "ipython"):
            (self.state_dir / name).mkdir(parents=True, exist_ok=True)
        labconfig = self.state_dir / "config" / "labconfig"
        labconfig.mkdir(exist_ok=True)
        (labconfig / "page_config.json").write_text(
            json.dumps(
                {
                    "disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True},
                    "exposeAppInBrowser": True,  # window.jupyterapp: the tests switch themes with it
                }
            )
        )
        env.update(
            JUPYTER_CONFIG_DIR=str(self.state_dir / "config"),
            JUPYTER_DATA_DIR=str(self.state_dir / "data"),
            JUPYTER_RUNTIME_DIR=str(self.state_dir / "runtime"),
            IPYTHONDIR=str(self.state_dir / "ipython"),
            JUPYTER_PLATFORM_DIRS="1",
        )
        if self.jupyter_path:
            env["JUPYTER_PATH"] = self.jupyter_path
        # Render every cell (no windowing), so the tests can see all outputs of a long notebook.
        settings = self.state_dir / "settings" / "@jupyterlab" / "notebook-extension"
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
        return env

    def start(self, timeout: float = 90.0) -> JupyterLab:
        cmd = [
            self.python, "-m", "jupyterlab",
            "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
            f"--ServerApp.token={self.token}",
            f"--ServerApp.root_dir={self.root_dir}",
            "--ServerApp.allow_root=True",
            "--ServerApp.port_retries=0",
            "--LabApp.extension_manager=readonly",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            f"--LabApp.user_settings_dir={self.state_dir / 'settings'}",
            f"--LabApp.workspaces_dir={self.state_dir / 'workspaces'}",
        ]  # fmt: skip
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self._env(),
            cwd=self.root_dir,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"jupyter lab exited early; see {self.log_path}:\n{self.log_path.read_text()[-2000:]}"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/api/status?token={self.token}", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise TimeoutError(f"jupyter lab did not answer within {timeout}s; see {self.log_path}")

    def api(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.url}{path}?token={self.token}", timeout=10) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGTERM)  # the server shuts its kernels down on SIGTERM
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def __enter__(self) -> JupyterLab:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LabPage:
    """A JupyterLab browser tab with the gestures the tests use."""

    def __init__(self, page: Any, lab: JupyterLab, artifacts: Path) -> None:
        self.page = page
        self.lab = lab
        self.artifacts = artifacts
        artifacts.mkdir(parents=True, exist_ok=True)

    def open_notebook(self, name: str, timeout: float = 90_000) -> None:
        # ?reset: do not restore the layout an earlier page left (other notebooks in hidden tabs)
        self.page.goto(f"{self.lab.url}/lab/tree/{name}?reset&token={self.lab.token}")
        self.page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout)
        self.wait_kernel_idle(timeout)

    def wait_kernel_idle(self, timeout: float = 90_000) -> None:
        """Keys sent before the status bar says Idle are dropped: always wait for it."""
        self.page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.jp-StatusBar-TextItem'))"
            ".some(e => / \\| Idle$/.test(e.textContent.trim()))",
            timeout=timeout,
        )

    def menu(self, top: str, item: str) -> None:
        self.page.locator(".lm-MenuBar-itemLabel", has_text=top).first.click()
        self.page.locator(".lm-Menu-itemLabel", has_text=item).first.click()

    _PROMPTS = (
        "() => Array.from(document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt'))"
        ".filter(e => e.offsetParent !== null).map(e => e.textContent.trim())"
    )

    def prompts(self) -> list[str]:
        """The execution prompts (``[ ]:``, ``[*]:``, ``[3]:``) of the visible notebook's code cells."""
        return list(self.page.evaluate(self._PROMPTS))

    def run_all(self, timeout: float = 180_000) -> None:
        """Run → Run All Cells, then wait until every cell has run and the kernel idles."""
        for _attempt in range(3):
            self.page.locator(".jp-NotebookPanel .jp-Notebook").first.click()
            self.menu("Run", "Run All Cells")
            try:
                self.page.wait_for_function(
                    f"() => ({self._PROMPTS})().some(t => t !== '[ ]:')", timeout=10_000
                )
                break
            except Exception:  # the menu did not take the click: open it again
                self.page.keyboard.press("Escape")
        self.page.wait_for_function(
            f"() => {{ const p = ({self._PROMPTS})(); return p.length > 0 && p.every(t => /^\\[\\d+\\]:$/.test(t)); }}",
            timeout=timeout,
        )
        self.wait_kernel_idle(timeout)

    def set_theme(self, name: str, timeout: float = 30_000) -> None:
        """Switches JupyterLab's theme ("JupyterLab Light", "JupyterLab Dark") and waits for it."""
        self.page.evaluate(
            "(name) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: name})", name
        )
        self.page.wait_for_function(
            "(name) => document.body.dataset.jpThemeName === name", arg=name, timeout=timeout
        )

    def save(self, timeout: float = 30_000) -> None:
        """Saves the notebook (Ctrl+S) and waits until it has no unsaved changes."""
        self.page.locator(".jp-NotebookPanel .jp-Notebook").first.click()
        self.page.keyboard.press("Control+s")
        self.page.wait_for_function(
            "() => !document.querySelector('.jp-NotebookPanel .jp-mod-dirty, .lm-TabBar-tab.jp-mod-dirty')",
            timeout=timeout,
        )

    def cell(self, source_start: str) -> Any:
        """The code cell whose source starts with ``source_start``."""
        cells = self.page.locator(".jp-CodeCell")
        for i in range(cells.count()):
            c = cells.nth(i)
            text = c.locator(".jp-InputArea-editor").inner_text()
            if text.strip().startswith(source_start):
                return c
        raise AssertionError(f"no cell starting with {source_start!r}")

    def text_contrast(self, selector: str) -> list[dict[str, Any]]:
        """The WCAG contrast ratio of each visible element matching ``selector`` that holds text
        of its own: its computed colour over the background it is drawn on (the nearest opaque
        ancestor background, translucent ones composited in), as the browser resolves them —
        CSS variables, ``color-mix()`` and the current theme included. Disabled controls are left
        out (WCAG exempts them). Each item: text, class, fg/bg (RGB) and ratio."""
        return list(self.page.evaluate(_CONTRAST_JS, selector))

    def screenshot(self, name: str, locator: Any = None) -> Path:
        path = self.artifacts / f"{name}.png"
        if locator is None:
            self.page.screenshot(path=str(path))
        else:
            locator.scroll_into_view_if_needed()
            locator.screenshot(path=str(path))
        return path


_CONTRAST_JS = """(selector) => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const rgba = (colour) => {  // any CSS colour the browser computed -> [r, g, b, a]
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = '#000';
    ctx.fillStyle = colour;
    ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data;
    return [d[0], d[1], d[2], d[3] / 255];
  };
  const over = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let bg = [255, 255, 255, 1];
    for (const c of layers.reverse()) bg = over(c, bg);
    return bg;
  };
  const luminance = (c) => {
    const ch = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * ch(c[0]) + 0.7152 * ch(c[1]) + 0.0722 * ch(c[2]);
  };
  const out = [];
  for (const el of document.querySelectorAll(selector)) {
    if (el.offsetParent === null || el.closest(':disabled')) continue;
    if (!Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    const bg = background(el);
    const fg = over(rgba(getComputedStyle(el).color), bg);
    const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
    out.push({
      text: el.textContent.trim().slice(0, 30),
      cls: String(el.className || el.tagName),
      fg: fg.slice(0, 3).map(Math.round),
      bg: bg.slice(0, 3).map(Math.round),
      ratio: Math.round((hi + 0.05) / (lo + 0.05) * 100) / 100,
    });
  }
  return out;
}"""
