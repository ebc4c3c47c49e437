"""Host ``OSError``s as workspace errors that name the workspace path, never a host path.

An ``OSError`` carries the host path it failed on (``exc.filename``). Printed as it is, it shows
the host's directory layout to a model or a sandbox — ``[Errno 22] Invalid argument:
'/home/u/ws/d'`` is what ``os.path.realpath`` raises when a directory is swapped for a symlink
while it resolves a path. Every place that turns an ``OSError`` into a message goes through here:
with a workspace path (:func:`os_error`, :func:`translating`) or, where none is known, with no
path at all (:func:`describe_os_error`).

>>> import errno
>>> str(os_error(OSError(errno.EINVAL, "Invalid argument", "/home/u/ws/d"), "d"))
'Invalid argument: d'
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Callable, Iterator

from ..errors import (
    DirectoryNotEmpty,
    FileExists,
    FileNotFound,
    FilesystemError,
    IsADirectory,
    NotADirectory,
    ReadOnlyError,
    WorkspaceError,
)

__all__ = ["describe_os_error", "os_error", "translating"]

_ERRNO_CLASSES: dict[int, Callable[[str], FilesystemError]] = {
    errno.ENOENT: FileNotFound,
    errno.EEXIST: FileExists,
    errno.EISDIR: IsADirectory,
    errno.ENOTDIR: NotADirectory,
    errno.ENOTEMPTY: DirectoryNotEmpty,
    errno.EROFS: lambda p: ReadOnlyError("write", p),
}


def os_error(
    exc: OSError, rel: str, missing: Callable[[str], FilesystemError] | None = None
) -> FilesystemError:
    """The workspace error for ``exc`` met while working on the workspace path ``rel`` (``missing``
    overrides the class used for ENOENT, e.g. ``DirectoryNotFound``)."""
    if isinstance(exc, WorkspaceError):
        return exc  # type: ignore[return-value]  # already names a workspace path
    factory = (
        missing if missing is not None and exc.errno == errno.ENOENT else _ERRNO_CLASSES.get(exc.errno or -1)
    )
    if factory is not None:
        return factory(rel)
    code = errno.errorcode.get(exc.errno or -1, "EIO")
    return FilesystemError(f"{exc.strerror or code}: {rel}", code=code, path=rel)


@contextlib.contextmanager
def translating(rel: str, missing: Callable[[str], FilesystemError] | None = None) -> Iterator[None]:
    """Raise :func:`os_error` for any host ``OSError`` of the block (and a typed error for a tree
    too deep to recurse into)."""
    try:
        yield
    except WorkspaceError:
        raise
    except RecursionError:
        raise FilesystemError(
            f"Directory tree too deep to process: {rel}", code="ETOODEEP", path=rel
        ) from None
    except OSError as exc:
        raise os_error(exc, rel, missing) from None


def describe_os_error(exc: OSError) -> str:
    """``OSError: Invalid argument (EINVAL)``: the error without the paths it carries, for places
    that do not know which workspace path it concerns."""
    code = errno.errorcode.get(exc.errno or -1)
    reason = exc.strerror or (exc.args[0] if exc.args and isinstance(exc.args[0], str) else "")
    text = reason if exc.filename is not None or exc.filename2 is not None else (str(exc) or reason)
    suffix = f" ({code})" if code and code not in text else ""
    return f"{type(exc).__name__}: {text}{suffix}" if text else type(exc).__name__ + suffix
