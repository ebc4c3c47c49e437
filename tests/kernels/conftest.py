"""Fixtures for the kernel tests: real sandboxes, real ipykernels, psutil leak checks.

Starting a kernel costs a second or more on a loaded machine, so the behaviour tests share one
module-scoped sandbox and kernel; lifecycle tests make their own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from ws_jupyter import LocalSandbox
from ws_jupyter.sandbox.isolation import probe_backend

BWRAP = probe_backend("bwrap")
requires_bwrap = pytest.mark.skipif(
    not BWRAP.available, reason=f"bubblewrap cannot run here: {BWRAP.message}"
)

#: A PNG of 1x1 pixel, built in the kernel without any imaging library.
PNG_CODE = r"""
import struct, zlib
from IPython.display import Image, display
def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
png = (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
       + _chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + _chunk(b"IEND", b""))
display(Image(data=png, format="png"))
"""


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSandbox]:
    """One sandbox (no isolation) for a whole test module; destroyed at the end."""
    base = Path(os.path.realpath(tmp_path_factory.mktemp("kernels")))
    sb = LocalSandbox(working_directory=str(base / "wd"))
    yield sb
    sb.destroy()


@pytest.fixture
def make_sandbox(tmp_path: Path) -> Iterator[Callable[..., LocalSandbox]]:
    """Factory of sandboxes over ``<tmp>/wd``; all are destroyed after the test."""
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


def kernel_processes(connection_file: str) -> list[psutil.Process]:
    """Live processes that were started for this connection file (the kernel, bwrap around it)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if connection_file in (proc.info["cmdline"] or ()):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found
