"""The README's tour runs as written, one line per cell, in an IPython shell with the extension
(the same tour opens the documentation site). Isolation is the default, ``auto``: under bubblewrap
the tour's web server listens in the sandbox's own network, not on the machine's port 8000."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"

pytestmark = pytest.mark.slow


def _tour() -> list[str]:
    text = README.read_text()
    found = re.search(r"## A tour\n.*?```python\n(.*?)```", text, re.S)
    assert found, "the README has no tour"
    return [line for line in found.group(1).splitlines() if line.strip() and not line.startswith("#")]


def test_the_tour_runs_line_by_line(ip: Any) -> None:
    ip.run_line_magic("unload_ext", "ws_jupyter")  # the tour loads it itself
    ip.run_line_magic("config", "WsMagics.isolation = 'auto'")
    results: dict[str, Any] = {}
    for line in _tour():
        outcome = ip.run_cell(line)
        assert outcome.success, f"{line!r} failed: {outcome.error_before_exec or outcome.error_in_exec!r}"
        results[line] = outcome.result

    def result(prefix: str) -> Any:
        return next(value for line, value in results.items() if line.startswith(prefix))

    assert "notes.md" in str(result("%ws ls"))
    assert str(result("%ws grep")).startswith("1 match across 1 file")
    assert "notes.md:2" in str(result("%ws search"))
    assert result("ws.sandbox.kernels.execute") == "42"
    assert "The cache is cleared on every write." in str(result("%ws call"))
    assert type(result("%ws ui")).__name__ == "Dashboard"
    assert ip.user_ns["openai_tools"] and ip.user_ns["server"].pid
