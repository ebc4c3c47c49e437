"""No process outlives its kernel: normal exit (atexit), a crash (SIGKILL), a Jupyter kernel shutdown.

Each scenario runs a real child interpreter (or a real kernel) that starts background processes
and then goes away; psutil then looks for survivors by their unique command lines.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from ..helpers import wait_for
from .conftest import BWRAP, marker, processes_with

ISOLATIONS = [
    "none",
    pytest.param("bwrap", marks=pytest.mark.skipif(not BWRAP.available, reason=BWRAP.message)),
]

CHILD = """
import os, signal, sys, time
from ws_jupyter.sandbox import LocalSandbox
sb = LocalSandbox(working_directory={wd!r}, isolation={isolation!r})
sb.processes.spawn("sleep {m}")
sb.processes.spawn("sh -c 'sleep {m} & wait'")
import threading
threading.Thread(target=lambda: sb.execute_command("sleep {m}", timeout=600), daemon=True).start()
print("started", flush=True)
sys.stdin.readline()
{ending}
"""


def run_child(tmp_path, isolation: str, ending: str) -> str:
    m = marker()
    code = CHILD.format(wd=str(tmp_path / "wd"), isolation=isolation, m=m, ending=ending)
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    line = proc.stdout.readline()
    assert line == b"started\n", proc.stderr.read().decode()
    assert wait_for(lambda: len(processes_with(m)) >= 3, 5)
    time.sleep(0.2)  # the foreground command is registered with the orphan guard after 50 ms
    proc.communicate(b"go\n", timeout=20)
    return m


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_normal_interpreter_exit_kills_background_processes(tmp_path, isolation):
    m = run_child(tmp_path, isolation, "sys.exit(0)")
    assert wait_for(lambda: not processes_with(m), 5), processes_with(m)


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_crashed_interpreter_leaves_no_orphans(tmp_path, isolation):
    # SIGKILL: no atexit, no finally. The orphan guard must notice and clean up.
    m = run_child(tmp_path, isolation, "os.kill(os.getpid(), signal.SIGKILL)")
    assert wait_for(lambda: not processes_with(m), 5), processes_with(m)


@pytest.mark.slow
@pytest.mark.parametrize("now", [False, True], ids=["graceful-shutdown", "forced-kill"])
def test_jupyter_kernel_shutdown_kills_background_processes(tmp_path, now):
    jupyter_client = pytest.importorskip("jupyter_client")
    m = marker()
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        code = (
            "from ws_jupyter import LocalSandbox\n"
            f"sb = LocalSandbox(working_directory={str(tmp_path / 'wd')!r})\n"
            f"h = sb.processes.spawn('sleep {m}')\n"
        )
        reply = kc.execute_interactive(code, timeout=30)
        assert reply["content"]["status"] == "ok"
        assert wait_for(lambda: processes_with(m), 5)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=now)
    assert wait_for(lambda: not processes_with(m), 5), processes_with(m)


def test_guard_is_its_own_session(make_sandbox):
    from ws_jupyter.sandbox.guard import orphan_guard

    make_sandbox().start()
    assert orphan_guard.pid is not None
    assert os.getsid(orphan_guard.pid) == orphan_guard.pid  # survives a kill of our process group
