"""The filesystem vocabulary: the ``WorkspaceFilesystem`` protocol and the values it returns.

``LocalFilesystem`` is one implementation; any object with these methods (an in-memory store for
tests, a remote store) can back a Workspace, its tools and its search index.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from ..request_context import RequestContext

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def mtime_of(st: os.stat_result) -> float:
    """A stat result's modification time at microsecond resolution — the one float every
    component (FileStat, the walker, the search manifest) uses, so they compare equal."""
    return (st.st_mtime_ns // 1000) / 1_000_000


__all__ = [
    "FileEntry",
    "FileStat",
    "FileType",
    "FilesystemInfo",
    "InstructionsOption",
    "WorkspaceFilesystem",
    "mtime_of",
]

FileType = Literal["file", "directory"]

#: ``instructions=`` option of providers: a replacement string ("" suppresses them), or a function
#: ``fn(default_instructions, request_context) -> str``.
InstructionsOption: TypeAlias = "str | Callable[[str, RequestContext | None], str] | None"


@dataclass(frozen=True)
class FileEntry:
    """One directory entry. For symlinks ``type`` is the target's type (a dangling link is a file)."""

    name: str
    type: FileType
    size: int | None = None
    is_symlink: bool = False
    symlink_target: str | None = None
    #: Modification time and ETag when the listing tells them (object stores do, in the same
    #: request); the walker passes them on so the indexer needs no stat per file. Not compared.
    mtime: float | None = field(default=None, compare=False)
    etag: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class FileStat:
    """Metadata of one path. ``path`` is relative to the base path, without a leading slash."""

    name: str
    path: str
    type: FileType
    size: int
    created_at: datetime
    modified_at: datetime
    mime_type: str | None = None

    @property
    def mtime(self) -> float:
        """Modification time as a POSIX timestamp at microsecond resolution (what
        ``expected_mtime`` compares against, and equal to :func:`mtime_of` for the same file)."""
        return ((self.modified_at - _EPOCH) // _MICROSECOND) / 1_000_000


@dataclass(frozen=True)
class FilesystemInfo:
    id: str
    name: str
    provider: str
    base_path: str | None
    read_only: bool
    status: str
    storage: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    total_files: int | None = None


@runtime_checkable
class WorkspaceFilesystem(Protocol):
    """What a Workspace needs from a filesystem provider.

    Paths are workspace-relative strings. Errors are the ``FilesystemError`` subclasses of
    :mod:`ws_jupyter.errors`. ``init``/``destroy``/``get_instructions`` are optional.
    """

    id: str
    name: str
    provider: str

    @property
    def read_only(self) -> bool: ...

    @property
    def status(self) -> str: ...

    def read_file(self, path: str, encoding: str = "utf-8") -> str | bytes: ...

    def write_file(
        self,
        path: str,
        content: str | bytes,
        recursive: bool = True,
        overwrite: bool = True,
        expected_mtime: float | datetime | None = None,
    ) -> None: ...

    def append_file(self, path: str, content: str | bytes) -> None: ...

    def delete_file(self, path: str, force: bool = False) -> None: ...

    def copy_file(self, src: str, dest: str, overwrite: bool = True, recursive: bool = False) -> None: ...

    def move_file(self, src: str, dest: str, overwrite: bool = True) -> None: ...

    def readdir(
        self, path: str = ".", recursive: bool = False, extension: str | None = None, max_depth: int = 100
    ) -> list[FileEntry]: ...

    def mkdir(self, path: str, recursive: bool = True) -> None: ...

    def rmdir(self, path: str, recursive: bool = False, force: bool = False) -> None: ...

    def exists(self, path: str) -> bool: ...

    def stat(self, path: str) -> FileStat: ...

    def get_info(self) -> FilesystemInfo: ...
