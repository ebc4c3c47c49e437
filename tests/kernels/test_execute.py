"""Running code in a sandbox kernel: state, errors, time limits, output, queueing.

One real ipykernel per module serves the behaviour tests (state is shared on purpose: the tests
use their own variable names).
"""

from __future__ import annotations

import threading
import time

import pytest

from ws_jupyter import LocalSandbox
from ws_jupyter.errors import InvalidArgumentError, KernelError, KernelNotFoundError
from ws_jupyter.sandbox.kernels import ExecutionResult, OutputEvent

from ..helpers import wait_for
from .conftest import PNG_CODE

pytestmark = pytest.mark.slow


def test_state_persists_across_executions(sandbox: LocalSandbox) -> None:
    first = sandbox.kernels.execute("persist_me = [1, 2, 3]\nprint('stored')")
    assert first.status == "ok" and first.stdout == "stored\n" and first.result is None
    second = sandbox.kernels.execute("persist_me.append(4); sum(persist_me)")
    assert second.ok and second.text == "10"
    assert second.execution_count == first.execution_count + 1


def test_the_working_directory_is_the_workspace(sandbox: LocalSandbox) -> None:
    (__import__("pathlib").Path(sandbox.working_directory) / "data.csv").write_text("a,b\n1,2\n")
    r = sandbox.kernels.execute("import os; print(os.getcwd()); open('data.csv').read()")
    assert r.stdout.strip() == sandbox.working_directory
    assert r.text == repr("a,b\n1,2\n")


def test_error_is_reported_and_the_kernel_stays_usable(sandbox: LocalSandbox) -> None:
    r = sandbox.kernels.execute("err_before = 1\nundefined_name_xyz + 1")
    assert r.status == "error"
    assert (r.ename, r.evalue) == ("NameError", "name 'undefined_name_xyz' is not defined")
    assert "undefined_name_xyz" in r.error.traceback_text and "\x1b[" not in r.error.traceback_text
    after = sandbox.kernels.execute("err_before + 1")
    assert after.ok and after.text == "2"


def test_stdout_stderr_result_and_displays(sandbox: LocalSandbox) -> None:
    code = (
        "import sys\nfrom IPython.display import display, HTML\n"
        "print('out'); print('err', file=sys.stderr)\ndisplay(HTML('<b>bold</b>'))\n" + PNG_CODE + "\n'last'"
    )
    r = sandbox.kernels.execute(code)
    assert r.ok, r
    assert (r.stdout, r.stderr) == ("out\n", "err\n")
    assert r.display[0].html == "<b>bold</b>"
    images = r.images()
    assert len(images) == 1 and images[0][0] == "image/png" and images[0][1].startswith(b"\x89PNG")
    assert r.text == "'last'" and r.result is not None and r.result.kind == "result"
    data, _meta = r.result._repr_mimebundle_()
    assert data["text/plain"] == "'last'"


def test_time_limit_interrupts_and_state_survives(sandbox: LocalSandbox) -> None:
    sandbox.kernels.execute("survivor = 'still here'")
    started = time.monotonic()
    r = sandbox.kernels.execute("import time\nfor _ in range(600):\n    time.sleep(0.1)", timeout=1)
    assert r.status == "timeout" and r.timed_out
    assert time.monotonic() - started < 30
    assert r.ename == "KeyboardInterrupt"
    assert any("timed out after 1 s" in n and "state is kept" in n for n in r.notes)
    assert not r.restarted
    nxt = sandbox.kernels.execute("survivor")
    assert nxt.ok and nxt.text == "'still here'"


def test_code_that_ignores_the_interrupt_gets_a_restart(make_sandbox) -> None:
    sb = make_sandbox(kernels={"interrupt_timeout": 1.0})
    sb.kernels.execute("lost = 1")
    code = "import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass"
    r = sb.kernels.execute(code, timeout=1)
    assert r.status == "timeout" and r.restarted
    assert any("restarted (its state is lost)" in n for n in r.notes)
    after = sb.kernels.execute("lost")
    assert after.ename == "NameError"


def test_restart_clears_state(sandbox: LocalSandbox) -> None:
    k = sandbox.kernels.start("restart-me")
    k.execute("gone = 1")
    pid = k.pid
    k.restart()
    assert k.pid != pid and k.restarts == 1
    r = k.execute("gone")
    assert r.ename == "NameError"
    assert r.execution_count == 1
    sandbox.kernels.shutdown("restart-me")


def test_two_kernels_are_independent(sandbox: LocalSandbox) -> None:
    sandbox.kernels.execute("who = 'default'")
    sandbox.kernels.execute("who = 'other'", kernel="other")
    assert sandbox.kernels.execute("who").text == "'default'"
    assert sandbox.kernels.execute("who", kernel="other").text == "'other'"
    pids = {i.name: i.pid for i in sandbox.kernels.list()}
    assert pids["default"] != pids["other"]
    assert sandbox.kernels.shutdown("other") is True
    assert sandbox.kernels.get("other") is None


def test_concurrent_executions_on_one_kernel_queue_in_order(sandbox: LocalSandbox) -> None:
    sandbox.kernels.execute("import time\norder = []")
    results: dict[int, ExecutionResult] = {}

    def run(i: int) -> None:
        code = f"order.append(('start', {i})); time.sleep(0.2); order.append(('end', {i}))"
        results[i] = sandbox.kernels.execute(code)

    threads = []
    for i in range(4):
        t = threading.Thread(target=run, args=(i,))
        t.start()
        threads.append(t)
        assert wait_for(lambda i=i: sandbox.kernels["default"]._turn.waiting >= 1 or i in results, 10)
        time.sleep(0.05)  # arrival order is the order of the calls
    for t in threads:
        t.join(60)
    assert all(results[i].ok for i in range(4))
    order = eval(sandbox.kernels.execute("order").text)
    assert order == [(e, i) for i in range(4) for e in ("start", "end")]


def test_output_streams_while_the_code_runs(sandbox: LocalSandbox) -> None:
    seen: list[tuple[float, OutputEvent]] = []
    started = time.monotonic()
    r = sandbox.kernels.execute(
        "import time\nprint('first', flush=True)\ntime.sleep(1.5)\nprint('second')",
        on_output=lambda e: seen.append((time.monotonic(), e)),
    )
    assert r.stdout == "first\nsecond\n"
    texts = [(t, e.text) for t, e in seen if e.kind == "stdout"]
    assert texts[0][1] == "first\n"
    assert texts[0][0] - started < r.duration - 1.0  # the first line came well before the end


def test_a_raising_output_callback_does_not_break_the_execution(sandbox: LocalSandbox) -> None:
    def boom(_event: OutputEvent) -> None:
        raise RuntimeError("callback bug")

    r = sandbox.kernels.execute("print('fine')", on_output=boom)
    assert r.ok and r.stdout == "fine\n"


def test_clear_output_and_display_updates(sandbox: LocalSandbox) -> None:
    r = sandbox.kernels.execute(
        "from IPython.display import display, clear_output\n"
        "print('old')\nclear_output()\nprint('new')\n"
        "h = display('v1', display_id=True)\nh.update('v2')"
    )
    assert r.stdout == "new\n"
    assert [b.text for b in r.display] == ["'v2'"]


def test_huge_output_is_bounded(make_sandbox) -> None:
    sb = make_sandbox(kernels={"limits": {"max_stream_chars": 100_000, "max_displays": 5}})
    r = sb.kernels.execute(
        "import sys\nfor i in range(200):\n    sys.stdout.write(str(i % 10) * 50_000)\n"
        "from IPython.display import display\nfor i in range(50):\n    display(i)\nprint('END')"
    )
    assert r.ok
    assert len(r.stdout) < 110_000 and r.stdout_dropped > 9_000_000
    assert r.stdout.startswith("0" * 1000) and r.stdout.endswith("END\n")
    assert len(r.display) == 5 and r.displays_dropped == 45


def test_a_message_bigger_than_the_limit_is_dropped(make_sandbox) -> None:
    # ZeroMQ drops the oversized message (and the IOPub connection with it): the execution still
    # ends, says output was lost, and the kernel answers the next call with its output intact.
    sb = make_sandbox(kernels={"max_message_bytes": 1 << 20})
    r = sb.kernels.execute(
        "from IPython.display import display\ndisplay({'text/plain': 'x' * 5_000_000}, raw=True)"
    )
    assert r.ok and r.display == ()
    assert any("output was lost" in n for n in r.notes)
    after = sb.kernels.execute("print('back'); 8")
    assert after.ok and after.stdout == "back\n" and after.text == "8"


def test_input_does_not_hang(sandbox: LocalSandbox) -> None:
    r = sandbox.kernels.execute("input('name? ')", timeout=30)
    assert r.status == "error" and r.ename == "StdinNotImplementedError"


def test_a_crash_is_reported_and_the_kernel_restarted(make_sandbox) -> None:
    sb = make_sandbox()
    sb.kernels.execute("doomed = 1")
    r = sb.kernels.execute("import os; os._exit(3)")
    assert r.status == "error" and r.ename == "KernelDied" and r.restarted
    assert "exit code 3" in r.evalue
    after = sb.kernels.execute("doomed")
    assert after.ename == "NameError"


def test_a_kernel_that_died_while_idle_is_restarted_with_a_note(make_sandbox) -> None:
    import psutil

    sb = make_sandbox()
    sb.kernels.execute("x = 1")
    k = sb.kernels["default"]
    psutil.Process(k.pid).kill()
    assert wait_for(lambda: k.status == "dead", 10)
    r = sb.kernels.execute("1 + 1")
    assert r.ok and r.text == "2"
    assert any("had died" in n and "earlier variables" in n for n in r.notes)


def test_restart_cuts_a_running_execution_short(make_sandbox) -> None:
    sb = make_sandbox()
    k = sb.kernels.start()
    box: dict[str, ExecutionResult] = {}
    t = threading.Thread(target=lambda: box.setdefault("r", k.execute("import time; time.sleep(60)")))
    t.start()
    assert wait_for(lambda: k.status == "busy", 10)
    k.restart()
    t.join(30)
    assert box["r"].status == "error" and box["r"].ename == "KernelRestarted"
    assert k.execute("40 + 2").text == "42"


def test_abort_interrupts(sandbox: LocalSandbox) -> None:
    abort = threading.Event()
    threading.Timer(0.5, abort.set).start()
    r = sandbox.kernels.execute("import time; time.sleep(60)", abort=abort)
    assert r.status == "error" and r.ename == "KeyboardInterrupt"
    assert any("cancelled" in n for n in r.notes)


def test_idle_kernels_are_culled(make_sandbox) -> None:
    sb = make_sandbox(kernels={"idle_timeout": 0.5})
    sb.kernels.execute("kept = 1")
    k = sb.kernels["default"]
    assert wait_for(lambda: k.status == "stopped", 20)
    assert k.pid is None
    r = sb.kernels.execute("1")
    assert r.ok and any("without activity" in n for n in r.notes)


def test_names_specs_and_limits_are_checked(make_sandbox) -> None:
    sb = make_sandbox(kernels={"max_kernels": 1})
    with pytest.raises(InvalidArgumentError):
        sb.kernels.start("no spaces allowed")
    with pytest.raises(KernelError, match="No kernelspec named 'no-such-spec'"):
        sb.kernels.start("x", spec="no-such-spec")
    with pytest.raises(KernelNotFoundError, match="No kernel named 'ghost'"):
        sb.kernels.restart("ghost")
    sb.kernels.start("one")
    with pytest.raises(KernelError, match="Too many kernels"):
        sb.kernels.start("two")
    assert [i.name for i in sb.kernels.list()] == ["one"]


def test_executions_are_published_to_the_feed(sandbox: LocalSandbox) -> None:
    events = []
    unsubscribe = sandbox.kernels.activity.subscribe(events.append)
    try:
        sandbox.kernels.execute("print('fed')", origin="agent", tool_call_id="call-1")
    finally:
        unsubscribe()
    kinds = [e.kind for e in events]
    assert kinds[0] == "queued" and kinds[1] == "started" and kinds[-1] == "finished"
    assert any(e.kind == "output" and e.output.text == "fed\n" for e in events)
    assert {e.origin for e in events} == {"agent"} and events[-1].result.stdout == "fed\n"
    record = sandbox.kernels.activity.recent(1)[0]
    assert record.code == "print('fed')" and record.state == "ok" and record.tool_call_id == "call-1"


def test_kernels_config_is_checked_at_construction() -> None:
    from ws_jupyter import KernelsConfig, WorkspaceConfigError

    with pytest.raises(WorkspaceConfigError, match="Unknown kernels option"):
        LocalSandbox(kernels={"idle_timout": 5})
    with pytest.raises(WorkspaceConfigError, match="idle_timeout must be a positive number"):
        KernelsConfig(idle_timeout=-1)
    with pytest.raises(WorkspaceConfigError, match="max_kernels must be a positive integer"):
        KernelsConfig(max_kernels=0)
    assert KernelsConfig(idle_timeout=None).idle_timeout is None
    assert KernelsConfig.coerce({"limits": {"max_displays": 3}}).limits.max_displays == 3


def test_a_kernel_can_start_in_a_subfolder_of_the_workspace(sandbox: LocalSandbox) -> None:
    import os

    sub = os.path.join(sandbox.working_directory, "analysis")
    os.makedirs(sub, exist_ok=True)
    k = sandbox.kernels.start("in-sub", cwd="analysis")
    try:
        assert k.execute("import os; os.getcwd()").text == repr(sub)
    finally:
        sandbox.kernels.shutdown("in-sub")
