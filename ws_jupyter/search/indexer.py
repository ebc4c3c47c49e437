"""Auto-indexing: keep the search index equal to the workspace's text files, incrementally.

``AutoIndexer(fs, engine).rebuild(["docs", "**/*.md"])`` walks the workspace with the shared
walker (:func:`ws_jupyter.filesystem.walk.walk`: ``.gitignore`` at every level, hidden files and
``.git`` — so ``.ws/``, the index itself — skipped) and for each file:

1. size and mtime (and the ETag, on stores that have one) equal to the manifest's, and the index
   holding the file's own chunks -> unchanged, not even read;
2. otherwise read; binary content (sniffed, whatever the extension) is skipped and remembered;
3. content hash equal to the manifest's -> only the manifest is updated (``touch`` costs nothing);
4. otherwise the file is chunked (notebooks cell by cell, outputs left out unless asked for;
   other files by lines) and indexed; chunks whose text did not change keep their
   vectors. A document indexed from given text under the file's name is replaced: a file's
   entry always comes from the file.

Files that were indexed under the requested paths but are gone (deleted, now ignored, now binary)
leave the index. A ``progress`` callback receives :class:`IndexProgress` updates (the notebook
shows them as a bar). :class:`Watcher` re-runs the incremental pass when files change
(``watchfiles``), so the index stays current while you edit.

>>> AutoIndexer(ws.filesystem, engine).rebuild(["docs"])      # doctest: +SKIP
IndexReport(indexed=12, unchanged=0, removed=0, skipped=1, chunks=19, 0.41s)
"""

from __future__ import annotations

import functools
import logging
import posixpath
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import FilesystemError, FileTooLargeError, InvalidArgumentError, WorkspaceError
from ..filesystem.display import wire_text
from ..filesystem.globs import expand_braces, split_glob_path
from ..filesystem.mime import SNIFF_BYTES, looks_like_text
from ..filesystem.reading import read_limited
from ..filesystem.walk import WalkEntry, walk
from ..notebooks.document import MAX_NOTEBOOK_BYTES, is_notebook_path
from .engine import FILE, SearchEngine, content_hash
from .status import IndexProgress
from .store import FileRecord

__all__ = ["WHOLE_WORKSPACE", "AutoIndexer", "IndexProgress", "IndexReport", "Watcher", "glob_to_regex"]

log = logging.getLogger("ws_jupyter.search")

_BINARY = "binary"
_TOO_LARGE = "too-large"
DEFAULT_MAX_FILE_BYTES = 4 * 1024 * 1024
_WATCH_TICK_MS = 250  # how often the watcher thread wakes up without events (and checks stop)
#: what ``auto_index_paths`` covers by default: the whole workspace
WHOLE_WORKSPACE = "."


@dataclass
class IndexReport:
    """What one incremental pass did (paths are workspace-relative)."""

    indexed: list[str] = field(default_factory=list)
    unchanged: int = 0
    touched: int = 0
    removed: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    chunks: int = 0
    seconds: float = 0.0

    def __repr__(self) -> str:
        return (f"IndexReport(indexed={len(self.indexed)}, unchanged={self.unchanged}, "
                f"removed={len(self.removed)}, skipped={len(self.skipped)}, chunks={self.chunks}, "
                f"{self.seconds:.2f}s)")


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Compiles a path glob anchored at the workspace root: ``**`` any depth, ``*``/``?`` within a
    segment, ``[...]``, and ``{a,b}`` alternatives (expanded as in ``list_files``/``grep`` globs:
    nested braces work, unbalanced ones are literal)."""
    alternatives = [_glob_body(p) for p in expand_braces(pattern)]
    return re.compile("(?:" + "|".join(alternatives) + r")\Z")


def _glob_body(pattern: str) -> str:
    out = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    i += 1
                    out.append("(?:.*/)?")
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _normalize(path: str) -> str:
    p = posixpath.normpath(path.strip().replace("\\", "/"))
    while p.startswith("./"):
        p = p[2:]
    return "." if p in ("", ".") else p.rstrip("/")


@dataclass(frozen=True)
class _Scope:
    """One entry of ``auto_index_paths``: a directory, a file or a glob."""

    raw: str
    base: str
    regex: re.Pattern[str] | None

    def contains(self, path: str) -> bool:
        if self.regex is not None:
            return bool(self.regex.match(path))
        return self.base == "." or path == self.base or path.startswith(self.base + "/")


def _scope(entry: str) -> _Scope:
    if not isinstance(entry, str) or not entry.strip():
        raise InvalidArgumentError(f"index paths must be non-empty strings, got {entry!r}")
    norm = _normalize(entry)
    base, rest = split_glob_path(norm)
    return _Scope(entry, norm, None) if rest is None else _Scope(entry, base, glob_to_regex(norm))


class AutoIndexer:
    """Incremental indexing of workspace files into a :class:`SearchEngine` (see module docs)."""

    def __init__(self, fs: Any, engine: SearchEngine, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> None:
        self.fs = fs
        self.engine = engine
        self.max_file_bytes = max_file_bytes
        # the engine's own lock: every indexer made for it (one per call) runs its passes in turn
        self._run_lock = engine.indexing_lock

    # ------------------------------------------------------------------ scanning
    def _candidates(self, scopes: Sequence[_Scope], report: IndexReport,
                    only: set[str] | None = None) -> dict[str, tuple[int, int, str]]:
        """path -> (size, mtime_ns, etag) of every file the scopes select (walker rules applied).

        ``only`` restricts the scan to those paths: each walk then enters only their ancestor
        directories, so a targeted update sees a file exactly as a full pass would.
        """
        found: dict[str, tuple[int, int, str]] = {}
        skip_dir: Callable[[WalkEntry], bool] | None = None
        if only is not None:
            ancestors = {d for p in only for d in _ancestors(p)}
            scopes = [s for s in scopes if any(s.contains(p) for p in only)]
            skip_dir = lambda e: e.path not in ancestors  # noqa: E731
        for scope in scopes:
            try:
                st = self.fs.stat(scope.base)
            except (FileNotFoundError, FilesystemError):
                report.missing.append(scope.raw)
                continue
            if st.type == "file":
                if _checkpoint(st.path) or wire_text(st.path) != st.path:
                    continue
                if (scope.regex is None or scope.regex.match(st.path)) and (only is None or st.path in only):
                    found[st.path] = (st.size, _ns(st.modified_at.timestamp()), _etag(self.fs, st.path))
                continue
            for entry in walk(self.fs, scope.base, max_depth=64, skip_dir=_skip_checkpoints(skip_dir)):
                if entry.is_dir or (only is not None and entry.path not in only) or _checkpoint(entry.path):
                    continue
                if scope.regex is not None and not scope.regex.match(entry.path):
                    continue
                if wire_text(entry.path) != entry.path:  # the index (and every reader of it) is UTF-8
                    report.skipped.append((wire_text(entry.path), "name is not UTF-8"))
                    continue
                state = self._file_state(entry)
                if state is not None:
                    found[entry.path] = state
        return found

    def _file_state(self, entry: WalkEntry) -> tuple[int, int, str] | None:
        """``(size, mtime_ns, etag)`` of a walked file (stat-ed when the walk did not tell: providers
        without ``os.scandir``, links); None for a link to something other than a file, or a file
        that cannot be stat-ed (gone, or a link out of the workspace)."""
        if entry.is_symlink and entry.type != "file":
            return None
        if entry.size is not None and entry.mtime is not None:
            return entry.size, _ns(entry.mtime), entry.etag or ""
        try:
            st = self.fs.stat(entry.path)
        except (FileNotFoundError, FilesystemError):
            return None
        return st.size, _ns(st.modified_at.timestamp()), _etag(self.fs, entry.path)

    # ------------------------------------------------------------------ the pass
    def rebuild(
        self,
        paths: Iterable[str],
        progress: Callable[[IndexProgress], None] | None = None,
        *,
        prune_outside: bool = False,
    ) -> IndexReport:
        """One incremental pass over ``paths`` (directories, files or globs).

        ``prune_outside`` also drops files indexed by an earlier pass that no longer fall under
        any of ``paths`` (used when ``paths`` is the complete ``auto_index_paths``).
        """
        scopes = [_scope(p) for p in paths]
        t0 = time.perf_counter()
        report = IndexReport()
        engine = self.engine
        with self._run_lock, engine.indexing_pass() as status:
            notify = _both(status, progress)
            notify(IndexProgress(0, 0, None, "scan"))
            found = self._candidates(scopes, report)
            store = engine.store
            manifest = store.files()
            total = len(found)
            status(IndexProgress(0, total, None, "index"))  # "indexing 0 of N files" from now on
            is_file_source = engine.is_file_source
            with engine.batch():
                # (walk order is tree order: deterministic without sorting)
                for n, (path, (size, mtime_ns, etag)) in enumerate(found.items(), 1):
                    if engine.passes_stopped:
                        return report  # the index is closing: the rest waits for the next pass
                    rec = manifest.get(path)
                    if (rec is not None and rec.size == size and rec.mtime_ns == mtime_ns and rec.etag == etag
                            and rec.hash not in (_BINARY, _TOO_LARGE) and is_file_source(path)):
                        report.unchanged += 1  # the common case, decided without a call
                    else:
                        self._one(path, size, mtime_ns, rec, report, etag)
                    notify(IndexProgress(n, total, path, "index"))
                gone = [p for p in manifest if p not in found
                        and (prune_outside or any(s.contains(p) for s in scopes))]
                for path in gone:
                    self._forget(path, report)
            self._settle(progress)
            report.seconds = time.perf_counter() - t0
            notify(IndexProgress(total, total, None, "done"))
        return report

    def _settle(self, progress: Callable[[IndexProgress], None] | None) -> None:
        """The end of a pass: documents made durable; vectors left to the engine's background
        worker, or (an engine without one) embedded now, reported as the ``"embed"`` phase."""
        engine = self.engine
        engine.too_large = tuple(sorted(p for p, r in engine.store.files().items() if r.hash == _TOO_LARGE))
        if engine.background:
            engine.persist()
            return
        embed_progress: Callable[[int, int], None] | None = None
        if engine.pending_embeddings and progress is not None:
            report_to = progress
            report_to(IndexProgress(0, engine.pending_embeddings, None, "embed"))
            embed_progress = lambda done, count: report_to(IndexProgress(done, count, None, "embed"))  # noqa: E731
        engine.flush(embed_progress)

    def update(self, changed: Iterable[str], paths: Iterable[str],
               progress: Callable[[IndexProgress], None] | None = None, *,
               prune_outside: bool = False) -> IndexReport:
        """Re-checks only ``changed`` files (workspace-relative) against ``paths``' scopes.

        Cost is proportional to the changed files and their directories, not to the tree: the
        walk of each scope enters only the changed files' directories, so ``.gitignore``, hidden
        files and explicitly named paths are handled exactly as in :meth:`rebuild`. A changed
        ``.gitignore`` or a directory-level change falls back to a full pass.
        """
        path_list = list(paths)
        scopes = [_scope(p) for p in path_list]
        rels = sorted({_normalize(c) for c in changed})
        for rel in rels:
            if rel == "." or posixpath.basename(rel) == ".gitignore" or self._is_dir(rel):
                return self.rebuild(path_list, progress=progress, prune_outside=prune_outside)
        t0 = time.perf_counter()
        report = IndexReport()
        with self._run_lock, self.engine.indexing_pass() as status:
            notify = _both(status, progress)
            store = self.engine.store
            found = self._candidates(scopes, report, only=set(rels))
            with self.engine.batch():
                for n, rel in enumerate(rels, 1):
                    rec = store.file(rel)
                    if rel in found:
                        size, mtime_ns, etag = found[rel]
                        self._one(rel, size, mtime_ns, rec, report, etag)
                    elif rec is not None or self.engine.has_source(rel):
                        self._forget(rel, report)
                    notify(IndexProgress(n, len(rels), rel, "index"))
            self._settle(None)
            report.seconds = time.perf_counter() - t0
            notify(IndexProgress(len(rels), len(rels), None, "done"))
        return report

    def _is_dir(self, rel: str) -> bool:
        try:
            return bool(self.fs.stat(rel).type == "directory")
        except (FileNotFoundError, FilesystemError):
            return False

    def _one(self, path: str, size: int, mtime_ns: int, rec: FileRecord | None, report: IndexReport,
             etag: str = "") -> None:
        engine, store = self.engine, self.engine.store
        if rec is not None and rec.size == size and rec.mtime_ns == mtime_ns and rec.etag == etag:
            if rec.hash in (_BINARY, _TOO_LARGE):
                report.skipped.append((path, rec.hash))
                return
            if engine.is_file_source(path):
                report.unchanged += 1
                return
            # the manifest says unchanged, but the index does not hold the file's own chunks (a
            # document given as text took its name, or an index from before kinds were kept):
            # read the file and index it again
        # a notebook is mostly images: its cap applies to the text it holds, read below
        limit = max(self.max_file_bytes, MAX_NOTEBOOK_BYTES) if is_notebook_path(path) else self.max_file_bytes
        if size > limit:
            self._drop(path, rec, report, _TOO_LARGE, size, mtime_ns, etag)
            return
        try:
            data = read_limited(self.fs, path, limit, size=size)
        except FileTooLargeError:  # it grew since it was listed
            self._drop(path, rec, report, _TOO_LARGE, size, mtime_ns, etag)
            return
        except (OSError, WorkspaceError) as exc:
            report.skipped.append((path, f"unreadable: {exc}"))
            return
        if not isinstance(data, (bytes, bytearray)):
            data = str(data).encode("utf-8")
        if not looks_like_text(bytes(data[:SNIFF_BYTES])):
            self._drop(path, rec, report, _BINARY, size, mtime_ns, etag)
            return
        text = bytes(data).decode("utf-8", "replace")
        if size > self.max_file_bytes and _text_size(text, engine.notebook_outputs) > self.max_file_bytes:
            self._drop(path, rec, report, _TOO_LARGE, size, mtime_ns, etag)
            return
        digest = content_hash(text)
        if rec is not None and rec.hash == digest and engine.is_file_source(path):
            store.put_file(FileRecord(path, size, mtime_ns, digest, etag))
            report.touched += 1
            return
        ids = engine.index_document(path, text, kind=FILE)
        store.put_file(FileRecord(path, size, mtime_ns, digest, etag))
        report.indexed.append(path)
        report.chunks += len(ids)

    def _forget(self, path: str, report: IndexReport) -> None:
        """A file leaves the index (deleted, ignored, outside the paths): chunks and manifest entry."""
        self.engine.remove_source(path)
        self.engine.store.delete_file(path)
        report.removed.append(path)

    def _drop(self, path: str, rec: FileRecord | None, report: IndexReport, reason: str,
              size: int, mtime_ns: int, etag: str = "") -> None:
        if rec is not None and rec.hash not in (_BINARY, _TOO_LARGE):
            self.engine.remove_source(path)
        self.engine.store.put_file(FileRecord(path, size, mtime_ns, reason, etag))
        report.skipped.append((path, reason))


def _text_size(notebook: str, outputs: bool) -> int:
    """The characters of a notebook's cell texts (what its search entries hold); the JSON's
    length when it is not a readable notebook."""
    from ..notebooks.text import notebook_texts

    cells = notebook_texts(notebook, outputs=outputs)
    return len(notebook) if cells is None else sum(len(c.text) for c in cells)


def _both(first: Callable[[IndexProgress], None],
          second: Callable[[IndexProgress], None] | None) -> Callable[[IndexProgress], None]:
    if second is None:
        return first

    def call(update: IndexProgress) -> None:
        first(update)
        second(update)

    return call


_CHECKPOINTS = ".ipynb_checkpoints"


def _checkpoint(path: str) -> bool:
    """Jupyter's autosave copies (``.ipynb_checkpoints/``) are never indexed, even when a scope
    names hidden paths: they would answer every query about a notebook twice."""
    return _CHECKPOINTS in path.split("/")


def _skip_checkpoints(skip_dir: Callable[[WalkEntry], bool] | None) -> Callable[[WalkEntry], bool]:
    def skip(entry: WalkEntry) -> bool:
        return entry.name == _CHECKPOINTS or (skip_dir is not None and skip_dir(entry))

    return skip


def _ancestors(path: str) -> list[str]:
    """``"a/b/c.md"`` -> ``["a", "a/b"]``: the directories a walk passes through to reach ``path``."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _ns(ts: float) -> int:
    return round(ts * 1e9)


def _etag(fs: Any, path: str) -> str:
    """A file's ETag from providers that report one (``FsspecFilesystem.etag``), else ""."""
    get = getattr(fs, "etag", None)
    if not callable(get):
        return ""
    try:
        return str(get(path) or "")
    except (OSError, WorkspaceError):
        return ""


class Watcher:
    """Keeps an index current: re-runs the incremental pass when files under the workspace change.

    Runs on a daemon thread (``watchfiles``, debounced); changes under ``.ws/`` (the index itself)
    and ``.git/`` are ignored. ``stop()`` ends it; it is also a context manager. ``on_update``
    receives each :class:`IndexReport`; errors are kept in ``last_error`` (and logged), the
    watcher keeps running.
    """

    def __init__(
        self,
        indexer: AutoIndexer,
        paths: Sequence[str],
        root: str,
        *,
        debounce: float = 0.3,
        on_update: Callable[[IndexReport], None] | None = None,
        prune_outside: bool = False,
    ) -> None:
        if not paths:
            raise InvalidArgumentError("watch() needs paths to index (auto_index_paths is empty)")
        self.indexer = indexer
        self.paths = tuple(paths)
        self.root = root
        self.debounce = debounce
        self.on_update = on_update
        self.prune_outside = prune_outside
        self.last_report: IndexReport | None = None
        self.last_error: BaseException | None = None
        self.updates = 0
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ws-jupyter-index-watch", daemon=True)
        self._thread.start()
        self._ready.wait(10.0)

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self._stop.is_set()

    def _run(self) -> None:
        import watchfiles

        def interesting(_change: Any, path: str) -> bool:
            rel = path[len(self.root):].lstrip("/") if path.startswith(self.root) else path
            first = rel.split("/", 1)[0]
            return first not in (".ws", ".git")

        started = False
        try:
            # yield_on_timeout: the first (empty) yield tells that the OS watch is in place, so
            # nothing written after watch() returns can be missed; then one incremental pass
            # catches up with what changed before.
            for changes in watchfiles.watch(self.root, watch_filter=interesting, stop_event=self._stop,
                                            debounce=int(self.debounce * 1000), step=50,
                                            rust_timeout=_WATCH_TICK_MS, yield_on_timeout=True,
                                            raise_interrupt=False):
                if self._stop.is_set():
                    break
                if not started:
                    started = True
                    self._ready.set()
                    self._apply(functools.partial(self.indexer.rebuild, self.paths,
                                                  prune_outside=self.prune_outside))
                if not changes:
                    continue
                rels = [p[len(self.root):].lstrip("/") for _c, p in changes if p.startswith(self.root)]
                self._apply(functools.partial(self.indexer.update, rels, self.paths,
                                              prune_outside=self.prune_outside))
        except Exception as exc:
            self.last_error = exc
            log.warning("file watcher stopped: %s", exc)
        finally:
            self._ready.set()

    def _apply(self, run: Callable[[], IndexReport]) -> None:
        try:
            report = run()
        except Exception as exc:  # keep watching; the error is visible on the watcher
            self.last_error = exc
            log.warning("index update failed: %s", exc)
            return
        self.last_report = report
        self.updates += 1
        if self.on_update is not None:
            self.on_update(report)

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def __enter__(self) -> Watcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"Watcher({list(self.paths)}, {state}, updates={self.updates})"
