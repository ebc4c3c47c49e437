"""Which ``.gitignore`` files a tree holds, checked before ripgrep reads them — once per change.

(The same pass lists the tree's notebooks, which grep searches cell by cell: adding or removing
one changes its directory's ctime too.)

ripgrep opens every ``.gitignore`` it meets with a plain ``open()``: a FIFO would hang it, a
symlink to a file elsewhere in the workspace lend it rules, a huge file eat memory (it runs
confined to the workspace, so nothing outside can be reached: :mod:`.confine`). So before
ripgrep's results are used, ``find`` (which opens nothing, and runs confined the same way) lists
the tree's directories and ``.gitignore`` files; a tree holding an unusable one (not a regular
file of at most ``MAX_CONFIG_BYTES``) is searched by the Python engine instead.

That pass walks the whole tree, and on a big one it cost as much as a third of ripgrep's own time.
Its result is kept (per tree, a few trees per process) together with each directory's and
``.gitignore``'s inode and change time; the next search on the same tree only ``lstat``s those.
Any entry added, removed or renamed in a directory changes that directory's ctime, and writing a
file changes its own; ctime cannot be set by a process (unlike mtime — and the sandbox's seccomp
filter refuses clock changes), so a tree whose recorded entries all compare equal holds no new
``.gitignore``. A scan is only kept when every directory's ctime is at least ``_SETTLE_S`` older
than the scan's start: a change in the same clock tick as find's read of a directory could
otherwise leave its ctime unchanged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from ...filesystem.reading import MAX_CONFIG_BYTES
from .confine import Confined

__all__ = ["TreeScan", "check_tree", "start_scan"]

#: Trees whose scan is kept (least recently used dropped first).
_KEPT = 8
#: A bigger scan is used for its own search only (validating it would cost as much as a new one).
_MAX_ENTRIES = 200_000
#: A directory changed this recently when a scan started keeps the scan from being reused.
_SETTLE_S = 1.0

_lock = threading.Lock()
_scans: OrderedDict[str, TreeScan] = OrderedDict()


@dataclass
class TreeScan:
    """A tree's directories and ``.gitignore`` files as ``find`` saw them."""

    host_base: str
    #: host path -> (inode, ctime in ns) of every directory and every .gitignore
    entries: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: host paths of the directories that hold a .gitignore
    ignore_dirs: set[str] = field(default_factory=set)
    #: host paths of the ``*.ipynb`` regular files (any case), for grep's notebook pass
    notebooks: list[str] = field(default_factory=list)
    #: a .gitignore that is not a regular file of at most MAX_CONFIG_BYTES was seen
    unusable: bool = False
    newest_ctime_ns: int = 0

    def unchanged(self, deadline: float) -> bool:
        """Whether every recorded directory and .gitignore is still the same inode, unchanged."""
        for i, (path, (ino, ctime)) in enumerate(self.entries.items()):
            try:
                st = os.lstat(path)
            except OSError:
                return False
            if st.st_ino != ino or st.st_ctime_ns != ctime:
                return False
            if not i % 1024 and time.monotonic() > deadline:
                return False
        return True


class _Pending:
    """A running ``find``; ``result()`` parses its output."""

    def __init__(self, host_base: str, proc: subprocess.Popen[bytes], started_ns: int) -> None:
        self.host_base = host_base
        self.proc = proc
        self.started_ns = started_ns

    def result(self, deadline: float) -> TreeScan | None:
        """The scan, or None when find failed or ran out of time (the tree is then not trusted)."""
        try:
            out, _ = self.proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.stop()
            return None
        if self.proc.returncode != 0:
            return None
        scan = _parse(self.host_base, out)
        if (
            scan is not None
            and not scan.unusable
            and len(scan.entries) <= _MAX_ENTRIES
            and scan.newest_ctime_ns < self.started_ns - _SETTLE_S * 1e9
        ):
            with _lock:
                _scans[self.host_base] = scan
                _scans.move_to_end(self.host_base)
                while len(_scans) > _KEPT:
                    _scans.popitem(last=False)
        return scan

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _ns(text: bytes) -> int:
    """find's ``%C@`` (seconds with a fraction) as integer nanoseconds, exactly."""
    sec, _, frac = text.partition(b".")
    return int(sec) * 1_000_000_000 + int((frac + b"000000000")[:9])


def _parse(host_base: str, out: bytes) -> TreeScan | None:
    scan = TreeScan(host_base)
    try:
        for record in out.split(b"\0"):
            if not record:
                continue
            kind, rest = record[:1], record[2:]
            if kind == b"d":
                ino, ctime, path = rest.split(b" ", 2)
                if os.path.basename(path) == b".gitignore":
                    scan.unusable = True  # a directory where ripgrep expects a file
                scan.entries[os.fsdecode(path)] = (int(ino), _ns(ctime))
                scan.newest_ctime_ns = max(scan.newest_ctime_ns, _ns(ctime))
            elif kind == b"g":
                ftype, size, ino, ctime, path = rest.split(b" ", 4)
                host = os.fsdecode(path)
                if ftype != b"f" or int(size) > MAX_CONFIG_BYTES:
                    scan.unusable = True
                scan.entries[host] = (int(ino), _ns(ctime))
                scan.newest_ctime_ns = max(scan.newest_ctime_ns, _ns(ctime))
                scan.ignore_dirs.add(os.path.dirname(host))
            elif kind == b"n":
                scan.notebooks.append(os.fsdecode(rest))
            else:
                return None
    except ValueError:
        return None
    return scan


def check_tree(host_base: str, deadline: float) -> TreeScan | None:
    """The kept scan of ``host_base`` when nothing in it changed since; None otherwise."""
    with _lock:
        scan = _scans.get(host_base)
        if scan is not None:
            _scans.move_to_end(host_base)
    if scan is None:
        return None
    if scan.unchanged(deadline):
        return scan
    with _lock:
        if _scans.get(host_base) is scan:
            del _scans[host_base]
    return None


def start_scan(host_base: str, root: str) -> _Pending | None:
    """Starts ``find`` over ``host_base`` (``.git`` pruned), confined like ripgrep to the
    workspace root ``root`` (:mod:`.confine`); None when find cannot run."""
    find = shutil.which("find")
    if find is None:
        return None
    started_ns = time.time_ns()
    proc = Confined(find, root).popen(
        [host_base, "-name", ".git", "-prune",
         "-o", "-type", "d", "-printf", r"d %i %C@ %p\0",
         "-o", "-name", ".gitignore", "-printf", r"g %y %s %i %C@ %p\0",
         "-o", "-iname", "*.ipynb", "-type", "f", "-printf", r"n %p\0"],
        cwd=host_base, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    if proc is None:
        return None
    return _Pending(host_base, proc, started_ns)
