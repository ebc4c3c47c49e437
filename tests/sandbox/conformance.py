"""The sandbox contract (``WorkspaceSandbox`` and the optional members of
``ws_jupyter.sandbox.capabilities``), written once.

A sandbox provider — a container, a remote machine, ``LocalSandbox`` in some isolation mode —
proves itself by subclassing :class:`SandboxConformance` and giving the tests a fixture named
``sandbox_factory``: a function ``factory(timeout=None)`` returning a *fresh* sandbox over a new,
empty working directory, with ``timeout`` (seconds) as its default command time limit when it
has one; the fixture destroys what it made. The core tests run against every provider; the
tests of an optional capability (background processes, a lifecycle, a default timeout, a
private HOME, a description) skip, saying which, when the provider does not offer it — what
the workspace then assumes is written in ``sandbox.capabilities``. A third party runs the same
classes (a test of the subclass with the same name replaces the contract's, for a stricter
check of one's own)::

    from tests.sandbox.conformance import SandboxConformance

    class TestMyContainerSandbox(SandboxConformance):
        @pytest.fixture
        def sandbox_factory(self):
            made = []
            def make(timeout=None):
                sb = MyContainerSandbox(image="python:3.12", timeout=timeout)
                made.append(sb)
                return sb
            yield make
            for sb in made:
                sb.destroy()

The commands are POSIX shell command lines (``sh -c``), as the workspace's agent tools send
them. Everything runs for real. Here the suite runs against ``LocalSandbox`` without isolation
and under bubblewrap (``test_local.py``, ``test_bwrap.py``, which add what only a local sandbox
can show: process trees seen from the host, its options) and against a provider that has the
core only (``test_capabilities.py``).
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from ws_jupyter.errors import (
    InvalidArgumentError,
    ProcessWaitTimeoutError,
    SandboxError,
    SandboxStateError,
    StdinClosedError,
)
from ws_jupyter.sandbox.capabilities import (
    BackgroundProcess,
    ProcessProvider,
    sandbox_action,
    sandbox_home,
    sandbox_info,
    sandbox_processes,
    sandbox_timeout,
)
from ws_jupyter.sandbox.types import CommandResult, WorkspaceSandbox

from ..helpers import wait_for


def processes_of(sandbox: Any) -> ProcessProvider:
    """The sandbox's process manager, or a skip: the provider runs no background processes."""
    processes = sandbox_processes(sandbox)
    if processes is None:
        pytest.skip("this provider runs no background processes (sandbox.processes)")
    return processes


def step_of(sandbox: Any, name: str) -> Callable[[], None]:
    step = sandbox_action(sandbox, name)
    if step is None:
        pytest.skip(f"this provider has no {name}()")
    return step


def _sleepers(sandbox: Any) -> list[BackgroundProcess]:
    """Three background processes that would run for a while (none without a process manager)."""
    processes = sandbox_processes(sandbox)
    return [processes.spawn("sleep 30") for _ in range(3)] if processes is not None else []


class SandboxConformance:
    """What every sandbox must do. See the module docstring for how to run it."""

    @pytest.fixture
    def sandbox(self, sandbox_factory: Callable[..., Any]) -> Any:
        return sandbox_factory(timeout=20)

    # --- the core members ----------------------------------------------------------------------

    def test_the_core_members(self, sandbox):
        assert isinstance(sandbox, WorkspaceSandbox)
        for name in ("id", "name", "provider"):
            value = getattr(sandbox, name)
            assert isinstance(value, str) and value, name
        assert isinstance(sandbox.status, str)
        assert isinstance(sandbox.get_instructions(), str)
        assert isinstance(sandbox.get_instructions(None), str)

    def test_a_command_runs_without_an_explicit_start(self, sandbox_factory):
        sb = sandbox_factory()
        r = sb.execute_command("echo hi")
        assert isinstance(r, CommandResult) and r.stdout == "hi\n"
        assert sb.status == "running"

    # --- commands: output and exit codes ---------------------------------------------------------

    def test_stdout_stderr_and_success(self, sandbox):
        r = sandbox.execute_command("echo out; echo err >&2")
        assert (r.success, r.exit_code, r.stdout, r.stderr) == (True, 0, "out\n", "err\n")
        assert r.command == "echo out; echo err >&2"
        assert not r.timed_out and not r.killed
        assert r.execution_time_ms > 0

    @pytest.mark.parametrize(
        ("command", "code"),
        [("exit 3", 3), ("true", 0), ("false", 1), ("kill -KILL $$", 137), ("kill -TERM $$", 143)],
    )
    def test_exit_codes_pass_through(self, sandbox, command, code):
        r = sandbox.execute_command(command)
        assert r.exit_code == code
        assert r.success is (code == 0)

    def test_unknown_command_is_127_not_an_exception(self, sandbox):
        r = sandbox.execute_command("definitely-not-a-command-xyz")
        assert r.exit_code == 127 and not r.success
        assert "not found" in r.stderr

    def test_args_are_shell_quoted(self, sandbox):
        r = sandbox.execute_command("printf '%s|'", args=["a b", "$HOME", "it's", "*", "; rm -rf x"])
        assert r.stdout == "a b|$HOME|it's|*|; rm -rf x|"

    def test_utf8_output_and_invalid_bytes(self, sandbox):
        r = sandbox.execute_command("printf 'h\\303\\251llo \\342\\202\\254 \\377!'")
        assert r.stdout == "héllo € \ufffd!"

    def test_foreground_stdin_is_at_its_end(self, sandbox):
        t0 = time.monotonic()
        r = sandbox.execute_command("cat; echo done")
        assert r.stdout == "done\n" and time.monotonic() - t0 < 5

    def test_foreground_callbacks_get_all_output_in_order(self, sandbox):
        chunks: list[str] = []
        errs: list[str] = []
        r = sandbox.execute_command(
            "seq 1 20000; echo bad >&2", on_stdout=chunks.append, on_stderr=errs.append
        )
        expected = "".join(f"{i}\n" for i in range(1, 20001))
        assert "".join(chunks) == expected == r.stdout
        assert "".join(errs) == "bad\n"

    def test_a_command_ends_with_its_main_process(self, sandbox):
        t0 = time.monotonic()
        r = sandbox.execute_command("sleep 30 & echo started")
        assert r.stdout == "started\n" and time.monotonic() - t0 < 5

    # --- working directory and environment ------------------------------------------------------

    def test_relative_cwd_resolves_against_the_working_directory(self, sandbox):
        root = sandbox.execute_command("pwd").stdout.strip()
        assert sandbox.execute_command("mkdir -p sub/deeper").success
        assert sandbox.execute_command("pwd", cwd="sub/deeper").stdout.strip() == root + "/sub/deeper"

    def test_missing_cwd_is_a_clear_error(self, sandbox):
        with pytest.raises(SandboxError) as info:
            sandbox.execute_command("pwd", cwd="no/such/dir")
        assert info.value.code == "INVALID_CWD"

    def test_host_secrets_are_not_inherited_and_call_env_is(self, sandbox, monkeypatch):
        monkeypatch.setenv("WS_TEST_SECRET_TOKEN", "hunter2")
        out = sandbox.execute_command("env", env={"WS_TEST_CALL": "given"}).stdout
        env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        assert "WS_TEST_SECRET_TOKEN" not in env and "hunter2" not in out
        assert env["WS_TEST_CALL"] == "given"

    def test_home_is_private_writable_and_persists_between_commands(self, sandbox):
        assert sandbox.execute_command("echo x > ~/note && mkdir -p ${TMPDIR:-/tmp}/t").success
        assert sandbox.execute_command("cat ~/note").stdout == "x\n"
        home = sandbox_home(sandbox)
        if home is not None:  # declared: it is the HOME commands see
            assert sandbox.execute_command("echo $HOME").stdout.strip() == home

    # --- timeouts -------------------------------------------------------------------------------

    def test_a_per_call_timeout_is_124_and_timed_out(self, sandbox):
        t0 = time.monotonic()
        r = sandbox.execute_command("sleep 10", timeout=0.5)
        assert r.timed_out and r.exit_code == 124 and not r.success
        assert time.monotonic() - t0 < 5

    def test_the_default_timeout_applies_and_inf_lifts_it(self, sandbox_factory):
        sb = sandbox_factory(timeout=0.3)
        if sandbox_timeout(sb) != 0.3:
            pytest.skip("this provider has no default command timeout (sandbox.timeout)")
        r = sb.execute_command("sleep 10")
        assert r.timed_out and r.exit_code == 124
        assert sb.execute_command("sleep 0.6; echo ok", timeout=math.inf).stdout == "ok\n"

    def test_keyboard_interrupt_stops_the_command(self, sandbox):
        # What a kernel interrupt does: a real SIGINT to the main thread while the command runs.
        main = threading.main_thread().ident
        assert main is not None
        timer = threading.Timer(0.5, lambda: signal.pthread_kill(main, signal.SIGINT))
        t0 = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            sandbox.execute_command("sleep 30")
        assert time.monotonic() - t0 < 10

    # --- bad input ------------------------------------------------------------------------------

    @pytest.mark.parametrize(
        "kwargs",
        [
            {"command": ""},
            {"command": "echo", "args": "not-a-list"},
            {"command": "echo", "args": [1]},
            {"command": "echo", "timeout": -1},
            {"command": "echo", "timeout": "10"},
            {"command": "echo", "env": {"A": 1}},
            {"command": "echo", "env": {"A=B": "x"}},
            {"command": "echo", "on_stdout": "print"},
        ],
    )
    def test_bad_arguments_raise_typed_errors(self, sandbox, kwargs):
        with pytest.raises(InvalidArgumentError):
            sandbox.execute_command(**kwargs)
        processes = sandbox_processes(sandbox)
        assert processes is None or processes.list() == []

    # --- description ----------------------------------------------------------------------------

    def test_info_describes_the_sandbox(self, sandbox):
        sandbox.execute_command("true")
        info = sandbox_info(sandbox)
        if info is None:
            pytest.skip("this provider describes nothing (get_info)")
        assert (info.id, info.name, info.provider) == (sandbox.id, sandbox.name, sandbox.provider)
        assert info.status == sandbox.status == "running"

    # --- lifecycle ------------------------------------------------------------------------------

    def test_stop_ends_running_work_and_the_sandbox_runs_again(self, sandbox):
        stop = step_of(sandbox, "stop")
        handles = _sleepers(sandbox)
        stop()
        assert sandbox.status == "stopped"
        assert all(h.exit_code is not None for h in handles)
        assert sandbox.execute_command("echo again").stdout == "again\n"
        assert sandbox.status == "running"

    def test_destroy_is_final_and_idempotent(self, sandbox):
        destroy = step_of(sandbox, "destroy")
        handles = _sleepers(sandbox)
        destroy()
        assert sandbox.status == "destroyed"
        assert all(h.exit_code is not None for h in handles)
        with pytest.raises(SandboxStateError):
            sandbox.execute_command("true")
        processes = sandbox_processes(sandbox)
        if processes is not None:
            with pytest.raises(SandboxStateError):
                processes.spawn("true")
        destroy()

    # --- background processes -------------------------------------------------------------------

    def test_spawn_returns_at_once_and_is_tracked(self, sandbox):
        processes = processes_of(sandbox)
        t0 = time.monotonic()
        h = processes.spawn("echo begin; sleep 2; echo end")
        assert time.monotonic() - t0 < 1.0
        assert isinstance(processes, ProcessProvider) and isinstance(h, BackgroundProcess)
        assert h.exit_code is None and h.running
        infos = processes.list()
        assert [(i.pid, i.running, i.command) for i in infos] == [(h.pid, True, h.command)]
        assert processes.get(h.pid) is h and processes.get(str(h.pid)) is h
        assert wait_for(lambda: h.stdout == "begin\n", 3)
        r = h.wait()
        assert (r.exit_code, r.stdout) == (0, "begin\nend\n")
        info = processes.list()[0]
        assert not info.running and info.exit_code == 0 and info.ended_at >= info.started_at
        assert info.runtime_seconds is not None and 1.5 < info.runtime_seconds < 5

    def test_exited_processes_keep_output_until_released(self, sandbox):
        processes = processes_of(sandbox)
        h = processes.spawn("echo kept")
        h.wait()
        again = processes.get(h.pid)
        assert again is h and again.stdout == "kept\n" and again.exit_code == 0
        assert processes.get(h.pid) is h  # not forgotten after a read
        assert processes.release(h.pid) is True
        assert processes.get(h.pid) is None and processes.list() == []

    def test_release_of_a_running_process_is_refused(self, sandbox):
        processes = processes_of(sandbox)
        h = processes.spawn("sleep 30")
        with pytest.raises(SandboxStateError):
            processes.release(h.pid)
        assert h.kill(grace=0) is True

    def test_unknown_pids(self, sandbox):
        processes = processes_of(sandbox)
        assert processes.get(999_999_999) is None
        assert processes.kill(999_999_999) is False
        with pytest.raises(InvalidArgumentError):
            processes.get("abc")

    def test_kill_ends_the_process_once(self, sandbox):
        processes = processes_of(sandbox)
        h = processes.spawn("sleep 30 & sleep 30")
        assert processes.kill(h.pid) is True
        assert h.exit_code is not None and h.result().killed
        assert h.kill() is False  # already exited
        assert processes.kill(h.pid) is False

    def test_kill_from_an_output_callback_does_not_deadlock(self, sandbox):
        processes = processes_of(sandbox)
        box: dict[str, Any] = {}

        def on_out(_text: str) -> None:
            h = box.get("h")
            if h is not None:
                assert h.kill() is True

        h = processes.spawn("sleep 0.2; echo go; sleep 30", on_stdout=on_out)
        box["h"] = h
        r = h.wait(timeout=10)
        assert r.killed and r.stdout == "go\n"

    def test_stdin_round_trip_and_its_end(self, sandbox):
        processes = processes_of(sandbox)
        h = processes.spawn("cat")
        h.send_stdin("hello\n")
        h.send_stdin("wörld\n".encode())
        h.close_stdin()
        r = h.wait(timeout=5)
        assert r.exit_code == 0 and r.stdout == "hello\nwörld\n"
        with pytest.raises(StdinClosedError):
            h.send_stdin("late")

    def test_stdin_ignore_and_closed_stdin_errors(self, sandbox):
        processes = processes_of(sandbox)
        h = processes.spawn("cat", stdin="ignore")
        assert h.wait(timeout=5).exit_code == 0
        with pytest.raises(StdinClosedError):
            h.send_stdin("x")
        exited = processes.spawn("true")
        exited.wait()
        with pytest.raises(StdinClosedError):
            exited.send_stdin("x")

    def test_background_timeout_and_abort(self, sandbox):
        processes = processes_of(sandbox)
        h = processes.spawn("sleep 30", timeout=0.5)
        r = h.wait(timeout=5)
        assert r.timed_out and r.exit_code == 124
        abort = threading.Event()
        h2 = processes.spawn("sleep 30", abort=abort)
        threading.Timer(0.3, abort.set).start()
        r2 = h2.wait(timeout=5)
        assert r2.killed and not r2.timed_out and r2.exit_code in (143, 137)

    def test_wait_timeout_leaves_the_process_running(self, sandbox):
        processes = processes_of(sandbox)
        h = processes.spawn("sleep 30")
        with pytest.raises(ProcessWaitTimeoutError):
            h.wait(timeout=0.2)
        assert h.running and h.exit_code is None
        h.kill(grace=0)

    def test_wait_callbacks_see_the_output_that_comes_while_waiting(self, sandbox):
        processes = processes_of(sandbox)
        h = processes.spawn("sleep 0.3; echo one; sleep 0.3; echo two")
        seen: list[str] = []
        h.wait(on_stdout=seen.append)
        assert "".join(seen) == "one\ntwo\n"

    def test_subscribe_replay_for_late_subscribers(self, sandbox):
        processes = processes_of(sandbox)
        h = processes.spawn("echo early; echo err >&2; sleep 0.3; echo late")
        assert wait_for(lambda: h.stdout == "early\n" and h.stderr == "err\n", 3)
        events: list[tuple[str, str]] = []
        done = threading.Event()

        def cb(kind: str, text: str) -> None:
            events.append((kind, text))
            if kind == "exit":
                done.set()

        h.subscribe(cb, replay=True)
        assert done.wait(5)
        assert "".join(t for k, t in events if k == "stdout") == "early\nlate\n"
        assert ("stderr", "err\n") in events
        # after exit: replay then exit, at once
        after: list[tuple[str, str]] = []
        h.subscribe(lambda k, t: after.append((k, t)), replay=True)
        assert wait_for(lambda: after and after[-1][0] == "exit", 2)
        assert after == [("stdout", "early\nlate\n"), ("stderr", "err\n"), ("exit", "")]

    def test_unsubscribe_stops_events(self, sandbox):
        processes = processes_of(sandbox)
        h = processes.spawn("for i in 1 2 3 4 5; do echo $i; sleep 0.1; done")
        seen: list[str] = []
        unsubscribe = h.subscribe(lambda k, t: seen.append(t))
        assert wait_for(lambda: seen, 3)
        unsubscribe()
        count = len(seen)
        h.wait()
        assert len(seen) == count

    def test_a_failing_callback_does_not_stop_output(self, sandbox):
        processes = processes_of(sandbox)

        def boom(_text: str) -> None:
            raise RuntimeError("callback bug")

        h = processes.spawn("seq 1 1000", on_stdout=boom)
        assert h.wait(timeout=5).stdout == "".join(f"{i}\n" for i in range(1, 1001))

    def test_spawn_from_a_short_lived_thread_keeps_running(self, sandbox):
        processes = processes_of(sandbox)
        box: dict[str, Any] = {}
        t = threading.Thread(target=lambda: box.setdefault("h", processes.spawn("sleep 1; echo alive")))
        t.start()
        t.join()
        assert box["h"].wait(timeout=10).stdout == "alive\n"

    def test_a_foreground_command_is_listed_while_it_runs_and_forgotten_after(self, sandbox):
        processes = processes_of(sandbox)
        box: dict[str, CommandResult] = {}
        t = threading.Thread(target=lambda: box.setdefault("r", sandbox.execute_command("sleep 0.5; echo done")))
        t.start()
        assert wait_for(lambda: [i for i in processes.list() if i.running], 5)
        t.join(10)
        assert box["r"].stdout == "done\n"
        assert processes.list() == []

    @pytest.mark.parametrize(
        "kwargs",
        [{"max_retained_bytes": -1}, {"stdin": "tty"}, {"abort": "yes"}, {"timeout": 0}],
    )
    def test_bad_spawn_arguments(self, sandbox, kwargs):
        processes = processes_of(sandbox)
        with pytest.raises(InvalidArgumentError):
            processes.spawn("true", **kwargs)
