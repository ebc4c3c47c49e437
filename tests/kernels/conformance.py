"""The kernel contract (``ws_jupyter.sandbox.kernels.provider.KernelProvider``), written once.

A kernel provider proves itself by subclassing :class:`KernelConformance`, setting
``isolation`` (what its ``KernelInfo.isolation`` says) and giving the tests a fixture named
``kernels``: the provider, whose default kernel runs an ipykernel. Share one provider per module
or class (``scope="module"``): starting kernels is the slow part, and the tests use their own
variable names so they can share a kernel. A third party runs the same classes::

    from tests.kernels.conformance import KernelConformance

    class TestMyCloudKernels(KernelConformance):
        isolation = "my-cloud"

        @pytest.fixture(scope="class")
        def kernels(self):
            provider = MyCloudKernelProvider(...)
            yield provider
            provider.close()

Here the suite runs against a sandbox's own kernels without isolation
(``test_execute.py``) and under bubblewrap (``test_isolation.py``), and against a real Jupyter
Kernel Gateway (``test_gateway.py``). Everything is real: no kernel is mocked.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from ws_jupyter.errors import InvalidArgumentError, KernelError, KernelNotFoundError
from ws_jupyter.sandbox.kernels import ExecutionResult, KernelInfo, KernelProvider, OutputEvent, SandboxKernel

from ..helpers import wait_for
from .conftest import PNG_CODE


def _info(kernels: Any, name: str = "default") -> KernelInfo:
    return {i.name: i for i in kernels.list()}[name]


class KernelConformance:
    """What every ``sandbox.kernels`` must do. See the module docstring for how to run it."""

    isolation = "none"

    # --- the provider --------------------------------------------------------------------------

    def test_the_provider_meets_the_protocol_and_is_available(self, kernels: Any) -> None:
        assert isinstance(kernels, KernelProvider)
        assert kernels.availability() == (True, "") and kernels.available
        assert isinstance(kernels.remote, bool)
        kernel = kernels.start()
        assert isinstance(kernel, SandboxKernel) and kernels.get() is kernel and kernels["default"] is kernel
        info = _info(kernels)
        assert (info.status, info.isolation, info.language) == ("idle", self.isolation, "python")
        assert "default" in kernels.names()

    def test_bad_input_is_a_typed_error(self, kernels: Any) -> None:
        with pytest.raises(KernelError) as info:
            kernels.execute(b"1 + 1")
        assert info.value.code == "INVALID_ARGUMENT"
        with pytest.raises(InvalidArgumentError):
            kernels.start("no spaces allowed")
        with pytest.raises(KernelNotFoundError, match="No kernel named 'ghost'"):
            kernels.restart("ghost")
        with pytest.raises(KernelNotFoundError):
            kernels["ghost"]
        assert kernels.get("ghost") is None and kernels.shutdown("ghost") is False

    # --- executions ----------------------------------------------------------------------------

    def test_state_persists_across_executions(self, kernels: Any) -> None:
        first = kernels.execute("kc_rows = [3, 1, 2]\nprint('loaded', len(kc_rows))")
        assert first.status == "ok" and first.stdout == "loaded 3\n" and first.result is None, first
        second = kernels.execute("kc_rows.append(4); sorted(kc_rows)")
        assert second.ok and second.text == "[1, 2, 3, 4]"
        assert second.execution_count == first.execution_count + 1

    def test_an_error_is_reported_and_the_kernel_stays_usable(self, kernels: Any) -> None:
        r = kernels.execute("kc_before = 1\nkc_undefined_name + 1")
        assert r.status == "error"
        assert (r.ename, r.evalue) == ("NameError", "name 'kc_undefined_name' is not defined")
        assert "kc_undefined_name" in r.error.traceback_text and "\x1b[" not in r.error.traceback_text
        after = kernels.execute("kc_before + 1")
        assert after.ok and after.text == "2"

    def test_stdout_stderr_result_and_displays(self, kernels: Any) -> None:
        code = (
            "import sys\nfrom IPython.display import display, HTML\n"
            "print('out'); print('err', file=sys.stderr)\ndisplay(HTML('<b>bold</b>'))\n" + PNG_CODE + "\n'last'"
        )
        r = kernels.execute(code)
        assert r.ok, r
        assert (r.stdout, r.stderr) == ("out\n", "err\n")
        assert r.display[0].html == "<b>bold</b>"
        images = r.images()
        assert len(images) == 1 and images[0][0] == "image/png" and images[0][1].startswith(b"\x89PNG")
        assert r.text == "'last'" and r.result is not None and r.result.kind == "result"

    def test_clear_output_and_display_updates(self, kernels: Any) -> None:
        r = kernels.execute(
            "from IPython.display import display, clear_output\n"
            "print('old')\nclear_output()\nprint('new')\n"
            "kc_h = display('v1', display_id=True)\nkc_h.update('v2')"
        )
        assert r.stdout == "new\n"
        assert [b.text for b in r.display] == ["'v2'"]

    def test_output_streams_while_the_code_runs(self, kernels: Any) -> None:
        seen: list[tuple[float, OutputEvent]] = []
        started = time.monotonic()
        r = kernels.execute(
            "import time\nprint('first', flush=True)\ntime.sleep(1.5)\nprint('second')",
            on_output=lambda e: seen.append((time.monotonic(), e)),
        )
        assert r.stdout == "first\nsecond\n"
        texts = [(t, e.text) for t, e in seen if e.kind == "stdout"]
        assert texts[0][1] == "first\n"
        assert texts[0][0] - started < r.duration - 1.0  # the first line came well before the end

    def test_a_raising_output_callback_does_not_break_the_execution(self, kernels: Any) -> None:
        def boom(_event: OutputEvent) -> None:
            raise RuntimeError("callback bug")

        r = kernels.execute("print('fine')", on_output=boom)
        assert r.ok and r.stdout == "fine\n"

    def test_input_does_not_hang(self, kernels: Any) -> None:
        r = kernels.execute("input('name? ')", timeout=30)
        assert r.status == "error" and r.ename == "StdinNotImplementedError"

    def test_json_nested_deeper_than_a_notebook_allows_is_cut_with_a_note(self, kernels: Any) -> None:
        r = kernels.execute(
            "from IPython.display import display\nkc_deep = []\nfor _ in range(300):\n    kc_deep = [kc_deep]\n"
            "display({'application/json': kc_deep, 'text/plain': 'deep'}, raw=True)"
        )
        assert r.ok, r
        (bundle,) = r.display
        value, depth = bundle.data["application/json"], 0
        while isinstance(value, list) and value:
            value, depth = value[0], depth + 1
        assert bundle.text == "deep" and depth < 96 and value == "[JSON nested deeper than 96 levels: not kept]"

    def test_concurrent_executions_on_one_kernel_run_in_arrival_order(self, kernels: Any) -> None:
        kernels.execute("import time\nkc_order = []")
        results: dict[int, ExecutionResult] = {}
        queued: list[str] = []
        unsubscribe = kernels.activity.subscribe(lambda e: queued.append(e.code) if e.kind == "queued" else None)
        try:
            threads = []
            for i in range(4):
                code = f"kc_order.append(('start', {i})); time.sleep(0.2); kc_order.append(('end', {i}))"
                t = threading.Thread(target=lambda i=i, code=code: results.setdefault(i, kernels.execute(code)))
                t.start()
                threads.append(t)
                assert wait_for(lambda code=code: code in queued, 10)
                time.sleep(0.2)  # arrival order is the order of the calls: let this one take its turn
            for t in threads:
                t.join(60)
        finally:
            unsubscribe()
        assert all(results[i].ok for i in range(4))
        order = eval(kernels.execute("kc_order").text)
        assert order == [(e, i) for i in range(4) for e in ("start", "end")]

    def test_executions_are_published_to_the_feed(self, kernels: Any) -> None:
        events: list[Any] = []
        unsubscribe = kernels.activity.subscribe(events.append)
        try:
            kernels.execute("print('fed')", origin="agent", tool_call_id="kc-call-1")
        finally:
            unsubscribe()
        kinds = [e.kind for e in events]
        assert kinds[0] == "queued" and kinds[1] == "started" and kinds[-1] == "finished"
        assert any(e.kind == "output" and e.output.text == "fed\n" for e in events)
        assert {e.origin for e in events} == {"agent"} and events[-1].result.stdout == "fed\n"
        record = kernels.activity.recent(1)[0]
        assert record.code == "print('fed')" and record.state == "ok" and record.tool_call_id == "kc-call-1"

    # --- stopping code -------------------------------------------------------------------------

    def test_a_time_limit_interrupts_and_keeps_the_state(self, kernels: Any) -> None:
        kernels.execute("kc_survivor = 'still here'")
        started = time.monotonic()
        r = kernels.execute("import time\nfor _ in range(600):\n    time.sleep(0.1)", timeout=1)
        assert r.status == "timeout" and r.timed_out and r.ename == "KeyboardInterrupt", r
        assert time.monotonic() - started < 30
        assert any("timed out after 1 s" in n and "state is kept" in n for n in r.notes)
        assert not r.restarted
        assert kernels.execute("kc_survivor").text == "'still here'"

    def test_abort_interrupts(self, kernels: Any) -> None:
        abort = threading.Event()
        threading.Timer(0.5, abort.set).start()
        r = kernels.execute("import time; time.sleep(60)", abort=abort)
        assert r.status == "error" and r.ename == "KeyboardInterrupt"
        assert any("cancelled" in n for n in r.notes)

    def test_interrupt_from_another_thread(self, kernels: Any) -> None:
        assert kernels.interrupt() is False  # nothing runs
        box: dict[str, ExecutionResult] = {}
        t = threading.Thread(target=lambda: box.setdefault("r", kernels.execute("import time; time.sleep(60)")))
        t.start()
        assert wait_for(lambda: kernels["default"].status == "busy", timeout=30)
        time.sleep(0.3)
        assert kernels.interrupt() is True
        t.join(30)
        assert not t.is_alive() and box["r"].ename == "KeyboardInterrupt"

    # --- restarts, crashes, several kernels ------------------------------------------------------

    def test_restart_loses_the_state_and_cuts_running_code_short(self, kernels: Any) -> None:
        kernels.execute("kc_before_restart = 1")
        restarts = _info(kernels).restarts
        box: dict[str, ExecutionResult] = {}
        t = threading.Thread(target=lambda: box.setdefault("r", kernels.execute("import time; time.sleep(60)")))
        t.start()
        assert wait_for(lambda: kernels["default"].status == "busy", timeout=30)
        kernels.restart()
        t.join(30)
        assert not t.is_alive()
        assert box["r"].status == "error" and box["r"].ename == "KernelRestarted"
        after = kernels.execute("kc_before_restart")
        assert after.ename == "NameError" and after.execution_count == 1
        assert _info(kernels).restarts == restarts + 1

    def test_a_crash_is_reported_and_the_next_call_works(self, kernels: Any) -> None:
        kernels.execute("kc_doomed = 1")
        r = kernels.execute("import os; os._exit(3)", timeout=60)
        assert r.status == "error" and r.ename == "KernelDied" and r.restarted, r
        # time limits: a wait that goes wrong fails here within a minute, with the result to read
        after = kernels.execute("print('back')\nkc_doomed", timeout=60)
        assert after.ename == "NameError" and after.stdout == "back\n", after  # its output is not lost
        assert kernels.execute("6 * 7", timeout=60).text == "42"

    def test_named_kernels_are_independent(self, kernels: Any) -> None:
        kernels.execute("kc_who = 'default'")
        kernels.execute("kc_who = 'other'", kernel="kc-other")
        try:
            assert kernels.execute("kc_who").text == "'default'"
            assert kernels.execute("kc_who", kernel="kc-other").text == "'other'"
            assert {"default", "kc-other"} <= {i.name for i in kernels.list()}
        finally:
            assert kernels.shutdown("kc-other") is True
        assert kernels.get("kc-other") is None and "kc-other" not in kernels.names()
