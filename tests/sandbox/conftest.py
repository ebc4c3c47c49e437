"""Fixtures for the sandbox tests: sandboxes in temp dirs, bwrap availability, leak checks."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from ws_jupyter.sandbox import LocalSandbox
from ws_jupyter.sandbox.isolation import probe_backend

BWRAP = probe_backend("bwrap")
requires_bwrap = pytest.mark.skipif(
    not BWRAP.available, reason=f"bubblewrap cannot run here: {BWRAP.message}"
)


@pytest.fixture
def make_sandbox(tmp_path: Path) -> Iterator[Callable[..., LocalSandbox]]:
    """Factory of sandboxes over ``<tmp>/wd`` (real path); all are destroyed after the test."""
    made: list[LocalSandbox] = []
    base = Path(os.path.realpath(tmp_path))

    def make(isolation: str = "none", **kw: Any) -> LocalSandbox:
        kw.setdefault("working_directory", str(base / "wd"))
        sb = LocalSandbox(isolation=isolation, **kw)
        made.append(sb)
        return sb

    yield make
    for sb in made:
        sb.destroy()


def marker() -> str:
    """A unique sleep duration: lets psutil find exactly this test's processes by command line."""
    return f"{300 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**6:06d}"


def processes_with(text: str) -> list[psutil.Process]:
    """Live (non-zombie) processes with ``text`` as one argument (``sleep <marker>``, not the shell)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if text in (proc.info["cmdline"] or ()):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def alive(procs: Iterable[psutil.Process]) -> list[psutil.Process]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            continue
    return out
