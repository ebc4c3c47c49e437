"""The main attacks again, with the notebook running as an ordinary user instead of root.

CI and this machine run as root, where the sandbox user maps to host root; most real notebooks
run as an ordinary user, where bubblewrap works through an unprivileged user namespace and the
limits count differently (the process limit, for one, is not enforced for root at all). As root,
this module creates a system user and starts the sandbox's own bwrap command line as that user
(``setpriv``), with the seccomp filter handed over as an inherited descriptor exactly as the
process manager does. The notebook's Python may live where that user cannot read it (under
/root), so the commands inside use the system's ``/bin/sh`` and ``/usr/bin/python3``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ws_jupyter.sandbox.isolation import BwrapPlan, NativeSandboxConfig

from .conftest import FORK_BOMB, SYSCALLS, requires_bwrap

USER = "ws-sandbox-test"

pytestmark = [
    requires_bwrap,
    pytest.mark.bwrap,
    pytest.mark.skipif(
        os.geteuid() != 0,
        reason="creates a user: needs root (the suite as an ordinary user covers this case itself)",
    ),
    pytest.mark.skipif(
        not shutil.which("setpriv") or not shutil.which("useradd"), reason="needs setpriv and useradd"
    ),
    pytest.mark.skipif(not os.path.exists("/usr/bin/python3"), reason="needs the system python3"),
]


@pytest.fixture(scope="module")
def user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(USER)


def run_as(
    user: pwd.struct_passwd, wd: Path, command: str, **config: object
) -> subprocess.CompletedProcess[str]:
    plan = BwrapPlan(
        working_directory=str(wd),
        config=NativeSandboxConfig(allow_system_binaries=False, **config),  # type: ignore[arg-type]
        bwrap_path=shutil.which("bwrap") or "bwrap",
    )
    fd = os.open(plan.seccomp_path, os.O_RDONLY) if plan.seccomp_path else None
    try:
        argv = plan.argv(command, str(wd), seccomp_fd=fd)
        return subprocess.run(
            ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", *argv],
            cwd=str(wd),
            env={"PATH": "/usr/bin:/bin", "HOME": str(wd), "LANG": "C.UTF-8"},
            pass_fds=() if fd is None else (fd,),
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        if fd is not None:
            os.close(fd)


@pytest.fixture
def wd(user: pwd.struct_passwd) -> Iterator[Path]:
    """A working directory of that user's own, outside pytest's private (0700) temp tree."""
    path = Path(tempfile.mkdtemp(prefix="ws-unprivileged-"))
    try:
        os.chown(path, user.pw_uid, user.pw_gid)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_identity_and_file_ownership(user, wd):
    r = run_as(user, wd, "id -u; touch made; stat -c %u made")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1000", "1000"]
    assert os.stat(wd / "made").st_uid == user.pw_uid  # the user's own file on the host


def test_sysctl_and_setuid_and_namespaces(user, wd):
    r = run_as(
        user,
        wd,
        "v=$(cat /proc/sys/kernel/core_pattern); (printf '%s\\n' \"$v\" > /proc/sys/kernel/core_pattern) 2>/dev/null"
        " && echo CORE-WRITTEN; touch f; chmod u+s f 2>/dev/null && echo SETUID; unshare -U true 2>/dev/null"
        " && echo UNSHARED; echo done",
    )
    assert r.stdout == "done\n", (r.stdout, r.stderr)
    assert not os.stat(wd / "f").st_mode & 0o4000


@pytest.mark.skipif("keyctl" not in SYSCALLS, reason="no syscall numbers for this architecture")
def test_keyring_syscalls_are_refused(user, wd):
    code = (
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
        f"print(libc.syscall({SYSCALLS['keyctl']}, 0, ctypes.c_long(-3), 0), ctypes.get_errno())"
    )
    r = run_as(user, wd, f"/usr/bin/python3 -c '{code}'")
    assert r.stdout.split() == ["-1", "1"], (r.stdout, r.stderr)


def test_process_limit_contains_a_fork_bomb(user, wd):
    # 200 forks against a limit of 60 processes: the excess fail at once, nothing hangs.
    (wd / "bomb.py").write_text(FORK_BOMB)
    r = run_as(user, wd, "/usr/bin/python3 bomb.py 200", max_processes=60)
    made, refused = map(int, r.stdout.split())
    assert made < 60 and refused == 200 - made, (r.stdout, r.stderr)
