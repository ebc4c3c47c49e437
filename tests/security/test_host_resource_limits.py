"""Attack: exhaust the machine from a sandbox without isolation (``isolation="none"``).

Commands, background processes and kernels without isolation had no resource limits at all. The
rlimits that need no namespace now hold for them (``ws_jupyter.sandbox.isolation.rlimits``):
memory, CPU time, file size, open files, no core dumps, and — for an ordinary user, whose
processes the kernel counts — the number of processes. Each is checked with a real process.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from .conftest import FORK_BOMB, run_python

pytestmark = pytest.mark.skipif(
    shutil.which("prlimit") is None, reason="prlimit (util-linux) is not installed"
)

REPO = Path(__file__).resolve().parents[2]


def test_memory_limit(make_sandbox):
    sb = make_sandbox("none", native_sandbox={"max_memory_mb": 256})
    r = run_python(sb, "x = bytearray(1 << 30)\nprint('allocated', len(x))\n")
    assert "allocated" not in r.stdout and "MemoryError" in r.stderr, (r.exit_code, r.stderr)


def test_cpu_time_limit(make_sandbox):
    sb = make_sandbox("none", native_sandbox={"max_cpu_seconds": 1})
    r = sb.execute_command(f"{sys.executable} -c 'while True: pass'", timeout=120)
    assert not r.timed_out and r.exit_code in (128 + 9, 128 + 24), r  # SIGKILL or SIGXCPU


def test_file_size_limit(make_sandbox):
    sb = make_sandbox("none", native_sandbox={"max_file_size_mb": 1})
    r = sb.execute_command("head -c 3000000 /dev/zero > big")
    assert not r.success
    assert os.path.getsize(Path(sb.working_directory, "big")) <= 1 << 20


def test_open_files_limit_cannot_be_raised(make_sandbox):
    sb = make_sandbox("none", native_sandbox={"max_open_files": 64})
    r = run_python(
        sb,
        "fs = []\ntry:\n    [fs.append(open(__file__)) for _ in range(200)]\nexcept OSError as e:\n    print('refused', e.errno)\n",
    )
    assert r.stdout.strip() == "refused 24", (r.stdout, r.stderr)  # EMFILE
    assert not sb.execute_command("ulimit -n 1000").success
    limits = sb.execute_command("cat /proc/self/limits").stdout
    core = next(line for line in limits.splitlines() if line.startswith("Max core file size"))
    assert core.split()[4:6] == ["0", "0"]
    assert sb.get_info().metadata["hardening"]["rlimits"] is True


def test_background_processes_and_kernels_have_the_limits(make_sandbox):
    sb = make_sandbox("none", native_sandbox={"max_open_files": 128, "max_memory_mb": 1024})
    h = sb.processes.spawn("sleep 0.2; ulimit -n")
    assert h.wait(30).stdout.strip() == "128"
    if not sb.kernels.available:
        pytest.skip(sb.kernels.availability()[1])
    r = sb.kernels.execute(
        "import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])\nx = bytearray(2 << 30)"
    )
    assert r.stdout.strip() == "128" and r.error is not None and r.error.ename == "MemoryError", r
    assert sb.kernels.execute("print('alive')").stdout == "alive\n"  # the kernel survived it


#: Run as an ordinary user: a sandbox without isolation, and a fork bomb in it.
CHILD = """
import sys
from ws_jupyter import LocalSandbox
sb = LocalSandbox(working_directory=sys.argv[1], isolation="none", native_sandbox={"max_processes": 32})
open(sys.argv[1] + "/bomb.py", "w").write(sys.argv[2])
r = sb.execute_command("/usr/bin/python3 bomb.py 300", timeout=120)
print(r.stdout.strip(), sb.get_info().metadata["hardening"]["process_limit"], flush=True)
sb.destroy()
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="switches to another user: needs root")
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv")
@pytest.mark.skipif(not os.path.exists("/usr/bin/python3"), reason="needs the system python3")
def test_process_limit_binds_for_an_ordinary_user():
    # The kernel counts every process of the user; root is exempt (and the limit is left out).
    nobody = pwd.getpwnam("nobody")
    wd = tempfile.mkdtemp(prefix="ws-nproc-")
    try:
        os.chown(wd, nobody.pw_uid, nobody.pw_gid)
        proc = subprocess.run(
            [
                "setpriv",
                f"--reuid={nobody.pw_uid}",
                f"--regid={nobody.pw_gid}",
                "--clear-groups",
                sys.executable,
                "-c",
                textwrap.dedent(CHILD),
                wd,
                FORK_BOMB,
            ],
            env={"PATH": os.environ["PATH"], "HOME": wd, "PYTHONPATH": str(REPO), "LANG": "C.UTF-8"},
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert proc.returncode == 0, proc.stderr
        made, refused, enforced = proc.stdout.split()
        assert enforced == "True"
        assert int(made) <= 32 and int(refused) == 300 - int(made), proc.stdout
    finally:
        shutil.rmtree(wd, ignore_errors=True)


def test_root_is_reported_without_a_process_limit(make_sandbox):
    sb = make_sandbox("none")
    assert sb.get_info().metadata["hardening"]["process_limit"] is (os.geteuid() != 0)
