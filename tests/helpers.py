"""Small helpers shared by test packages."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

_T = TypeVar("_T")


def write(root: Path, rel: str, content: str | bytes = "x") -> Path:
    """Create ``root/rel`` (and its parent directories) with ``content``; return its path."""
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content)
    return p


def wait_for(predicate: Callable[[], _T], timeout: float = 10.0, interval: float = 0.02) -> _T:
    """Poll ``predicate`` until it returns something truthy or ``timeout`` passes; return its last
    value (falsy on timeout), so callers write ``assert wait_for(...)``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def architecture_floors(repo: Path) -> list[list[str]]:
    """The rooms column of ARCHITECTURE.md's floors table (``errors.py``, ``text/``...), from the
    ground up: the floor plan the layering test checks the imports against."""
    text = (repo / "ARCHITECTURE.md").read_text()
    table = text.split("## The floors", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|") for line in table.splitlines() if re.match(r"\| \d+ \|", line)]
    return [re.findall(r"`([^`]+)`", row[2]) for row in sorted(rows, key=lambda r: int(r[1]))]
