"""Fixtures for the kernel tests: real sandboxes, real ipykernels, psutil leak checks.

Starting a kernel costs a second or more on a loaded machine, so the behaviour tests share one
module-scoped sandbox and kernel; lifecycle tests make their own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from ws_jupyter import WORKSPACE_TOOLS, LocalFilesystem, LocalSandbox, Workspace

from ..sandbox.conftest import BWRAP, make_sandbox, marker, processes_with, requires_bwrap

__all__ = [
    "BWRAP",
    "PNG_CODE",
    "bwrap_workspace",
    "kernel_processes",
    "make_sandbox",
    "marker",
    "processes_with",
    "requires_bwrap",
]

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


def kernel_processes(connection_file: str) -> list[psutil.Process]:
    """Live processes started for this connection file (the kernel, and bwrap around it)."""
    return processes_with(connection_file)


def bwrap_workspace(root: Path, **sandbox: Any) -> Workspace:
    """A workspace over ``root`` whose commands and kernels run under bubblewrap, with the kernel
    tools approved (``sandbox`` options go to its ``LocalSandbox``). The caller destroys it."""
    t = WORKSPACE_TOOLS.SANDBOX
    return Workspace(
        filesystem=LocalFilesystem(root),
        sandbox=LocalSandbox(working_directory=str(root), isolation="bwrap", **sandbox),
        tools={name: {"require_approval": False} for name in (t.RUN_NOTEBOOK, t.EXECUTE_CODE)},
        bm25=False,
    )
