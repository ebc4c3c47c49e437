"""``LocalFilesystem``: a directory on this machine, exposed through the filesystem protocol.

Every path goes through :class:`~ws_jupyter.filesystem.containment.Containment` first; reads and
writes then open files by walking down from the root with ``O_NOFOLLOW`` directory descriptors.
Writes are atomic (a temporary file in the same directory, then a rename), so a process killed
mid-write leaves the old file or the new one, never a torn one.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import posixpath
import secrets
import stat as stat_mod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from ..errors import (
    DirectoryNotFound,
    FileExists,
    FileNotFound,
    FilesystemError,
    FilesystemNotReadyError,
    InvalidArgumentError,
    InvalidPathError,
    IsADirectory,
    NotADirectory,
    PathEscapeError,
    ReadOnlyError,
    StaleFileError,
    WorkspaceError,
)
from ..lifecycle import Lifecycle
from ..request_context import RequestContext
from .containment import Containment, ResolvedPath, check_file_path, fd_levels, is_within, open_child_dir
from .mime import guess_mime_type
from .oserrors import translating
from .reading import decode_text, iter_fd, open_regular
from .types import FileEntry, FileStat, FilesystemInfo, InstructionsOption, mtime_of

__all__ = ["LocalFilesystem"]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_COPY_CHUNK = 1 << 20
_BINARY_ENCODINGS = {"binary", "bytes", None}


class LocalFilesystem:
    """A contained view of one host directory.

    >>> fs = LocalFilesystem("./workspace")
    >>> fs.write_file("notes/todo.md", "- try the search panel\\n")
    >>> fs.read_file("notes/todo.md")
    '- try the search panel\\n'

    ``contained=True`` (default) refuses any path that would leave ``base_path`` and the
    ``allowed_paths`` — by ``..``, an absolute path elsewhere, or a symlink. ``read_only=True``
    refuses every mutation. ``fsync=True`` also flushes each write to the disk before the rename
    (survives power loss, at the cost of a disk flush per write). ``destroy()`` never deletes files.
    """

    provider = "local"
    name = "LocalFilesystem"

    def __init__(
        self,
        base_path: str | os.PathLike[str] = "./workspace",
        contained: bool = True,
        read_only: bool = False,
        allowed_paths: Iterable[str | os.PathLike[str]] = (),
        instructions: InstructionsOption = None,
        id: str | None = None,
        fsync: bool = False,
    ) -> None:
        if instructions is not None and not isinstance(instructions, str) and not callable(instructions):
            raise InvalidArgumentError("instructions must be a string, a function or None")
        self._paths = Containment(os.fspath(base_path), [os.fspath(p) for p in allowed_paths], contained)
        self._read_only = bool(read_only)
        self._instructions = instructions
        self._fsync = fsync
        self.id = id or f"local-fs-{secrets.token_hex(4)}"
        self._lifecycle = Lifecycle("pending")

    # --- properties ----------------------------------------------------------------------------

    @property
    def base_path(self) -> str:
        return self._paths.base

    @property
    def contained(self) -> bool:
        return self._paths.contained

    @property
    def allowed_paths(self) -> tuple[str, ...]:
        return self._paths.allowed_paths

    def set_allowed_paths(self, paths: Iterable[str] | Callable[[tuple[str, ...]], Iterable[str]]) -> None:
        """Replace the allowed roots, or derive them from the current ones with a function."""
        new = paths(self.allowed_paths) if callable(paths) else paths
        self._paths.set_allowed_paths(new)

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def status(self) -> str:
        return self._lifecycle.status

    @property
    def containment(self) -> Containment:
        """The path rules, for components that map paths themselves (grep, the index, mounts)."""
        return self._paths

    # --- lifecycle ------------------------------------------------------------------------------

    def init(self) -> None:
        """Create the base directory if needed. Idempotent; called lazily by every operation."""

        def action() -> None:
            try:
                os.makedirs(self.base_path, exist_ok=True)
            except FileExistsError:
                raise NotADirectory(
                    self.base_path, f"Base path is not a directory: {self.base_path}"
                ) from None
            if not os.path.isdir(self.base_path):
                raise NotADirectory(self.base_path, f"Base path is not a directory: {self.base_path}")
            self._paths.refresh()

        self._lifecycle.transition(
            "ready",
            "initializing",
            action,
            allowed_from=("pending", "error"),
            refuse=lambda s: FilesystemNotReadyError(f"Filesystem cannot be initialised (status: {s})"),
        )

    def destroy(self) -> None:
        """Mark the filesystem destroyed. Files on disk are left exactly as they are."""
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
        if status in ("pending", "error"):
            self.init()
            return
        if status == "initializing":
            self.init()  # waits for the running init
            return
        raise FilesystemNotReadyError(f"Filesystem is not available (status: {status})")

    # --- path helpers -------------------------------------------------------------------------

    def _resolve(self, path: Any, *, follow: bool = True) -> ResolvedPath:
        self._ready()
        return self._paths.resolve(path, follow=follow)

    def host_path(self, path: str, *, follow: bool = True) -> str:
        """The checked host path for ``path`` (raises ``PathEscapeError`` when it would escape)."""
        return self._resolve(path, follow=follow).host

    def relative_path(self, host_path: str) -> str:
        """The workspace-relative form of a host path found inside the workspace."""
        return self._paths.display_real(os.path.realpath(host_path))

    def _check_writable(self, operation: str, path: Any) -> None:
        if self._read_only:
            raise ReadOnlyError(operation, path if isinstance(path, str) else None)

    # --- reading ----------------------------------------------------------------------------------

    def read_file(self, path: str, encoding: str | None = "utf-8") -> str | bytes:
        """Read a whole file: text in ``encoding``, or bytes with ``encoding="binary"``."""
        if encoding is not None and encoding not in _BINARY_ENCODINGS:
            _check_encoding(encoding)
        r = self._resolve(path)
        with translating(r.rel):
            data = b"".join(self._read_chunks(r))
        if encoding is None or encoding in _BINARY_ENCODINGS:
            return data
        return decode_text(data, r.rel, encoding)

    def open_read(self, path: str) -> Iterator[bytes]:
        """Stream a file in chunks (for large files: hashing, copying, uploading)."""
        r = self._resolve(path)
        with translating(r.rel):
            yield from self._read_chunks(r)

    def _read_chunks(self, r: ResolvedPath) -> Iterator[bytes]:
        with self._paths.parent_dir_fd(r) as dfd:
            try:
                fd, _ = open_regular(r.name, dir_fd=dfd, rel=r.rel)
            except PathEscapeError:
                raise PathEscapeError(
                    r.rel, f'Permission denied: "{r.rel}" changed to a symlink while in use'
                ) from None
            except IsADirectoryError:
                raise IsADirectory(r.rel) from None
        try:
            yield from iter_fd(fd, rel=r.rel)
        finally:
            os.close(fd)

    def exists(self, path: str) -> bool:
        """True when ``path`` exists inside the workspace (False for escaping or malformed paths)."""
        try:
            r = self._resolve(path)
            self._paths.stat(r)
        except (PathEscapeError, FilesystemError, OSError):
            return False
        return True

    def stat(self, path: str) -> FileStat:
        r = self._resolve(path)
        with translating(r.rel):
            st = self._paths.stat(r)
        return _file_stat(r.rel, st)

    def readdir(
        self,
        path: str = ".",
        recursive: bool = False,
        extension: str | None = None,
        max_depth: int = 100,
    ) -> list[FileEntry]:
        """List a directory. Recursive names are ``sub/file``; symlinks report their target.

        Symlinked directories are descended only when they resolve inside the workspace (each
        real directory once). ``extension`` (``".py"`` or ``"py"``) keeps matching files only.
        Directories are read through descriptors opened with ``O_NOFOLLOW`` from the root, so a
        directory swapped for a symlink mid-listing cannot make it list a directory outside.
        """
        if max_depth < 1:
            raise InvalidArgumentError("max_depth must be >= 1")
        r = self._resolve(path)
        with translating(r.rel, missing=DirectoryNotFound):
            top = self._paths.open_dir(r)
        suffix = None
        if extension:
            suffix = extension if extension.startswith(".") else "." + extension
        out: list[FileEntry] = []
        # An explicit stack of directory iterators gives pre-order without recursion, so deep
        # trees never hit the interpreter's recursion limit. Each level keeps its descriptor to
        # open its children (past ``fd_levels()`` levels the descriptor is reopened from the root).
        stack: list[_Frame] = []
        try:
            st = os.fstat(top)
            seen = {(st.st_dev, st.st_ino)}
            with translating(r.rel):
                stack.append(_Frame(iter(self._scan(top, r.rel, "", r.host)), "", 1, top))
            while stack:
                frame = stack[-1]
                nxt = next(frame.entries, None)
                if nxt is None:
                    stack.pop()
                    frame.close()
                    continue
                entry, child = nxt
                name = frame.prefix + entry.name
                if suffix is None or (entry.type == "file" and entry.name.endswith(suffix)):
                    out.append(replace(entry, name=name))
                if not recursive or child is None or frame.depth >= max_depth:
                    continue
                fd = self._open_listed(frame, child, posixpath.join(r.rel, name) if r.rel != "." else name)
                if fd is None:
                    continue
                cst = os.fstat(fd)
                if (cst.st_dev, cst.st_ino) in seen:
                    os.close(fd)
                    continue
                seen.add((cst.st_dev, cst.st_ino))
                try:
                    entries = self._scan(fd, r.rel, name + "/", r.host)
                except OSError:
                    os.close(fd)
                    continue
                sub = _Frame(iter(entries), name + "/", frame.depth + 1, fd)
                if len(stack) >= fd_levels():
                    sub.close()  # deep: reopened from the root when a child needs it
                stack.append(sub)
        finally:
            for frame in stack:
                frame.close()
        return out

    def _open_listed(self, frame: _Frame, child: str | ResolvedPath, rel: str) -> int | None:
        """Descriptor of a directory met while listing (None when it vanished or was swapped)."""
        try:
            if isinstance(child, ResolvedPath):
                return self._paths.open_dir(child)
            if frame.fd < 0:
                return self._paths.open_dir(self._paths.resolve(rel, follow=False))
            return open_child_dir(child, frame.fd, rel)
        except (OSError, WorkspaceError):
            return None

    def _scan(
        self, dir_fd: int, base_rel: str, prefix: str, root_real: str
    ) -> list[tuple[FileEntry, str | ResolvedPath | None]]:
        """Entries of one directory (sorted), each with what to descend into: a subdirectory's
        name, a symlink's resolved target directory outside the listed tree, or None."""
        with os.scandir(dir_fd) as it:
            entries = sorted(it, key=lambda e: e.name)
        result: list[tuple[FileEntry, str | ResolvedPath | None]] = []
        for entry in entries:
            link_target = None
            descend: str | ResolvedPath | None = None
            try:
                is_link = entry.is_symlink()
                if is_link:
                    link_target = os.readlink(entry.name, dir_fd=dir_fd)
                    link_rel = (
                        posixpath.join(base_rel, prefix + entry.name)
                        if base_rel != "."
                        else prefix + entry.name
                    )
                    kind, size, descend = self._link_info(link_rel, root_real)
                elif entry.is_dir(follow_symlinks=False):
                    kind, size, descend = "directory", None, entry.name
                else:
                    kind = "file"
                    st = entry.stat(follow_symlinks=False)
                    size = st.st_size if stat_mod.S_ISREG(st.st_mode) else None
            except OSError:
                continue  # vanished while listing
            result.append((FileEntry(entry.name, kind, size, is_link, link_target), descend))  # type: ignore[arg-type]
        return result

    def _link_info(self, link_rel: str, root_real: str) -> tuple[str, int | None, ResolvedPath | None]:
        """(type, size, directory to descend into) of a symlink met while listing. A target
        outside the workspace is never looked at: it is reported as a file of unknown size."""
        try:
            target = self._paths.resolve(link_rel)
            st = self._paths.stat(target)
        except (PathEscapeError, InvalidPathError):
            return "file", None, None
        except OSError:
            return "file", None, None  # dangling
        if stat_mod.S_ISDIR(st.st_mode):
            # a link to a directory of the listed tree is listed where it really is
            return "directory", None, (None if is_within(target.host, root_real) else target)
        return "file", (st.st_size if stat_mod.S_ISREG(st.st_mode) else None), None

    # --- writing ----------------------------------------------------------------------------------

    def write_file(
        self,
        path: str,
        content: str | bytes,
        recursive: bool = True,
        overwrite: bool = True,
        expected_mtime: float | datetime | None = None,
    ) -> None:
        """Write a whole file atomically.

        ``recursive`` creates missing parent directories; ``overwrite=False`` refuses an existing
        file (``FileExists``); ``expected_mtime`` refuses the write (``StaleFileError``, file
        untouched) when the file exists with another modification time.
        """
        self._check_writable("write_file", path)
        r = self._resolve(path)
        check_file_path(path)
        data = _to_bytes(content)
        self._atomic_write(
            r, (data,), recursive=recursive, overwrite=overwrite, expected_mtime=expected_mtime
        )

    def write_stream(
        self, path: str, chunks: Iterable[bytes], *, mode: int | None = None, recursive: bool = True
    ) -> None:
        """Write a whole file atomically from ``chunks`` (files too large to hold in memory, a
        restore from a checkpoint), with the permission bits ``mode`` (``& 0o777``: never setuid,
        setgid or sticky) or, without it, those of the file it replaces. An exception raised by
        ``chunks`` leaves the old file as it was."""
        self._check_writable("write_stream", path)
        r = self._resolve(path)
        check_file_path(path)
        self._atomic_write(r, chunks, recursive=recursive, overwrite=True, mode=mode)

    def append_file(self, path: str, content: str | bytes) -> None:
        """Append to a file, creating it and its parent directories when missing."""
        self._check_writable("append_file", path)
        r = self._resolve(path)
        check_file_path(path)
        data = _to_bytes(content)
        with translating(r.rel), self._parent_fd(r, create=True) as dfd:
            fd = os.open(
                r.name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o666, dir_fd=dfd
            )
            try:
                if stat_mod.S_ISDIR(os.fstat(fd).st_mode):
                    raise IsADirectory(r.rel)
                _write_all(fd, data)
                if self._fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)

    def _atomic_write(
        self,
        r: ResolvedPath,
        chunks: Iterable[bytes],
        *,
        recursive: bool,
        overwrite: bool,
        expected_mtime: float | datetime | None = None,
        mode: int | None = None,
    ) -> None:
        with translating(r.rel), self._parent_fd(r, create=recursive) as dfd:
            try:
                current = os.stat(r.name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                current = None
            if current is not None:
                if stat_mod.S_ISDIR(current.st_mode):
                    raise IsADirectory(r.rel)
                if not overwrite:
                    raise FileExists(r.rel)
                if expected_mtime is not None and _mtime_differs(current, expected_mtime):
                    raise StaleFileError(r.rel, _as_timestamp(expected_mtime), current.st_mtime)
            tmp = f".ws-{secrets.token_hex(6)}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666, dir_fd=dfd)
            try:
                try:
                    for chunk in chunks:
                        _write_all(fd, chunk)
                    if mode is not None:
                        os.fchmod(fd, mode & 0o777)
                    elif current is not None:
                        # The permission bits only: a root writer would otherwise turn an empty
                        # setuid file left by a sandboxed command into a setuid program.
                        os.fchmod(fd, stat_mod.S_IMODE(current.st_mode) & 0o777)
                    if self._fsync:
                        os.fsync(fd)
                finally:
                    os.close(fd)
                if overwrite:
                    os.replace(tmp, r.name, src_dir_fd=dfd, dst_dir_fd=dfd)
                else:
                    # link() fails if the name appeared meanwhile: no-clobber without a race.
                    os.link(tmp, r.name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
                    os.unlink(tmp, dir_fd=dfd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dfd)
                raise
            if self._fsync:
                os.fsync(dfd)

    @contextlib.contextmanager
    def _parent_fd(self, r: ResolvedPath, *, create: bool) -> Iterator[int]:
        """Directory descriptor of ``r``'s parent; creates missing parents when ``create``."""
        parent_rel = posixpath.dirname(r.rel) or "."
        if create:
            self._make_dirs(r, len(r.parts) - 1)
        try:
            with self._paths.parent_dir_fd(r) as dfd:
                yield dfd
        except FileNotFoundError:
            raise DirectoryNotFound(parent_rel) from None
        except NotADirectoryError as exc:
            if isinstance(exc, WorkspaceError):
                raise
            raise NotADirectory(parent_rel) from None

    def _make_dirs(self, r: ResolvedPath, count: int) -> None:
        """Create the first ``count`` components of ``r`` below its root, never following symlinks."""
        fd = os.open(r.root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            for i, part in enumerate(r.parts[:count]):
                try:
                    nxt = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
                except FileNotFoundError:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=fd)
                    nxt = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
                        shown = "/".join(r.parts[: i + 1])
                        st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                        if stat_mod.S_ISLNK(st.st_mode):
                            raise PathEscapeError(
                                r.rel, f'Permission denied: "{r.rel}" changed to a symlink while in use'
                            )
                        raise NotADirectory(self._paths.display_real(posixpath.join(r.root, shown))) from None
                    raise
                os.close(fd)
                fd = nxt
        finally:
            os.close(fd)

    def delete_file(self, path: str, force: bool = False) -> None:
        """Delete a file (a symlink is removed itself, never its target)."""
        self._check_writable("delete_file", path)
        r = self._resolve(path, follow=False)
        with translating(r.rel):
            try:
                st = self._paths.stat(r, follow=False)
            except FileNotFoundError:
                if force:
                    return
                raise FileNotFound(r.rel) from None
            if stat_mod.S_ISDIR(st.st_mode):
                raise IsADirectory(r.rel)
            with self._paths.parent_dir_fd(r) as dfd:
                os.unlink(r.name, dir_fd=dfd)

    def copy_file(self, src: str, dest: str, overwrite: bool = True, recursive: bool = False) -> None:
        """Copy a file (or a directory tree with ``recursive=True``; symlinks are copied as links,
        FIFOs, sockets and devices are skipped).

        Both trees are walked through directory descriptors opened with ``O_NOFOLLOW``, so a
        directory swapped for a symlink while the copy runs cannot pull outside files in.
        """
        self._check_writable("copy_file", dest)
        s = self._resolve(src)
        d = self._resolve(dest)
        with translating(s.rel):
            st = self._paths.stat(s)
        if stat_mod.S_ISDIR(st.st_mode):
            if not recursive:
                raise IsADirectory(
                    s.rel, f"Path is a directory: {s.rel} (pass recursive=True to copy a directory)"
                )
            if d.host == s.host or d.host.startswith(s.host + "/"):
                raise InvalidArgumentError(f"Cannot copy a directory into itself: {s.rel} -> {d.rel}")
            dest_st = self._lstat_or_none(d)
            if dest_st is not None:
                if not stat_mod.S_ISDIR(dest_st.st_mode):
                    raise NotADirectory(d.rel)
                if not overwrite:
                    raise FileExists(d.rel)
            with translating(d.rel):
                self._make_dirs(d, len(d.parts) - 1)
                with self._paths.parent_dir_fd(s) as sfd, self._paths.parent_dir_fd(d) as dfd:
                    _copy_tree(sfd, s.name, dfd, d.name)
            return
        dest_st = self._lstat_or_none(d)
        if dest_st is not None and stat_mod.S_ISDIR(dest_st.st_mode):
            raise IsADirectory(d.rel)
        self._atomic_write(d, self._read_chunks(s), recursive=True, overwrite=overwrite)

    def move_file(self, src: str, dest: str, overwrite: bool = True) -> None:
        """Move or rename a file or directory (a symlink moves itself).

        The rename is made between directory descriptors opened with ``O_NOFOLLOW`` from the
        root, so neither side can be redirected outside by a symlink swapped in meanwhile.
        """
        self._check_writable("move_file", dest)
        s = self._resolve(src, follow=False)
        d = self._resolve(dest, follow=False)
        if not s.parts:
            raise InvalidArgumentError("Cannot move the workspace root")
        if not d.parts:
            raise InvalidArgumentError("Cannot replace the workspace root")
        with translating(s.rel):
            src_st = self._paths.stat(s, follow=False)
        if d.host == s.host:
            return
        dest_st = self._lstat_or_none(d)
        if dest_st is not None:
            if not overwrite:
                raise FileExists(d.rel)
            if stat_mod.S_ISDIR(dest_st.st_mode) and not stat_mod.S_ISDIR(src_st.st_mode):
                raise IsADirectory(d.rel)
        if stat_mod.S_ISDIR(src_st.st_mode) and d.host.startswith(s.host + "/"):
            raise InvalidArgumentError(f"Cannot move a directory into itself: {s.rel} -> {d.rel}")
        with translating(d.rel):
            self._make_dirs(d, len(d.parts) - 1)
            with self._paths.parent_dir_fd(s) as sfd, self._paths.parent_dir_fd(d) as dfd:
                try:
                    os.rename(s.name, d.name, src_dir_fd=sfd, dst_dir_fd=dfd)
                except OSError as exc:
                    if exc.errno != errno.EXDEV:
                        raise
                    # Another device (an allowed path elsewhere): copy, then remove the source.
                    if stat_mod.S_ISDIR(src_st.st_mode):
                        _copy_tree(sfd, s.name, dfd, d.name)
                        _remove_tree(sfd, s.name)
                    else:
                        _copy_entry(sfd, s.name, dfd, d.name, src_st)
                        os.unlink(s.name, dir_fd=sfd)

    def _lstat_or_none(self, r: ResolvedPath) -> os.stat_result | None:
        """``lstat`` of ``r`` through descriptors; None when it (or its parent) does not exist."""
        try:
            with translating(r.rel):
                return self._paths.stat(r, follow=False)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def mkdir(self, path: str, recursive: bool = True) -> None:
        """Create a directory (and its parents with ``recursive``). An existing directory is fine."""
        self._check_writable("mkdir", path)
        r = self._resolve(path)
        existing = self._lstat_or_none(r)
        if existing is not None:
            if stat_mod.S_ISDIR(existing.st_mode):
                return
            raise FileExists(r.rel)
        with translating(r.rel):
            if recursive:
                self._make_dirs(r, len(r.parts))
                return
            with self._parent_fd(r, create=False) as dfd:
                try:
                    os.mkdir(r.name, 0o777, dir_fd=dfd)
                except FileExistsError:
                    if not stat_mod.S_ISDIR(os.stat(r.name, dir_fd=dfd, follow_symlinks=False).st_mode):
                        raise FileExists(r.rel) from None

    def rmdir(self, path: str, recursive: bool = False, force: bool = False) -> None:
        """Remove a directory; ``recursive`` removes its contents (symlinks are not followed)."""
        self._check_writable("rmdir", path)
        r = self._resolve(path, follow=False)
        if not r.parts or r.host in self._paths.real_roots:
            raise InvalidArgumentError(f"Cannot remove a workspace root: {r.rel}")
        try:
            with translating(r.rel, missing=DirectoryNotFound):
                st = self._paths.stat(r, follow=False)
        except DirectoryNotFound:
            if force:
                return
            raise
        if not stat_mod.S_ISDIR(st.st_mode):
            raise NotADirectory(r.rel)
        with translating(r.rel), self._paths.parent_dir_fd(r) as dfd:
            if recursive:
                _remove_tree(dfd, r.name)
            else:
                os.rmdir(r.name, dir_fd=dfd)

    # --- description ------------------------------------------------------------------------------

    def get_info(self) -> FilesystemInfo:
        meta: dict[str, Any] = {"contained": self.contained}
        if self.allowed_paths:
            meta["allowed_paths"] = list(self.allowed_paths)
        return FilesystemInfo(
            id=self.id,
            name=self.name,
            provider=self.provider,
            base_path=self.base_path,
            read_only=self.read_only,
            status=self.status,
            metadata=meta,
        )

    def default_instructions(self) -> str:
        text = f'Local filesystem at "{self.base_path}". Use paths relative to this directory (e.g. "src/app.py").'
        if not self.contained:
            text += " Containment is disabled, so any path on the host filesystem is accessible."
        elif self.allowed_paths:
            text += (
                " Access is restricted to this directory and these allowed paths: "
                + ", ".join(self.allowed_paths)
                + "."
            )
        else:
            text += (
                " Paths outside it (absolute paths elsewhere, .. escapes, symlinks leading out) are refused."
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
        return f"LocalFilesystem({self.base_path!r}{flags})"


# --- module helpers ---------------------------------------------------------------------------


class _Frame:
    """One directory being listed: its remaining entries, name prefix, depth and descriptor."""

    __slots__ = ("depth", "entries", "fd", "prefix")

    def __init__(self, entries: Iterator[Any], prefix: str, depth: int, fd: int) -> None:
        self.entries, self.prefix, self.depth, self.fd = entries, prefix, depth, fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _remove_tree(parent_fd: int, name: str) -> None:
    """Delete a directory tree below ``parent_fd`` without following symlinks and without recursion.

    Every directory is opened with ``O_NOFOLLOW`` relative to its parent's descriptor, so a
    directory swapped for a symlink mid-way cannot redirect the deletion outside the tree.
    """
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    root_fd = os.open(name, flags, dir_fd=parent_fd)
    stack: list[tuple[int, str, int, list[str]]] = [(parent_fd, name, root_fd, os.listdir(root_fd))]
    try:
        while stack:
            pfd, dname, dfd, names = stack[-1]
            if names:
                child = names.pop()
                st = os.stat(child, dir_fd=dfd, follow_symlinks=False)
                if stat_mod.S_ISDIR(st.st_mode):
                    cfd = os.open(child, flags, dir_fd=dfd)
                    stack.append((dfd, child, cfd, os.listdir(cfd)))
                else:
                    os.unlink(child, dir_fd=dfd)
                continue
            stack.pop()
            os.close(dfd)
            os.rmdir(dname, dir_fd=pfd)
    finally:
        for _pfd, _name, dfd, _names in stack:
            os.close(dfd)


def _copy_tree(src_parent_fd: int, src_name: str, dst_parent_fd: int, dst_name: str) -> None:
    """Copy the directory ``src_name`` into ``dst_name`` (merged into an existing directory),
    through descriptors opened with ``O_NOFOLLOW`` and without recursion. Symlinks are copied as
    links; FIFOs, sockets and devices are skipped (reading a FIFO would wait forever)."""
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    src_root = os.open(src_name, flags, dir_fd=src_parent_fd)
    opened = [src_root]
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(dst_name, 0o777, dir_fd=dst_parent_fd)
        dst_root = os.open(dst_name, flags, dir_fd=dst_parent_fd)
        opened.append(dst_root)
        stack = [(src_root, dst_root)]
        while stack:
            sfd, dfd = stack.pop()
            for name in os.listdir(sfd):
                st = os.stat(name, dir_fd=sfd, follow_symlinks=False)
                if stat_mod.S_ISDIR(st.st_mode):
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, stat_mod.S_IMODE(st.st_mode) | 0o700, dir_fd=dfd)
                    child_src = os.open(name, flags, dir_fd=sfd)
                    opened.append(child_src)
                    child_dst = os.open(name, flags, dir_fd=dfd)
                    opened.append(child_dst)
                    stack.append((child_src, child_dst))
                else:
                    _copy_entry(sfd, name, dfd, name, st)
    finally:
        for fd in opened:
            os.close(fd)


def _copy_entry(src_fd: int, name: str, dst_fd: int, dst_name: str, st: os.stat_result) -> None:
    """Copy one non-directory entry between directory descriptors: a symlink as a link, a regular
    file with its permission bits (no setuid/setgid) and times; anything else is skipped."""
    if stat_mod.S_ISLNK(st.st_mode):
        target = os.readlink(name, dir_fd=src_fd)
        with contextlib.suppress(FileNotFoundError):
            existing = os.stat(dst_name, dir_fd=dst_fd, follow_symlinks=False)
            if stat_mod.S_ISDIR(existing.st_mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory", dst_name)
            os.unlink(dst_name, dir_fd=dst_fd)
        os.symlink(target, dst_name, dir_fd=dst_fd)
        return
    if not stat_mod.S_ISREG(st.st_mode):
        return
    fd, _ = open_regular(name, dir_fd=src_fd)
    try:
        out = os.open(
            dst_name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=dst_fd
        )
        try:
            for chunk in iter_fd(fd, rel=name):
                _write_all(out, chunk)
            os.fchmod(out, stat_mod.S_IMODE(st.st_mode) & 0o777)
            os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(out)
    finally:
        os.close(fd)


def _check_encoding(encoding: str) -> None:
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise InvalidArgumentError(
            f"Unknown encoding {encoding!r} (use a codec name such as 'utf-8', or 'binary')"
        ) from None


def _to_bytes(content: str | bytes | bytearray | memoryview) -> bytes:
    if isinstance(content, str):
        try:
            return content.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidArgumentError(
                f"content is not encodable as UTF-8 (character {content[exc.start]!r} at {exc.start})"
            ) from None
    if isinstance(content, (bytes, bytearray, memoryview)):
        return bytes(content)
    raise InvalidArgumentError(f"content must be str or bytes, not {type(content).__name__}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _as_timestamp(value: float | datetime) -> float:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.timestamp()
    if isinstance(value, (int, float)):
        return float(value)
    raise InvalidArgumentError(f"expected_mtime must be a timestamp or datetime, not {type(value).__name__}")


def _mtime_differs(st: os.stat_result, expected: float | datetime) -> bool:
    # FileStat carries microseconds; compare at that resolution.
    return abs(st.st_mtime_ns // 1000 - round(_as_timestamp(expected) * 1_000_000)) > 1


def _utc(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=timezone.utc)


def _file_stat(rel: str, st: os.stat_result) -> FileStat:
    is_dir = stat_mod.S_ISDIR(st.st_mode)
    created = getattr(st, "st_birthtime", None) or st.st_ctime
    name = posixpath.basename(rel) if rel != "." else "."
    return FileStat(
        name=name,
        path=rel,
        type="directory" if is_dir else "file",
        size=st.st_size,
        created_at=_utc(created),
        modified_at=datetime.fromtimestamp(mtime_of(st), tz=timezone.utc),
        mime_type=None if is_dir else guess_mime_type(rel),
    )
