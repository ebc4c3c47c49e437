"""Attack: exhaust the machine from inside the sandbox — processes, memory, CPU, disk, RAM /tmp.

Nothing bounded a sandboxed command: a fork bomb ran freely (the per-user process limit is not
even enforced for root), a memory hog could take the notebook down, and the RAM-backed /tmp
took 1 GB in 0.3 s. Limits now come from rlimits set inside the sandbox and, where a cgroup can
be made (root here), from the sandbox's cgroup for processes and memory as a whole.
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from ..helpers import wait_for
from .conftest import FORK_BOMB, requires_bwrap, run_python

pytestmark = [requires_bwrap, pytest.mark.bwrap]


def test_fork_bomb_is_contained(make_sandbox):
    sb = make_sandbox("bwrap", native_sandbox={"max_processes": 64})
    r = run_python(sb, FORK_BOMB, "300")
    made, refused = map(int, r.stdout.split())
    assert made < 64 and refused == 300 - made, (r.stdout, r.stderr)
    # the sandbox is still usable afterwards (the sleeping children ended with the command)
    assert sb.execute_command("echo alive").stdout == "alive\n"


def test_a_memory_hog_fails_instead_of_eating_the_machine(make_sandbox):
    sb = make_sandbox("bwrap", native_sandbox={"max_memory_mb": 256})
    r = run_python(sb, "x = bytearray(1 << 30)\nprint('allocated', len(x))\n")
    assert "allocated" not in r.stdout
    assert "MemoryError" in r.stderr or r.exit_code == 137, (r.exit_code, r.stderr)


def test_memory_is_bounded_for_the_sandbox_as_a_whole(make_sandbox):
    sb = make_sandbox("bwrap", native_sandbox={"max_memory_mb": 300})
    sb.start()
    cgroup = sb.get_info().metadata["hardening"]["cgroup"]
    if not cgroup or "memory" not in cgroup:
        pytest.skip("no memory cgroup can be made here: only the per-process limit applies")
    # Four processes of 200 MB each stay under the per-process limit, not under the total.
    code = (
        "import os, time\n"
        "pids = []\n"
        "for _ in range(4):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        x = bytearray(200 << 20)\n"
        "        for i in range(0, len(x), 4096): x[i] = 1\n"
        "        time.sleep(2)\n"
        "        os._exit(0)\n"
        "    pids.append(pid)\n"
        "codes = [os.waitpid(p, 0)[1] for p in pids]\n"
        "print(sum(1 for c in codes if c != 0))\n"
    )
    r = run_python(sb, code)
    assert r.success and int(r.stdout) >= 1, (r.stdout, r.stderr)  # at least one was OOM-killed


@pytest.mark.parametrize("target", ["/tmp", "/dev/shm"])
def test_ram_backed_tmp_is_bounded(make_sandbox, target):
    sb = make_sandbox("bwrap", native_sandbox={"tmp_size_mb": 16})
    r = sb.execute_command(f"dd if=/dev/zero of={target}/fill bs=1M count=64 2>&1; du -m {target}/fill")
    assert "No space left on device" in r.stdout, r.stdout
    assert int(r.stdout.split()[-2]) <= 16


def test_default_tmp_size_is_bounded(make_sandbox):
    sb = make_sandbox("bwrap")
    size_kb = int(sb.execute_command("df -k /tmp | tail -1").stdout.split()[1])
    assert size_kb <= 512 * 1024


def test_cpu_time_limit_stops_a_busy_loop(make_sandbox):
    sb = make_sandbox("bwrap", native_sandbox={"max_cpu_seconds": 1})
    r = sb.execute_command("python3 -c 'while True: pass'", timeout=120)
    assert not r.timed_out and r.exit_code in (128 + 9, 128 + 24), r  # SIGKILL or SIGXCPU


def test_file_size_limit(make_sandbox):
    sb = make_sandbox("bwrap", native_sandbox={"max_file_size_mb": 1})
    r = sb.execute_command("head -c 3000000 /dev/zero > big")
    assert not r.success
    assert os.path.getsize(Path(sb.working_directory, "big")) <= 1 << 20


def test_open_files_limit(make_sandbox):
    sb = make_sandbox("bwrap", native_sandbox={"max_open_files": 64})
    r = run_python(
        sb,
        "fs = []\ntry:\n    [fs.append(open(__file__)) for _ in range(200)]\nexcept OSError as e:\n    print('refused', e.errno, len(fs))\n",
    )
    assert r.stdout.startswith("refused 24 "), (r.stdout, r.stderr)  # EMFILE


def test_limits_cannot_be_raised_from_inside(make_sandbox):
    sb = make_sandbox("bwrap", native_sandbox={"max_open_files": 64})
    assert not sb.execute_command("ulimit -n 1000").success
    assert sb.execute_command("ulimit -n").stdout.strip() == "64"


def test_defaults_are_set_and_reported(make_sandbox):
    sb = make_sandbox("bwrap")
    limits = sb.execute_command("cat /proc/self/limits").stdout
    core = next(line for line in limits.splitlines() if line.startswith("Max core file size"))
    assert core.split()[4:6] == ["0", "0"]
    processes = next(line for line in limits.splitlines() if line.startswith("Max processes"))
    assert processes.split()[2] == "4096"
    assert sb.get_info().metadata["hardening"]["rlimits"] is True


def test_every_process_of_a_command_is_in_each_cgroup(make_sandbox):
    # Commands join the cgroup(s) from a shell in front of bwrap (a v1 ``tasks`` write of
    # "this thread"): the whole tree — bwrap, its pid-namespace init, the command — must be in.
    sb = make_sandbox("bwrap")
    sb.start()
    if sb._cgroup is None:
        pytest.skip("no cgroup can be made here")
    h = sb.processes.spawn("sleep 60 & sleep 60; wait")
    try:
        tree = wait_for(lambda: _tree(h.pid) if len(_tree(h.pid)) >= 4 else None, 20)
        assert tree, _tree(h.pid)
        for path in sb._cgroup.paths:
            with open(os.path.join(path, "cgroup.procs")) as f:
                members = {int(x) for x in f.read().split()}
            assert tree <= members, (path, tree - members)
    finally:
        sb.destroy()


def _tree(pid: int) -> set[int]:
    try:
        proc = psutil.Process(pid)
        return {pid, *(c.pid for c in proc.children(recursive=True))}
    except psutil.Error:
        return set()


def test_no_cgroup_is_left_behind(make_sandbox):
    sb = make_sandbox("bwrap")
    sb.start()
    paths = list(sb._cgroup.paths) if sb._cgroup is not None else []
    sb.execute_command("sleep 0.1 & echo started")
    sb.destroy()
    assert not [p for p in paths if os.path.exists(p)]
