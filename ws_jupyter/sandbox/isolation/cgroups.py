"""A cgroup per sandbox: limits for the sandbox as a whole, and every process it ever started.

rlimits hold per process, and the process limit is not enforced at all for host root (the
kernel exempts it), so a notebook running as root had no defence against a fork bomb. A cgroup
bounds the sum — ``pids.max`` and the memory limit — and lists every process started in it,
whatever it did to leave its process group or session; destroying the sandbox (or the watchdog,
after a crash) kills them all and removes the cgroup.

Where a cgroup can be made, in order:

* cgroup v2 (the unified hierarchy, ``/sys/fs/cgroup``, or ``/sys/fs/cgroup/unified`` on hybrid
  systems): a child of the notebook's own cgroup, when that is writable (root, or a subtree
  delegated to the user, as systemd does for user sessions). Its ``pids``/``memory`` controllers
  are used when the parent enables them for its children; ``cgroup.kill`` ends everything at once.
* cgroup v1 ``pids`` and ``memory`` hierarchies (legacy and hybrid systems, root only) for
  whichever limit v2 could not provide.

Without any, the sandbox still works with its per-process rlimits (``get_info()`` says which).
Processes join through the command line itself (a ``/bin/sh`` in front moves itself into each
cgroup and then execs bwrap), so nothing runs between fork and exec in the notebook. In a v1
hierarchy the shell writes ``0`` ("this thread") to ``tasks``: the shell has one thread, so that
moves the whole process, and the kernel then skips the machine-wide lock that a ``cgroup.procs``
write takes (whose RCU grace period cost ~10 ms per hierarchy and command on a busy machine).
v2 has no such path for a domain cgroup: there the shell writes its pid to ``cgroup.procs``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass, field

__all__ = ["SandboxCgroup", "join_value", "kill_cgroup", "remove_cgroup"]

_ROOT = "/sys/fs/cgroup"


def _mounts() -> list[tuple[str, str, str, str]]:
    """(mount point, mount root, fstype, super options) of every cgroup filesystem."""
    out = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields, rest = left.split(), right.split()
                if len(fields) >= 5 and len(rest) >= 3 and rest[0] in ("cgroup", "cgroup2"):
                    out.append((fields[4], fields[3], rest[0], rest[2]))
    except OSError:
        pass
    return out


def _own_cgroups() -> dict[str, str]:
    """Controller (or "" for v2) -> this process's cgroup path, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) == 3:
                    for name in parts[1].split(",") if parts[1] else [""]:
                        out[name] = parts[2]
    except OSError:
        pass
    return out


def _directory(mount: str, mount_root: str, path: str) -> str | None:
    if mount_root != "/" and path.startswith(mount_root):
        path = path[len(mount_root) :] or "/"
    full = os.path.normpath(mount + "/" + path)
    return full if os.path.isdir(full) else None


def _write(path: str, value: str) -> bool:
    try:
        with open(path, "w", encoding="ascii") as f:
            f.write(value)
        return True
    except OSError:
        return False


def _make(parent: str, name: str) -> str | None:
    path = os.path.join(parent, name)
    try:
        os.mkdir(path)
    except FileExistsError:
        pass
    except OSError:
        return None
    return path


@dataclass
class SandboxCgroup:
    """The cgroup directories of one sandbox (one per hierarchy used) and what they limit."""

    paths: list[str] = field(default_factory=list)
    limits: dict[str, str] = field(default_factory=dict)  # "pids"/"memory" -> "v1" | "v2"

    @property
    def procs_files(self) -> list[str]:
        return [os.path.join(p, "cgroup.procs") for p in self.paths]

    @property
    def join_files(self) -> list[str]:
        """The file a single-threaded process writes to join each cgroup (see ``join_value``)."""
        out = []
        for p in self.paths:
            tasks = os.path.join(p, "tasks")  # only v1 cgroups have one
            out.append(tasks if os.path.exists(tasks) else os.path.join(p, "cgroup.procs"))
        return out

    @classmethod
    def create(
        cls, name: str, *, max_processes: int | None, max_memory_bytes: int | None
    ) -> SandboxCgroup | None:
        """Makes the sandbox's cgroup(s); None when this machine lets us make none."""
        own = _own_cgroups()
        cg = cls()
        wanted = {"pids": max_processes, "memory": max_memory_bytes}
        for mount, mount_root, fstype, _options in _mounts():
            if fstype != "cgroup2" or "" not in own:
                continue
            parent = _directory(mount, mount_root, own[""])
            if parent is None or not os.access(parent, os.W_OK):
                break
            # Children get a controller only when the parent enables it (refused, with EBUSY,
            # for a non-root cgroup that holds processes itself: the limit then comes from v1).
            available = _read(os.path.join(parent, "cgroup.controllers")).split()
            enabled = _read(os.path.join(parent, "cgroup.subtree_control")).split()
            for ctl in ("pids", "memory"):
                if ctl in available and ctl not in enabled and wanted[ctl] is not None:
                    _write(os.path.join(parent, "cgroup.subtree_control"), f"+{ctl}")
            path = _make(parent, name)
            if path is None:
                break
            cg.paths.append(path)
            if max_processes is not None and _write(os.path.join(path, "pids.max"), str(max_processes)):
                cg.limits["pids"] = "v2"
            if max_memory_bytes is not None and _write(
                os.path.join(path, "memory.max"), str(max_memory_bytes)
            ):
                _write(os.path.join(path, "memory.swap.max"), "0")
                cg.limits["memory"] = "v2"
            if not cg.limits:  # no controller here (hybrid systems): each join costs a write
                remove_cgroup(path)
                cg.paths.remove(path)
            break
        for mount, mount_root, fstype, options in _mounts():
            if fstype != "cgroup":
                continue
            for ctl, limit_file in (("pids", "pids.max"), ("memory", "memory.limit_in_bytes")):
                value = wanted[ctl]
                if value is None or ctl in cg.limits or ctl not in options.split(",") or ctl not in own:
                    continue
                parent = _directory(mount, mount_root, own[ctl])
                if parent is None or not os.access(parent, os.W_OK):
                    continue
                path = _make(parent, name)
                if path is None:
                    continue
                if _write(os.path.join(path, limit_file), str(value)):
                    if ctl == "memory":  # memory + swap too, where swap accounting exists
                        _write(os.path.join(path, "memory.memsw.limit_in_bytes"), str(value))
                    cg.paths.append(path)
                    cg.limits[ctl] = "v1"
                else:
                    remove_cgroup(path)
        if not cg.limits:  # a cgroup that limits nothing is not worth a shell per command
            cg.destroy()
            return None
        return cg

    def pids(self) -> set[int]:
        """Every process in the sandbox's cgroup(s) right now."""
        out: set[int] = set()
        for f in self.procs_files:
            out.update(int(x) for x in _read(f).split() if x.isdigit())
        return out

    def destroy(self) -> None:
        """Kills every process in the cgroup(s) and removes them."""
        for path in self.paths:
            kill_cgroup(path)
        for path in self.paths:
            remove_cgroup(path)
        self.paths = []


def join_value(join_file: str, pid: str) -> str:
    """What a process writes into ``join_file`` to move itself: ``0`` (the writing thread) for a
    v1 ``tasks`` file, its pid for ``cgroup.procs``."""
    return "0" if os.path.basename(join_file) == "tasks" else pid


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii") as f:
            return f.read()
    except OSError:
        return ""


def kill_cgroup(path: str, timeout: float = 5.0) -> None:
    """SIGKILLs every process in a cgroup (``cgroup.kill`` where the kernel has it)."""
    if os.path.exists(os.path.join(path, "cgroup.kill")) and _write(os.path.join(path, "cgroup.kill"), "1"):
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = [int(x) for x in _read(os.path.join(path, "cgroup.procs")).split() if x.isdigit()]
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def remove_cgroup(path: str, timeout: float = 2.0) -> bool:
    """Removes an emptied cgroup (retrying while its last processes are reaped)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
