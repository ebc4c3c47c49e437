"""What only a ``LocalSandbox`` can show, in each isolation mode: its process trees seen from the
host (psutil), its options (output bounds, kill grace, retention, environment layers,
instructions) and its internals. Runs with :class:`SandboxConformance` in ``test_local.py`` and
``test_bwrap.py``; ``sandbox_factory`` here is how those classes make their sandboxes.

A test named like one of the contract's replaces it with a stricter version (this class comes
first in the test classes' bases): a stray child must not only let its command end, it must be
gone from the host's process table.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from ws_jupyter.errors import SandboxStateError

from ..helpers import wait_for, write
from .conftest import alive, marker, processes_with

PY = sys.executable  # visible inside bubblewrap too (allow_system_binaries binds the prefix)


class LocalSandboxChecks:
    isolation = "none"

    @pytest.fixture
    def sandbox_factory(self, make_sandbox: Any) -> Any:
        return lambda timeout=None, **kw: make_sandbox(self.isolation, timeout=timeout, **kw)

    @pytest.fixture
    def make(self, make_sandbox: Any) -> Any:
        return lambda **kw: make_sandbox(self.isolation, **kw)

    # --- commands --------------------------------------------------------------------------------

    def test_foreground_output_is_bounded(self, sandbox):
        r = sandbox.execute_command("seq 1 100000", max_output_bytes=1000)
        assert r.stdout_truncated and len(r.stdout.encode()) <= 1000
        assert r.stdout.endswith("99999\n100000\n")

    def test_a_command_ends_with_its_main_process(self, sandbox):
        """Stricter than the contract: the child it left behind is killed too."""
        m = marker()
        t0 = time.monotonic()
        r = sandbox.execute_command(f"sleep {m} & echo started")
        assert r.stdout == "started\n" and time.monotonic() - t0 < 3
        assert wait_for(lambda: not processes_with(m), 3), "a stray child outlived its command"

    def test_a_foreground_command_stopped_from_another_thread(self, sandbox):
        m = marker()
        box: dict[str, Any] = {}
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

    def test_auto_start_and_working_directory(self, make, tmp_path):
        wd = Path(os.path.realpath(tmp_path)) / "auto" / "wd"
        sb = make(working_directory=str(wd))
        assert sb.status == "pending" and not wd.exists()
        r = sb.execute_command("pwd")
        assert sb.status == "running"
        assert r.stdout.strip() == str(wd)

    def test_the_curated_environment(self, sandbox):
        env = dict(
            line.split("=", 1) for line in sandbox.execute_command("env").stdout.splitlines() if "=" in line
        )
        assert env["HOME"] != os.path.expanduser("~") and env["HOME"] == sandbox.home_directory
        assert env["LANG"] == "C.UTF-8" and env["TMPDIR"].startswith(os.path.dirname(env["HOME"]))
        assert "PATH" in env

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

    def test_sigterm_ignored_escalates_to_sigkill(self, make):
        sb = make(timeout=0.5, kill_grace=0.5)
        m = marker()
        t0 = time.monotonic()
        r = sb.execute_command(f"trap '' TERM; sleep {m}; sleep {m}")
        assert r.timed_out and r.exit_code == 124
        assert time.monotonic() - t0 < 3.0
        assert wait_for(lambda: not processes_with(m), 3)

    def test_keyboard_interrupt_stops_the_command(self, sandbox):
        """Stricter than the contract: the command's process is gone from the host."""
        m = marker()
        # What a kernel interrupt does: a real SIGINT to the main thread.
        main = threading.main_thread().ident
        timer = threading.Timer(0.5, lambda: signal.pthread_kill(main, signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            sandbox.execute_command(f"sleep {m}")
        assert wait_for(lambda: not processes_with(m), 3)

    # --- background processes ---------------------------------------------------------------------

    def test_retention_limit_on_exited_processes(self, make):
        sb = make(max_exited_processes=3)
        handles = []
        for i in range(6):
            handles.append(sb.processes.spawn(f"echo {i}"))
            handles[-1].wait()
        assert wait_for(lambda: len(sb.processes.list()) == 3, 2)
        assert [i.pid for i in sb.processes.list()] == [h.pid for h in handles[-3:]]

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

    def test_stdin_reader_and_writer_streams(self, sandbox):
        h = sandbox.processes.spawn("cat")
        h.send_stdin("hello\n")
        assert h.reader.readline() == b"hello\n"
        h.writer.write("wörld\n".encode())
        assert h.reader.readline() == "wörld\n".encode()
        h.close_stdin()
        assert h.wait(timeout=5).stdout == "hello\nwörld\n"

    def test_json_rpc_over_reader_and_writer(self, sandbox):
        server = (
            "import sys, json\n"
            "for line in sys.stdin:\n"
            "    req = json.loads(line)\n"
            "    print(json.dumps({'id': req['id'], 'result': req['params'][0] * 2}), flush=True)\n"
        )
        write(Path(sandbox.working_directory), "rpc.py", server)
        h = sandbox.processes.spawn(f"{PY} rpc.py")
        for i in range(20):
            h.writer.write((json.dumps({"id": i, "params": [i]}) + "\n").encode())
            assert json.loads(h.reader.readline()) == {"id": i, "result": 2 * i}
        h.close_stdin()
        assert h.wait(timeout=5).exit_code == 0

    def test_kill_tree_with_grandchildren(self, sandbox):
        m = marker()
        h = sandbox.processes.spawn(f"sleep {m} & (sleep {m} &) ; sh -c 'sleep {m} & wait' & wait")
        assert wait_for(lambda: len(processes_with(m)) >= 3, 5)
        tree = processes_with(m)
        assert sandbox.processes.kill(h.pid) is True
        assert h.exit_code is not None and h.killed
        assert wait_for(lambda: not alive(tree), 3), f"survivors: {alive(tree)}"
        assert not processes_with(m)

    def test_setsid_child_of_a_running_process_is_killed(self, sandbox):
        m = marker()
        h = sandbox.processes.spawn(f"setsid sleep {m} & sleep {m}")
        assert wait_for(lambda: len(processes_with(m)) >= 2, 5)
        h.kill(grace=0)
        assert wait_for(lambda: not processes_with(m), 3)

    def test_wait_callbacks_are_removed_after_wait(self, sandbox):
        h = sandbox.processes.spawn("sleep 0.3; echo one")
        h.wait(on_stdout=lambda _t: None)
        assert h._stdout.callbacks == ()

    def test_stop_ends_running_work_and_the_sandbox_runs_again(self, sandbox):
        """Stricter than the contract: no process of the trees is left on the host."""
        m = marker()
        handles = [sandbox.processes.spawn(f"sleep {m}") for _ in range(3)]
        assert wait_for(lambda: len(processes_with(m)) == 3, 5)
        sandbox.stop()
        assert sandbox.status == "stopped"
        assert all(h.exit_code is not None for h in handles)
        assert not processes_with(m)
        assert sandbox.execute_command("echo again").stdout == "again\n"
        assert sandbox.status == "running"

    def test_destroy_is_final_and_idempotent(self, sandbox):
        """Stricter than the contract: 100 concurrent processes, all gone from the host, quickly."""
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
