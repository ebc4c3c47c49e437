"""The sandbox contract, written once.

Any sandbox configuration proves itself by subclassing :class:`SandboxConformance` and setting
``isolation`` (``"none"``, ``"bwrap"``...). Everything runs for real: real shells, real process
trees checked with psutil, real pipes.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from ws_jupyter.errors import (
    InvalidArgumentError,
    ProcessWaitTimeoutError,
    SandboxError,
    SandboxStateError,
    StdinClosedError,
)
from ws_jupyter.sandbox import LocalSandbox

from ..helpers import wait_for, write
from .conftest import alive, marker, processes_with

PY = sys.executable  # visible inside bubblewrap too (allow_system_binaries binds the prefix)


class SandboxConformance:
    isolation = "none"

    @pytest.fixture
    def sandbox(self, make_sandbox) -> LocalSandbox:
        return make_sandbox(self.isolation, timeout=20)

    @pytest.fixture
    def make(self, make_sandbox):
        return lambda **kw: make_sandbox(self.isolation, **kw)

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

    def test_foreground_stdin_is_devnull(self, sandbox):
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

    def test_foreground_output_is_bounded(self, sandbox):
        r = sandbox.execute_command("seq 1 100000", max_output_bytes=1000)
        assert r.stdout_truncated and len(r.stdout.encode()) <= 1000
        assert r.stdout.endswith("99999\n100000\n")

    def test_leftover_background_children_are_killed(self, sandbox):
        m = marker()
        t0 = time.monotonic()
        r = sandbox.execute_command(f"sleep {m} & echo started")
        assert r.stdout == "started\n" and time.monotonic() - t0 < 3
        assert wait_for(lambda: not processes_with(m), 3), "a stray child outlived its command"

    def test_foreground_command_is_listed_and_stopped_from_another_thread(self, sandbox):
        m = marker()
        box: dict[str, object] = {}
        t = threading.Thread(target=lambda: box.setdefault("r", sandbox.execute_command(f"sleep {m}")))
        t.start()
        assert wait_for(lambda: [i for i in sandbox.processes.list() if i.running], 5)
        assert wait_for(lambda: processes_with(m), 5)
        sandbox.stop()
        t.join(5)
        r = box["r"]
        assert r.killed and not r.timed_out and r.exit_code in (143, 137)
        assert sandbox.processes.list() == []  # foreground commands are forgotten once done
        assert not processes_with(m)

    def test_kill_from_an_output_callback_does_not_deadlock(self, sandbox):
        m = marker()
        box: dict[str, object] = {}

        def on_out(_text: str) -> None:
            h = box.get("h")
            if h is not None:
                assert h.kill() is True

        h = sandbox.processes.spawn(f"sleep 0.2; echo go; sleep {m}", on_stdout=on_out)
        box["h"] = h
        r = h.wait(timeout=10)
        assert r.killed and r.stdout == "go\n"
        assert wait_for(lambda: not processes_with(m), 3)

    # --- working directory and environment ------------------------------------------------------

    def test_auto_start_and_working_directory(self, make, tmp_path):
        wd = Path(os.path.realpath(tmp_path)) / "auto" / "wd"
        sb = make(working_directory=str(wd))
        assert sb.status == "pending" and not wd.exists()
        r = sb.execute_command("pwd")
        assert sb.status == "running"
        assert r.stdout.strip() == str(wd)

    def test_relative_cwd_resolves_against_working_directory(self, sandbox):
        sandbox.execute_command("mkdir -p sub/deeper")
        assert sandbox.execute_command("pwd", cwd="sub/deeper").stdout.strip() == os.path.join(
            sandbox.working_directory, "sub", "deeper"
        )

    def test_missing_cwd_is_a_clear_error(self, sandbox):
        with pytest.raises(SandboxError) as info:
            sandbox.execute_command("pwd", cwd="no/such/dir")
        assert info.value.code == "INVALID_CWD"

    def test_host_secrets_are_not_inherited(self, sandbox, monkeypatch):
        monkeypatch.setenv("WS_TEST_SECRET_TOKEN", "hunter2")
        env = dict(
            line.split("=", 1) for line in sandbox.execute_command("env").stdout.splitlines() if "=" in line
        )
        assert "WS_TEST_SECRET_TOKEN" not in env
        assert "hunter2" not in sandbox.execute_command("env").stdout
        assert env["HOME"] != os.path.expanduser("~") and env["HOME"] == sandbox.home_directory
        assert env["LANG"] == "C.UTF-8" and env["TMPDIR"].startswith(os.path.dirname(env["HOME"]))
        assert "PATH" in env

    def test_private_home_is_writable_and_persists_between_commands(self, sandbox):
        assert sandbox.execute_command("echo x > ~/note && mkdir -p $TMPDIR/t").success
        assert sandbox.execute_command("cat ~/note").stdout == "x\n"

    def test_env_layers_and_unset(self, make, monkeypatch):
        monkeypatch.setenv("WS_TEST_PASSED", "from-host")
        sb = make(env={"A": "sandbox", "B": "sandbox", "TERM": None})
        out = sb.execute_command("echo $A-$B-${TERM:-unset}", env={"B": "call"}).stdout
        assert out == "sandbox-call-unset\n"
        everything = make(env=os.environ, working_directory=sb.working_directory + "2")
        assert everything.execute_command("echo $WS_TEST_PASSED").stdout == "from-host\n"

    # --- timeouts ---------------------------------------------------------------------------------

    def test_timeout_kills_the_tree_and_reports_124(self, make):
        sb = make(timeout=1)
        m = marker()
        t0 = time.monotonic()
        r = sb.execute_command(f"sleep {m} & sleep {m}")
        elapsed = time.monotonic() - t0
        assert r.timed_out and r.killed and r.exit_code == 124 and not r.success
        assert 0.9 <= elapsed < 3.0
        assert wait_for(lambda: not processes_with(m), 3)

    def test_per_call_timeout_overrides_default(self, sandbox):
        t0 = time.monotonic()
        r = sandbox.execute_command("sleep 10", timeout=0.5)
        assert r.timed_out and time.monotonic() - t0 < 2.5

    def test_sigterm_ignored_escalates_to_sigkill(self, make):
        sb = make(timeout=0.5, kill_grace=0.5)
        m = marker()
        t0 = time.monotonic()
        r = sb.execute_command(f"trap '' TERM; sleep {m}; sleep {m}")
        assert r.timed_out and r.exit_code == 124
        assert time.monotonic() - t0 < 3.0
        assert wait_for(lambda: not processes_with(m), 3)

    def test_no_limit_with_inf(self, make):
        sb = make(timeout=0.2)
        assert sb.execute_command("sleep 0.5; echo ok", timeout=math.inf).stdout == "ok\n"

    def test_keyboard_interrupt_kills_the_command(self, sandbox):
        m = marker()
        # What a kernel interrupt does: a real SIGINT to the main thread.
        main = threading.main_thread().ident
        timer = threading.Timer(0.5, lambda: signal.pthread_kill(main, signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            sandbox.execute_command(f"sleep {m}")
        assert wait_for(lambda: not processes_with(m), 3)

    # --- background processes ---------------------------------------------------------------------

    def test_spawn_returns_at_once_and_is_tracked(self, sandbox):
        t0 = time.monotonic()
        h = sandbox.processes.spawn("echo begin; sleep 2; echo end")
        assert time.monotonic() - t0 < 1.0
        assert h.exit_code is None and h.running
        infos = sandbox.processes.list()
        assert [(i.pid, i.running, i.command) for i in infos] == [(h.pid, True, h.command)]
        assert sandbox.processes.get(h.pid) is h and sandbox.processes.get(str(h.pid)) is h
        assert wait_for(lambda: h.stdout == "begin\n", 3)
        r = h.wait()
        assert (r.exit_code, r.stdout) == (0, "begin\nend\n")
        info = sandbox.processes.list()[0]
        assert not info.running and info.exit_code == 0 and info.ended_at >= info.started_at
        assert info.runtime_seconds is not None and 1.5 < info.runtime_seconds < 5

    def test_exited_processes_keep_output_until_released(self, sandbox):
        h = sandbox.processes.spawn("echo kept")
        h.wait()
        again = sandbox.processes.get(h.pid)
        assert again is h and again.stdout == "kept\n" and again.exit_code == 0
        assert sandbox.processes.get(h.pid) is h  # not forgotten after a read
        assert sandbox.processes.release(h.pid) is True
        assert sandbox.processes.get(h.pid) is None and sandbox.processes.list() == []

    def test_release_of_running_process_is_refused(self, sandbox):
        h = sandbox.processes.spawn("sleep 30")
        with pytest.raises(SandboxStateError):
            sandbox.processes.release(h.pid)
        assert h.kill(grace=0) is True

    def test_retention_limit_on_exited_processes(self, make):
        sb = make(max_exited_processes=3)
        handles = []
        for i in range(6):
            handles.append(sb.processes.spawn(f"echo {i}"))
            handles[-1].wait()
        assert wait_for(lambda: len(sb.processes.list()) == 3, 2)
        assert [i.pid for i in sb.processes.list()] == [h.pid for h in handles[-3:]]

    def test_unknown_pids(self, sandbox):
        assert sandbox.processes.get(999_999_999) is None
        assert sandbox.processes.kill(999_999_999) is False
        with pytest.raises(InvalidArgumentError):
            sandbox.processes.get("abc")

    def test_stream_callbacks_receive_every_byte_in_order(self, sandbox):
        text = "".join(f"{i} é€😀\n" for i in range(30000))  # multi-byte characters across reads
        script = (
            "import sys\n"
            f"data = {text!r}.encode()\n"
            "for i in range(0, len(data), 7001):\n"  # odd chunk sizes split characters
            "    sys.stdout.buffer.write(data[i:i+7001]); sys.stdout.buffer.flush()\n"
        )
        write(Path(sandbox.working_directory), "produce.py", script)
        got: list[str] = []
        events: list[tuple[str, str]] = []
        h = sandbox.processes.spawn(f"{PY} produce.py", on_stdout=got.append)
        h.subscribe(lambda kind, t: events.append((kind, t)))
        r = h.wait()
        assert r.exit_code == 0
        assert "".join(got) == text
        assert "".join(t for k, t in events if k == "stdout") == text
        assert events[-1] == ("exit", "")

    def test_retained_output_is_bounded_with_50mb_producer(self, sandbox):
        proc = psutil.Process()
        rss_before = proc.memory_info().rss
        t0 = time.monotonic()
        h = sandbox.processes.spawn("head -c 50000000 /dev/zero | tr '\\0' x; echo END")
        r = h.wait(timeout=60)
        elapsed = time.monotonic() - t0
        assert r.exit_code == 0 and r.stdout_truncated
        assert len(h.stdout) == 1 << 20 and h.stdout.endswith("xxxEND\n")
        assert h.stdout_bytes == 50_000_004
        assert h.stdout_dropped_bytes == 50_000_004 - (1 << 20)
        assert proc.memory_info().rss - rss_before < 40 * (1 << 20)
        assert elapsed < 20

    def test_fast_producers_get_bigger_pipes_within_a_cap(self, sandbox):
        from ws_jupyter.sandbox import processes

        handles = [sandbox.processes.spawn("head -c 20000000 /dev/zero") for _ in range(10)]
        for h in handles:
            r = h.wait(timeout=60)
            assert r.exit_code == 0 and h.stdout_bytes == 20_000_000 and len(h.stdout) == 1 << 20
        assert processes._enlarged[0] == 0  # every enlarged pipe was given back

    def test_stdin_round_trip_with_cat(self, sandbox):
        h = sandbox.processes.spawn("cat")
        h.send_stdin("hello\n")
        assert h.reader.readline() == b"hello\n"
        h.writer.write("wörld\n".encode())
        assert h.reader.readline() == "wörld\n".encode()
        h.close_stdin()
        r = h.wait(timeout=5)
        assert r.exit_code == 0 and r.stdout == "hello\nwörld\n"
        with pytest.raises(StdinClosedError):
            h.send_stdin("late")

    def test_json_rpc_over_reader_and_writer(self, sandbox):
        server = (
            "import sys, json\n"
            "for line in sys.stdin:\n"
            "    req = json.loads(line)\n"
            "    print(json.dumps({'id': req['id'], 'result': req['params'][0] * 2}), flush=True)\n"
        )
        write(Path(sandbox.working_directory), "rpc.py", server)
        h = sandbox.processes.spawn(f"{PY} rpc.py")
        import json

        for i in range(20):
            h.writer.write((json.dumps({"id": i, "params": [i]}) + "\n").encode())
            assert json.loads(h.reader.readline()) == {"id": i, "result": 2 * i}
        h.close_stdin()
        assert h.wait(timeout=5).exit_code == 0

    def test_stdin_ignore_and_errors(self, sandbox):
        h = sandbox.processes.spawn("cat", stdin="ignore")
        assert h.wait(timeout=5).exit_code == 0
        with pytest.raises(StdinClosedError):
            h.send_stdin("x")
        exited = sandbox.processes.spawn("true")
        exited.wait()
        with pytest.raises(StdinClosedError):
            exited.send_stdin("x")

    def test_kill_tree_with_grandchildren(self, sandbox):
        m = marker()
        h = sandbox.processes.spawn(f"sleep {m} & (sleep {m} &) ; sh -c 'sleep {m} & wait' & wait")
        assert wait_for(lambda: len(processes_with(m)) >= 3, 5)
        tree = processes_with(m)
        assert sandbox.processes.kill(h.pid) is True
        assert h.exit_code is not None and h.killed
        assert wait_for(lambda: not alive(tree), 3), f"survivors: {alive(tree)}"
        assert not processes_with(m)
        assert h.kill() is False  # already exited

    def test_setsid_child_of_a_running_process_is_killed(self, sandbox):
        m = marker()
        h = sandbox.processes.spawn(f"setsid sleep {m} & sleep {m}")
        assert wait_for(lambda: len(processes_with(m)) >= 2, 5)
        h.kill(grace=0)
        assert wait_for(lambda: not processes_with(m), 3)

    def test_background_timeout_and_abort(self, sandbox):
        h = sandbox.processes.spawn("sleep 30", timeout=0.5)
        r = h.wait(timeout=5)
        assert r.timed_out and r.exit_code == 124
        abort = threading.Event()
        h2 = sandbox.processes.spawn("sleep 30", abort=abort)
        threading.Timer(0.3, abort.set).start()
        r2 = h2.wait(timeout=5)
        assert r2.killed and not r2.timed_out and r2.exit_code in (143, 137)

    def test_wait_timeout_leaves_process_running(self, sandbox):
        h = sandbox.processes.spawn("sleep 30")
        with pytest.raises(ProcessWaitTimeoutError):
            h.wait(timeout=0.2)
        assert h.running and h.exit_code is None
        h.kill(grace=0)

    def test_wait_callbacks_are_removed_after_wait(self, sandbox):
        # wait() callbacks see the output that comes while waiting: give wait() time to begin.
        h = sandbox.processes.spawn("sleep 0.3; echo one; sleep 0.3; echo two")
        seen: list[str] = []
        h.wait(on_stdout=seen.append)
        assert "".join(seen) == "one\ntwo\n"
        assert h._stdout.callbacks == ()

    def test_subscribe_replay_for_late_subscribers(self, sandbox):
        h = sandbox.processes.spawn("echo early; echo err >&2; sleep 0.3; echo late")
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
        h = sandbox.processes.spawn("for i in 1 2 3 4 5; do echo $i; sleep 0.1; done")
        seen: list[str] = []
        unsubscribe = h.subscribe(lambda k, t: seen.append(t))
        assert wait_for(lambda: seen, 3)
        unsubscribe()
        count = len(seen)
        h.wait()
        assert len(seen) == count

    def test_failing_callback_does_not_stop_output(self, sandbox):
        def boom(_text: str) -> None:
            raise RuntimeError("callback bug")

        h = sandbox.processes.spawn("seq 1 1000", on_stdout=boom)
        assert h.wait(timeout=5).stdout == "".join(f"{i}\n" for i in range(1, 1001))

    def test_spawn_from_short_lived_thread_keeps_running(self, sandbox):
        box = {}
        t = threading.Thread(
            target=lambda: box.setdefault("h", sandbox.processes.spawn("sleep 1; echo alive"))
        )
        t.start()
        t.join()
        assert box["h"].wait(timeout=10).stdout == "alive\n"

    def test_stop_kills_processes_and_sandbox_restarts(self, sandbox):
        m = marker()
        handles = [sandbox.processes.spawn(f"sleep {m}") for _ in range(3)]
        assert wait_for(lambda: len(processes_with(m)) == 3, 5)
        sandbox.stop()
        assert sandbox.status == "stopped"
        assert all(h.exit_code is not None for h in handles)
        assert not processes_with(m)
        assert sandbox.execute_command("echo again").stdout == "again\n"
        assert sandbox.status == "running"

    def test_destroy_kills_100_concurrent_processes(self, sandbox):
        m = marker()
        handles = [sandbox.processes.spawn(f"sleep {m}") for _ in range(100)]
        assert len({h.pid for h in handles}) == 100
        assert len(sandbox.processes.list()) == 100
        assert wait_for(lambda: len(processes_with(m)) >= 100, 20)
        tree = processes_with(m)
        t0 = time.monotonic()
        sandbox.destroy()
        # The processes are stopped together, not one grace period after another (100 sequential
        # graces would take minutes); the bound leaves room for a machine loaded many times over,
        # where 100 kills and reaps alone took up to 26 s.
        assert time.monotonic() - t0 < 60
        assert sandbox.status == "destroyed"
        assert wait_for(lambda: not alive(tree), 5)
        assert not processes_with(m)
        with pytest.raises(SandboxStateError):
            sandbox.execute_command("true")
        with pytest.raises(SandboxStateError):
            sandbox.processes.spawn("true")
        sandbox.destroy()  # idempotent

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
        assert sandbox.processes.list() == []

    @pytest.mark.parametrize(
        "kwargs",
        [{"max_retained_bytes": -1}, {"stdin": "tty"}, {"abort": "yes"}, {"timeout": 0}],
    )
    def test_bad_spawn_arguments(self, sandbox, kwargs):
        with pytest.raises(InvalidArgumentError):
            sandbox.processes.spawn("true", **kwargs)

    # --- info -------------------------------------------------------------------------------------

    def test_info(self, sandbox):
        info = sandbox.get_info()
        assert (info.name, info.provider, info.isolation) == ("LocalSandbox", "local", self.isolation)
        assert info.working_directory == sandbox.working_directory
        assert info.metadata["timeout"] == 20
        assert info.resources["cpu_cores"] >= 1

    def test_instructions_options(self, make, sandbox):
        default = sandbox.get_instructions()
        assert sandbox.working_directory in default
        assert make(instructions="", working_directory=sandbox.working_directory).get_instructions() == ""
        assert (
            make(instructions="Custom.", working_directory=sandbox.working_directory).get_instructions()
            == "Custom."
        )
        seen = {}

        def extend(default_text, ctx):
            seen["ctx"] = ctx
            return default_text + " Extra."

        sb = make(instructions=extend, working_directory=sandbox.working_directory)
        assert sb.get_instructions("ctx") == sb.default_instructions() + " Extra."
        assert seen["ctx"] == "ctx"
