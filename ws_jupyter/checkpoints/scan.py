"""Reading the workspace's state: which files there are, and the SHA-256 of those that changed.

**What is recorded** (the policy, also in the README):

* every file and folder the workspace walker lists with hidden files included — so ``.gitignore``d
  paths are left out (``respect_gitignore``), and so are the ``exclude`` patterns;
* never: ``.git`` (git keeps its own history), ``.hg``, ``.svn``, ``.ws`` (ws-jupyter's own state),
  ``__pycache__`` and ``.ipynb_checkpoints`` (caches that are made again), ``node_modules`` and
  virtual environments (a folder with ``pyvenv.cfg``: installed, not written) — folders of the
  last three kinds are named in the checkpoint's ``skipped`` list;
* files larger than ``max_file_bytes``, FIFOs, sockets and devices are *excluded and reported*:
  each checkpoint lists them with the reason, so nothing is silently missed;
* binary files are recorded like text files (they are shown as size and hash, not as a diff);
  symbolic links are recorded with their target (and shown as changes) but never restored: a
  restore writes file contents only.

**What changed** is found the way git finds it: a file whose size, nanosecond mtime, inode and
permission bits equal the record's is unchanged; any other is read and hashed. A file modified
within two seconds of a scan is marked *racy* and hashed again next time (a change in the same
clock tick would keep its mtime). On object stores the ETag (or, without one, the size and mtime)
plays that role.

**Consistency per file**: a file is read through a descriptor (opened without following
symlinks, below the workspace root), and its size, inode and modification and change times are
taken before and after: a read during which they moved is thrown away and done again. Files
changed within a second before they were read are looked at again after the scan (after a short
pause): one whose metadata moved meanwhile — a writer was still at it — is read again. A file that
keeps changing (five tries) is excluded from the checkpoint and reported as being written — never
stored torn.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import CheckpointError, FilesystemError, FileTooLargeError, WorkspaceError
from ..filesystem.reading import CHUNK_BYTES, file_chunks, iter_fd, open_regular
from ..filesystem.walk import IgnoreRules, WalkEntry, walk
from .config import CheckpointsConfig
from .manifest import Excluded, FileRecord, State

__all__ = ["ALWAYS_SKIPPED", "FileUnsettledError", "Scan", "Scanner"]

#: Folder names never recorded. The first group is not reported (own state and caches).
_SILENT = frozenset({".ws", "__pycache__", ".ipynb_checkpoints"})
ALWAYS_SKIPPED = frozenset({*_SILENT, ".hg", ".svn", "node_modules"})
#: A file modified this recently is hashed again at the next scan (see the module docstring).
RACY_NS = 2_000_000_000
#: A file modified this recently is read twice.
HOT_NS = 1_000_000_000
_TRIES = 5
_SPOOL_BYTES = 8 << 20


@dataclass
class Scan:
    """One pass over the workspace: the state, and what was left out."""

    state: State = field(default_factory=dict)
    excluded: list[Excluded] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    hashed: int = 0
    reused: int = 0
    bytes_read: int = 0


@dataclass
class _Read:
    sha: str
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    mode: int | None
    etag: str | None
    spool: Any  # a SpooledTemporaryFile holding the bytes, or None when only hashed

    def chunks(self) -> Iterator[bytes]:
        self.spool.seek(0)
        while chunk := self.spool.read(CHUNK_BYTES):
            yield chunk


class FileUnsettledError(CheckpointError):
    """A file kept changing while it was read (five tries): it is not recorded."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path} kept changing while it was read", path=path)


class Scanner:
    """Scans one workspace filesystem with one configuration (see the module docstring)."""

    def __init__(self, fs: Any, config: CheckpointsConfig) -> None:
        self.fs = fs
        self.config = config
        self.local = getattr(fs, "containment", None) is not None and hasattr(fs, "host_path")
        rules = IgnoreRules()
        if config.exclude:
            rules = rules.with_file(".", "\n".join(config.exclude))
        self._exclude = rules

    # --- listing --------------------------------------------------------------------------------

    def entries(self, skipped: list[str]) -> Iterator[WalkEntry]:
        """What the policy records, in tree order (skipped folders appended to ``skipped``)."""

        def skip(entry: WalkEntry) -> bool:
            if entry.name in ALWAYS_SKIPPED:
                if entry.name not in _SILENT:
                    skipped.append(entry.path)
                return True
            if self._exclude and self._exclude.is_ignored(entry.path, True):
                return True
            if self.local and not entry.is_symlink and self._is_venv(entry.path):
                skipped.append(entry.path)
                return True
            return False

        for entry in walk(
            self.fs,
            ".",
            include_hidden=True,
            respect_gitignore=self.config.respect_gitignore,
            skip_dir=skip,
        ):
            if not entry.is_dir and self._exclude and self._exclude.is_ignored(entry.path, False):
                continue
            yield entry

    def _is_venv(self, path: str) -> bool:
        try:
            return bool(self.fs.exists(f"{path}/pyvenv.cfg"))
        except (WorkspaceError, OSError):
            return False

    # --- the scan -------------------------------------------------------------------------------

    def scan(
        self,
        known: Mapping[str, FileRecord],
        *,
        keep: Callable[[str, _Read], None] | None = None,
        hashes: dict[str, FileRecord] | None = None,
    ) -> Scan:
        """The workspace's state now. ``known`` records (of an earlier checkpoint) vouch for files
        whose metadata still matches; ``hashes`` is a second such cache, updated with what this
        scan hashed. ``keep(path, read)`` receives every file read (to store its copy)."""
        out = Scan()
        now_ns = time.time_ns()
        hot: dict[str, tuple[int, int, int, int]] = {}
        for entry in self.entries(out.skipped):
            try:
                self._one(entry, known, hashes, keep, out, now_ns, hot)
            except (FilesystemError, OSError):
                continue  # vanished or became unreadable while scanning: not there now
        self._settle(hot, keep, out)
        return out

    def _settle(
        self,
        hot: dict[str, tuple[int, int, int, int]],
        keep: Callable[[str, _Read], None] | None,
        out: Scan,
    ) -> None:
        """Files changed a moment before they were read are looked at again after a pause: one
        whose metadata moved since is read again (a writer was still at it); one that keeps
        moving is excluded as being written."""
        for _ in range(_TRIES):
            if not hot:
                return
            time.sleep(0.01)
            again: dict[str, tuple[int, int, int, int]] = {}
            for path, seen in hot.items():
                now = self._signature(path)
                if now == seen:
                    continue
                out.state.pop(path, None)
                if now is None:
                    continue
                try:
                    self._record(path, keep, out, time.time_ns(), again)
                except (FilesystemError, OSError):
                    continue
            hot = again
        for path in hot:
            out.state.pop(path, None)
            out.excluded.append(
                Excluded(path, "was being written during the checkpoint (it changed while read)")
            )

    def _one(
        self,
        entry: WalkEntry,
        known: Mapping[str, FileRecord],
        hashes: dict[str, FileRecord] | None,
        keep: Callable[[str, _Read], None] | None,
        out: Scan,
        now_ns: int,
        hot: dict[str, tuple[int, int, int, int]],
    ) -> None:
        path = entry.path
        st = entry.stat
        if entry.is_symlink:
            target = entry.symlink_target
            if target is None and self.local:
                target = os.readlink(self.fs.host_path(path, follow=False))
            out.state[path] = FileRecord("link", target=str(target or ""))
            return
        if entry.is_dir:
            mode = stat_mod.S_IMODE(st.st_mode) if st is not None else None
            out.state[path] = FileRecord("dir", mode=mode)
            return
        if st is not None and not stat_mod.S_ISREG(st.st_mode):
            out.excluded.append(Excluded(path, "not a regular file (FIFO, socket or device)"))
            return
        size = entry.size if entry.size is not None else (st.st_size if st is not None else None)
        if size is not None and size > self.config.max_file_bytes:
            out.excluded.append(Excluded(path, self._too_large(), size))
            return
        candidate = self._vouched(entry, known) or (self._vouched(entry, hashes) if hashes else None)
        if candidate is not None:
            out.state[path] = candidate
            out.reused += 1
            return
        record = self._record(path, keep, out, now_ns, hot, entry)
        if record is not None and hashes is not None:
            hashes[path] = record

    def _record(
        self,
        path: str,
        keep: Callable[[str, _Read], None] | None,
        out: Scan,
        now_ns: int,
        hot: dict[str, tuple[int, int, int, int]],
        entry: WalkEntry | None = None,
    ) -> FileRecord | None:
        """Read one file, store its copy (``keep``) and record it; None when it is excluded."""
        try:
            read = self.read(path, keep_bytes=keep is not None, entry=entry)
        except FileTooLargeError as big:
            out.excluded.append(Excluded(path, self._too_large(), big.size))
            return None
        except FileUnsettledError:
            out.excluded.append(
                Excluded(path, "was being written during the checkpoint (it changed while read)")
            )
            return None
        try:
            if keep is not None:
                keep(path, read)
        finally:
            if read.spool is not None:
                read.spool.close()
        changed_ns = max(read.mtime_ns, read.ctime_ns)
        record = FileRecord(
            "file",
            size=read.size,
            mtime_ns=read.mtime_ns,
            ino=read.ino,
            mode=read.mode,
            sha=read.sha,
            etag=read.etag,
            # an ETag names the content: only metadata that a change can leave alone is racy
            racy=read.etag is None and bool(changed_ns) and now_ns - changed_ns < RACY_NS,
        )
        out.state[path] = record
        out.hashed += 1
        out.bytes_read += read.size
        if self.local and now_ns - changed_ns < HOT_NS:
            hot[path] = (read.size, read.mtime_ns, read.ctime_ns, read.ino)
        return record

    def _too_large(self) -> str:
        from ..notebooks.outputs import format_size

        return f"larger than max_file_bytes ({format_size(self.config.max_file_bytes)})"

    def _vouched(self, entry: WalkEntry, known: Mapping[str, FileRecord] | None) -> FileRecord | None:
        """The known record when the entry's metadata says the file is unchanged since."""
        if not known:
            return None
        rec = known.get(entry.path)
        if rec is None or rec.kind != "file" or rec.racy:
            return None
        st = entry.stat
        if st is not None:
            same = (
                rec.size == st.st_size
                and rec.mtime_ns == st.st_mtime_ns
                and rec.ino == st.st_ino
                and rec.mode == stat_mod.S_IMODE(st.st_mode)
            )
            return rec if same else None
        if entry.size is None or rec.size != entry.size:
            return None
        if entry.etag is not None and rec.etag is not None:
            return rec if entry.etag == rec.etag else None
        if entry.mtime is not None and rec.mtime_ns and entry.etag is None and rec.etag is None:
            return rec if round(entry.mtime * 1e9) == rec.mtime_ns else None
        return None  # no metadata to trust (an in-memory store): read it

    # --- reading one file -----------------------------------------------------------------------

    def read(self, path: str, *, keep_bytes: bool, entry: WalkEntry | None = None) -> _Read:
        """One settled read of ``path`` (see the module docstring); ``entry``: its listing."""
        if self.local:
            return self._read_local(path, keep_bytes)
        return self._read_generic(path, keep_bytes, entry)

    def _read_local(self, path: str, keep_bytes: bool) -> _Read:
        containment = self.fs.containment
        resolved = containment.resolve(path, follow=False)
        for attempt in range(_TRIES):
            with containment.parent_dir_fd(resolved) as dfd:
                fd, before = open_regular(resolved.name, dir_fd=dfd, rel=path)
            try:
                first = _consume(iter_fd(fd, rel=path), keep_bytes, self.config.max_file_bytes, path)
                after = os.fstat(fd)
            finally:
                os.close(fd)
            if _same(before, after) and first[1] == after.st_size:
                return _Read(
                    first[0], first[1], after.st_mtime_ns, after.st_ctime_ns, after.st_ino,
                    stat_mod.S_IMODE(after.st_mode), None, first[2],
                )  # fmt: skip
            if first[2] is not None:
                first[2].close()
            time.sleep(0.01 * (attempt + 1))
        raise FileUnsettledError(path)

    def _signature(self, path: str) -> tuple[int, int, int, int] | None:
        """(size, mtime, ctime, inode) of a local file now, None when it is gone."""
        containment = self.fs.containment
        try:
            st = containment.stat(containment.resolve(path, follow=False), follow=False)
        except (WorkspaceError, OSError):
            return None
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)

    def _read_generic(self, path: str, keep_bytes: bool, entry: WalkEntry | None) -> _Read:
        """Object stores: the listing's ETag (or size and mtime) before, one look after; a
        backend with neither (in-memory) replaces objects whole, so a read is a version."""
        etag_of = getattr(self.fs, "etag", None)
        for attempt in range(_TRIES):
            if entry is None or attempt:
                st = self.fs.stat(path)
                before = (st.size, st.mtime, etag_of(path) if callable(etag_of) else None)
            else:
                before = (entry.size, entry.mtime, entry.etag)
            if before[0] is not None and before[0] <= _SPOOL_BYTES:  # small: one GET
                data = self.fs.read_file(path, encoding="binary")
                chunks: Iterator[bytes] = iter((bytes(data),))
            else:
                chunks = file_chunks(self.fs, path)
            first = _consume(chunks, keep_bytes, self.config.max_file_bytes, path)
            if before[2] is not None and callable(etag_of):
                after = (first[1], before[1], etag_of(path))
            elif before[1] is not None:
                st = self.fs.stat(path)
                after = (st.size, st.mtime, None)
            else:
                after = (first[1], None, None)
            if before == after and first[1] == before[0]:
                mtime_ns = round(before[1] * 1e9) if before[1] is not None else 0
                return _Read(first[0], first[1], mtime_ns, 0, 0, None, before[2], first[2])
            if first[2] is not None:
                first[2].close()
            time.sleep(0.01 * (attempt + 1))
        raise FileUnsettledError(path)


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (
        a.st_size == b.st_size
        and a.st_mtime_ns == b.st_mtime_ns
        and a.st_ctime_ns == b.st_ctime_ns
        and a.st_ino == b.st_ino
    )


def _consume(chunks: Iterator[bytes], keep: bool, limit: int, path: str) -> tuple[str, int, Any]:
    """(sha256, size, spool or None) of a stream; ``FileTooLargeError`` past ``limit`` bytes."""
    digest = hashlib.sha256()
    # handed to the caller, who closes it (a context manager would close it here)
    spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) if keep else None  # noqa: SIM115
    size = 0
    try:
        for chunk in chunks:
            size += len(chunk)
            if size > limit:
                raise FileTooLargeError(path, size, limit)
            digest.update(chunk)
            if spool is not None:
                spool.write(chunk)
    except BaseException:
        if spool is not None:
            spool.close()
        raise
    return digest.hexdigest(), size, spool
