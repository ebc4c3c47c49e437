"""Fixtures for the Jupyter integration: an IPython shell with the extension, a real workspace
(real files in a temp dir, a real sandbox), and the ws-jupyter kernelspec installed into a temp
prefix that Jupyter finds through ``JUPYTER_PATH`` (nothing is written outside the test's dirs)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter.install.kernel import install_kernel

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """IPython's testing shell with ``%load_ext ws_jupyter``, working in a temp dir.

    ``%ws init`` here makes unisolated sandboxes (``WsMagics.isolation = 'none'``): most tests are
    about the magics, and bubblewrap would only slow them down; the tests of the default (auto)
    and of isolation set it back. The extension is unloaded afterwards, which destroys the
    workspace ``%ws init`` created (its processes die).
    """
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    # A kernel's shell renders HTML and Markdown; the terminal testing shell turns them off.
    for mime in ("text/html", "text/markdown"):
        monkeypatch.setattr(shell.display_formatter.formatters[mime], "enabled", True)
    monkeypatch.chdir(os.path.realpath(tmp_path))
    shell.run_line_magic("load_ext", "ws_jupyter")
    shell.run_line_magic("config", "WsMagics.isolation = 'none'")
    yield shell
    shell.run_line_magic("unload_ext", "ws_jupyter")
    shell.config.pop("WsMagics", None)  # %config settings must not leak into the next test
    for name in ("ws", "_", "__", "___"):
        shell.user_ns.pop(name, None)


@pytest.fixture
def ws_dir(workdir: Path) -> Path:
    """A small project: code, docs, a .gitignore, a hidden file, a binary and an image."""
    (workdir / "src" / "pkg").mkdir(parents=True)
    (workdir / "src" / "app.py").write_text(
        "import os\n\ndef main():\n    # TODO: parse args\n    return 42\n"
    )
    (workdir / "src" / "pkg" / "util.py").write_text("def helper(x):\n    return x * 2  # TODO later\n")
    (workdir / "docs").mkdir()
    (workdir / "docs" / "guide.md").write_text(
        "# Guide\n\nTraining neural networks needs a learning rate schedule.\n\nEvaluate on held-out data.\n"
    )
    (workdir / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (workdir / ".gitignore").write_text("build/\n*.log\n")
    (workdir / "build").mkdir()
    (workdir / "build" / "out.txt").write_text("ignored\n")
    (workdir / "debug.log").write_text("ignored log\n")
    (workdir / ".secret").write_text("hidden\n")
    (workdir / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (workdir / "pixel.png").write_bytes(_tiny_png())
    return workdir


@pytest.fixture
def workspace(ws_dir: Path) -> Iterator[Any]:
    """A real workspace over ``ws_dir``: LocalFilesystem, LocalSandbox, BM25, nothing indexed yet
    (the widgets index it themselves)."""
    from ws_jupyter import Workspace

    ws = Workspace.from_directory(ws_dir, embedder=None, auto_index_paths=())
    ws.init()
    yield ws
    ws.destroy()


@pytest.fixture
def ws_ip(ip: Any, ws_dir: Path) -> Any:
    """The testing shell with ``%ws init`` done on ``ws_dir``."""
    ip.run_line_magic("ws", f"init {ws_dir}")
    return ip


@pytest.fixture(scope="session")
def kernel_prefix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The ws-jupyter kernelspec installed into a temp prefix, visible to Jupyter for the session."""
    prefix = tmp_path_factory.mktemp("kernel-prefix")
    install_kernel(prefix=str(prefix))
    share = str(prefix / "share" / "jupyter")
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = share + (os.pathsep + old if old else "")
    yield prefix
    if old is None:
        os.environ.pop("JUPYTER_PATH", None)
    else:
        os.environ["JUPYTER_PATH"] = old


@pytest.fixture
def kernel(kernel_prefix: Path, tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """A real ws-jupyter kernel (ipykernel from the installed spec) working in ``tmp_path``:
    ``(kernel manager, blocking client)``."""
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name="ws-jupyter")
    km.start_kernel(cwd=str(tmp_path))
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def _tiny_png() -> bytes:
    sys.path.insert(0, str(REPO_ROOT / "kernelspec"))
    try:
        from make_logos import png_bytes
    finally:
        sys.path.pop(0)
    return png_bytes([[(255, 0, 0, 255), (0, 255, 0, 255)], [(0, 0, 255, 255), (255, 255, 255, 255)]])
