"""Fixtures shared by every test package."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = REPO_ROOT.parent / "shared"


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
