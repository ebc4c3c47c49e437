"""One error hierarchy for the whole package.

Every error carries a stable ``.code`` (what programs and agent tools switch on), the
workspace-relative ``.path`` when a path is involved, and ``.workspace_id`` when known.
Each also derives from the builtin a Python user would naturally catch, so
``except FileNotFoundError`` works on a missing workspace file just as on a missing host file.

    WorkspaceError                                   Exception
    ├── WorkspaceConfigError                         ValueError      NO_PROVIDERS, INVALID_CONFIG, INVALID_SEARCH_CONFIG
    ├── InvalidArgumentError                         ValueError      INVALID_ARGUMENT
    ├── WorkspaceNotReadyError                       RuntimeError    NOT_READY
    ├── OperationTimeoutError                        TimeoutError    OPERATION_TIMEOUT
    ├── FilesystemNotAvailableError                  RuntimeError    NO_FILESYSTEM
    ├── SandboxNotAvailableError                     RuntimeError    NO_SANDBOX
    ├── SearchNotAvailableError                      RuntimeError    NO_SEARCH
    ├── FilesystemError                              OSError
    │   ├── FileNotFound                             FileNotFoundError   ENOENT
    │   ├── DirectoryNotFound                        FileNotFoundError   ENOENT
    │   ├── FileExists                               FileExistsError     EEXIST
    │   ├── IsADirectory                             IsADirectoryError   EISDIR
    │   ├── NotADirectory                            NotADirectoryError  ENOTDIR
    │   ├── DirectoryNotEmpty                        OSError             ENOTEMPTY
    │   ├── PathEscapeError                          PermissionError     EACCES
    │   ├── ReadOnlyError                            PermissionError     EROFS
    │   ├── StaleFileError                           OSError             ESTALE
    │   ├── FileReadRequiredError                    OSError             EREAD_REQUIRED
    │   ├── InvalidPathError                         ValueError          EINVAL
    │   ├── FileEncodingError                        ValueError          EENCODING
    │   ├── FileTooLargeError                        OSError             EFBIG
    │   └── FilesystemNotReadyError                  OSError             ENOTREADY
    ├── SandboxError                                 RuntimeError    SANDBOX_ERROR, NETWORK_UNAVAILABLE
    │   ├── SandboxStateError                        RuntimeError    SANDBOX_STATE
    │   ├── IsolationUnavailableError                RuntimeError    ISOLATION_UNAVAILABLE
    │   ├── ProcessNotFoundError                     LookupError     PROCESS_NOT_FOUND
    │   ├── ProcessWaitTimeoutError                  TimeoutError    WAIT_TIMEOUT
    │   ├── StdinClosedError                         BrokenPipeError STDIN_CLOSED
    │   └── KernelError                              RuntimeError    KERNEL_ERROR, KERNEL_START_FAILED, KERNEL_SPEC_NOT_FOUND,
    │       │                                                        KERNELS_UNAVAILABLE, TOO_MANY_KERNELS, EXECUTION_FAILED
    │       └── KernelNotFoundError                  LookupError     KERNEL_NOT_FOUND
    ├── SearchError                                  RuntimeError    SEARCH_ERROR, VECTORS_UNAVAILABLE
    │   ├── SearchModeError                          ValueError      SEARCH_MODE_UNAVAILABLE
    │   ├── EmbedderError                            RuntimeError    EMBEDDER_ERROR
    │   └── IndexCorruptedError                      RuntimeError    INDEX_CORRUPTED
    ├── NotebookError                                ValueError      INVALID_NOTEBOOK
    │   └── CellNotFoundError                        LookupError     CELL_NOT_FOUND
    ├── LiveNotebookError                            RuntimeError    LIVE_NOT_CONNECTED, LIVE_KERNEL_BUSY, LIVE_TIMEOUT,
    │                                                                LIVE_PROTOCOL, LIVE_REFUSED
    ├── SkillError                                   RuntimeError    SKILL_ERROR, PROMPT_TOO_LARGE
    │   ├── SkillValidationError                     ValueError      INVALID_SKILL
    │   ├── SkillNotFoundError                       LookupError     SKILL_NOT_FOUND
    │   ├── DuplicateSkillError                      ValueError      DUPLICATE_SKILL
    │   └── SkillPathError                           PermissionError INVALID_SKILL_PATH
    ├── UserDataError                                RuntimeError    USER_DATA_ERROR, DATA_EXTRA_MISSING, KERNEL_NOT_RUNNING
    │   ├── VariableNotSharedError                   LookupError     NOT_SHARED
    │   ├── UnsupportedValueError                    TypeError       UNSUPPORTED_VALUE, LOOKS_SECRET
    │   ├── TransferTooLargeError                    ValueError      TOO_LARGE
    │   └── UnsafeTransferError                      ValueError      UNSAFE_TRANSFER
    ├── CheckpointError                              RuntimeError    CHECKPOINT_ERROR
    │   ├── CheckpointNotFoundError                  LookupError     CHECKPOINT_NOT_FOUND
    │   └── CheckpointDamagedError                   ValueError      CHECKPOINT_DAMAGED
    └── ToolError                                    RuntimeError    TOOL_ERROR
        ├── ToolConfigError                          ValueError      INVALID_TOOL_CONFIG
        ├── ToolArgumentError                        ValueError      INVALID_TOOL_ARGUMENT
        ├── ToolNotFoundError                        LookupError     TOOL_NOT_FOUND
        ├── ToolApprovalDeniedError                  PermissionError TOOL_REFUSED
        └── WriteLockTimeoutError                    TimeoutError    WRITE_LOCK_TIMEOUT

Messages name paths in workspace-relative form, never as host paths, so they can be shown to a
model or a notebook user as they are.
"""

from __future__ import annotations

import errno as _errno
from collections.abc import Iterable
from typing import Any, ClassVar

__all__ = [
    "CellNotFoundError",
    "CheckpointDamagedError",
    "CheckpointError",
    "CheckpointNotFoundError",
    "DirectoryNotEmpty",
    "DirectoryNotFound",
    "DuplicateSkillError",
    "EmbedderError",
    "FileEncodingError",
    "FileExists",
    "FileNotFound",
    "FileReadRequiredError",
    "FileTooLargeError",
    "FilesystemError",
    "FilesystemNotAvailableError",
    "FilesystemNotReadyError",
    "IndexCorruptedError",
    "InvalidArgumentError",
    "InvalidPathError",
    "IsADirectory",
    "IsolationUnavailableError",
    "KernelError",
    "KernelNotFoundError",
    "LiveNotebookError",
    "NotADirectory",
    "NotebookError",
    "OperationTimeoutError",
    "PathEscapeError",
    "ProcessNotFoundError",
    "ProcessWaitTimeoutError",
    "ReadOnlyError",
    "SandboxError",
    "SandboxNotAvailableError",
    "SandboxStateError",
    "SearchError",
    "SearchModeError",
    "SearchNotAvailableError",
    "SkillError",
    "SkillNotFoundError",
    "SkillPathError",
    "SkillValidationError",
    "StaleFileError",
    "StdinClosedError",
    "ToolApprovalDeniedError",
    "ToolArgumentError",
    "ToolConfigError",
    "ToolError",
    "ToolNotFoundError",
    "TransferTooLargeError",
    "UnsafeTransferError",
    "UnsupportedValueError",
    "UserDataError",
    "VariableNotSharedError",
    "WorkspaceConfigError",
    "WorkspaceError",
    "WorkspaceNotReadyError",
    "WriteLockTimeoutError",
]


class WorkspaceError(Exception):
    """Base of every error raised by ws-jupyter.

    ``code`` is stable across releases; ``path`` is workspace-relative (or None);
    ``workspace_id`` names the workspace when the error was raised on its behalf.
    """

    default_code: ClassVar[str] = "WORKSPACE_ERROR"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        path: str | None = None,
        workspace_id: str | None = None,
        **details: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.path = path
        self.workspace_id = workspace_id
        self.details = details

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        extra = f", path={self.path!r}" if self.path is not None else ""
        return f"{type(self).__name__}({self.message!r}, code={self.code!r}{extra})"

    def __reduce__(self) -> Any:
        # Keyword-only constructor arguments: rebuild through a helper so errors survive pickling
        # (multiprocessing, ipyparallel) with their code and path intact.
        return (_rebuild, (type(self), self.message, dict(self.__dict__)))


def _rebuild(cls: type[WorkspaceError], message: str, state: dict[str, Any]) -> WorkspaceError:
    # Errors that are also OSErrors need OSError's allocator (its instance layout differs).
    new = OSError.__new__ if issubclass(cls, OSError) else BaseException.__new__
    err = new(cls, message)
    Exception.__init__(err, message)
    err.__dict__.update(state)
    return err


class WorkspaceConfigError(WorkspaceError, ValueError):
    """The Workspace (or a provider) was configured inconsistently."""

    default_code = "INVALID_CONFIG"

    @classmethod
    def check_option_names(cls, what: str, given: Iterable[object], known: Iterable[str]) -> None:
        """Refuses option names outside ``known`` in one message that lists them all and the known
        ones (``what``: the option group, e.g. ``"kernels"``), so a typo is found in one try."""
        names = set(known)
        unknown = sorted(set(map(str, given)) - names)
        if unknown:
            raise cls(f"Unknown {what} option(s): {', '.join(unknown)} (known: {', '.join(sorted(names))})")


class InvalidArgumentError(WorkspaceError, ValueError):
    """An argument has the wrong type or value (negative timeout, unknown encoding...)."""

    default_code = "INVALID_ARGUMENT"


class WorkspaceNotReadyError(WorkspaceError, RuntimeError):
    default_code = "NOT_READY"

    def __init__(self, status: str, *, workspace_id: str | None = None) -> None:
        super().__init__(f"Workspace is not ready (status: {status})", workspace_id=workspace_id)
        self.status = status


class OperationTimeoutError(WorkspaceError, TimeoutError):
    """A provider operation took longer than the workspace's ``operation_timeout``."""

    default_code = "OPERATION_TIMEOUT"

    def __init__(self, operation: str, timeout: float, **kw: Any) -> None:
        super().__init__(f"Timed out after {timeout:g}s while {operation}", **kw)
        self.operation = operation
        self.timeout = timeout


class FilesystemNotAvailableError(WorkspaceError, RuntimeError):
    default_code = "NO_FILESYSTEM"

    def __init__(self, message: str = "Workspace does not have a filesystem configured", **kw: Any) -> None:
        super().__init__(message, **kw)


class SandboxNotAvailableError(WorkspaceError, RuntimeError):
    default_code = "NO_SANDBOX"

    def __init__(self, message: str = "Workspace does not have a sandbox configured", **kw: Any) -> None:
        super().__init__(message, **kw)


class SearchNotAvailableError(WorkspaceError, RuntimeError):
    default_code = "NO_SEARCH"

    def __init__(
        self,
        message: str = "Workspace does not have search configured (enable bm25, or give an embedder for vector search)",
        **kw: Any,
    ) -> None:
        super().__init__(message, **kw)


# --- filesystem ---------------------------------------------------------------------------------


class FilesystemError(WorkspaceError, OSError):
    """A filesystem operation failed. ``errno`` is set where a POSIX errno exists."""

    default_code = "EIO"
    errno_value: ClassVar[int | None] = None

    def __init__(self, message: str, *, path: str | None = None, **kw: Any) -> None:
        super().__init__(message, path=path, **kw)
        if self.errno_value is not None:
            self.errno = self.errno_value
            self.strerror = message
        self.filename = path


class FileNotFound(FilesystemError, FileNotFoundError):
    default_code = "ENOENT"
    errno_value = _errno.ENOENT

    def __init__(self, path: str, message: str | None = None, **kw: Any) -> None:
        super().__init__(message or f"File not found: {path}", path=path, **kw)


class DirectoryNotFound(FilesystemError, FileNotFoundError):
    default_code = "ENOENT"
    errno_value = _errno.ENOENT

    def __init__(self, path: str, message: str | None = None, **kw: Any) -> None:
        super().__init__(message or f"Directory not found: {path}", path=path, **kw)


class FileExists(FilesystemError, FileExistsError):
    default_code = "EEXIST"
    errno_value = _errno.EEXIST

    def __init__(self, path: str, message: str | None = None, **kw: Any) -> None:
        super().__init__(message or f"File already exists: {path}", path=path, **kw)


class IsADirectory(FilesystemError, IsADirectoryError):
    default_code = "EISDIR"
    errno_value = _errno.EISDIR

    def __init__(self, path: str, message: str | None = None, **kw: Any) -> None:
        super().__init__(message or f"Path is a directory: {path}", path=path, **kw)


class NotADirectory(FilesystemError, NotADirectoryError):
    default_code = "ENOTDIR"
    errno_value = _errno.ENOTDIR

    def __init__(self, path: str, message: str | None = None, **kw: Any) -> None:
        super().__init__(message or f"Not a directory: {path}", path=path, **kw)


class DirectoryNotEmpty(FilesystemError):
    default_code = "ENOTEMPTY"
    errno_value = _errno.ENOTEMPTY

    def __init__(self, path: str, message: str | None = None, **kw: Any) -> None:
        super().__init__(message or f"Directory not empty: {path}", path=path, **kw)


class PathEscapeError(FilesystemError, PermissionError):
    """A path would leave the workspace (``..``, an outside absolute path, or a symlink)."""

    default_code = "EACCES"
    errno_value = _errno.EACCES

    def __init__(self, path: str, message: str | None = None, **kw: Any) -> None:
        super().__init__(message or f"Permission denied: {path} is outside the workspace", path=path, **kw)


class ReadOnlyError(FilesystemError, PermissionError):
    default_code = "EROFS"
    errno_value = _errno.EROFS

    def __init__(self, operation: str, path: str | None = None, **kw: Any) -> None:
        where = f" on {path}" if path else ""
        super().__init__(f"Filesystem is read-only. Cannot perform: {operation}{where}", path=path, **kw)
        self.operation = operation


class StaleFileError(FilesystemError):
    """The file changed since the caller last saw it; the write was refused and nothing changed."""

    default_code = "ESTALE"
    errno_value = _errno.ESTALE

    def __init__(
        self,
        path: str,
        expected: float | None = None,
        actual: float | None = None,
        message: str | None = None,
        **kw: Any,
    ) -> None:
        if message is None:
            message = f"File was modified externally: {path}"
            if expected is not None and actual is not None:
                message += f" (expected mtime {_iso(expected)}, actual {_iso(actual)})"
        super().__init__(message, path=path, **kw)
        self.expected_mtime = expected
        self.actual_mtime = actual


class FileReadRequiredError(FilesystemError):
    default_code = "EREAD_REQUIRED"

    def __init__(self, path: str, message: str | None = None, **kw: Any) -> None:
        super().__init__(
            message or f'File "{path}" has not been read. You must read a file before writing to it.',
            path=path,
            **kw,
        )


class InvalidPathError(FilesystemError, ValueError):
    """The path itself is malformed (NUL byte, unencodable characters, wrong type)."""

    default_code = "EINVAL"
    errno_value = _errno.EINVAL

    def __init__(self, path: str, reason: str, **kw: Any) -> None:
        super().__init__(f"Invalid path {path!r}: {reason}", path=path, **kw)
        self.reason = reason


class FileEncodingError(FilesystemError, ValueError):
    """A file asked for as text is not valid in that encoding; nothing was changed."""

    default_code = "EENCODING"

    def __init__(self, path: str, encoding: str, detail: str, **kw: Any) -> None:
        super().__init__(
            f"File is not valid {encoding} text: {path} ({detail}). "
            "Read it with encoding='binary' to get the raw bytes.",
            path=path,
            **kw,
        )
        self.encoding = encoding


class FileTooLargeError(FilesystemError):
    """A file is larger than what this operation reads whole; nothing was read into memory."""

    default_code = "EFBIG"
    errno_value = _errno.EFBIG

    def __init__(self, path: str, size: int, limit: int, message: str | None = None, **kw: Any) -> None:
        super().__init__(
            message
            or f"File too large: {path} is {size:,} bytes, over the {limit:,}-byte limit for reading it whole",
            path=path,
            **kw,
        )
        self.size = size
        self.limit = limit


class FilesystemNotReadyError(FilesystemError):
    default_code = "ENOTREADY"


# --- sandbox ------------------------------------------------------------------------------------


class SandboxError(WorkspaceError, RuntimeError):
    default_code = "SANDBOX_ERROR"


class SandboxStateError(SandboxError):
    """An operation is impossible in the sandbox's current state (e.g. start after destroy)."""

    default_code = "SANDBOX_STATE"


class IsolationUnavailableError(SandboxError):
    default_code = "ISOLATION_UNAVAILABLE"

    def __init__(self, backend: str, reason: str, **kw: Any) -> None:
        super().__init__(f"Isolation backend '{backend}' is not available: {reason}", **kw)
        self.backend = backend
        self.reason = reason


class ProcessNotFoundError(SandboxError, LookupError):
    default_code = "PROCESS_NOT_FOUND"

    def __init__(self, pid: int | str, **kw: Any) -> None:
        super().__init__(f"No process with PID {pid}", **kw)
        self.pid = pid


class ProcessWaitTimeoutError(SandboxError, TimeoutError):
    """``wait(timeout=...)`` gave up; the process keeps running (kill it if that is wanted)."""

    default_code = "WAIT_TIMEOUT"

    def __init__(self, pid: int, timeout: float, **kw: Any) -> None:
        super().__init__(f"Process {pid} still running after waiting {timeout:g}s", **kw)
        self.pid = pid
        self.timeout = timeout


class StdinClosedError(SandboxError, BrokenPipeError):
    default_code = "STDIN_CLOSED"


class KernelError(SandboxError):
    """A sandbox kernel could not be started, reached or used (``.kernel`` names it when known)."""

    default_code = "KERNEL_ERROR"

    def __init__(self, message: str, *, kernel: str | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.kernel = kernel


class KernelNotFoundError(KernelError, LookupError):
    default_code = "KERNEL_NOT_FOUND"


# --- search -------------------------------------------------------------------------------------


class SearchError(WorkspaceError, RuntimeError):
    default_code = "SEARCH_ERROR"


class SearchModeError(SearchError, ValueError):
    """A search mode was asked for explicitly but what it needs is not configured."""

    default_code = "SEARCH_MODE_UNAVAILABLE"


class EmbedderError(SearchError):
    default_code = "EMBEDDER_ERROR"


class IndexCorruptedError(SearchError):
    default_code = "INDEX_CORRUPTED"


# --- notebooks ----------------------------------------------------------------------------------


class NotebookError(WorkspaceError, ValueError):
    """A ``.ipynb`` file is not a notebook nbformat can read, or a change would make it invalid
    (nothing was written)."""

    default_code = "INVALID_NOTEBOOK"


class CellNotFoundError(NotebookError, LookupError):
    """No cell with the given id or index in a notebook."""

    default_code = "CELL_NOT_FOUND"


# --- the open notebook (live link) -----------------------------------------------------------


class LiveNotebookError(WorkspaceError, RuntimeError):
    """The notebook open in the user's front end cannot be reached or refused a request:
    ``LIVE_NOT_CONNECTED`` (no front end with the ws-jupyter extension answers), ``LIVE_KERNEL_BUSY``
    (its kernel cannot take front-end messages while a cell runs), ``LIVE_TIMEOUT``,
    ``LIVE_PROTOCOL`` (a malformed message), ``LIVE_REFUSED`` (the front end said no, and why)."""

    default_code = "LIVE_NOT_CONNECTED"


# --- skills -------------------------------------------------------------------------------------


class SkillError(WorkspaceError, RuntimeError):
    default_code = "SKILL_ERROR"


class SkillValidationError(SkillError, ValueError):
    default_code = "INVALID_SKILL"


class SkillNotFoundError(SkillError, LookupError):
    default_code = "SKILL_NOT_FOUND"


class DuplicateSkillError(SkillError, ValueError):
    default_code = "DUPLICATE_SKILL"


class SkillPathError(SkillError, PermissionError):
    default_code = "INVALID_SKILL_PATH"


# --- the user's data (shared variables, copies to and from the sandbox) ----------------------------


class UserDataError(WorkspaceError, RuntimeError):
    """Sharing or copying the notebook user's variables failed: ``DATA_EXTRA_MISSING`` (a
    DataFrame copy needs pyarrow), ``KERNEL_NOT_RUNNING`` (nothing to fetch from)."""

    default_code = "USER_DATA_ERROR"


class VariableNotSharedError(UserDataError, LookupError):
    """No shared variable by that name (unshared, never shared, hidden, or gone)."""

    default_code = "NOT_SHARED"


class UnsupportedValueError(UserDataError, TypeError):
    """A value without a safe transfer format (or one that looks like a secret: ``LOOKS_SECRET``)."""

    default_code = "UNSUPPORTED_VALUE"


class TransferTooLargeError(UserDataError, ValueError):
    """A copy over the size limit, refused before any byte was written or read."""

    default_code = "TOO_LARGE"


class UnsafeTransferError(UserDataError, ValueError):
    """What the sandbox sent back was refused: not a regular file, a symbolic link, a pickle, an
    object array, a schema or metadata that would run code... Nothing of it was used."""

    default_code = "UNSAFE_TRANSFER"


# --- checkpoints --------------------------------------------------------------------------------


class CheckpointError(WorkspaceError, RuntimeError):
    """A checkpoint could not be taken, compared or restored (the message says what and why)."""

    default_code = "CHECKPOINT_ERROR"


class CheckpointNotFoundError(CheckpointError, LookupError):
    """No checkpoint with that id or label (or none at all yet)."""

    default_code = "CHECKPOINT_NOT_FOUND"


class CheckpointDamagedError(CheckpointError, ValueError):
    """A stored manifest or file copy failed its integrity check (a signature or a SHA-256 that
    does not match): it is never used, so nothing forged or damaged is restored."""

    default_code = "CHECKPOINT_DAMAGED"


# --- tools --------------------------------------------------------------------------------------


class ToolError(WorkspaceError, RuntimeError):
    default_code = "TOOL_ERROR"


class ToolConfigError(ToolError, ValueError):
    default_code = "INVALID_TOOL_CONFIG"


class ToolArgumentError(ToolError, ValueError):
    default_code = "INVALID_TOOL_ARGUMENT"


class ToolNotFoundError(ToolError, LookupError):
    default_code = "TOOL_NOT_FOUND"


class ToolApprovalDeniedError(ToolError, PermissionError):
    default_code = "TOOL_REFUSED"

    def __init__(self, tool_name: str, **kw: Any) -> None:
        super().__init__("Tool call refused by user.", **kw)
        self.tool_name = tool_name


class WriteLockTimeoutError(ToolError, TimeoutError):
    default_code = "WRITE_LOCK_TIMEOUT"

    def __init__(self, path: str, timeout: float, **kw: Any) -> None:
        super().__init__(f'write-lock timeout on "{path}" after {timeout:g}s', path=path, **kw)
        self.timeout = timeout


def _iso(ts: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat()
