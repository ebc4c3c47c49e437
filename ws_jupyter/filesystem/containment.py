"""Containment: turning a user's or a model's path into a host path that stays inside the workspace.

One small piece reused by every filesystem operation, tool, grep result and index path, so the
rules live in one place:

* relative paths resolve against the base path; ``~`` expands to the home directory;
* an absolute path is accepted only when it lies inside the base path or an allowed path;
* the *real* path (all symlinks resolved, including a dangling final link and the symlinked
  ancestors of a file that does not exist yet) must lie inside the real path of a root;
* operations then run on that real path, and file opens walk down from the root with
  ``O_NOFOLLOW`` directory descriptors, so a symlink swapped in after the check cannot redirect
  a read or a write outside (the check and the use see the same directories).

Anything else raises :class:`~ws_jupyter.errors.PathEscapeError` before touching the disk.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..errors import FilesystemError, InvalidPathError, PathEscapeError
from .oserrors import translating

__all__ = [
    "Containment",
    "ResolvedPath",
    "check_file_path",
    "fd_levels",
    "is_within",
    "normalize_input_path",
    "open_child_dir",
]

_DIR_FLAGS = (
    os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)


@dataclass(frozen=True)
class ResolvedPath:
    """A checked path.

    ``host``: absolute host path to operate on (symlinks already resolved, except the final
    component when resolved with ``follow=False``). ``rel``: the workspace-relative form used in
    messages and results ("." for the root). ``root``: the real root (base or allowed path) that
    contains ``host``; ``parts``: the components of ``host`` below ``root``.
    """

    host: str
    rel: str
    root: str
    parts: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.parts[-1] if self.parts else posixpath.basename(self.host)


def normalize_input_path(path: object) -> str:
    """Validate the *form* of a path argument (type, NUL, encodability); return it as ``str``."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, bytes):
        try:
            path = os.fsdecode(path)
        except UnicodeDecodeError:  # pragma: no cover - fsdecode uses surrogateescape
            raise InvalidPathError(repr(path), "cannot be decoded") from None
    if not isinstance(path, str):
        raise InvalidPathError(repr(path), f"expected a string path, got {type(path).__name__}")
    if "\x00" in path:
        raise InvalidPathError(path.replace("\x00", "\\0"), "contains a NUL byte")
    try:
        path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise InvalidPathError(
            path.encode("utf-8", "backslashreplace").decode(), "contains unencodable characters"
        ) from None
    return path


def check_file_path(path: object) -> None:
    """Refuse a path that names a directory by its form (``newdir/``, ``newdir/.``) where a file is
    to be written: normalising it away would write a file ``newdir`` instead."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if isinstance(path, str) and (path.endswith("/") or path.endswith("/.")) and path.strip("/."):
        raise InvalidPathError(
            path, 'a file path cannot end with "/" (it names a directory; mkdir creates one)'
        )


def _resolve_below(real_root: str, parts: list[str], follow: bool) -> tuple[str, bool]:
    """Real path of ``real_root/parts...``; second value True when no symlink was met.

    Only the components below the (already real) root are examined — one ``lstat`` each, and
    none past the first missing component. The first symlink hands the rest to
    ``os.path.realpath``, which also resolves dangling and chained links.
    """
    cur = real_root
    last = len(parts) - 1
    for i, part in enumerate(parts):
        nxt = cur + part if cur.endswith("/") else cur + "/" + part
        if i == last and not follow:
            return nxt, True
        try:
            st = os.lstat(nxt)
        except (FileNotFoundError, NotADirectoryError):
            return posixpath.join(nxt, *parts[i + 1 :]), True
        except OSError:
            return os.path.realpath(posixpath.join(cur, *parts[i:])), False
        if stat.S_ISLNK(st.st_mode):
            rest = parts[i:] if follow else parts[i:last]
            resolved = os.path.realpath(posixpath.join(cur, *rest))
            if not follow:
                resolved = posixpath.join(resolved, parts[last])
            return resolved, False
        cur = nxt
    return cur, True


_ROOT_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def fd_levels() -> int:
    """How many directory levels a walk keeps open at once: most of the descriptor limit, so
    even very deep trees are walked with one ``openat`` per directory (deeper levels reopen
    their directory from the root)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):  # pragma: no cover - non-POSIX
        soft = 1024
    if soft == getattr(resource, "RLIM_INFINITY", -1) or soft <= 0:
        soft = 1 << 16
    return max(64, min(soft - 256, 1 << 16) // 2)


def open_child_dir(name: str, dir_fd: int, rel: str) -> int:
    """Open the subdirectory ``name`` of ``dir_fd`` without following a symlink (``rel`` names it in
    errors): ``PathEscapeError`` for a symlink, ``NotADirectoryError`` for anything else."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link_at(name, dir_fd):
            raise PathEscapeError(
                rel, f'Permission denied: "{rel}" changed to a symlink while in use'
            ) from None
        raise


def _is_link_at(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def is_within(path: str, root: str) -> bool:
    """Whether normalised absolute ``path`` is ``root`` or lies below it (no symlink resolution)."""
    if path == root or root == "/":
        return True
    return path.startswith(root if root.endswith("/") else root + "/")


class Containment:
    """Path rules of one filesystem: a base path, extra allowed roots, and whether to enforce them."""

    def __init__(self, base_path: str, allowed_paths: Iterable[str] = (), contained: bool = True) -> None:
        self.base = self._absolute(os.path.expanduser(os.fspath(base_path)), os.getcwd())
        self.contained = contained
        self._allowed: tuple[str, ...] = ()
        self._real_roots: dict[str, str] | None = None
        self.set_allowed_paths(allowed_paths)

    # --- configuration -----------------------------------------------------------------------

    @property
    def allowed_paths(self) -> tuple[str, ...]:
        return self._allowed

    def set_allowed_paths(self, paths: Iterable[str]) -> None:
        """Replace the extra roots; relative ones resolve against the base path."""
        allowed = []
        for p in paths:
            p = normalize_input_path(p)
            allowed.append(self._absolute(os.path.expanduser(p), self.base))
        self._allowed = tuple(dict.fromkeys(allowed))
        self._real_roots = None

    def refresh(self) -> None:
        """Forget cached real paths of the roots (call after the base directory was created)."""
        self._real_roots = None

    @property
    def lexical_roots(self) -> tuple[str, ...]:
        return (self.base, *self._allowed)

    @property
    def real_roots(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self._real_map().values()))

    def _real_map(self) -> dict[str, str]:
        """Lexical root -> its real path (cached; roots rarely change)."""
        mapping = self._real_roots
        if mapping is None:
            mapping = {r: os.path.realpath(r) for r in self.lexical_roots}
            self._real_roots = mapping
        return mapping

    # --- resolution --------------------------------------------------------------------------

    def resolve(self, path: object, *, follow: bool = True) -> ResolvedPath:
        """Check ``path`` and return where to operate.

        ``follow=False`` leaves the final component unresolved (to act on a symlink itself: delete
        it, move it, list it); its parent must still be inside.
        """
        raw = normalize_input_path(path)
        expanded = os.path.expanduser(raw) if raw.startswith("~") else raw
        lexical = self._absolute(expanded or ".", self.base)
        rel = self.display(lexical)
        if not self.contained:
            with translating(rel):
                host = os.path.realpath(lexical) if follow else lexical
            return ResolvedPath(host=host, rel=rel, root="/", parts=tuple(p for p in host.split("/") if p))

        lexical_root = None
        for r in self.lexical_roots:
            if is_within(lexical, r) and (lexical_root is None or len(r) > len(lexical_root)):
                lexical_root = r
        if lexical_root is None:
            raise PathEscapeError(raw, self._escape_message(raw, expanded))
        real_root = self._real_map()[lexical_root]
        below = lexical[len(lexical_root) :].strip("/")
        parts = below.split("/") if below else []
        # realpath() fails (EINVAL from readlink) when a component changes from a symlink to a
        # directory while it resolves: the error names the workspace path, not the host's
        with translating(rel):
            real, direct = _resolve_below(real_root, parts, follow)
        if direct:
            # no symlink on the way: the real path is the real root plus the same components
            return ResolvedPath(host=real, rel=rel, root=real_root, parts=tuple(parts))
        root = self._real_root_of(real)
        if root is None:
            raise PathEscapeError(
                raw, f'Permission denied: "{raw}" resolves outside the workspace through a symlink'
            )
        below_real = real[len(root) :].strip("/")
        return ResolvedPath(
            host=real, rel=rel, root=root, parts=tuple(below_real.split("/")) if below_real else ()
        )

    def is_contained(self, path: object) -> bool:
        """True when ``path`` resolves inside (never raises for escapes or malformed paths)."""
        try:
            self.resolve(path)
        except (FilesystemError, InvalidPathError):
            return False
        return True

    def display(self, host_path: str) -> str:
        """Workspace-relative form of a host path ("." for the base itself; absolute if elsewhere)."""
        if host_path == self.base:
            return "."
        if host_path.startswith(self.base + "/"):
            return host_path[len(self.base) + 1 :]
        return host_path

    def display_real(self, real_path: str) -> str:
        """Like :meth:`display` for a path found by walking real directories."""
        for lexical, real in zip(self.lexical_roots, (os.path.realpath(r) for r in self.lexical_roots)):
            if is_within(real_path, real):
                tail = real_path[len(real) :].strip("/")
                full = posixpath.join(lexical, tail) if tail else lexical
                return self.display(full)
        return real_path

    # --- descriptor-based access (no symlink can be swapped in after the check) ----------------

    @contextmanager
    def parent_dir_fd(self, resolved: ResolvedPath) -> Iterator[int]:
        """Open the directory that holds ``resolved`` by walking down from its root with O_NOFOLLOW.

        Yields a directory descriptor; the final component is ``resolved.name``. A directory that
        became a symlink since :meth:`resolve` makes the walk fail with ``PathEscapeError``.
        """
        if not resolved.parts:
            raise PathEscapeError(resolved.rel, f'Permission denied: "{resolved.rel}" is the workspace root')
        fd = os.open(resolved.root, _ROOT_FLAGS)
        try:
            for part in resolved.parts[:-1]:
                try:
                    nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link_at(part, fd):
                        raise PathEscapeError(
                            resolved.rel,
                            f'Permission denied: "{resolved.rel}" changed to a symlink while in use',
                        ) from None
                    raise
                os.close(fd)
                fd = nxt
            yield fd
        finally:
            os.close(fd)

    def open_dir(self, resolved: ResolvedPath) -> int:
        """A descriptor of the directory ``resolved`` names, opened by walking down from its root
        with ``O_NOFOLLOW`` (the caller closes it). ``NotADirectoryError`` when it is not one,
        ``PathEscapeError`` when a component became a symlink since :meth:`resolve`."""
        if not resolved.parts:
            return os.open(resolved.root, _ROOT_FLAGS)
        with self.parent_dir_fd(resolved) as dfd:
            return open_child_dir(resolved.name, dfd, resolved.rel)

    def stat(self, resolved: ResolvedPath, *, follow: bool = True) -> os.stat_result:
        """``stat`` of ``resolved`` through directory descriptors (never by path, so a directory
        swapped for a symlink cannot make it describe a file outside). With ``follow`` (a path
        resolved with ``follow=True``, whose final component is therefore no symlink) a symlink
        found there was swapped in: ``PathEscapeError``."""
        if not resolved.parts:
            return os.stat(resolved.root)
        with self.parent_dir_fd(resolved) as dfd:
            st = os.stat(resolved.name, dir_fd=dfd, follow_symlinks=False)
        if follow and stat.S_ISLNK(st.st_mode):
            raise PathEscapeError(
                resolved.rel, f'Permission denied: "{resolved.rel}" changed to a symlink while in use'
            )
        return st

    # --- helpers ---------------------------------------------------------------------------------

    @staticmethod
    def _absolute(path: str, against: str) -> str:
        joined = path if os.path.isabs(path) else os.path.join(against, path)
        norm = posixpath.normpath(joined)
        if norm.startswith("//"):
            norm = "/" + norm.lstrip("/")
        return norm

    def _real_root_of(self, real: str) -> str | None:
        best: str | None = None
        for root in self.real_roots:
            if is_within(real, root) and (best is None or len(root) > len(best)):
                best = root
        return best

    def _escape_message(self, raw: str, expanded: str) -> str:
        if os.path.isabs(expanded):
            stripped = expanded.lstrip("/")
            first = stripped.split("/", 1)[0]
            if first and os.path.lexists(os.path.join(self.base, first)):
                return (
                    f'Permission denied: "{raw}" is outside the workspace; '
                    f'use a relative path like "{stripped}"'
                )
            return (
                f'Permission denied: "{raw}" is outside the workspace; '
                'use a path relative to the workspace root, without a leading "/"'
            )
        return f'Permission denied: "{raw}" is outside the workspace'
