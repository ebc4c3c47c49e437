"""Read tracking and write locks: the two safety nets under the file-writing tools.

**Read tracking.** ``read_file`` records, per *resolved* path (``a.txt``, ``./a.txt`` and the
absolute path of the same file are one key; so are a symlink and its target), the file's mtime and
size and which lines were shown. A later write or edit of that file is refused when the file
changed since (another process, a person in an editor), so a model never overwrites work it has
not seen. With ``require_read_before_write`` an existing file must have been read first, and
``write_file`` (which replaces the whole file) needs the whole file to have been read. A record
is cleared only by a write that really happened (or a delete), never by a failed one.

**Write locks.** Writes to one resolved path are serialised first-come first-served; different
paths proceed in parallel. A writer waits at most ``write_lock_timeout`` seconds for its turn; the
lock is held until its write has completely finished, so a timed-out waiter never overlaps a
running write (it does not run at all). Locks are process-wide: two tool sets (or two workspaces)
over the same directory share them.
"""

from __future__ import annotations

import posixpath
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..errors import PathEscapeError, WorkspaceError, WriteLockTimeoutError

__all__ = ["ReadRecord", "ReadTracker", "WriteLocks", "path_key", "write_locks"]


def path_key(fs: Any, path: str) -> str:
    """A key that is equal for every spelling of the same file (symlinks resolved where possible)."""
    host_path = getattr(fs, "host_path", None)
    if callable(host_path):
        try:
            return "host:" + str(host_path(path))
        except PathEscapeError:
            raise
        except WorkspaceError:
            pass
    norm = posixpath.normpath("/" + str(path).replace("\\", "/").lstrip("/"))
    return f"{getattr(fs, 'id', id(fs))}:{norm}"


def _merge(ranges: list[tuple[int, int]], new: tuple[int, int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted([*ranges, new]):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


@dataclass
class ReadRecord:
    """What a model has seen of one file: its version (mtime, size) and the lines shown."""

    mtime: float
    size: int
    total_lines: int | None = None
    ranges: list[tuple[int, int]] = field(default_factory=list)
    whole: bool = False  # read without line limits (or as media/binary): everything was seen

    @property
    def complete(self) -> bool:
        if self.whole:
            return True
        if self.total_lines is None:
            return False
        if self.total_lines == 0:
            return True
        return bool(self.ranges) and self.ranges[0][0] <= 1 and self.ranges[0][1] >= self.total_lines

    def covers(self, start: int, end: int) -> bool:
        if self.whole:
            return True
        return any(a <= start and end <= b for a, b in self.ranges)

    def describe(self) -> str:
        if not self.ranges:
            return "no lines"
        shown = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in self.ranges)
        total = f" of {self.total_lines}" if self.total_lines is not None else ""
        return f"lines {shown}{total}"


class ReadTracker:
    """Per-tool-set memory of what was read (thread-safe)."""

    def __init__(self, max_records: int = 10_000) -> None:
        self._lock = threading.Lock()
        self._records: dict[str, ReadRecord] = {}
        self._max = max_records

    def record(
        self,
        key: str,
        mtime: float,
        size: int,
        *,
        lines: tuple[int, int] | None = None,
        total_lines: int | None = None,
        whole: bool = False,
    ) -> ReadRecord:
        with self._lock:
            rec = self._records.get(key)
            if rec is None or rec.mtime != mtime or rec.size != size:
                rec = ReadRecord(mtime, size, total_lines)
            if total_lines is not None:
                rec.total_lines = total_lines
            if whole:
                rec.whole = True
            if lines is not None and lines[1] >= lines[0]:
                rec.ranges = _merge(rec.ranges, lines)
            self._records.pop(key, None)
            self._records[key] = rec
            while len(self._records) > self._max:
                self._records.pop(next(iter(self._records)))
            return rec

    def get(self, key: str) -> ReadRecord | None:
        with self._lock:
            return self._records.get(key)

    def clear(self, key: str, *, recursive: bool = False) -> None:
        with self._lock:
            self._records.pop(key, None)
            if recursive:
                prefix = key.rstrip("/") + "/"
                for k in [k for k in self._records if k.startswith(prefix)]:
                    del self._records[k]

    def __len__(self) -> int:
        return len(self._records)


class _Queue:
    __slots__ = ("waiters",)

    def __init__(self) -> None:
        self.waiters: deque[threading.Event] = deque()


class WriteLocks:
    """FIFO locks keyed by resolved path (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[str, _Queue] = {}

    @contextmanager
    def hold(self, key: str, timeout: float | None, shown_path: str) -> Iterator[None]:
        """Wait for ``key`` (at most ``timeout`` seconds), run the body, release.

        Raises ``WriteLockTimeoutError`` (the body does not run) when the turn did not come.
        """
        me = threading.Event()
        with self._lock:
            queue = self._queues.get(key)
            if queue is None:
                queue = self._queues[key] = _Queue()
            queue.waiters.append(me)
            if queue.waiters[0] is me:
                me.set()
        if not me.wait(timeout):
            with self._lock:
                if not me.is_set():  # still waiting: leave the queue
                    queue.waiters.remove(me)
                    if not queue.waiters:
                        self._queues.pop(key, None)
                    raise WriteLockTimeoutError(shown_path, float(timeout or 0))
        try:
            yield
        finally:
            with self._lock:
                queue.waiters.popleft()
                if queue.waiters:
                    queue.waiters[0].set()
                else:
                    self._queues.pop(key, None)

    def pending(self, key: str) -> int:
        """Writers holding or waiting for ``key`` (0 when idle: nothing is kept for idle paths)."""
        with self._lock:
            queue = self._queues.get(key)
            return len(queue.waiters) if queue else 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._queues)


#: The process-wide write locks used by every tool set.
write_locks = WriteLocks()
