"""``%ws call`` in a real ws-jupyter kernel: live progress, the stop button, and what widgets say.

The kernel is a real ipykernel process (the installed kernelspec); the stop button is the kernel
manager's interrupt (SIGINT), as JupyterLab sends it. What the cell shows is read from the IOPub
messages the front-end would render; the widgets' state from their comm messages.
"""

from __future__ import annotations

import json
import queue
import time
from pathlib import Path
from typing import Any

import pytest

from .test_kernel import execute, shell_reply, streamed

pytestmark = pytest.mark.slow

SLEEPER = json.dumps(
    {"code": "import pathlib, time\npathlib.Path('started').touch()\nprint('started', flush=True)\ntime.sleep(120)"}
)


def _plain(msg: dict[str, Any]) -> str:
    return str(msg["content"].get("data", {}).get("text/plain", ""))


def _progress(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The call's own display and its updates (widgets' saved views update displays of their own)."""
    first = next(
        (m for m in messages if m["msg_type"] == "display_data" and _plain(m).startswith("workspace_execute_code(")),
        None,
    )
    assert first is not None, "the cell showed no progress while the call ran"
    display_id = first["content"]["transient"]["display_id"]
    return [
        m
        for m in messages
        if m["msg_type"] in ("display_data", "update_display_data")
        and m["content"].get("transient", {}).get("display_id") == display_id
    ]


def test_stop_cancels_a_call_cleanly_and_the_widgets_agree(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    km, kc = kernel
    execute(kc, f"%ws init {tmp_path / 'ws'} --isolation none")
    started = tmp_path / "ws" / "started"  # the workspace code touches it once it runs
    reply, _ = execute(
        kc,
        "from ws_jupyter.jupyter.widgets import KernelActivity, ToolActivity\n"
        "kernels, tools = KernelActivity(ws), ToolActivity(ws)\n"
        "ws.sandbox.kernels.execute('kept = \"yes\"').raise_for_error()",
    )
    assert reply["content"]["status"] == "ok"

    msg_id = kc.execute(f"%ws call --approve workspace_execute_code {SLEEPER}")
    messages: list[dict[str, Any]] = []
    interrupted_at = None
    deadline = time.monotonic() + 90
    while True:
        assert time.monotonic() < deadline, "the call never ended"
        if interrupted_at is None and started.exists():  # the code runs: press stop
            km.interrupt_kernel()
            interrupted_at = time.monotonic()
        try:
            msg = kc.get_iopub_msg(timeout=0.05)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    assert interrupted_at is not None
    stopped_in = time.monotonic() - interrupted_at
    reply = shell_reply(kc, msg_id)
    assert reply["content"]["status"] == "ok"  # handled as `%ws run` handles its stop: no error
    # no traceback through the library and ZeroMQ: nothing on stderr, no error output
    assert [m for m in messages if m["msg_type"] == "error"] == []
    assert streamed(messages, "stderr") == ""
    final = _progress(messages)[-1]["content"]["data"]
    assert "interrupted ·" in final["text/html"]  # one status line says so
    assert "[cancelled: the kernel was interrupted (its state is kept)]" in final["text/plain"]
    assert stopped_in < 10, stopped_in  # about half a second here; generous for a loaded machine

    reply, messages = execute(
        kc,
        "kernels.refresh(); tools.refresh()\n"
        "print(kernels.cells[-1]['status'], tools.calls[-1]['status'])\n"
        "tools.clear(); print(len(tools.calls))\n"
        "print(ws.sandbox.kernels.execute('kept').result.text)",
    )
    assert streamed(messages).split() == ["interrupted", "cancelled", "0", "'yes'"]


def test_a_call_shows_its_progress_live_and_buttons_that_cannot_act_are_disabled(
    kernel: tuple[Any, Any], tmp_path: Path
) -> None:
    _, kc = kernel
    execute(kc, f"%ws init {tmp_path / 'ws'} --isolation none")
    execute(kc, "from ws_jupyter.jupyter.widgets import KernelActivity\nactivity = KernelActivity(ws)\nactivity")
    code = json.dumps({"code": "import time\nfor i in range(4):\n    print('step', i, flush=True)\n    time.sleep(0.6)"})
    other: list[dict[str, Any]] = []  # widget traffic: comm messages carry no cell's parent

    def keep(msg: dict[str, Any]) -> None:
        msg["_arrived"] = time.monotonic()
        if msg["msg_type"] in ("comm_open", "comm_msg"):
            other.append(msg)

    started = time.monotonic()
    reply, messages = execute(kc, f"%ws call --approve workspace_execute_code {code}", on_message=keep)
    ended = messages[-1]["_arrived"]
    assert reply["content"]["status"] == "ok"
    shown = _progress(messages)
    assert shown and shown[0]["msg_type"] == "display_data"  # one display, then updates of it
    texts = [_plain(m) for m in shown]
    # a first call starts the workspace kernel: the cell says so instead of a bare [*]
    assert any("starting kernel 'default'" in t for t in texts), texts[:3]
    first_step = next(m["_arrived"] for m in shown if "step 0" in _plain(m))
    assert ended - first_step > 1.0  # the first line was on screen well before the end
    assert first_step - started < ended - started
    # the final view replaced the progress in place, and is not shown a second time
    assert "step 3" in texts[-1] and "running" not in texts[-1]
    assert [m for m in messages if m["msg_type"] == "execute_result"] == []
    _, after = execute(kc, "print(type(_).__name__, _.status)", on_message=keep)
    assert streamed(after).strip() == "ToolCallView done"  # the cell's value is still the view

    # KernelActivity's buttons: disabled while the cell ran (a click would wait for it), then enabled
    interrupt_ids = {
        m["content"]["comm_id"]
        for m in other
        if m["msg_type"] == "comm_open" and m["content"]["data"]["state"].get("description") == "Interrupt"
    }
    assert interrupt_ids
    states = [
        (m["_arrived"], m["content"]["data"]["state"]["disabled"])
        for m in other
        if m["content"].get("comm_id") in interrupt_ids
        and "disabled" in m["content"].get("data", {}).get("state", {})
    ]
    during = [d for t, d in states if t < first_step]
    assert during and during[-1] is True, states
    deadline = time.monotonic() + 15
    while not any(t > ended and d is False for t, d in states):
        assert time.monotonic() < deadline, f"the buttons stayed disabled after the cell: {states}"
        try:
            msg = kc.get_iopub_msg(timeout=0.5)
        except queue.Empty:
            continue
        keep(msg)
        if msg["content"].get("comm_id") in interrupt_ids:
            state = msg["content"].get("data", {}).get("state", {})
            if "disabled" in state:
                states.append((msg["_arrived"], state["disabled"]))
