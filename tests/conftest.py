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
