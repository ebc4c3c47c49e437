"""``workspace_run_notebook`` stops when its time limit passes or its call is cancelled.

The time limit interrupted the kernel once: a notebook whose cells shrug off ``KeyboardInterrupt``
ran on cell after cell (``{timeout: 3}`` took 33.7 s, growing with the cells), and an MCP cancel
left all 8 of 8 cells running. Real kernels under bubblewrap; the MCP call goes through the
official client and the workspace's MCP server, in process.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from mcp import Client

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import Workspace
from ws_jupyter.adapters.mcp_server import build_mcp_server
from ws_jupyter.notebooks import Notebook

from ..helpers import wait_for
from ..kernels.conftest import bwrap_workspace
from .conftest import requires_bwrap

pytestmark = [
    requires_bwrap,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

#: A cell that takes its time, shrugs off an interrupt, and logs that it ran.
STUBBORN = """import time
try:
    time.sleep({seconds})
except KeyboardInterrupt:
    pass
open("ran.txt", "a").write("{index}\\n")
"""
#: A cell that never stops on an interrupt (its process renamed, to be found from outside).
ENDLESS = """import time
with open("/proc/self/comm", "w") as f:
    f.write("ws-endless")
open("started.txt", "w").write("yes")
while True:
    try:
        time.sleep(10)
    except KeyboardInterrupt:
        pass
"""


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    root = Path(os.path.realpath(tmp_path)) / "wd"
    root.mkdir()
    w = bwrap_workspace(root, kernels={"interrupt_timeout": 2})
    yield w
    w.destroy()


def stubborn_notebook(ws: Workspace, cells: int, seconds: float) -> None:
    sources = [("code", STUBBORN.format(seconds=seconds, index=i)) for i in range(cells)]
    Notebook.new(sources).save(ws.filesystem, "slow.ipynb")


def ran(ws: Workspace) -> list[str]:
    path = Path(ws.filesystem.base_path) / "ran.txt"
    return path.read_text().split() if path.exists() else []


def run(ws: Workspace, **args: Any) -> str:
    tool = {t.name: t for t in ws.tools()}[T.SANDBOX.RUN_NOTEBOOK]
    return str(tool.run(args))


def test_the_time_limit_bounds_the_whole_run_whatever_the_cells_do(ws: Workspace) -> None:
    stubborn_notebook(ws, cells=8, seconds=2.5)  # 20 s of cells, each shrugging off an interrupt
    started = time.monotonic()
    summary = run(ws, path="slow.ipynb", timeout=3)
    elapsed = time.monotonic() - started
    # the limit (3 s) plus the interrupt's grace (2 s), with room for a loaded machine
    assert elapsed < 15, f"a 3 s run took {elapsed:.1f} s"
    assert len(ran(ws)) <= 3, ran(ws)  # no cell starts once the limit has passed
    assert "[timed out after 3 s: the kernel was interrupted" in summary, summary
    assert "code cell(s) not run]" in summary and "outputs saved" in summary
    assert not [k for k in ws.sandbox.kernels.names() if k.startswith("notebook-")]


def test_a_cell_that_ignores_the_interrupt_is_abandoned_and_its_kernel_killed(ws: Workspace) -> None:
    Notebook.new([("code", "print('before')"), ("code", ENDLESS), ("code", "print('after')")]).save(
        ws.filesystem, "endless.ipynb"
    )
    started = time.monotonic()
    summary = run(ws, path="endless.ipynb", timeout=3)
    assert time.monotonic() - started < 15, summary
    assert "[1] killed" in summary and "[2] not run" in summary, summary
    assert "did not stop within 2 s, shut down; 1 code cell(s) not run]" in summary, summary
    assert (Path(ws.filesystem.base_path) / "started.txt").exists()
    assert wait_for(lambda: not [p for p in psutil.process_iter(["name"]) if p.info["name"] == "ws-endless"])


def test_an_mcp_cancel_stops_the_run(ws: Workspace) -> None:
    stubborn_notebook(ws, cells=8, seconds=1.5)  # 12 s of cells
    server = build_mcp_server(ws, approve_all=True)

    async def main() -> float:
        with anyio.fail_after(120):
            async with Client(server, mode="legacy") as client:
                with anyio.move_on_after(3):
                    await client.call_tool(T.SANDBOX.RUN_NOTEBOOK, {"path": "slow.ipynb", "timeout": 600})
                return time.monotonic()

    cancelled_at = anyio.run(main)
    after_cancel = len(ran(ws))
    # the cell running at the cancel may finish (it shrugs off the interrupt); none starts after it
    assert wait_for(lambda: not [k for k in ws.sandbox.kernels.names() if k.startswith("notebook-")], timeout=20)
    time.sleep(max(0.0, cancelled_at + 4 - time.monotonic()))
    assert len(ran(ws)) <= after_cancel + 1 and len(ran(ws)) < 5, ran(ws)
