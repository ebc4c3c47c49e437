"""The seccomp filter of bubblewrap sandboxes: syscalls a workspace command never needs.

Namespaces and a read-only system keep a sandboxed command away from the host's files, but the
kernel's other interfaces stay reachable through system calls: the session keyring
(``keyctl``), tracing other processes (``ptrace``), new mounts and namespaces, loading kernels
and modules, BPF programs, and — when the notebook runs as root, where the sandbox's user maps
to host root — files made setuid/setgid in the workspace that the host would then run with
root's rights. The filter, compiled with libseccomp (the official Python bindings, or the
ctypes binding ``pyseccomp`` from PyPI), makes those calls fail with ``EPERM`` and is handed to
bwrap with ``--seccomp FD``: bwrap loads it after building the sandbox, just before it runs
the command, so its own mounts and namespaces are unaffected.

The list follows Docker's default profile where the two agree (mount, keyring, kexec, modules,
bpf, perf, ptrace, namespaces, clock and swap changes, ``open_by_handle_at``) and adds what a
workspace never needs (``io_uring``, ``userfaultfd``, the new mount API, TIOCSTI). ``clone3``
and ``openat2`` answer ``ENOSYS`` — their flags live in memory a filter cannot read — so C
libraries fall back to ``clone``/``openat``, whose flags are checked. Syscalls of other ABIs
(32-bit ``int 0x80`` on x86-64) kill the process: the filter only allows the native one.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import threading
from typing import Any

from ...errors import IsolationUnavailableError

__all__ = ["DENIED_SYSCALLS", "filter_path"]

#: Denied outright with EPERM (names unknown to the installed libseccomp are skipped).
DENIED_SYSCALLS: tuple[str, ...] = (
    # the kernel keyring (the kernel's session keyring holds credentials)
    "keyctl",
    "add_key",
    "request_key",
    # other processes' memory and tracing
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "perf_event_open",
    "bpf",
    "userfaultfd",
    # mounts and namespaces (bwrap has made its own before the filter is loaded)
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "unshare",
    "setns",
    # the kernel itself
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "quotactl_fd",
    "lookup_dcookie",
    "nfsservctl",
    "uselib",
    "iopl",
    "ioperm",
    "vhangup",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "open_by_handle_at",
    # an interface whose operations bypass syscall filtering altogether
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
)

#: Answer ENOSYS so libc falls back to a variant whose arguments the filter can check.
_ENOSYS_SYSCALLS = ("clone3", "openat2")

#: clone() flags that would create a namespace (bwrap's own are made before the filter).
_CLONE_NAMESPACE_FLAGS = (
    0x10000000,  # CLONE_NEWUSER
    0x00020000,  # CLONE_NEWNS
    0x40000000,  # CLONE_NEWNET
    0x20000000,  # CLONE_NEWPID
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x02000000,  # CLONE_NEWCGROUP
    0x00000080,  # CLONE_NEWTIME
)

#: (syscall, index of its mode argument): refused when the mode has a setuid/setgid bit.
_MODE_ARGUMENTS = (
    ("chmod", 1),
    ("fchmod", 1),
    ("fchmodat", 2),
    ("fchmodat2", 2),
    ("creat", 1),
    ("open", 2),
    ("openat", 3),
    # mknod makes regular files as well (S_IFREG needs no privilege), mode bits included
    ("mknod", 1),
    ("mknodat", 2),
)

_TIOCSTI = 0x5412  # push characters into the terminal's input queue
_TIOCLINUX = 0x541C


def _binding() -> Any:
    try:
        import seccomp  # the official bindings (Debian: python3-seccomp)

        return seccomp
    except ImportError:
        pass
    try:
        import pyseccomp  # ctypes over libseccomp.so.2 (PyPI)

        return pyseccomp
    except Exception as exc:  # ImportError, or RuntimeError/OSError when libseccomp.so is missing
        raise IsolationUnavailableError(
            "bwrap",
            f"the seccomp filter needs libseccomp ({exc}); install it with `apt-get install "
            "libseccomp2` and `pip install pyseccomp`, or turn the filter off with "
            "native_sandbox={'seccomp': False}",
        ) from None


def _build(sc: Any) -> bytes:
    eperm = sc.ERRNO(errno.EPERM)
    flt = sc.SyscallFilter(sc.ALLOW)

    def rule(action: int, name: str, *args: Any) -> None:
        try:
            flt.add_rule(action, name, *args)
        except (ValueError, OSError, RuntimeError):
            # A syscall this libseccomp (or architecture) does not know: nothing to deny.
            pass

    for name in DENIED_SYSCALLS:
        rule(eperm, name)
    for name in _ENOSYS_SYSCALLS:
        rule(sc.ERRNO(errno.ENOSYS), name)
    for flag in _CLONE_NAMESPACE_FLAGS:
        rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    for bit in (stat.S_ISUID, stat.S_ISGID):
        for name, index in _MODE_ARGUMENTS:
            rule(eperm, name, sc.Arg(index, sc.MASKED_EQ, bit, bit))
    for request in (_TIOCSTI, _TIOCLINUX):
        rule(eperm, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    with tempfile.TemporaryFile() as f:
        flt.export_bpf(f)
        f.seek(0)
        return f.read()


_lock = threading.Lock()
_compiled: list[str] = []


def filter_path() -> str:
    """The compiled BPF program, written once per process to a private file (mode 0400).

    The file lives in a directory only this user can enter and that no sandbox binds, so a
    sandboxed command can neither read nor replace the filter of the next one. Raises
    ``IsolationUnavailableError`` when libseccomp cannot be used.
    """
    with _lock:
        if _compiled and os.path.exists(_compiled[0]):
            return _compiled[0]
        program = _build(_binding())
        from ..tempdirs import private_dir

        directory = private_dir("ws-sandbox-seccomp-")
        path = os.path.join(directory, "filter.bpf")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        try:
            os.write(fd, program)
        finally:
            os.close(fd)
        _compiled[:] = [path]
        return path
