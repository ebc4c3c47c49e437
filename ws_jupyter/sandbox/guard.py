"""A watchdog that kills our process groups if the kernel dies without cleaning up.

``atexit`` covers a normal exit and a kernel shutdown, but not a crash or the ``SIGKILL`` a
kernel manager sends to an unresponsive kernel: the background processes (in their own sessions,
so the kernel's process-group kill misses them) would live on as orphans. The guard is a tiny
Python process in its own session holding the read end of a pipe; we tell it each process group
we start and reap. When the kernel dies for any reason the pipe closes, and the guard kills every
group still registered. (``PR_SET_PDEATHSIG`` was not used: it fires when the *thread* that
spawned the child exits, and reaches only the direct child, not the group.)
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading

__all__ = ["OrphanGuard", "orphan_guard"]

_GUARD_SCRIPT = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
groups = set()
for line in sys.stdin.buffer:
    line = line.strip()
    if not line:
        continue
    try:
        pgid = int(line[1:])
    except ValueError:
        continue
    if line[:1] == b"+":
        groups.add(pgid)
    else:
        groups.discard(pgid)
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
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
