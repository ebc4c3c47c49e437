"""``FsspecFilesystem``: a workspace on any fsspec filesystem (S3, GCS, Azure, memory, zip...).

Data that outgrew one machine lives in object storage, and fsspec is how Python already reads it
(pandas and xarray open ``s3://`` through it), so one provider covers every backend:

>>> fs = FsspecFilesystem("memory://demo")
>>> fs.write_file("notes/todo.md", "- try the search panel\\n")
>>> fs.read_file("notes/todo.md")
'- try the search panel\\n'

What it adds on top of the backend:

* **containment** — every path names something under the root: ``..`` above it, absolute paths
  elsewhere, ``~``, and URLs of another protocol or outside the root (``file:///etc/passwd``
  given to an ``s3://`` workspace) raise :class:`~ws_jupyter.errors.PathEscapeError` before the
  backend is asked anything (on a ``file://`` root, symlinks leading out are refused too, with the
  local filesystem's own containment rules);
* **directories on prefix stores** — S3 and the like have keys, not directories: ``mkdir`` writes
  a zero-byte ``dir/`` marker (what S3's console does), removing the last entry of a directory
  keeps the directory, a key that is both a file and a prefix is refused as a parent;
* **whole-object writes** — a write is one ``PUT`` of the whole content, so a reader (or a killed
  writer) never sees a partial object; ``overwrite=False`` and stale checks are sent as S3
  conditional writes (``If-None-Match``/``If-Match``) where the backend has ETags, so they hold
  against concurrent writers, and are checked just before the write elsewhere;
* **stale checks** — ``expected_mtime`` refuses a write when the file changed since it was
  ``stat``-ed; where the backend's modification times are coarse (S3: seconds), the ETag seen with
  that mtime decides;
* **typed errors** — backend exceptions (botocore, aiohttp, fsspec's own) become the
  :mod:`ws_jupyter.errors` classes; a conditional write that lost a race (``412
  PreconditionFailed``, ``409 ConditionalRequestConflict``) is ``FileExists``/``StaleFileError``;
  an unreachable server is a ``FilesystemError`` with code ``EUNAVAILABLE``, never a hang;
* **one deadline per call** — ``timeout`` seconds bound a whole call, its requests and the
  backend's retries together (retries in botocore and s3fs would otherwise multiply their
  timeouts: minutes for a server that accepts connections and then stalls); a write gets one more
  second per MiB it sends. Calls over a tree (recursive listing, copy, move or removal of a
  directory, :meth:`sync_to`/:meth:`sync_from`) bound each of their requests instead;
* **read-only mode**, bounded streaming reads (:meth:`open_read`), and :meth:`sync_to` /
  :meth:`sync_from` for running commands on a local copy (the sandbox cannot see object storage).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import posixpath
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any, TypeVar

from ..errors import (
    DirectoryNotEmpty,
    DirectoryNotFound,
    FileExists,
    FileNotFound,
    FilesystemError,
    FilesystemNotReadyError,
    FileTooLargeError,
    InvalidArgumentError,
    IsADirectory,
    NotADirectory,
    PathEscapeError,
    ReadOnlyError,
    StaleFileError,
    WorkspaceConfigError,
    WorkspaceError,
)
from ..lifecycle import Lifecycle
from ..request_context import RequestContext
from .containment import Containment, check_file_path, normalize_input_path
from .local import _as_timestamp, _check_encoding, _to_bytes
from .mime import guess_mime_type
from .reading import CHUNK_BYTES, decode_text, not_regular
from .types import FileEntry, FileStat, FilesystemInfo, InstructionsOption

__all__ = ["DEFAULT_TIMEOUT", "FsspecFilesystem"]

_F = TypeVar("_F", bound=Callable[..., Any])


def _bounded(method: _F) -> _F:
    """One deadline for a whole call of ``method`` (see ``FsspecFilesystem(timeout=)``)."""

    @functools.wraps(method)
    def call(self: FsspecFilesystem, *args: Any, **kwargs: Any) -> Any:
        with self._deadline():
            return method(self, *args, **kwargs)

    return call  # type: ignore[return-value]


#: Protocols whose directories exist only as key prefixes (``mkdir`` writes a ``dir/`` marker).
PREFIX_STORES = frozenset(
    {"s3", "s3a", "gcs", "gs", "az", "abfs", "abfss", "adl", "oss", "r2", "b2", "cos", "tos", "obs"}
)
_LOCAL_PROTOCOLS = frozenset({"file", "local"})
_BINARY_ENCODINGS = {"binary", "bytes", None}
#: Default S3 client bounds (used when ``storage_options`` sets none): an unreachable or stalled
#: server fails a request within seconds instead of botocore's 60 s timeouts (two attempts fit in
#: one call's deadline).
_S3_CONFIG = {"connect_timeout": 5, "read_timeout": 15, "retries": {"max_attempts": 2, "mode": "standard"}}
#: Seconds one call may take by default, retries included (``timeout=``).
DEFAULT_TIMEOUT = 30.0
#: A write's deadline grows by this many seconds per MiB sent (a large upload is not a stall).
_SECONDS_PER_MIB = 1.0
_SEEN_MAX = 4096
#: Attempts of a conditional rewrite (append) when no deadline bounds them.
_MAX_ATTEMPTS = 200
#: Largest object written with one PUT (s3fs switches to a multipart upload at twice its chunk size).
_SINGLE_PUT = 256 << 20


class FsspecFilesystem:
    """A contained view of one prefix of an fsspec filesystem.

    ``url_or_fs`` is a URL (``"s3://bucket/prefix"``, ``"memory://name"``, ``"zip://::file.zip"``)
    opened with ``storage_options`` (passed to fsspec, e.g. ``{"endpoint_url": ...}``), or an
    ``fsspec.AbstractFileSystem`` instance together with ``root`` (its path of the workspace).
    ``directory_markers`` overrides whether ``mkdir`` writes ``dir/`` marker objects (default: for
    object stores — s3, gcs, az...). ``timeout`` (seconds, default ``DEFAULT_TIMEOUT``; None for
    none) is the deadline of one call, retries included: past it the call raises
    ``FilesystemError`` with code ``EUNAVAILABLE``. ``destroy()`` never deletes data.
    """

    provider = "fsspec"
    name = "FsspecFilesystem"
    #: No host directory: the sandbox, file watchers and notebook links know the files are remote.
    base_path: str | None = None

    def __init__(
        self,
        url_or_fs: Any,
        read_only: bool = False,
        storage_options: dict[str, Any] | None = None,
        *,
        root: str | None = None,
        directory_markers: bool | None = None,
        instructions: InstructionsOption = None,
        id: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> None:
        if instructions is not None and not isinstance(instructions, str) and not callable(instructions):
            raise InvalidArgumentError("instructions must be a string, a function or None")
        if timeout is not None and (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not 0 < timeout < float("inf")
        ):
            raise InvalidArgumentError(
                f"timeout must be a positive number of seconds or None, not {timeout!r}"
            )
        try:
            import fsspec
        except ImportError:  # pragma: no cover - depends on the environment
            raise WorkspaceConfigError(
                "FsspecFilesystem needs fsspec: pip install 'ws-jupyter[s3]' (or fsspec and the backend package)",
                code="INVALID_CONFIG",
            ) from None
        options = dict(storage_options or {})
        if isinstance(url_or_fs, (str, os.PathLike)):
            url = os.fspath(url_or_fs)
            if root is not None:
                raise InvalidArgumentError("root= is for filesystem instances; put the root in the URL")
            protocol = _protocol_of(url)
            if protocol in ("s3", "s3a") and "config_kwargs" not in options:
                options["config_kwargs"] = dict(_S3_CONFIG)
            try:
                fs, path = fsspec.core.url_to_fs(url, **options)
            except (ValueError, ImportError, TypeError) as exc:
                raise WorkspaceConfigError(
                    f"Cannot open {url!r} with fsspec: {exc}", code="INVALID_CONFIG"
                ) from None
        elif isinstance(url_or_fs, fsspec.AbstractFileSystem):
            if options:
                raise InvalidArgumentError("storage_options are for URLs; configure the filesystem instance")
            fs = url_or_fs
            path = fs._strip_protocol(root or "")
        else:
            raise InvalidArgumentError(
                f"url_or_fs must be a URL or an fsspec filesystem, not {type(url_or_fs).__name__}"
            )
        protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
        self._fs = fs
        self._protocols = frozenset(protocols)
        self._root = _strip_root(str(path))
        if not self._root.strip("/") and not self._protocols & {"memory"}:
            raise WorkspaceConfigError(
                f"FsspecFilesystem needs a root below the store's top (e.g. s3://bucket/prefix), got {path!r}",
                code="INVALID_CONFIG",
            )
        self._markers = (
            bool(self._protocols & PREFIX_STORES) if directory_markers is None else directory_markers
        )
        self._local = Containment(self._root) if self._protocols & _LOCAL_PROTOCOLS else None
        self._s3 = bool(self._protocols & {"s3", "s3a"}) and hasattr(fs, "_call_s3")
        # S3 and GCS keys are at most 1024 bytes (longer names cannot exist: refused unsent)
        self._max_key = 1024 if self._protocols & PREFIX_STORES else 4096
        self._read_only = bool(read_only)
        self._instructions = instructions
        self.id = id or f"fsspec-fs-{secrets.token_hex(4)}"
        self.url = str(fs.unstrip_protocol(self._root))
        self._lifecycle = Lifecycle("pending")
        self._seen: OrderedDict[str, tuple[float, str]] = OrderedDict()  # rel -> (mtime, etag) last seen
        self._seen_lock = threading.Lock()
        self._timeout = float(timeout) if timeout is not None else None
        self._calls = threading.local()  # .deadline: monotonic time the current call must end by
        self._turns: dict[str, tuple[threading.Lock, int]] = {}  # rel -> (appends' lock, users)
        self._turns_lock = threading.Lock()

    # --- properties ----------------------------------------------------------------------------

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def status(self) -> str:
        return self._lifecycle.status

    @property
    def fs(self) -> Any:
        """The underlying fsspec filesystem (for reading data with pandas, xarray... directly)."""
        return self._fs

    @property
    def root(self) -> str:
        """The workspace root in the backend's own path form (``bucket/prefix`` for S3)."""
        return self._root

    @property
    def timeout(self) -> float | None:
        """Seconds one call may take, retries included (None: no deadline)."""
        return self._timeout

    # --- deadlines ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _deadline(self) -> Iterator[None]:
        """Bound what runs inside by one deadline (a call nested in another keeps the outer one)."""
        if self._timeout is None or getattr(self._calls, "deadline", None) is not None:
            yield
            return
        self._calls.deadline = time.monotonic() + self._timeout
        try:
            yield
        finally:
            self._calls.deadline = None

    @contextlib.contextmanager
    def _per_request(self) -> Iterator[None]:
        """Inside a call over a tree: each request (and each nested call) gets a deadline of its own."""
        saved = getattr(self._calls, "deadline", None)
        self._calls.deadline = None
        try:
            yield
        finally:
            self._calls.deadline = saved

    def _run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a coroutine function of an async backend on its loop, cancelled at the deadline."""
        from fsspec.asyn import sync
        from fsspec.exceptions import FSTimeoutError

        deadline = getattr(self._calls, "deadline", None)
        if self._timeout is None:
            return sync(self._fs.loop, fn, *args, **kwargs)
        remaining = self._timeout if deadline is None else deadline - time.monotonic()
        if remaining <= 0:
            raise _DeadlinePassed(self._timeout)
        end = time.monotonic() + remaining
        try:
            return sync(self._fs.loop, fn, *args, timeout=remaining, **kwargs)
        except FSTimeoutError:
            raise _DeadlinePassed(self._timeout) from None
        except Exception:
            # cancelled mid-answer, aiohttp raises its own error (an incomplete payload) instead
            if time.monotonic() >= end:
                raise _DeadlinePassed(self._timeout) from None
            raise

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """``fs.<name>(...)`` within the current deadline (async backends: their coroutine,
        cancelled when the deadline passes; synchronous ones have no network to wait for)."""
        if getattr(self._fs, "async_impl", False):
            coro = getattr(self._fs, "_" + name, None)
            if coro is not None:
                return self._run(coro, *args, **kwargs)
        return getattr(self._fs, name)(*args, **kwargs)

    # --- lifecycle ------------------------------------------------------------------------------

    def init(self) -> None:
        """Check the root: it must be a directory (or not exist yet: created, unless read-only)."""

        def action() -> None:
            with self._deadline(), self._translating(".", "opening the workspace"):
                try:
                    info = self._call("info", self._root)
                except FileNotFoundError:
                    info = None
                if info is not None and info.get("type") != "directory":
                    raise NotADirectory(".", f"Workspace root is not a directory: {self.url}")
                if info is None and not self._read_only:
                    self._make_dir(self._root)

        self._lifecycle.transition(
            "ready",
            "initializing",
            action,
            allowed_from=("pending", "error"),
            refuse=lambda s: FilesystemNotReadyError(f"Filesystem cannot be initialised (status: {s})"),
        )

    def destroy(self) -> None:
        """Mark the filesystem destroyed. The stored objects are left exactly as they are."""
        self._lifecycle.transition(
            "destroyed",
            "destroying",
            lambda: None,
            allowed_from=("pending", "ready", "error"),
            refuse=lambda s: FilesystemNotReadyError(f"Filesystem cannot be destroyed (status: {s})"),
        )

    def _ready(self) -> None:
        status = self._lifecycle.status
        if status == "ready":
            return
        if status in ("pending", "error", "initializing"):
            self.init()
            return
        raise FilesystemNotReadyError(f"Filesystem is not available (status: {status})")

    # --- containment ------------------------------------------------------------------------------

    def relative(self, path: Any) -> str:
        """The workspace-relative form of ``path`` ("." for the root), or ``PathEscapeError``.

        Relative paths resolve against the root; an absolute path or a URL is accepted only when
        it names something under the root, in this backend's protocol.
        """
        raw = normalize_input_path(path)
        if raw.startswith("~"):
            raise PathEscapeError(
                raw, f'Permission denied: "{raw}" is outside the workspace (no home directory here)'
            )
        protocol = _protocol_of(raw)
        if protocol is not None:
            if protocol not in self._protocols or "::" in raw:
                raise PathEscapeError(
                    raw,
                    f'Permission denied: "{raw}" is outside the workspace ({self.url} is not on {protocol}://)',
                )
            lexical = _norm(str(self._fs._strip_protocol(raw)))
            inside = self._below_root(lexical)
            if inside is None:
                raise PathEscapeError(
                    raw, f'Permission denied: "{raw}" is outside the workspace ({self.url})'
                )
            return inside
        if raw.startswith("/"):
            inside = self._below_root(_norm(raw))
            if inside is None:
                raise PathEscapeError(raw, _escape_message(raw))
            return inside
        norm = posixpath.normpath(raw) if raw else "."
        if norm == ".." or norm.startswith("../"):
            raise PathEscapeError(raw, f'Permission denied: "{raw}" is outside the workspace')
        return "." if norm in ("", ".") else norm

    def _below_root(self, lexical: str) -> str | None:
        root = _norm(self._root)
        if lexical == root:
            return "."
        prefix = root if root.endswith("/") else root + "/"
        if lexical.startswith(prefix):
            return lexical[len(prefix) :]
        return None

    def _full(self, rel: str) -> str:
        if rel == ".":
            return self._root
        return self._root + "/" + rel if not self._root.endswith("/") else self._root + rel

    def _resolve(self, path: Any, *, follow: bool = True) -> tuple[str, str]:
        """``(rel, backend path)`` of a checked path (on a local root: symlinks checked too)."""
        self._ready()
        rel = self.relative(path)
        full = self._full(rel)
        if len(full.encode("utf-8", "surrogateescape")) > self._max_key:
            raise FilesystemError(
                f"File name too long: {rel[:80]}... (this store takes keys of at most {self._max_key} bytes)",
                code="ENAMETOOLONG",
                path=rel,
            )
        if self._local is not None:
            self._local.resolve(rel, follow=follow)  # PathEscapeError for a symlink leading out
        return rel, full

    def _check_writable(self, operation: str, path: Any) -> None:
        if self._read_only:
            raise ReadOnlyError(operation, path if isinstance(path, str) else None)

    # --- metadata -----------------------------------------------------------------------------------

    def _info(self, full: str) -> dict[str, Any] | None:
        """The backend's info for ``full``, or None when nothing is there."""
        try:
            info: dict[str, Any] = self._call("info", full)
        except FileNotFoundError:
            return None
        return info

    def _kind(self, full: str) -> str | None:
        """ "file", "directory", "other" (FIFO, device on a local root) or None."""
        info = self._info(full)
        if info is None:
            return None
        kind = str(info.get("type") or "file")
        return kind if kind in ("file", "directory") else "other"

    def _remember(self, rel: str, info: dict[str, Any]) -> None:
        etag = _etag_of(info)
        mtime = _mtime_of(info)
        if etag is None or mtime is None:
            return
        with self._seen_lock:
            self._seen[rel] = (mtime, etag)
            self._seen.move_to_end(rel)
            while len(self._seen) > _SEEN_MAX:
                self._seen.popitem(last=False)

    def _forget(self, rel: str) -> None:
        with self._seen_lock:
            self._seen.pop(rel, None)

    def _seen_etag(self, rel: str, mtime: float) -> str | None:
        with self._seen_lock:
            seen = self._seen.get(rel)
        if seen is not None and abs(seen[0] - mtime) <= 1e-6:
            return seen[1]
        return None

    @_bounded
    def exists(self, path: str) -> bool:
        """True when ``path`` exists inside the workspace (False for escaping or malformed paths)."""
        try:
            rel, full = self._resolve(path)
            with self._translating(rel, "checking"):
                return rel == "." or self._info(full) is not None
        except (WorkspaceError, OSError):
            return False

    @_bounded
    def stat(self, path: str) -> FileStat:
        rel, full = self._resolve(path)
        with self._translating(rel, "reading metadata of"):
            info = self._info(full) if rel != "." else (self._info(full) or {"type": "directory"})
        if info is None:
            raise FileNotFound(rel)
        is_dir = info.get("type") == "directory"
        if not is_dir:
            self._remember(rel, info)
        mtime = _mtime_of(info)
        created = _created_of(info)
        when = datetime.fromtimestamp(mtime, tz=timezone.utc) if mtime is not None else _EPOCH
        return FileStat(
            name=posixpath.basename(rel) if rel != "." else ".",
            path=rel,
            type="directory" if is_dir else "file",
            size=0 if is_dir else int(info.get("size") or 0),
            created_at=datetime.fromtimestamp(created, tz=timezone.utc) if created is not None else when,
            modified_at=when,
            mime_type=None if is_dir else guess_mime_type(rel),
        )

    @_bounded
    def etag(self, path: str) -> str | None:
        """The backend's ETag (or content hash) of a file, when it has one."""
        rel, full = self._resolve(path)
        with self._translating(rel, "reading metadata of"):
            info = self._info(full)
        if info is None:
            raise FileNotFound(rel)
        return _etag_of(info)

    # --- reading ------------------------------------------------------------------------------------

    @_bounded
    def read_file(self, path: str, encoding: str | None = "utf-8") -> str | bytes:
        """Read a whole file: text in ``encoding``, or bytes with ``encoding="binary"``."""
        if encoding is not None and encoding not in _BINARY_ENCODINGS:
            _check_encoding(encoding)
        rel, full = self._resolve(path)
        if self._local is not None or rel == ".":
            data = b"".join(self._chunks(rel))
        else:
            # one request (a GET of the whole object); what a failure meant is asked afterwards
            with self._translating(rel, "reading"):
                try:
                    data = bytes(self._call("cat_file", full))
                except (FileNotFoundError, IsADirectoryError):
                    if self._kind(full) == "directory":
                        raise IsADirectory(rel) from None
                    raise FileNotFound(rel) from None
        if encoding is None or encoding in _BINARY_ENCODINGS:
            return data
        return decode_text(data, rel, encoding)

    def open_read(self, path: str) -> Iterator[bytes]:
        """Stream a file in chunks of at most ``CHUNK_BYTES`` (ranged reads on object stores), so
        the bounded readers of :mod:`ws_jupyter.filesystem.reading` stop without fetching the rest."""
        rel, _full = self._resolve(path)
        yield from self._chunks(rel)

    def _chunks(self, rel: str) -> Iterator[bytes]:
        full = self._full(rel)
        with self._translating(rel, "reading"):
            info = self._info(full) if rel != "." else {"type": "directory"}
            if info is None:
                raise FileNotFound(rel)
            kind = info.get("type")
            if kind == "directory":
                raise IsADirectory(rel)
            if kind not in (None, "file"):
                raise not_regular(rel)
            self._remember(rel, info)
            size = info.get("size")
            if isinstance(size, int) and size <= CHUNK_BYTES:
                # one request (a GET of the whole object) for the common small file
                yield bytes(self._call("cat_file", full))
                return
            if not isinstance(size, int):  # a backend that does not say: read it as a stream
                with self._fs.open(full, "rb", block_size=CHUNK_BYTES, cache_type="none") as fh:
                    while chunk := fh.read(CHUNK_BYTES):
                        yield bytes(chunk)
                return
            # ranged reads, each a request with its own deadline (the caller may stop between them)
            start = 0
            while start < size:
                chunk = bytes(self._call("cat_file", full, start=start, end=min(size, start + CHUNK_BYTES)))
                if not chunk:
                    return
                yield chunk
                start += len(chunk)

    @_bounded
    def readdir(
        self,
        path: str = ".",
        recursive: bool = False,
        extension: str | None = None,
        max_depth: int = 100,
    ) -> list[FileEntry]:
        """List a directory (pre-order; recursive names are ``sub/file``).

        Keys that are not plain names below the listed prefix (``a//b``, ``..``, a name with a
        ``/`` in it) are skipped: the listing shows only what the other methods can reach.
        """
        if max_depth < 1:
            raise InvalidArgumentError("max_depth must be >= 1")
        rel, _full = self._resolve(path)
        top = self._list(rel, top=True)
        suffix = None
        if extension:
            suffix = extension if extension.startswith(".") else "." + extension
        out: list[FileEntry] = []
        stack: list[tuple[Iterator[FileEntry], str, int]] = [(iter(top), "", 1)]
        while stack:
            entries, prefix, depth = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                continue
            name = prefix + entry.name
            if suffix is None or (entry.type == "file" and entry.name.endswith(suffix)):
                out.append(
                    FileEntry(
                        name,
                        entry.type,
                        entry.size,
                        entry.is_symlink,
                        entry.symlink_target,
                        mtime=entry.mtime,
                        etag=entry.etag,
                    )
                )
            if recursive and entry.type == "directory" and not entry.is_symlink and depth < max_depth:
                child = name if rel == "." else f"{rel}/{name}"
                try:
                    with self._per_request():  # a tree: each listing has a deadline of its own
                        children = self._list(child)
                except FilesystemError:
                    continue  # vanished while listing
                stack.append((iter(children), name + "/", depth + 1))
        return out

    def _list(self, rel: str, *, top: bool = False) -> list[FileEntry]:
        """The entries of one directory, sorted by name: one listing request on object stores.

        ``top``: the directory the caller named, so a file there is ``NotADirectory`` and nothing
        there ``DirectoryNotFound`` (a backend lists a file path as that file; the root of a new
        workspace, with no object yet, is an empty directory).
        """
        full = self._full(rel)
        with self._translating(rel, "listing", missing=DirectoryNotFound):
            if self._local is not None and top:
                kind = self._kind(full)
                if kind is not None and kind != "directory":
                    raise NotADirectory(rel)
            try:
                raw = self._call("ls", full, detail=True)
            except FileNotFoundError:
                if rel == ".":
                    return []
                raise
            except NotADirectoryError:
                raise NotADirectory(rel) from None
        if top and len(raw) == 1:
            only = raw[0]
            name = str(only.get("name", ""))
            if _norm(name) == _norm(full) and only.get("type") != "directory" and not name.endswith("/"):
                raise NotADirectory(rel)
        base = _norm(full)
        entries: dict[str, FileEntry] = {}
        for info in raw:
            name = _norm(str(info.get("name", "")))
            if not name.startswith(base.rstrip("/") + "/"):
                continue
            child = name[len(base.rstrip("/")) + 1 :]
            if not child or "/" in child or child in (".", ".."):
                continue  # the directory itself (a marker), or a key no path can name
            kind = info.get("type")
            is_link = bool(info.get("islink"))
            if kind == "directory":
                entries[child] = FileEntry(child, "directory", None, is_link, _link_target(info))
            elif child not in entries:  # a key that is also a prefix shows as the directory
                size = info.get("size")
                regular = kind in (None, "file")
                size_value = int(size) if regular and size is not None else None
                mtime, etag = _mtime_of(info), _etag_of(info)
                entries[child] = FileEntry(
                    child, "file", size_value, is_link, _link_target(info), mtime, etag
                )
                self._remember(child if rel == "." else f"{rel}/{child}", info)
        return [entries[k] for k in sorted(entries)]

    # --- writing ------------------------------------------------------------------------------------

    def write_file(
        self,
        path: str,
        content: str | bytes,
        recursive: bool = True,
        overwrite: bool = True,
        expected_mtime: float | datetime | None = None,
    ) -> None:
        """Write a whole file as one object (readers see the old content or the new, never a
        part). ``recursive`` creates missing parent directories; ``overwrite=False`` refuses an
        existing file (``FileExists``); ``expected_mtime`` refuses the write (``StaleFileError``,
        nothing written) when the file changed since it was stat-ed."""
        self._check_writable("write_file", path)
        with self._deadline():
            rel, full = self._resolve(path)
            check_file_path(path)
            data = _to_bytes(content)
            self._extend_deadline(_upload_seconds(data))
            self._write(
                rel, full, data, overwrite=overwrite, recursive=recursive, expected_mtime=expected_mtime
            )

    def _write(
        self,
        rel: str,
        full: str,
        data: bytes,
        *,
        overwrite: bool,
        recursive: bool,
        expected_mtime: float | datetime | None,
    ) -> None:
        if rel == ".":
            raise IsADirectory(rel)
        expected = _as_timestamp(expected_mtime) if expected_mtime is not None else None
        with self._translating(rel, "writing"):
            info = self._probe(rel, create=recursive)
            if_match = None
            if info is not None:
                if info.get("type") == "directory":
                    raise IsADirectory(rel)
                if not overwrite:
                    raise FileExists(rel)
                if expected is not None:
                    current = _mtime_of(info)
                    if current is not None and abs(current - expected) > 1e-6:
                        raise StaleFileError(rel, expected, current)
                    seen = self._seen_etag(rel, expected)
                    etag = _etag_of(info)
                    if seen is not None and etag is not None and seen != etag:
                        raise StaleFileError(
                            rel, message=f"File was modified externally: {rel} (its ETag changed)"
                        )
                    if_match = seen or etag
            self._put(rel, full, data, if_match=if_match, create_only=not overwrite)
        self._forget(rel)

    def _probe(self, rel: str, *, create: bool) -> dict[str, Any] | None:
        """The info of ``rel`` (None when missing) after checking its ancestors: none may be a
        file, and without ``create`` the parent must be a directory. On S3 the checks are sent
        together (one round trip: a HEAD per ancestor, the target's HEAD/LIST)."""
        full = self._full(rel)
        parts = rel.split("/")[:-1]
        ancestors = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if not self._s3:
            if ancestors:
                self._check_parents(rel, create=create)
            return self._info(full)
        parent = ancestors[-1] if ancestors else None
        import asyncio

        async def gather() -> list[Any]:
            calls = [self._list_target(rel)]
            for anc in ancestors:
                calls.append(
                    self._fs._info(self._full(anc)) if (anc == parent and not create) else self._head(anc)
                )
            return list(await asyncio.gather(*calls, return_exceptions=True))

        results = self._run(gather)
        for anc, res in zip(ancestors, results[1:]):
            if isinstance(res, FileNotFoundError) or res is None:
                if anc == parent and not create:
                    raise DirectoryNotFound(parent)
                continue
            if isinstance(res, BaseException):
                raise res
            if res.get("type") != "directory":
                raise NotADirectory(anc)
        target = results[0]
        if isinstance(target, BaseException):
            raise target
        return None if target is None else dict(target)

    async def _list_target(self, rel: str) -> dict[str, Any] | None:
        """S3: what is at ``rel`` — a file, a directory (keys below it) or nothing — in one
        LIST with ``rel`` as prefix and ``/`` as delimiter (a HEAD, then a LIST when it is not a
        file, would be two round trips)."""
        bucket, key, _ = self._fs.split_path(self._full(rel))
        token: str | None = None
        while True:
            kw = {"ContinuationToken": token} if token else {}
            out = await self._fs._call_s3(
                "list_objects_v2", Bucket=bucket, Prefix=key, Delimiter="/", MaxKeys=1000, **kw
            )
            for pre in out.get("CommonPrefixes") or ():
                if pre.get("Prefix") == key + "/":
                    return {"type": "directory", "name": self._full(rel), "size": 0}
            for obj in out.get("Contents") or ():
                if obj.get("Key") == key:
                    return {
                        "type": "file",
                        "name": self._full(rel),
                        "size": obj.get("Size"),
                        "ETag": obj.get("ETag"),
                        "LastModified": obj.get("LastModified"),
                    }
            token = out.get("NextContinuationToken")
            if not out.get("IsTruncated") or not token:
                return None

    async def _head(self, rel: str) -> dict[str, Any] | None:
        """S3: the object at exactly ``rel`` (one HEAD; a prefix alone is not an object)."""
        bucket, key, _ = self._fs.split_path(self._full(rel))
        try:
            out = await self._fs._call_s3("head_object", Bucket=bucket, Key=key)
        except FileNotFoundError:
            return None
        return {"type": "file", "size": out.get("ContentLength"), "ETag": out.get("ETag")}

    def _put(
        self, rel: str, full: str, data: bytes, *, if_match: str | None = None, create_only: bool = False
    ) -> None:
        """One whole-object write; conditional on S3 (atomic no-clobber / compare-and-swap)."""
        if self._s3:
            kwargs: dict[str, Any] = {}
            if create_only:
                kwargs["mode"] = "create"  # If-None-Match: *
            elif if_match is not None and len(data) < _SINGLE_PUT:
                kwargs["IfMatch"] = if_match  # compare-and-swap on the ETag seen
            try:
                self._call("pipe_file", full, data, chunksize=_SINGLE_PUT // 2, **kwargs)
            except OSError as exc:
                if _precondition_failed(exc):
                    if create_only:
                        raise FileExists(rel) from None
                    raise StaleFileError(
                        rel, message=f"File was modified externally: {rel} (changed while writing)"
                    ) from None
                if if_match is not None and isinstance(exc, FileNotFoundError):
                    # If-Match on a key deleted since it was read: S3 answers 404
                    raise StaleFileError(
                        rel, message=f"File was modified externally: {rel} (deleted while writing)"
                    ) from None
                raise
            return
        if self._local is not None:
            # a temporary sibling renamed into place: never a torn file on the local disk
            tmp = posixpath.join(posixpath.dirname(full), f".ws-{secrets.token_hex(6)}.tmp")
            try:
                self._call("pipe_file", tmp, data)
                if create_only and self._call("exists", full):
                    raise FileExists(rel)
                self._call("mv", tmp, full)
            finally:
                with contextlib.suppress(Exception):
                    if self._call("exists", tmp):
                        self._call("rm_file", tmp)
            return
        self._call("pipe_file", full, data)

    def _check_parents(self, rel: str, *, create: bool) -> None:
        """Every ancestor of ``rel`` must be a directory or missing (then created when ``create``,
        else ``DirectoryNotFound`` for the parent)."""
        parts = rel.split("/")[:-1]
        if not parts:
            return
        for i in range(len(parts)):
            anc = "/".join(parts[: i + 1])
            kind = self._kind(self._full(anc))
            if kind is None:
                if not create:
                    raise DirectoryNotFound("/".join(parts))
                if not self._markers:
                    self._make_dir(self._full("/".join(parts)), parents=True)
                return  # nothing below a missing directory exists either
            if kind != "directory":
                raise NotADirectory(anc)

    def append_file(self, path: str, content: str | bytes) -> None:
        """Append to a file, creating it and its parents when missing.

        Object stores cannot append: the object is rewritten whole (so the file must fit
        ``MAX_FILE_BYTES``). On S3 the rewrite is conditional on the ETag of the content read
        (``If-Match``; a new file ``If-None-Match: *``): when another writer came first, the file
        is read again and the append retried, after a random pause, until the call's deadline —
        then ``StaleFileError`` says nothing was appended. Appends to one file through this
        object take turns, so threads of one process do not spend round trips racing each other.
        """
        self._check_writable("append_file", path)
        with self._deadline():
            rel, full = self._resolve(path)
            check_file_path(path)
            data = _to_bytes(content)
            self._extend_deadline(_upload_seconds(data))
            with self._translating(rel, "appending to"), self._turn(rel):
                info = self._probe(rel, create=True)
                if info is not None and info.get("type") == "directory":
                    raise IsADirectory(rel)
                if info is not None:  # it is read, then sent back whole
                    self._extend_deadline(2 * _upload_seconds(int(info.get("size") or 0)))
                started = time.monotonic()
                attempt = 0
                while True:
                    attempt += 1
                    try:
                        current = self._content_and_etag(rel) if info is not None or attempt > 1 else None
                        if current is None:
                            self._put(rel, full, data, create_only=True)
                        else:
                            self._put(rel, full, current[0] + data, if_match=current[1])
                    except (FileExists, FileNotFound, StaleFileError):
                        pass  # another writer came first (or removed the file): read it again
                    else:
                        self._forget(rel)
                        return
                    if not self._backoff(attempt):
                        break
        raise StaleFileError(
            rel,
            message=(
                f"File kept changing while appending to it: {rel} (another writer changed it before "
                f"each of {attempt} attempts in {time.monotonic() - started:.1f}s); nothing was appended"
            ),
        )

    def _content_and_etag(self, rel: str) -> tuple[bytes, str | None] | None:
        """The bytes of file ``rel`` and the ETag of exactly those bytes (None when missing): on
        S3 one GET, whose ETag is what a conditional rewrite must match."""
        from .reading import MAX_FILE_BYTES, read_limited

        if not self._s3:
            info = self._info(self._full(rel))
            if info is None:
                return None
            size = int(info.get("size") or 0)
            return read_limited(self, rel, MAX_FILE_BYTES, size=size), _etag_of(info)
        bucket, key, _ = self._fs.split_path(self._full(rel))

        async def get() -> tuple[bytes, str | None] | None:
            try:
                out = await self._fs._call_s3("get_object", Bucket=bucket, Key=key)
            except FileNotFoundError:
                return None
            body = out["Body"]
            try:
                size = int(out.get("ContentLength") or 0)
                if size > MAX_FILE_BYTES:
                    raise FileTooLargeError(rel, size, MAX_FILE_BYTES)
                return bytes(await body.read()), out.get("ETag")
            finally:
                body.close()

        result: tuple[bytes, str | None] | None = self._run(get)
        return result

    @contextlib.contextmanager
    def _turn(self, rel: str) -> Iterator[None]:
        """Wait for this object's other appends to ``rel`` (until the call's deadline)."""
        with self._turns_lock:
            lock, users = self._turns.get(rel, (threading.Lock(), 0))
            self._turns[rel] = (lock, users + 1)
        try:
            deadline = getattr(self._calls, "deadline", None)
            wait = -1.0 if deadline is None else max(0.0, deadline - time.monotonic())
            if not lock.acquire(timeout=wait):
                raise StaleFileError(
                    rel,
                    message=f"File was busy: other appends to {rel} took the whole deadline of this call "
                    f"({self._timeout:g}s); nothing was appended",
                )
            try:
                yield
            finally:
                lock.release()
        finally:
            with self._turns_lock:
                lock, users = self._turns[rel]
                if users > 1:
                    self._turns[rel] = (lock, users - 1)
                else:
                    del self._turns[rel]

    def _backoff(self, attempt: int) -> bool:
        """Wait before the next attempt of a conditional write (random, growing to 0.5 s); False
        when the call's deadline (or, without one, ``_MAX_ATTEMPTS``) leaves no room for it."""
        import random

        pause = random.uniform(0, min(0.5, 0.005 * 2 ** min(attempt, 10)))
        deadline = getattr(self._calls, "deadline", None)
        if deadline is None:
            if attempt >= _MAX_ATTEMPTS:
                return False
        elif time.monotonic() + pause >= deadline:
            return False
        time.sleep(pause)
        return True

    def _extend_deadline(self, seconds: float) -> None:
        if getattr(self._calls, "deadline", None) is not None:
            self._calls.deadline += seconds

    @_bounded
    def mkdir(self, path: str, recursive: bool = True) -> None:
        """Create a directory (and its parents with ``recursive``). An existing directory is fine."""
        self._check_writable("mkdir", path)
        rel, full = self._resolve(path)
        if rel == ".":
            return
        with self._translating(rel, "creating"):
            kind = self._kind(full)
            if kind == "directory":
                return
            if kind is not None:
                raise FileExists(rel)
            parts = rel.split("/")
            for i in range(len(parts) - 1):
                anc = "/".join(parts[: i + 1])
                akind = self._kind(self._full(anc))
                if akind is None:
                    if not recursive:
                        raise DirectoryNotFound("/".join(parts[:-1]))
                    self._make_dir(self._full(anc))
                elif akind != "directory":
                    raise NotADirectory(anc)
            self._make_dir(full)

    def _make_dir(self, full: str, parents: bool = False) -> None:
        if self._markers:
            self._call("pipe_file", full.rstrip("/") + "/", b"")
        elif parents:
            self._call("makedirs", full, exist_ok=True)
        else:
            self._call("mkdir", full, create_parents=False)

    # --- deleting, copying, moving -------------------------------------------------------------------

    @_bounded
    def delete_file(self, path: str, force: bool = False) -> None:
        """Delete a file (a symlink on a local root is removed itself, never its target)."""
        self._check_writable("delete_file", path)
        rel, full = self._resolve(path, follow=False)
        with self._translating(rel, "deleting"):
            kind = self._kind(full) if rel != "." else "directory"
            if kind is None:
                if force:
                    return
                raise FileNotFound(rel)
            if kind == "directory":
                raise IsADirectory(rel)
            self._keep_parent(rel)
            self._call("rm_file", full)
        self._forget(rel)

    def _keep_parent(self, rel: str) -> None:
        """On a prefix store, give the parent directory a marker before its last entry goes, so
        the directory stays (as it would on a disk)."""
        if not self._markers:
            return
        parent = posixpath.dirname(rel)
        if not parent:
            return
        pfull = self._full(parent)
        with contextlib.suppress(FileNotFoundError):
            names = [e for e in self._call("ls", pfull, detail=False) if _norm(str(e)) != _norm(pfull)]
            if len(names) <= 1:
                self._call("pipe_file", pfull.rstrip("/") + "/", b"")

    @_bounded
    def rmdir(self, path: str, recursive: bool = False, force: bool = False) -> None:
        """Remove a directory; ``recursive`` removes its contents."""
        self._check_writable("rmdir", path)
        rel, full = self._resolve(path, follow=False)
        if rel == ".":
            raise InvalidArgumentError(f"Cannot remove a workspace root: {rel}")
        with self._translating(rel, "removing", missing=DirectoryNotFound):
            kind = self._kind(full)
            if kind is None:
                if force:
                    return
                raise DirectoryNotFound(rel)
            if kind != "directory":
                raise NotADirectory(rel)
            children = self._list(rel)
            if children and not recursive:
                raise DirectoryNotEmpty(rel)
            self._keep_parent(rel)
            with self._per_request():  # a tree: each request has a deadline of its own
                self._remove_tree(rel, full)

    def _remove_tree(self, rel: str, full: str) -> None:
        if self._markers:
            keys = [k for k in self._call("find", full, withdirs=False)]
            keys = [k for k in keys if _norm(str(k)).startswith(_norm(full) + "/")]
            marker = full.rstrip("/") + "/"
            if keys:
                self._call("rm", keys)
            with contextlib.suppress(FileNotFoundError):
                self._call("rm_file", marker)
            self._fs.invalidate_cache(full)
            return
        self._call("rm", full, recursive=True)

    @_bounded
    def copy_file(self, src: str, dest: str, overwrite: bool = True, recursive: bool = False) -> None:
        """Copy a file (or a directory tree with ``recursive=True``) inside the workspace."""
        self._check_writable("copy_file", dest)
        s_rel, s_full = self._resolve(src)
        d_rel, d_full = self._resolve(dest)
        with self._translating(s_rel, "copying"):
            s_kind = "directory" if s_rel == "." else self._kind(s_full)
        if s_kind is None:
            raise FileNotFound(s_rel)
        if s_kind == "directory":
            if not recursive:
                raise IsADirectory(
                    s_rel, f"Path is a directory: {s_rel} (pass recursive=True to copy a directory)"
                )
            if s_rel == "." or d_rel == s_rel or d_rel.startswith(s_rel + "/"):
                raise InvalidArgumentError(f"Cannot copy a directory into itself: {s_rel} -> {d_rel}")
            with self._translating(d_rel, "copying to"):
                d_kind = "directory" if d_rel == "." else self._kind(d_full)
                if d_kind is not None:
                    if d_kind != "directory":
                        raise NotADirectory(d_rel)
                    if not overwrite:
                        raise FileExists(d_rel)
            with self._per_request():  # a tree: each request has a deadline of its own
                self._copy_tree(s_rel, d_rel)
            return
        if s_kind != "file":
            raise not_regular(s_rel)
        with self._translating(d_rel, "copying to"):
            d_kind = "directory" if d_rel == "." else self._kind(d_full)
            if d_kind == "directory":
                raise IsADirectory(d_rel)
            if d_kind is not None and not overwrite:
                raise FileExists(d_rel)
            self._check_parents(d_rel, create=True)
            self._call("copy", s_full, d_full)
        self._forget(d_rel)

    def _copy_tree(self, s_rel: str, d_rel: str) -> None:
        self.mkdir(d_rel)
        for entry in self.readdir(s_rel, recursive=True, max_depth=1 << 16):
            src = f"{s_rel}/{entry.name}"
            dst = f"{d_rel}/{entry.name}"
            if entry.type == "directory":
                self.mkdir(dst)
            else:
                with self._translating(src, "copying"):
                    self._call("copy", self._full(src), self._full(dst))
                self._forget(dst)

    @_bounded
    def move_file(self, src: str, dest: str, overwrite: bool = True) -> None:
        """Move or rename a file or directory. On object stores a move is a copy then a delete
        (the source disappears only after the copy is complete)."""
        self._check_writable("move_file", dest)
        s_rel, s_full = self._resolve(src, follow=False)
        d_rel, d_full = self._resolve(dest, follow=False)
        if s_rel == ".":
            raise InvalidArgumentError("Cannot move the workspace root")
        with self._translating(s_rel, "moving"):
            s_kind = self._kind(s_full)
        if s_kind is None:
            raise FileNotFound(s_rel)
        if d_rel == s_rel:
            return
        with self._translating(d_rel, "moving to"):
            d_kind = "directory" if d_rel == "." else self._kind(d_full)
        if d_kind is not None:
            if not overwrite:
                raise FileExists(d_rel)
            if d_kind == "directory" and s_kind != "directory":
                raise IsADirectory(d_rel)
        if s_kind == "directory":
            if d_rel == "." or d_rel.startswith(s_rel + "/"):
                raise InvalidArgumentError(f"Cannot move a directory into itself: {s_rel} -> {d_rel}")
            if d_kind is not None and d_kind != "directory":
                raise NotADirectory(d_rel)
            with self._per_request():  # a tree: each request has a deadline of its own
                self._copy_tree(s_rel, d_rel)
                with self._translating(s_rel, "moving"):
                    self._keep_parent(s_rel)
                    self._remove_tree(s_rel, s_full)
            return
        with self._translating(d_rel, "moving to"):
            self._check_parents(d_rel, create=True)
            if self._local is not None:
                self._call("mv", s_full, d_full)
            else:
                self._call("copy", s_full, d_full)
                self._keep_parent(s_rel)
                self._call("rm_file", s_full)
        self._forget(s_rel)
        self._forget(d_rel)

    # --- local copies (the sandbox cannot see object storage) --------------------------------------

    def sync_to(self, local_dir: str | os.PathLike[str], path: str = ".") -> list[str]:
        """Copy the workspace (or ``path`` below it) into ``local_dir`` to run commands on it;
        returns the workspace-relative paths copied. Existing local files are overwritten."""
        from .local import LocalFilesystem

        local = LocalFilesystem(local_dir)
        rel, _ = self._resolve(path)
        kind = "directory" if rel == "." else self._kind(self._full(rel))
        if kind is None:
            raise FileNotFound(rel)
        files = (
            [rel]
            if kind == "file"
            else [
                e.name if rel == "." else f"{rel}/{e.name}"
                for e in self.readdir(rel, recursive=True, max_depth=1 << 16)
                if e.type == "file"
            ]
        )
        if kind == "directory":
            for e in self.readdir(rel, recursive=True, max_depth=1 << 16):
                if e.type == "directory":
                    local.mkdir(e.name if rel == "." else f"{rel}/{e.name}")
        for f in files:
            local.write_file(f, b"".join(self.open_read(f)))
        return files

    def sync_from(
        self, local_dir: str | os.PathLike[str], path: str = ".", *, delete: bool = False
    ) -> list[str]:
        """Upload files from ``local_dir`` (its ``path`` subtree) into the workspace at the same
        relative paths; only files whose content differs are written. ``delete=True`` also
        removes workspace files under ``path`` that are missing locally. Returns the paths written."""
        from .local import LocalFilesystem

        self._check_writable("sync_from", path)
        local = LocalFilesystem(local_dir, read_only=True)
        rel = self.relative(path)
        lst = local.stat(rel)
        if lst.type == "file":
            names = [rel]
        else:
            names = [
                e.name if rel == "." else f"{rel}/{e.name}"
                for e in local.readdir(rel, recursive=True, max_depth=1 << 16)
                if e.type == "file" and not e.is_symlink
            ]
        written: list[str] = []
        for name in names:
            data = local.read_file(name, encoding="binary")
            assert isinstance(data, bytes)
            try:
                same = self.stat(name).size == len(data) and self.read_file(name, encoding="binary") == data
            except FileNotFound:
                same = False
            if not same:
                self.write_file(name, data)
                written.append(name)
        if delete and lst.type == "directory":
            keep = set(names)
            for e in self.readdir(rel, recursive=True, max_depth=1 << 16):
                name = e.name if rel == "." else f"{rel}/{e.name}"
                if e.type == "file" and name not in keep:
                    self.delete_file(name, force=True)
        return written

    # --- description ----------------------------------------------------------------------------------

    def get_info(self) -> FilesystemInfo:
        return FilesystemInfo(
            id=self.id,
            name=self.name,
            provider=self.provider,
            base_path=self.url,
            read_only=self.read_only,
            status=self.status,
            storage={"url": self.url, "protocol": sorted(self._protocols)[0]},
            metadata={"directory_markers": self._markers},
        )

    def default_instructions(self) -> str:
        text = (
            f'Object-storage workspace at "{self.url}". Use paths relative to it (e.g. "src/app.py"); '
            "paths outside it (.. escapes, absolute paths, other URLs) are refused. "
            "These files are not on the sandbox's disk: shell commands and kernels cannot see them "
            "(use the file tools, or copy them to a local directory with sync_to() first)."
        )
        if self.read_only:
            text += " The filesystem is read-only: files can be read but not written, moved or deleted."
        return text

    def get_instructions(self, request_context: RequestContext | None = None) -> str:
        """Text for a model's system prompt: a replacement string, or ``fn(default, request_context)``."""
        default = self.default_instructions()
        if self._instructions is None:
            return default
        if isinstance(self._instructions, str):
            return self._instructions
        return str(self._instructions(default, request_context))

    def __repr__(self) -> str:
        flags = "" if not self.read_only else ", read_only=True"
        return f"FsspecFilesystem({self.url!r}{flags})"

    # --- errors -------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _translating(
        self, rel: str, doing: str, missing: Callable[[str], FilesystemError] | None = None
    ) -> Iterator[None]:
        """Backend exceptions -> workspace errors naming the workspace-relative path."""
        try:
            yield
        except WorkspaceError:
            raise
        except _DeadlinePassed as exc:
            raise FilesystemError(
                f"Storage backend unavailable while {doing} {rel} ({self.url}): no answer within the "
                f"{exc.seconds:g}s deadline of one call (FsspecFilesystem's timeout)",
                code="EUNAVAILABLE",
                path=rel,
            ) from None
        except FileNotFoundError:
            raise (missing or FileNotFound)(rel) from None
        except FileExistsError:
            raise FileExists(rel) from None
        except IsADirectoryError:
            raise IsADirectory(rel) from None
        except NotADirectoryError:
            raise NotADirectory(rel) from None
        except PermissionError as exc:
            raise FilesystemError(
                f"Permission denied by the storage backend while {doing} {rel}: {_short(exc)}",
                code="EACCES",
                path=rel,
            ) from None
        except OSError as exc:
            if exc.errno == errno.ENOTEMPTY:
                raise DirectoryNotEmpty(rel) from None
            if _is_unavailable(exc):
                raise self._unavailable(rel, doing, exc) from None
            code = errno.errorcode.get(exc.errno or -1, "EIO")
            raise FilesystemError(
                f"Storage error while {doing} {rel}: {_short(exc)}", code=code, path=rel
            ) from None
        except Exception as exc:
            if _is_unavailable(exc):
                raise self._unavailable(rel, doing, exc) from None
            raise FilesystemError(
                f"Storage error while {doing} {rel}: {type(exc).__name__}: {_short(exc)}",
                code="EIO",
                path=rel,
            ) from None

    def _unavailable(self, rel: str, doing: str, exc: BaseException) -> FilesystemError:
        return FilesystemError(
            f"Storage backend unavailable while {doing} {rel} ({self.url}): {_short(exc)}",
            code="EUNAVAILABLE",
            path=rel,
        )


# --- module helpers ------------------------------------------------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _protocol_of(path: str) -> str | None:
    """The protocol of a URL (``s3`` for ``s3://...``; for a chain ``simplecache::s3://...`` the
    first link's), else None (a plain path)."""
    head = path.split("::", 1)[0]
    if "://" in head:
        proto = head.split("://", 1)[0]
    elif "::" in path:
        from fsspec.registry import known_implementations, registry

        proto = head if head in known_implementations or head in registry else ""
    else:
        return None
    if not proto or not all(c.isalnum() or c in "+-." for c in proto):
        return None
    return proto.lower()


def _strip_root(path: str) -> str:
    stripped = path.rstrip("/")
    return stripped if stripped else path[:1]


def _norm(path: str) -> str:
    """Lexical normal form of a backend path (``..`` folded, no trailing slash)."""
    if not path:
        return ""
    lead = "/" if path.startswith("/") else ""
    norm = posixpath.normpath(path)
    if lead and norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    return norm if norm != "." else ""


def _escape_message(raw: str) -> str:
    return (
        f'Permission denied: "{raw}" is outside the workspace; '
        'use a path relative to the workspace root, without a leading "/"'
    )


def _mtime_of(info: dict[str, Any]) -> float | None:
    for key in ("mtime", "LastModified", "last_modified", "updated", "modified", "created"):
        value = info.get(key)
        ts = _timestamp(value)
        if ts is not None:
            return ts
    return None


def _created_of(info: dict[str, Any]) -> float | None:
    for key in ("created", "creation_time", "timeCreated"):
        ts = _timestamp(info.get(key))
        if ts is not None:
            return ts
    return None


def _timestamp(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return round(value.timestamp(), 6)
    if isinstance(value, (int, float)):
        return round(float(value), 6)
    if isinstance(value, str):
        try:
            return _timestamp(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            return None
    return None


def _etag_of(info: dict[str, Any]) -> str | None:
    for key in ("ETag", "etag", "md5Hash", "content_md5"):
        value = info.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _link_target(info: dict[str, Any]) -> str | None:
    target = info.get("destination")
    return os.fsdecode(target) if isinstance(target, (str, bytes)) else None


def _short(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _is_unavailable(exc: BaseException) -> bool:
    """A connection that failed or timed out (botocore, aiohttp and the builtins spell it
    differently): the server is down or unreachable, not a problem with the path."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, (ConnectionError, TimeoutError)):
            return True
        name = type(cur).__name__
        if any(word in name for word in ("Connect", "Timeout", "ServerDisconnected", "EndpointConnection")):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


#: S3 error codes of a conditional write that lost a race: ``If-Match``/``If-None-Match`` did not
#: hold (412), or another conditional write to the key was in flight (409).
_CONDITION_CODES = frozenset({"PreconditionFailed", "ConditionalRequestConflict"})


def _precondition_failed(exc: BaseException) -> bool:
    """Whether ``exc`` is a conditional write's failure. s3fs turns botocore's ``ClientError`` into
    a plain ``OSError(EINVAL)`` (or ``FileExistsError``) and keeps it as ``__cause__``: the error
    code and HTTP status are read from there."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        response = getattr(cur, "response", None)
        if isinstance(response, dict):
            error = response.get("Error") or {}
            status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
            if error.get("Code") in _CONDITION_CODES or status == 412:
                return True
        cur = cur.__cause__ or cur.__context__
    return False


def _upload_seconds(data: bytes | int) -> float:
    """The extra seconds a call moving ``data`` (bytes, or a size) gets past its deadline."""
    size = data if isinstance(data, int) else len(data)
    return _SECONDS_PER_MIB * size / (1 << 20)


class _DeadlinePassed(TimeoutError):
    """A call's deadline passed (turned into ``FilesystemError(EUNAVAILABLE)`` by ``_translating``)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no answer within {seconds:g}s")
        self.seconds = seconds
