"""Per-process resource limits (rlimits) of sandboxed commands, set by ``prlimit`` in front of them.

Both kinds of sandbox use them. Under bubblewrap ``prlimit`` runs inside the sandbox, after the
user namespace exists, so the process limit counts the sandbox's own processes. Without
isolation (``host_prefix``) the same limits hold — memory, CPU time, file size, open files, no
core dumps — but the process limit (``RLIMIT_NPROC``) counts *every* process of the notebook's
user: it is set to the tasks that user runs now plus ``max_processes``, so a fork bomb stops
after that many more while the user's other programs never make a command fail; for root the
kernel does not enforce it at all, and it is left out.

``prlimit`` (util-linux) sets the limits and execs the command, so the command keeps its pid
(signals, process groups and the orphan guard are unaffected). Where it is missing (macOS) no
limit is set, and ``get_info()`` says so.
"""

from __future__ import annotations

import functools
import os
import shutil

from .config import NativeSandboxConfig

__all__ = ["host_prefix", "prlimit_path", "rlimit_args", "user_task_count"]


@functools.lru_cache(maxsize=1)
def prlimit_path() -> str | None:
    """The system's ``prlimit`` (looked up in the system directories only, not on ``PATH``)."""
    return shutil.which("prlimit", path="/usr/bin:/bin:/usr/sbin:/sbin")


def _mib(value: int | None) -> int | None:
    return None if value is None else value << 20


def rlimit_args(config: NativeSandboxConfig, *, processes: int | None = -1) -> list[str]:
    """``prlimit`` options for the configured limits (soft = hard, so a command cannot raise them).

    ``processes`` replaces ``config.max_processes`` for the process limit (None: no process
    limit); the default -1 keeps it. Each limit is clamped to this process's own hard limit,
    which an unprivileged process could not exceed anyway. Core dumps are always off: nothing
    writes multi-GB ``core`` files into the workspace, and no sandboxed crash feeds the host's
    core handler.
    """
    import resource

    wanted = (
        ("nproc", resource.RLIMIT_NPROC, config.max_processes if processes == -1 else processes),
        ("data", resource.RLIMIT_DATA, _mib(config.max_memory_mb)),
        ("cpu", resource.RLIMIT_CPU, config.max_cpu_seconds),
        ("fsize", resource.RLIMIT_FSIZE, _mib(config.max_file_size_mb)),
        ("nofile", resource.RLIMIT_NOFILE, config.max_open_files),
        ("core", resource.RLIMIT_CORE, 0),
    )
    out = []
    for name, which, value in wanted:
        if value is None:
            continue
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        out.append(f"--{name}={value}:{value}")
    return out


def user_task_count(uid: int | None = None) -> int | None:
    """How many tasks (threads included, as ``RLIMIT_NPROC`` counts them) ``uid`` runs now.

    Read from /proc (about 6 µs per process); None where there is no /proc.
    """
    uid = os.getuid() if uid is None else uid
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    count = 0
    for name in names:
        if not name.isdigit():
            continue
        try:
            if os.stat("/proc/" + name).st_uid != uid:
                continue
            count += max(1, os.stat(f"/proc/{name}/task").st_nlink - 2)
        except OSError:
            continue  # the process ended meanwhile
    return count


def host_prefix(config: NativeSandboxConfig) -> list[str]:
    """``[prlimit, options..., "--"]`` for a command run on the host, or ``[]`` without prlimit."""
    prlimit = prlimit_path()
    if prlimit is None:
        return []
    processes: int | None = None
    if config.max_processes is not None and os.geteuid() != 0:
        running = user_task_count()
        if running is not None:
            processes = running + config.max_processes
    limits = rlimit_args(config, processes=processes)
    return [prlimit, *limits, "--"] if limits else []
