"""Attack: a background process outlives a crashed kernel by leaving its process group.

The watchdog that cleans up after a crashed (SIGKILLed) kernel used to kill registered process
groups only, so a grandchild that called ``setsid`` — its parent still alive — survived the
crash. It now kills every descendant of the registered processes as well. A daemon that
double-forks and whose parent already exited cannot be found that way (it belongs to init);
under bubblewrap the pid namespace still takes it down, which the last test checks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from ..helpers import wait_for
from ..sandbox.conftest import BWRAP, marker, processes_with

CHILD = """
import os, signal, sys, time
from ws_jupyter.sandbox import LocalSandbox
sb = LocalSandbox(working_directory={wd!r}, isolation={isolation!r})
sb.processes.spawn({command!r})
print("started", flush=True)
sys.stdin.readline()
os.kill(os.getpid(), signal.SIGKILL)
"""


def crash_after(
    tmp_path, isolation: str, command: str, markers: list[str], made: list[str] | None = None
) -> int:
    code = CHILD.format(wd=str(tmp_path / "wd"), isolation=isolation, command=command)
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"started\n", proc.stderr
    assert wait_for(lambda: all(processes_with(m) for m in markers), 10), "the tree did not start"
    if made is not None:
        made += sandbox_cgroups(proc.pid)
    proc.communicate(b"go\n", timeout=30)
    assert proc.returncode == -9
    return proc.pid


def sandbox_cgroups(pid: int) -> list[str]:
    """Cgroup directories made by the sandboxes of process ``pid`` (named ws-sandbox-<pid>-...)."""
    found = []
    for root, dirs, _files in os.walk("/sys/fs/cgroup"):
        found += [os.path.join(root, d) for d in dirs if d.startswith(f"ws-sandbox-{pid}-")]
        dirs[:] = [d for d in dirs if not d.startswith("ws-sandbox-")]
    return found


def test_setsid_grandchild_with_a_live_parent_dies_with_the_kernel(tmp_path):
    m = marker()
    # sh waits for its child, which moved to a session of its own: not in the registered group.
    crash_after(tmp_path, "none", f"sh -c 'setsid sleep {m} & wait'", [m])
    try:
        assert wait_for(lambda: not processes_with(m), 10), processes_with(m)
    finally:
        for p in processes_with(m):
            p.kill()


def test_a_deep_tree_of_new_sessions_dies_with_the_kernel(tmp_path):
    m1, m2 = marker(), marker()
    command = f"setsid sh -c 'setsid sh -c \"sleep {m2} & wait\" & sleep {m1}; wait'"
    crash_after(tmp_path, "none", command, [m1, m2])
    try:
        assert wait_for(lambda: not processes_with(m1) and not processes_with(m2), 10)
    finally:
        for p in processes_with(m1) + processes_with(m2):
            p.kill()


@pytest.mark.skipif(not BWRAP.available, reason=BWRAP.message)
def test_a_double_forked_daemon_dies_with_the_kernel_under_bwrap(tmp_path):
    m = marker()
    # The intermediate shell exits at once: the daemon belongs to the sandbox's init only.
    made: list[str] = []
    pid = crash_after(
        tmp_path, "bwrap", f"sh -c '(setsid sleep {m} > /dev/null 2>&1 &)'; sleep 600", [m], made
    )
    try:
        assert wait_for(lambda: not processes_with(m), 10), processes_with(m)
        # the watchdog also removed the sandbox's cgroups (where this machine let it make any)
        if made:
            assert wait_for(lambda: not sandbox_cgroups(pid), 10), sandbox_cgroups(pid)
    finally:
        for p in processes_with(m):
            p.kill()
