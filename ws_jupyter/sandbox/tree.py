"""Signalling a whole process tree: the process group plus every descendant psutil can see.

A process group alone misses children that moved to their own group (job control in
``bash -c``, ``make -j``), and psutil alone misses processes re-parented to init. Both together,
with the descendants snapshotted *before* the first signal (a dying parent orphans its children),
cover ordinary trees. A grandchild that calls ``setsid`` and is orphaned escapes both: only a pid
namespace (bubblewrap) catches it — say so to users who need that guarantee.
"""

from __future__ import annotations

import contextlib
import os
import signal

import psutil

__all__ = ["signal_tree", "snapshot_tree", "wait_gone"]


def snapshot_tree(pid: int) -> list[psutil.Process]:
    """The process and its descendants right now (empty when it is already gone)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return []


def signal_tree(pgid: int | None, procs: list[psutil.Process], sig: int = signal.SIGKILL) -> None:
    """Sends ``sig`` to the process group and to each snapshotted process still alive.

    psutil refuses to signal a pid that was reused since the snapshot, so a stale snapshot never
    hits an unrelated process.
    """
    if pgid is not None and pgid > 1:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError):
            proc.send_signal(sig)


def wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Waits up to ``timeout`` seconds; returns the processes still alive (zombies count as gone)."""
    if not procs:
        return []
    _gone, alive = psutil.wait_procs(procs, timeout=timeout)
    still = []
    for proc in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            if proc.status() != psutil.STATUS_ZOMBIE:
                still.append(proc)
    return still
