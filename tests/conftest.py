"""Fixtures shared by every test package."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = REPO_ROOT.parent / "shared"


#: The files with browser tests (marker ``browser``). Under pytest-xdist with ``--dist loadfile``
#: (scripts/test.sh) each test file runs on one worker, so its module fixtures (a JupyterLab, an
#: S3 server, a built docs site) are made once; these files run on one worker too, one after
#: another, so two Chromium-driven JupyterLabs never compete for the cores.
BROWSER_FILES = frozenset(
    {
        "tests/docs/test_site.py",
        "tests/jupyter/test_browser.py",
        "tests/jupyter/test_browser_legibility.py",
        "tests/jupyter/test_browser_network.py",
        "tests/jupyter/test_browser_user_data.py",
        "tests/jupyter/test_live.py",
        "tests/jupyter/test_live_rtc.py",
        "tests/security/test_render_exfiltration.py",
        "tests/security/test_ws_py_in_notebook.py",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("browser") and item.nodeid.split("::")[0] not in BROWSER_FILES:
            raise pytest.UsageError(f"{item.nodeid} is a browser test: add its file to BROWSER_FILES")


if importlib.util.find_spec("xdist") is not None:

    def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
        """``--dist loadfile``, with the browser test files as one unit (see BROWSER_FILES)."""
        if config.getvalue("dist") != "loadfile":
            return None
        from xdist.scheduler import LoadScopeScheduling

        class ByFileBrowsersTogether(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                path = nodeid.split("::", 1)[0]
                return "browser tests" if path in BROWSER_FILES else path

        return ByFileBrowsersTogether(config, log)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A fresh directory for a workspace (tmp_path's real path, so symlink checks are exact)."""
    path = Path(os.path.realpath(tmp_path)) / "ws"
    path.mkdir()
    return path


@pytest.fixture(scope="module")
def s3():
    """An S3 API server (moto) on 127.0.0.1 for the tests of one module, stopped after them;
    each test makes its own bucket (``s3.new_bucket()``)."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'ws-jupyter[s3]')")
    pytest.importorskip("moto.server", reason="moto[server] is not installed (the dev extra has it)")
    from .servers import S3Server

    server = S3Server()
    yield server
    server.stop()


@pytest.fixture(scope="session", autouse=True)
def _private_data_dir(tmp_path_factory: pytest.TempPathFactory):
    """ws-jupyter's per-user data directory (checkpoint stores, their signing key) in a temporary
    folder for the whole run, children included: tests never touch the real one."""
    old = os.environ.get("WS_JUPYTER_DATA_DIR")
    os.environ["WS_JUPYTER_DATA_DIR"] = str(tmp_path_factory.mktemp("ws-data"))
    yield
    if old is None:
        os.environ.pop("WS_JUPYTER_DATA_DIR", None)
    else:
        os.environ["WS_JUPYTER_DATA_DIR"] = old


@pytest.fixture(scope="session")
def notebook_runs(tmp_path_factory: pytest.TempPathFactory):
    """The example notebooks, each executed once per session on the ws-jupyter kernel (installed
    into a temp prefix for the session): ``notebook_runs.run("quickstart.ipynb") -> (nb, folder)``."""
    from .notebook_runs import NotebookRuns

    runs = NotebookRuns(tmp_path_factory.mktemp("notebook-runs"))
    yield runs
    runs.close()
