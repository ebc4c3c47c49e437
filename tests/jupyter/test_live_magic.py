"""``%ws live`` outside a Jupyter kernel, and its help (in a kernel: test_live.py, test_notebooks.py)."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.error import UsageError


def test_ws_live_needs_a_kernel_and_says_so(ip: Any) -> None:
    with pytest.raises(UsageError, match="the live link needs a Jupyter kernel"):
        ip.run_line_magic("ws", "live")


def test_ws_live_help_names_the_settings_only_the_user_changes(ip: Any, capsys: Any) -> None:
    ip.run_line_magic("ws", "live --help")
    out = capsys.readouterr().out
    assert "--mode review" in out and "--user-runs off" in out and "No agent tool can change these" in out
    ip.run_line_magic("ws", "--help")
    assert "live" in capsys.readouterr().out
