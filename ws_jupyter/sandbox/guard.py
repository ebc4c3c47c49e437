"""A watchdog that kills our process trees if the kernel dies without cleaning up.

``atexit`` covers a normal exit and a kernel shutdown, but not a crash or the ``SIGKILL`` a
kernel manager sends to an unresponsive kernel: the background processes (in their own sessions,
so the kernel's process-group kill misses them) would live on as orphans. The guard is a tiny
Python process in its own session holding the read end of a pipe; we tell it each process group
we start and reap, and each sandbox cgroup we make. When the kernel dies for any reason the pipe
closes, and the guard kills every registered group *and every descendant of its processes*
(read from /proc, frozen with SIGSTOP before the kill so nothing forks meanwhile) — a
``setsid`` grandchild whose parent is alive is one of them — then empties and removes the
cgroups, and removes the registered folders (the process's private temporary folder: sandbox
HOMEs, kernel connection files with their keys, see ``tempdirs``). What no walk can find is a daemon that double-forked and whose parent already exited
(re-parented to init): only a cgroup or a pid namespace (bubblewrap) holds on to it.
(``PR_SET_PDEATHSIG`` was not used: it fires when the *thread* that spawned the child exits,
and reaches only the direct child, not the group.)
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading

__all__ = ["OrphanGuard", "orphan_guard"]

_GUARD_SCRIPT = r"""
import os, shutil, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
groups, cgroups, folders = set(), set(), set()
for line in sys.stdin.buffer:
    line = line.strip()
    if line[:2] in (b"+c", b"-c"):
        (cgroups.add if line[:1] == b"+" else cgroups.discard)(line[2:].decode())
        continue
    if line[:2] in (b"+d", b"-d"):
        (folders.add if line[:1] == b"+" else folders.discard)(os.fsdecode(line[2:]))
        continue
    try:
        pgid = int(line[1:])
    except ValueError:
        continue
    if line[:1] == b"+":
        groups.add(pgid)
    else:
        groups.discard(pgid)

def table():
    procs = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/" + name + "/stat", "rb") as f:
                    st = f.read()
                fields = st[st.rindex(b")") + 2:].split()
                procs[int(name)] = (int(fields[1]), int(fields[2]))  # ppid, pgrp
            except (OSError, ValueError, IndexError):
                pass
    return procs

def tree():
    # Every process of a registered group, and all their descendants, whatever session or
    # group those moved to (a setsid grandchild whose parent is still alive).
    procs = table()
    children = {}
    for pid, (ppid, _pgrp) in procs.items():
        children.setdefault(ppid, []).append(pid)
    stack = [p for p in groups if p in procs]
    stack += [pid for pid, (_ppid, pgrp) in procs.items() if pgrp in groups]
    seen = set()
    while stack:
        pid = stack.pop()
        if pid not in seen and pid != os.getpid():
            seen.add(pid)
            stack.extend(children.get(pid, ()))
    return seen

def signal_all(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass

if groups:
    # Freeze first (a stopped process forks no more), look again for children forked
    # meanwhile, then kill everything found.
    found = tree()
    for _ in range(3):
        signal_all(found, signal.SIGSTOP)
        more = tree() - found
        if not more:
            break
        found |= more
    signal_all(found, signal.SIGKILL)
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
for path in cgroups:
    deadline = time.monotonic() + 5
    try:
        with open(path + "/cgroup.kill", "w") as f:
            f.write("1")
    except OSError:
        while time.monotonic() < deadline:
            try:
                with open(path + "/cgroup.procs") as f:
                    pids = [int(x) for x in f.read().split()]
            except (OSError, ValueError):
                break
            if not pids:
                break
            signal_all(pids, signal.SIGKILL)
            time.sleep(0.01)
    while True:
        try:
            os.rmdir(path)
            break
        except FileNotFoundError:
            break
        except OSError:
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
for path in folders:
    shutil.rmtree(path, ignore_errors=True)
"""


class OrphanGuard:
    """Registry of live process groups mirrored into the watchdog process (started lazily)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner_pid = os.getpid()
        self._failed = False

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def ensure_started(self) -> bool:
        """Starts the watchdog if needed; False when it cannot run (commands still work)."""
        with self._lock:
            return self._ensure_started_locked()

    def _ensure_started_locked(self) -> bool:
        if os.getpid() != self._owner_pid:  # forked child (multiprocessing): start our own
            self._proc, self._owner_pid, self._failed = None, os.getpid(), False
        if self._proc is not None and self._proc.poll() is None:
            return True
        if self._failed:
            return False
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _GUARD_SCRIPT],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
                bufsize=0,  # each registration is one write(2), no flush
            )
        except OSError:
            self._failed = True
            return False
        return True

    def _send(self, line: bytes) -> None:
        with self._lock:
            if not self._ensure_started_locked() or self._proc is None or self._proc.stdin is None:
                return
            try:
                os.write(self._proc.stdin.fileno(), line)
            except (BrokenPipeError, ValueError, OSError):
                self._proc = None

    def register(self, pgid: int) -> None:
        self._send(b"+%d\n" % pgid)

    def unregister(self, pgid: int) -> None:
        if self._proc is not None:
            self._send(b"-%d\n" % pgid)

    def register_cgroup(self, path: str) -> None:
        """After a crash the guard kills what is left in the cgroup and removes it."""
        if "\n" not in path:
            self._send(b"+c" + os.fsencode(path) + b"\n")

    def unregister_cgroup(self, path: str) -> None:
        if self._proc is not None and "\n" not in path:
            self._send(b"-c" + os.fsencode(path) + b"\n")

    def register_directory(self, path: str) -> None:
        """After a crash the guard removes the folder (once the processes are dead)."""
        if "\n" not in path:
            self._send(b"+d" + os.fsencode(path) + b"\n")

    def unregister_directory(self, path: str) -> None:
        if self._proc is not None and "\n" not in path:
            self._send(b"-d" + os.fsencode(path) + b"\n")

    def close(self) -> None:
        """Stops the watchdog (it kills whatever is still registered)."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=2)


#: The process-wide guard shared by every sandbox.
orphan_guard = OrphanGuard()
