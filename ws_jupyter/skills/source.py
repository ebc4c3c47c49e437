"""Where skill files come from: the ``SkillSource`` protocol and its two plain implementations.

Skills are read through a source rather than ``open()`` so that they can live anywhere: on the
host (``LocalSkillSource``), inside a workspace filesystem and thus behind its containment
(``FilesystemSkillSource``), or in a versioned blob store (``VersionedSkillSource``).

A source answers four questions about slash-separated paths — ``exists``, ``stat``,
``read_file`` (bytes), ``readdir`` — and may add two optional ones that skills use when present:
``realpath(path)`` (canonical identity, so a symlinked skill folder is found once) and
``fingerprint(path)`` (a cheap change token for refresh; default: mtime + size from ``stat``).
Missing paths raise ``FileNotFoundError`` (``ws_jupyter.errors.FileNotFound`` does).
"""

from __future__ import annotations

import os
import posixpath
import stat as stat_module
from collections.abc import Hashable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..errors import DirectoryNotFound, FileNotFound, IsADirectory, NotADirectory
from ..filesystem.reading import MAX_FILE_BYTES, read_host_file, read_limited
from ..filesystem.types import FileEntry, FileStat, WorkspaceFilesystem

__all__ = [
    "FilesystemSkillSource",
    "LocalSkillSource",
    "SkillSource",
    "normalize_source_path",
    "source_fingerprint",
    "source_realpath",
]


@runtime_checkable
class SkillSource(Protocol):
    """Read-only access to skill files. Paths are ``/``-separated strings."""

    def exists(self, path: str) -> bool: ...

    def stat(self, path: str) -> FileStat: ...

    def read_file(self, path: str) -> bytes | str: ...

    def readdir(self, path: str) -> list[FileEntry]: ...


def normalize_source_path(path: str) -> str:
    """Canonical spelling of a configured path: no trailing slash, no ``./`` segments, ``.`` for root.

    >>> normalize_source_path("./skills//pdf/")
    'skills/pdf'
    """
    if not path:
        return "."
    norm = posixpath.normpath(path)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    return norm


def source_realpath(source: Any, path: str) -> str:
    """``source.realpath(path)`` when the source has it, else the normalised path."""
    realpath = getattr(source, "realpath", None)
    if realpath is not None:
        try:
            return str(realpath(path))
        except OSError:
            pass
    return normalize_source_path(path)


def source_fingerprint(source: Any, path: str) -> Hashable | None:
    """A change token for ``path`` (None when it does not exist), as cheap as one ``stat``."""
    fingerprint = getattr(source, "fingerprint", None)
    if fingerprint is not None:
        result: Hashable | None = fingerprint(path)
        return result
    try:
        st = source.stat(path)
    except (OSError, ValueError):
        return None
    return (st.modified_at.timestamp(), st.size, st.type)


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=timezone.utc)


class LocalSkillSource:
    """Skills on the host disk.

    Relative paths resolve against ``base_path`` (the current directory when the source is made;
    fixed then, so a later ``os.chdir`` in a notebook does not move skills); absolute paths and
    ``~`` are used as they are. There is deliberately no containment here: skill paths are chosen
    by whoever configures the workspace (skills may live in ``site-packages``). Paths an *agent*
    passes (``get_reference`` etc.) are confined to the skill's folder by ``WorkspaceSkills``.
    """

    def __init__(self, base_path: str | os.PathLike[str] | None = None) -> None:
        base = Path(base_path).expanduser() if base_path is not None else Path.cwd()
        self.base_path = base.absolute()

    def __repr__(self) -> str:
        return f"LocalSkillSource(base_path={str(self.base_path)!r})"

    def _host(self, path: str) -> Path:
        if "\x00" in path:
            raise FileNotFound(path, f"Invalid path (NUL byte): {path!r}")
        p = Path(path).expanduser()
        return p if p.is_absolute() else self.base_path / p

    def exists(self, path: str) -> bool:
        try:
            return self._host(path).exists()
        except (OSError, ValueError):
            return False

    def stat(self, path: str) -> FileStat:
        host = self._host(path)
        try:
            st = host.stat()
        except FileNotFoundError:
            raise FileNotFound(path)
        return FileStat(
            name=host.name,
            path=normalize_source_path(path),
            type="directory" if stat_module.S_ISDIR(st.st_mode) else "file",
            size=st.st_size,
            created_at=_dt(getattr(st, "st_birthtime", st.st_ctime)),
            modified_at=_dt(st.st_mtime),
        )

    def fingerprint(self, path: str) -> Hashable | None:
        """``(mtime_ns, ctime_ns, size, inode)``: an atomic replace changes the inode even when
        the new file has the same size and lands in the same clock tick."""
        try:
            st = self._host(path).stat()
        except (OSError, ValueError):
            return None
        return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)

    def read_file(self, path: str) -> bytes:
        host = self._host(path)
        try:
            return read_host_file(host, MAX_FILE_BYTES)
        except FileNotFoundError:
            raise FileNotFound(path) from None
        except IsADirectoryError:
            raise IsADirectory(path) from None

    def readdir(self, path: str) -> list[FileEntry]:
        host = self._host(path)
        entries: list[FileEntry] = []
        try:
            scan = os.scandir(host)
        except FileNotFoundError:
            raise DirectoryNotFound(path)
        except NotADirectoryError:
            raise NotADirectory(path)
        with scan:
            for entry in scan:
                is_link = entry.is_symlink()
                try:
                    is_dir = entry.is_dir(follow_symlinks=True)
                    size = None if is_dir else entry.stat(follow_symlinks=True).st_size
                except OSError:  # dangling link
                    is_dir, size = False, None
                entries.append(
                    FileEntry(
                        name=entry.name,
                        type="directory" if is_dir else "file",
                        size=size,
                        is_symlink=is_link,
                        symlink_target=os.readlink(entry.path) if is_link else None,
                    )
                )
        entries.sort(key=lambda e: e.name)
        return entries

    def realpath(self, path: str) -> str:
        return os.path.realpath(self._host(path))


class FilesystemSkillSource:
    """Skills read through a workspace filesystem, so its containment and read-only rules apply.

    ``realpath`` uses the filesystem's own ``realpath``/``resolve_path`` when it has one, so
    symlinked skill folders inside the workspace are recognised as one skill.
    """

    def __init__(self, filesystem: WorkspaceFilesystem) -> None:
        self.filesystem = filesystem

    def __repr__(self) -> str:
        return f"FilesystemSkillSource({self.filesystem!r})"

    def exists(self, path: str) -> bool:
        return self.filesystem.exists(path)

    def stat(self, path: str) -> FileStat:
        return self.filesystem.stat(path)

    def read_file(self, path: str) -> bytes:
        return read_limited(self.filesystem, path, MAX_FILE_BYTES)

    def readdir(self, path: str) -> list[FileEntry]:
        return self.filesystem.readdir(path)

    def realpath(self, path: str) -> str:
        """The filesystem's canonical path (``realpath``, ``resolve_path`` or ``host_path``). A path
        the filesystem refuses (a symlink out of the workspace) gets an identity that lies inside
        no skill folder, so skills never list or serve it."""
        for attr in ("realpath", "resolve_path", "host_path"):
            fn = getattr(self.filesystem, attr, None)
            if fn is not None:
                try:
                    return str(fn(path))
                except PermissionError:
                    return f"//outside-workspace/{normalize_source_path(path)}"
        return normalize_source_path(path)
