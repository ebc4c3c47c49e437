"""This process's private temporary folder, and the removal of those of processes that died.

Sandboxes keep their private HOME and TMPDIR (the agent's files) in temporary folders, kernels
their connection file (with the key that signs every message) and sockets, bubblewrap its staged
copy of /etc and its seccomp filter. Destroy and ``atexit`` remove them; a SIGKILL of the notebook
does not. So all of them are made inside one folder per process, in the system's temporary
directory, named after the process::

    ws-jupyter-<pid namespace>-<pid>-<start time>-XXXXXXXX      (base 36, mode 0711)

Its mode lets other users pass through to a path they know but not list it: each folder inside
is private (0700: sandbox state, kernel folders, the seccomp filter) except the staged copy of
/etc and an empty folder, which hold nothing private and which a bubblewrap started as another
user may then bind.

* the orphan guard, which outlives a killed notebook, removes the folder once it has killed the
  process trees (``OrphanGuard.register_directory``);
* the first private folder a later process makes first removes the folders whose owner is gone
  (``sweep``): the pid runs no process, or a process that started at another time (a reused pid).
  A live owner's folder is never touched, nor one of another user or of another pid namespace
  (whose processes this one cannot see).

>>> path = private_dir("ws-example-")            # doctest: +SKIP
>>> os.path.dirname(path) == process_dir()        # doctest: +SKIP
True
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import stat
import sys
import tempfile
import threading

__all__ = ["parse_owner", "private_dir", "process_dir", "process_start", "sweep"]

_PREFIX = "ws-jupyter-"
_NAME = re.compile(r"^ws-jupyter-([0-9a-z]+)-([0-9a-z]+)-([0-9a-z]+)-[A-Za-z0-9_]+$")
_lock = threading.Lock()
_mine: dict[int, str] = {}  # pid -> its folder (a forked child makes its own)


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def _pid_namespace() -> int:
    """This process's pid namespace (0 where there are none)."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def process_start(pid: int) -> int | None:
    """When process ``pid`` started (an opaque integer, equal for the same process), or None.

    Linux: clock ticks since boot from /proc/<pid>/stat, exact and unaffected by clock changes;
    elsewhere psutil's creation time in milliseconds.
    """
    if sys.platform.startswith("linux"):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                data = f.read()
            return int(data[data.rindex(b")") + 2 :].split()[19])
        except (OSError, ValueError, IndexError):
            return None
    try:
        import psutil

        return int(psutil.Process(pid).create_time() * 1000)
    except Exception:
        return None


def parse_owner(name: str) -> tuple[int, int, int] | None:
    """(pid namespace, pid, start time) of a process folder's name, or None for other names."""
    m = _NAME.match(name)
    return (int(m.group(1), 36), int(m.group(2), 36), int(m.group(3), 36)) if m else None


def _owner_alive(namespace: int, pid: int, start: int) -> bool:
    if namespace != _pid_namespace():
        return True  # another namespace's processes are out of sight: assume it lives
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists (another user's): the start time decides
    return process_start(pid) == start


def sweep(parent: str | None = None) -> list[str]:
    """Removes the process folders in ``parent`` (default: the temporary directory) whose owner
    process is gone; returns the paths removed. Only folders of this user are considered."""
    parent = parent or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(parent) if n.startswith(_PREFIX)]
    except OSError:
        return removed
    uid = os.geteuid()
    for name in names:
        owner = parse_owner(name)
        if owner is None:
            continue
        path = os.path.join(parent, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or _owner_alive(*owner):
            continue
        shutil.rmtree(path, ignore_errors=True)  # never follows symbolic links
        if not os.path.lexists(path):
            removed.append(path)
    return removed


def _remove_at_exit(path: str, owner: int) -> None:
    if os.getpid() == owner:  # not in a forked child that exits normally
        shutil.rmtree(path, ignore_errors=True)


def process_dir() -> str:
    """This process's folder (mode 0711), made on first use after a ``sweep``."""
    pid = os.getpid()
    with _lock:
        path = _mine.get(pid)
        if path is not None and os.path.isdir(path):
            return path
        with contextlib.suppress(OSError):
            sweep()
        start = process_start(pid) or 0
        prefix = f"{_PREFIX}{_base36(_pid_namespace())}-{_base36(pid)}-{_base36(start)}-"
        path = tempfile.mkdtemp(prefix=prefix)
        os.chmod(path, 0o711)
        _mine[pid] = path
    atexit.register(_remove_at_exit, path, pid)
    from .guard import orphan_guard

    orphan_guard.register_directory(path)
    return path


def private_dir(prefix: str) -> str:
    """A new private folder (mode 0700) inside this process's folder."""
    return tempfile.mkdtemp(prefix=prefix, dir=process_dir())
