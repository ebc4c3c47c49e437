"""Attack: syscalls a workspace never needs reach the kernel from inside the sandbox.

With only namespaces and dropped capabilities, a sandboxed process could still create a user
namespace and mount inside it, trace other processes, load BPF programs, open perf events,
use io_uring, and — where the sandbox user maps to host root — leave setuid/setgid files in
the workspace that the host then runs with root's rights. Each is tried here; the seccomp
filter must refuse it with EPERM (``clone3`` with ENOSYS, so libc falls back to ``clone``).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from .conftest import SYSCALLS, requires_bwrap, run_python

pytestmark = [requires_bwrap, pytest.mark.bwrap]

PROBE = """
import ctypes, errno, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
numbers = json.loads(sys.argv[1])
out = {}
def record(name, rc):
    out[name] = 0 if rc != -1 else ctypes.get_errno()
def raw(name, *args):
    if name in numbers:
        record(name, libc.syscall(numbers[name], *[ctypes.c_long(a) for a in args]))
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
record("unshare_user", libc.unshare(CLONE_NEWUSER))
record("unshare_mount", libc.unshare(CLONE_NEWNS))
record("mount", libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
record("umount2", libc.umount2(b"/tmp", 0))
record("ptrace_traceme", libc.ptrace(0, 0, None, None))
raw("keyctl", 0, -3, 0)           # KEYCTL_GET_KEYRING_ID of the session keyring
raw("add_key", 0, 0, 0, 0, -3)
raw("bpf", 9999, 0, 0)           # an invalid command: EINVAL unless the filter answers first
raw("perf_event_open", 0, 0, -1, -1, 0)
raw("kexec_load", 0, 0, 0, 0)
raw("io_uring_setup", 1, 0)
raw("clone3", 0, 0)
raw("setns", 0, 0)
print(json.dumps(out))
"""


def test_dangerous_syscalls_are_refused(make_sandbox):
    import json

    sb = make_sandbox("bwrap")
    r = run_python(sb, PROBE, json.dumps(SYSCALLS))
    assert r.success, r.stderr
    result = json.loads(r.stdout)
    expected = {name: errno.EPERM for name in result}
    if "clone3" in result:
        expected["clone3"] = errno.ENOSYS
    assert result == expected, {k: errno.errorcode.get(v, v) for k, v in result.items()}


def test_a_new_user_namespace_cannot_be_used_to_mount(make_sandbox):
    sb = make_sandbox("bwrap")
    # `unshare -Urm` would make the process root of a fresh namespace, free to mount.
    r = sb.execute_command("unshare -Urm sh -c 'mount -t tmpfs none /tmp && echo MOUNTED'")
    assert "MOUNTED" not in r.stdout and not r.success


SETUID = """
import os, stat, sys
results = {}
def attempt(name, fn):
    try:
        fn()
        results[name] = "ok"
    except OSError as exc:
        results[name] = exc.errno
open("plain", "w").close()
attempt("chmod_setuid", lambda: os.chmod("plain", 0o4755))
attempt("chmod_setgid", lambda: os.chmod("plain", 0o2755))
fd = os.open("plain", os.O_RDONLY)
attempt("fchmod_setuid", lambda: os.fchmod(fd, 0o4755))
attempt("fchmodat_setgid", lambda: os.chmod("plain", 0o6755, dir_fd=os.open(".", os.O_RDONLY)))
attempt("open_create_setuid", lambda: os.close(os.open("made", os.O_CREAT | os.O_WRONLY, 0o4755)))
# mknod makes regular files too, mode included (an empty setuid file that a root writer fills)
attempt("mknod_setuid", lambda: os.mknod("node-u", stat.S_IFREG | 0o4755))
attempt("mknodat_setgid", lambda: os.mknod("node-g", stat.S_IFREG | 0o2755, dir_fd=os.open(".", os.O_RDONLY)))
attempt("mknod_plain", lambda: os.mknod("node-p", stat.S_IFREG | 0o644))
attempt("chmod_plain", lambda: os.chmod("plain", 0o755))
print(results)
"""


def test_setuid_and_setgid_files_cannot_be_made(make_sandbox):
    sb = make_sandbox("bwrap")
    r = run_python(sb, SETUID)
    assert r.success, r.stderr
    results = eval(r.stdout)  # a dict literal printed by the probe
    assert results.pop("chmod_plain") == "ok"  # ordinary modes still work
    assert results.pop("mknod_plain") == "ok"
    assert results == dict.fromkeys(results, errno.EPERM), results
    for path in Path(sb.working_directory).iterdir():
        mode = os.lstat(path).st_mode
        assert not mode & (stat.S_ISUID | stat.S_ISGID), f"{path} is setuid/setgid on the host"
    # the shell tools hit the same wall
    assert not sb.execute_command("touch t && chmod u+s t").success
    assert not os.stat(Path(sb.working_directory, "t")).st_mode & stat.S_ISUID


def test_ordinary_work_is_unaffected(make_sandbox):
    sb = make_sandbox("bwrap")
    r = sb.execute_command(
        "mkdir -p d && echo hi > d/f && chmod 600 d/f && cat d/f && ls d | wc -l "
        "&& (sleep 0.1 & wait) && python3 -c 'import subprocess; print(subprocess.run([\"true\"]).returncode)'"
    )
    assert r.stdout == "hi\n1\n0\n", r.stderr


def test_the_filter_can_be_turned_off(make_sandbox):
    sb = make_sandbox("bwrap", native_sandbox={"seccomp": False})
    assert sb.execute_command("grep -q '^Seccomp:[[:space:]]*0' /proc/self/status").success
    on = make_sandbox("bwrap", working_directory=sb.working_directory + "-2")
    assert on.execute_command("grep -q '^Seccomp:[[:space:]]*2' /proc/self/status").success


def test_without_libseccomp_the_sandbox_fails_closed(monkeypatch, tmp_path):
    # libseccomp cannot be loaded: a real failure is simulated at the binding (the only mock here).
    from ws_jupyter.errors import IsolationUnavailableError
    from ws_jupyter.sandbox import LocalSandbox
    from ws_jupyter.sandbox.isolation import detect, seccomp

    def missing():
        raise IsolationUnavailableError("bwrap", "the seccomp filter needs libseccomp (not found)")

    monkeypatch.setattr(seccomp, "_binding", missing)
    monkeypatch.setattr(seccomp, "_compiled", [])
    monkeypatch.setattr(detect, "_cache", {})
    with pytest.raises(IsolationUnavailableError, match="libseccomp"):
        LocalSandbox(working_directory=str(tmp_path / "a"), isolation="bwrap")
    auto = LocalSandbox(working_directory=str(tmp_path / "b"), isolation="auto")
    assert auto.isolation == "none" and "libseccomp" in auto.get_info().metadata["warning"]
    # turning the filter off is the explicit way to run bubblewrap without it
    off = LocalSandbox(
        working_directory=str(tmp_path / "c"), isolation="bwrap", native_sandbox={"seccomp": False}
    )
    try:
        assert off.execute_command("grep -q '^Seccomp:[[:space:]]*0' /proc/self/status").success
    finally:
        off.destroy()
