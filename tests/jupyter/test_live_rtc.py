"""The live link with real-time collaboration: the browser tests of ``test_live.py`` again, on a
JupyterLab whose environment has jupyter-collaboration (``.venv-rtc``, made by
``scripts/rtc-env.sh``; the kernels are still ``.venv``'s). There the notebook's model is the
shared document the Jupyter server holds and saves: proposals apply to it (one undo step), the
user's keystrokes and the agent's edits meet in it, and the server itself loads disk edits into it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .lab import JupyterLab
from .live_support import PANEL_JS, REPO
from .test_live import (  # noqa: F401  (fixtures and tests run again here)
    browser,
    live_lab,
    open_notebook,
    pytestmark,
    test_200_random_interleavings_lose_nothing_apply_nothing_stale_duplicate_nothing,
    test_a_disk_edit_reaches_the_tab_cell_by_cell_keeping_unsaved_edits,
    test_accept_mode_applies_at_once_with_a_marker_and_only_the_user_sets_it,
    test_agent_loop_in_a_cell_reads_unsaved_edits_and_the_user_accepts_undoes_and_rejects,
    test_every_keystroke_is_kept_while_the_agent_edits_other_cells,
    test_open_notebook_run_in_the_sandbox_marks_outputs_and_leaves_the_user_kernel_alone,
)

RTC_PYTHON = REPO / ".venv-rtc" / "bin" / "python"


@pytest.fixture(scope="module")
def collaborative() -> bool:
    return True


@pytest.fixture(scope="module")
def interleavings() -> int:
    return 50


@pytest.fixture(scope="module")
def lab(kernel_prefix: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    made = subprocess.run([str(REPO / "scripts" / "rtc-env.sh")], capture_output=True, text=True, timeout=900)
    if made.returncode != 0:
        pytest.skip(f"the jupyter-collaboration environment could not be made:\n{made.stderr[-2000:]}")
    yield from live_lab(kernel_prefix, tmp_path_factory, python=str(RTC_PYTHON), name="live-rtc")


def test_the_notebook_model_is_the_shared_document(open_notebook: Any) -> None:  # noqa: F811
    """The tab's notebook model is collaborative (jupyter-collaboration's drive serves it)."""
    nb = open_notebook("shared.ipynb", [("code", "1 + 1", "c-one")])
    assert nb.page.evaluate(f"(path) => ({PANEL_JS})(path).content.model.collaborative", nb.path) is True
