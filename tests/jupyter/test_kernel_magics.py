"""``%ws kernel``, ``%%ws py`` and the ``KernelActivity`` widget, on real sandbox kernels.

The widget is driven headless through its state (``cells``, ``interrupt()``, button clicks); the
browser test confirms it renders.
"""

from __future__ import annotations

import _thread
import signal
import threading
import time
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from ws_jupyter import WORKSPACE_TOOLS as T

from ..helpers import wait_for
from ..kernels.conftest import PNG_CODE

pytestmark = pytest.mark.slow


def test_kernel_subcommands(ws_ip: Any) -> None:
    empty = ws_ip.run_line_magic("ws", "kernel list")
    assert empty.text().startswith("0 kernels")
    started = ws_ip.run_line_magic("ws", "kernel start")
    assert "Kernel 'default' is idle" in started.text()
    table = ws_ip.run_line_magic("ws", "kernel")
    assert table.text().startswith("1 kernel\n") and "default" in table.text() and "idle" in table.text()
    assert "ws-kernels" in table._repr_mimebundle_()["text/html"]
    assert "was not running code" in ws_ip.run_line_magic("ws", "kernel interrupt").text()
    assert "restarted" in ws_ip.run_line_magic("ws", "kernel restart").text()
    assert ws_ip.run_line_magic("ws", "kernel stop").text() == "Kernel 'default' stopped."
    with pytest.raises(UsageError, match="no kernel named 'default'"):
        ws_ip.run_line_magic("ws", "kernel restart")
    with pytest.raises(UsageError, match="--spec goes with `start`"):
        ws_ip.run_line_magic("ws", "kernel list --spec python3")


def test_ws_py_runs_in_the_workspace_kernel_and_shows_outputs_natively(ws_ip: Any) -> None:
    with capture_output() as cap:
        value = ws_ip.run_cell_magic(
            "ws", "py", "import os\nshared = 41\nprint('in', os.getcwd())\n" + PNG_CODE + "\nshared + 1"
        )
    ws = ws_ip.user_ns["ws"]
    assert cap.stdout == f"in {ws.sandbox.working_directory}\n"
    assert [o.data.keys() >= {"image/png"} for o in cap.outputs] == [True]
    assert value.text == "42"  # the cell's value renders as the kernel's result
    assert "shared" not in ws_ip.user_ns  # it ran in the workspace kernel, not the notebook's
    tool = {t.name: t for t in ws.tools()}[T.SANDBOX.EXECUTE_CODE]
    assert tool.run({"code": "shared"}, approved=True).endswith("]: 41")  # the agent sees the same kernel


def test_ws_py_shows_errors_and_check_raises(ws_ip: Any) -> None:
    with capture_output() as cap:
        value = ws_ip.run_cell_magic("ws", "py", "1 / 0")
    assert value is None
    assert "ZeroDivisionError" in cap.stderr
    with pytest.raises(UsageError, match="ZeroDivisionError"):
        ws_ip.run_cell_magic("ws", "py --check", "1 / 0")
    with pytest.raises(UsageError, match="the cell is empty"):
        ws_ip.run_cell_magic("ws", "py", "  \n")


def test_ws_py_interrupt_stops_the_workspace_kernel(ws_ip: Any) -> None:
    ws_ip.run_cell_magic("ws", "py", "kept = 'yes'")
    # The stop button reaches a running cell as SIGINT with Python's handler installed (ipykernel
    # installs it while a cell runs). A test process started as a background job has SIGINT
    # ignored, and then interrupt_main() does nothing: install the handler as the kernel does.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Timer(1.5, _thread.interrupt_main).start()
        started = time.monotonic()
        with capture_output() as cap:
            ws_ip.run_cell_magic("ws", "py", "import time\ntime.sleep(60)")
        assert time.monotonic() - started < 30
    finally:
        signal.signal(signal.SIGINT, previous)
    assert "KeyboardInterrupt" in cap.stderr
    assert ws_ip.run_cell_magic("ws", "py", "kept").text == "'yes'"


def test_kernel_activity_shows_agent_executions_live(workspace: Any) -> None:
    from ws_jupyter.jupyter.widgets import KernelActivity

    tools = {t.name: t for t in workspace.tools()}
    execute = tools[T.SANDBOX.EXECUTE_CODE]
    execute.run({"code": "print('before the widget')"}, approved=True)
    widget = KernelActivity(workspace, interval=0.1)
    try:
        assert widget.cells[-1]["stdout"] == "before the widget\n"  # earlier executions are shown
        execute.run(
            {
                "code": "from IPython.display import HTML, display\n"
                + PNG_CODE
                + "\ndisplay(HTML('<b onmouseover=\"alert(1)\">bold</b>'))\nprint('drawn')"
            },
            approved=True,
        )
        widget.refresh()
        cell = widget.cells[-1]
        assert (cell["origin"], cell["status"], cell["stdout"]) == ("agent", "ok", "drawn\n")
        assert "image/png" in cell["outputs"] and "text/html" in cell["outputs"]
        html = widget._views[cell["execution_id"]].body.value
        assert '<img src="data:image/png;base64,' in html
        assert '<iframe sandbox=""' in html and "<b onmouseover" not in html  # agent HTML is sandboxed
        # the saved view a reopened notebook shows: the executions as cells, the plot included
        saved_html, saved_text = widget.snapshot()
        assert saved_text.startswith("Kernel activity: 2 executions")
        assert "default ok" in saved_text and "before the widget" in saved_text
        assert '<img src="data:image/png;base64,' in saved_html and "<b onmouseover" not in saved_html

        box: dict[str, Any] = {}
        t = threading.Thread(
            target=lambda: box.setdefault(
                "out", execute.run({"code": "import time\ntime.sleep(60)"}, approved=True)
            )
        )
        t.start()
        assert wait_for(lambda: widget.cells and widget.cells[-1]["status"] == "running", 20)
        view = widget._views[widget.cells[-1]["execution_id"]]
        assert view.interrupt_button.layout.display != "none"
        view.interrupt_button.click()
        t.join(30)
        assert "KeyboardInterrupt" in box["out"]
        assert wait_for(lambda: widget.cells[-1]["status"] == "interrupted", 10)

        kernel = workspace.sandbox.kernels["default"]
        restarts = kernel.restarts
        view.restart_button.click()  # runs on a thread: the notebook stays free
        assert wait_for(lambda: kernel.restarts == restarts + 1 and kernel.status == "idle", 60)
    finally:
        widget.close()


def test_dashboard_has_a_kernels_tab(workspace: Any) -> None:
    from ws_jupyter.jupyter.widgets import Dashboard

    dashboard = Dashboard(workspace)
    try:
        assert "Kernels" in dashboard.tab_names and dashboard.kernels is not None
    finally:
        dashboard.close()


def test_an_execution_result_displays_as_a_cell(workspace: Any) -> None:
    from ws_jupyter.jupyter.views import ExecutionView, register_formatters, unregister_formatters

    r = workspace.sandbox.kernels.execute("print('x')\n6 * 7")
    html = ExecutionView(r).html()
    assert "ws-execution" in html and "6 * 7" in html and "42" in html and "x\n" in html

    from types import SimpleNamespace

    from IPython.core.formatters import DisplayFormatter

    shell = SimpleNamespace(display_formatter=DisplayFormatter())  # a shell's formatters, nothing else
    register_formatters(shell)
    # an ExecutionResult shown as a cell's value renders as that cell
    shown = shell.display_formatter.formatters["text/html"](r)
    assert "ws-execution" in shown and "42" in shown
    unregister_formatters(shell)
    assert shell.display_formatter.formatters["text/html"](r) is None
