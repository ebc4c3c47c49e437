"""Read tracking and write locks: the two safety nets under the file-writing tools.

**Read tracking.** Records belong to the workspace and the conversation (the request context's
thread/resource id; one shared record set when there is none), not to one tool set, so tools made
per request keep what earlier requests read. ``read_file`` records, per *resolved* path (``a.txt``, ``./a.txt`` and the
absolute path of the same file are one key; so are a symlink and its target), the file's mtime and
size, a SHA-256 of the content when all of it was read, and which lines were shown. A later write or edit of that file is refused when the file
changed since (another process, a person in an editor), so a model never overwrites work it has
not seen. With ``require_read_before_write`` an existing file must have been read first, and
``write_file`` (which replaces the whole file) needs the whole file to have been read. A record
is cleared only by a write that really happened (or a delete), never by a failed one.

**Write locks.** Writes to one resolved path are serialised first-come first-served; different
paths proceed in parallel. A writer waits at most ``write_lock_timeout`` seconds for its turn; the
lock is held until its write has completely finished, so a timed-out waiter never overlaps a
running write (it does not run at all). Locks are process-wide: two tool sets (or two workspaces)
over the same directory share them; on a local filesystem they are also held against other
processes, by a byte-range ``fcntl`` lock in ``<workspace>/.ws/write.lock`` (a per-user lock file
when ``.ws`` cannot be used), so the read-tracking check and the write are atomic for every
process that writes through these tools.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import posixpath
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._per_workspace import PerWorkspace
from ..errors import PathEscapeError, WorkspaceError, WriteLockTimeoutError

if TYPE_CHECKING:
    from ..filesystem.types import WorkspaceFilesystem
    from ..workspace import Workspace

__all__ = [
    "ReadRecord",
    "ReadTracker",
    "ReadTrackers",
    "WriteLocks",
    "conversation_key",
    "cross_process_lock",
    "path_key",
    "read_trackers",
    "write_locks",
]


def path_key(fs: WorkspaceFilesystem, path: str) -> str:
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
    digest: str | None = None  # SHA-256 of the content read, when all of it passed through
    #: notebooks: cell index -> fingerprint of the cell shown there (``ws_jupyter.notebooks.seen``)
    cells: dict[int, str] | None = None

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
    """Memory of what one conversation has read (thread-safe; the oldest records go first)."""

    def __init__(self, max_records: int = 1000) -> None:
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
        digest: str | None = None,
        cells: dict[int, str] | None = None,
    ) -> ReadRecord:
        with self._lock:
            rec = self._records.get(key)
            if rec is None or rec.mtime != mtime or rec.size != size or (digest and rec.digest != digest):
                rec = ReadRecord(mtime, size, total_lines)
            if digest:
                rec.digest = digest
            if total_lines is not None:
                rec.total_lines = total_lines
            if whole:
                rec.whole = True
            if lines is not None and lines[1] >= lines[0]:
                rec.ranges = _merge(rec.ranges, lines)
            if cells is not None:  # a notebook's cells count as its lines (index + 1)
                rec.cells = {**(rec.cells or {}), **cells}
                for index in cells:
                    rec.ranges = _merge(rec.ranges, (index + 1, index + 1))
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


#: Request-context keys that name a conversation (thread) and whose it is (resource/user).
THREAD_KEYS = ("thread_id", "thread-id", "threadId", "mastra__threadId")
RESOURCE_KEYS = ("resource_id", "resource-id", "resourceId", "mastra__resourceId", "user_id", "user-id")


def conversation_key(request_context: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """``(resource, thread)`` named by a request context, or None (the workspace's default)."""
    if request_context is None:
        return None
    try:
        thread = next((request_context[k] for k in THREAD_KEYS if request_context.get(k) is not None), None)
        resource = next((request_context[k] for k in RESOURCE_KEYS if request_context.get(k) is not None), None)
    except (AttributeError, TypeError):
        return None
    if thread is None and resource is None:
        return None
    return (str(resource or ""), str(thread or ""))


class ReadTrackers:
    """The read trackers of one workspace, one per conversation (bounded, least recently used
    dropped first). Tool sets are often made per request (``%ws call``, web frameworks): keeping
    the records here, not in a tool set, is what lets a later request's write see an earlier
    request's read — and refuse to overwrite an external change made in between."""

    def __init__(self, max_conversations: int = 256, max_records: int = 1000) -> None:
        self._lock = threading.Lock()
        self._trackers: dict[tuple[str, str] | None, ReadTracker] = {}
        self._max = max_conversations
        self._max_records = max_records

    def for_context(self, request_context: Mapping[str, Any] | None) -> ReadTracker:
        key = conversation_key(request_context)
        with self._lock:
            tracker = self._trackers.pop(key, None) or ReadTracker(self._max_records)
            self._trackers[key] = tracker
            while len(self._trackers) > self._max:
                self._trackers.pop(next(iter(self._trackers)))
            return tracker

    def __len__(self) -> int:
        return len(self._trackers)


_pools: PerWorkspace[ReadTrackers] = PerWorkspace()


def read_trackers(workspace: Workspace) -> ReadTrackers:
    """The read trackers of ``workspace`` (created on first use, gone with the workspace)."""
    return _pools.get_or_make(workspace, ReadTrackers)


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


# --- cross-process --------------------------------------------------------------------------------

_lock_files_guard = threading.Lock()
_lock_files: dict[str, int] = {}  # one descriptor per lock file, never closed: closing any
# descriptor of a file drops every POSIX lock this process holds on it


def _lock_file_fd(base: str) -> int:
    """The workspace's lock file, ``<base>/.ws/write.lock`` (opened without following symlinks);
    a per-user file keyed by the workspace's real path when ``.ws`` cannot be used (a read-only
    directory, a ``.ws`` that is not a directory)."""
    with _lock_files_guard:
        fd = _lock_files.get(base)
        if fd is not None:
            return fd
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        dir_flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            bfd = os.open(base, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                try:
                    os.mkdir(".ws", 0o777, dir_fd=bfd)
                except FileExistsError:
                    pass
                wfd = os.open(".ws", dir_flags, dir_fd=bfd)
                try:
                    fd = os.open("write.lock", flags, 0o666, dir_fd=wfd)
                finally:
                    os.close(wfd)
            finally:
                os.close(bfd)
        except OSError:
            cache = os.path.join(
                os.environ.get("XDG_RUNTIME_DIR") or os.path.join(os.path.expanduser("~"), ".cache"),
                "ws-jupyter",
                "locks",
            )
            os.makedirs(cache, exist_ok=True)
            name = hashlib.sha256(base.encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".lock"
            fd = os.open(os.path.join(cache, name), flags, 0o600)
        _lock_files[base] = fd
        return fd


@contextmanager
def cross_process_lock(
    fs: WorkspaceFilesystem, key: str, timeout: float | None, shown_path: str
) -> Iterator[None]:
    """Hold ``key`` against other processes too (a byte-range ``fcntl`` lock in the workspace's
    lock file), so a check-then-write by one process cannot interleave with another's. Only for
    local, writable filesystems; waits at most ``timeout`` seconds (``WriteLockTimeoutError``).
    Callers hold the in-process lock of ``key`` first (fcntl locks do not exclude threads)."""
    base = getattr(fs, "base_path", None)
    if getattr(fs, "containment", None) is None or not base or getattr(fs, "read_only", False):
        yield
        return
    try:
        fd = _lock_file_fd(os.path.realpath(base))
    except OSError:
        yield  # no lock file anywhere: the in-process lock still holds
        return
    offset = int(hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:10], 16)
    deadline = None if timeout is None else time.monotonic() + timeout
    pause = 0.002
    while True:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
            break
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EAGAIN):
                yield
                return
        if deadline is not None and time.monotonic() >= deadline:
            raise WriteLockTimeoutError(shown_path, float(timeout or 0))
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    try:
        yield
    finally:
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, offset)
