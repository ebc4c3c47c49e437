"""Every call the activity feed saw start is seen to finish, however it ended — and says when it
was cancelled (its abort event set: the notebook's stop button, an MCP client's cancellation)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter import LocalSandbox, ToolCallContext, tool_activity

from .conftest import box


def _events(ws: Any) -> list[Any]:
    seen: list[Any] = []
    tool_activity(ws).subscribe(seen.append)
    return seen


def test_an_aborted_call_finishes_as_cancelled(make_ws: Any, workdir: Path) -> None:
    ws = make_ws(sandbox=LocalSandbox(working_directory=workdir, isolation="none"), bm25=False)
    seen = _events(ws)
    abort = threading.Event()
    threading.Timer(0.5, abort.set).start()
    started = time.monotonic()
    out = box(ws)["workspace_execute_command"].run(
        {"command": "sleep 60"}, ToolCallContext(abort=abort), approved=True
    )
    assert time.monotonic() - started < 20  # the command was killed
    finished = [e for e in seen if e.kind == "finished"]
    assert len(finished) == 1 and finished[0].cancelled, (out, finished)
    box(ws)["workspace_read_file"].run({"path": "."})  # an ordinary call is not "cancelled"
    assert not [e for e in seen if e.kind == "finished"][-1].cancelled


def test_an_interrupted_calling_thread_still_reports_the_end(make_ws: Any, workdir: Path) -> None:
    """A KeyboardInterrupt in the thread running the tool (an agent loop run in the cell itself,
    then stopped) used to leave the call "running" forever in every log."""
    ws = make_ws(sandbox=LocalSandbox(working_directory=workdir, isolation="none"), bm25=False)
    seen = _events(ws)

    def interrupted(call: Any) -> str:  # a hook that runs in the tool's thread, like the tool
        raise KeyboardInterrupt

    ws.set_tools_config({"hooks": {"before_tool_call": interrupted}})
    with pytest.raises(KeyboardInterrupt):
        box(ws)["workspace_read_file"].run({"path": "."})
    kinds = [(e.kind, e.cancelled) for e in seen]
    assert kinds == [("started", False), ("finished", True)]
    assert seen[-1].is_error and seen[-1].output == "Error: Tool call interrupted."
