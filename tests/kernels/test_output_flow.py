"""Fast output arrives whole, or the result says exactly what it left out.

The kernel's IOPub socket dropped what its queue to the notebook could not hold: ``print(i,
flush=True)`` 20,000 times lost thousands of lines with no note, and ``workspace_run_notebook``
kept only a cell's first 500 stream messages. Real ipykernels under bubblewrap; every line is
counted.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import Workspace
from ws_jupyter.notebooks import Notebook
from ws_jupyter.tools.sandbox.kernels import format_execution

from .conftest import bwrap_workspace, requires_bwrap

pytestmark = [pytest.mark.slow, requires_bwrap]

LINES = 20_000
FAST = f"for i in range({LINES}):\n    print(i, flush=True)"


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    w = bwrap_workspace(Path(os.path.realpath(tmp_path_factory.mktemp("flow"))), timeout=120)
    yield w
    w.destroy()


def tools(ws: Workspace) -> dict[str, Any]:
    return {t.name: t for t in ws.tools()}


def test_twenty_thousand_fast_lines_all_arrive(ws: Workspace) -> None:
    r = ws.sandbox.kernels.execute(FAST, timeout=120)
    assert r.ok, r
    assert r.stdout.splitlines() == [str(i) for i in range(LINES)]
    assert r.stdout_dropped == 0 and not r.notes


def test_past_the_limit_the_result_keeps_head_and_tail_and_counts_every_line_left_out(ws: Workspace) -> None:
    kernels = ws.sandbox.kernels
    before = kernels.config
    kernels.configure(limits={"max_stream_chars": 20_000})
    try:
        r = kernels.execute(FAST, timeout=120)
    finally:
        kernels.configure(before)
    head, _, rest = r.stdout.partition("[... ")
    marker, _, tail = rest.partition(" not kept ...]\n")
    omitted = int(re.fullmatch(r"([\d,]+) lines \([\d,]+ characters\)", marker).group(1).replace(",", ""))
    head_lines, tail_lines = head.splitlines(), tail.splitlines()
    # the start and the end, each line whole and in order, and the count of those in between
    assert head_lines == [str(i) for i in range(len(head_lines))]
    assert tail_lines == [str(i) for i in range(LINES - len(tail_lines), LINES)]
    assert len(head_lines) + omitted + len(tail_lines) == LINES
    assert r.stdout_dropped_lines == omitted and r.stdout_dropped == sum(
        len(f"{i}\n") for i in range(len(head_lines), LINES - len(tail_lines))
    )
    out = format_execution(r, max_tokens=None)  # what workspace_execute_code answers
    assert f"[{omitted:,} lines (" in out and "characters) of stdout in the middle were not kept" in out, out


def test_a_notebook_run_saves_every_line_of_a_fast_cell(ws: Workspace) -> None:
    Notebook.new([("code", FAST), ("code", "print('next')")]).save(ws.filesystem, "fast.ipynb")
    summary = str(tools(ws)[T.SANDBOX.RUN_NOTEBOOK].run({"path": "fast.ipynb", "timeout": 120}))
    assert "all 2 code cells ok" in summary and "outputs saved" in summary, summary
    saved = json.loads((Path(ws.filesystem.base_path) / "fast.ipynb").read_text())
    (stream,) = saved["cells"][0]["outputs"]  # one output for the stream, not one per message
    assert "".join(stream["text"]).splitlines() == [str(i) for i in range(LINES)]
