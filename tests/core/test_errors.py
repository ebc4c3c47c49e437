"""The error hierarchy: stable codes, builtin bases, context, pickling."""

from __future__ import annotations

import errno
import pickle

import pytest

import ws_jupyter.errors as errors_mod
from ws_jupyter import errors as E

# (class, constructor args, code, builtin base)
CASES = [
    (E.FileNotFound, ("a.txt",), "ENOENT", FileNotFoundError),
    (E.DirectoryNotFound, ("d",), "ENOENT", FileNotFoundError),
    (E.FileExists, ("a.txt",), "EEXIST", FileExistsError),
    (E.IsADirectory, ("d",), "EISDIR", IsADirectoryError),
    (E.NotADirectory, ("f",), "ENOTDIR", NotADirectoryError),
    (E.DirectoryNotEmpty, ("d",), "ENOTEMPTY", OSError),
    (E.PathEscapeError, ("../x",), "EACCES", PermissionError),
    (E.ReadOnlyError, ("write_file", "a.txt"), "EROFS", PermissionError),
    (E.StaleFileError, ("a.txt", 1.0, 2.0), "ESTALE", OSError),
    (E.FileReadRequiredError, ("a.txt",), "EREAD_REQUIRED", OSError),
    (E.InvalidPathError, ("a\0b", "contains a NUL byte"), "EINVAL", ValueError),
    (E.WorkspaceNotReadyError, ("destroyed",), "NOT_READY", RuntimeError),
    (E.IsolationUnavailableError, ("bwrap", "not installed"), "ISOLATION_UNAVAILABLE", RuntimeError),
    (E.ProcessNotFoundError, (42,), "PROCESS_NOT_FOUND", LookupError),
    (E.WriteLockTimeoutError, ("a.txt", 0.05), "WRITE_LOCK_TIMEOUT", TimeoutError),
    (E.OperationTimeoutError, ("starting the sandbox", 1.5), "OPERATION_TIMEOUT", TimeoutError),
    (E.ToolApprovalDeniedError, ("workspace_write_file",), "TOOL_REFUSED", PermissionError),
    (E.NotebookError, ("nb.ipynb is not valid JSON",), "INVALID_NOTEBOOK", ValueError),
    (E.CellNotFoundError, ("no cell with id 'x'",), "CELL_NOT_FOUND", LookupError),
    (E.CheckpointError, ("the store stayed busy",), "CHECKPOINT_ERROR", RuntimeError),
    (E.CheckpointNotFoundError, ("No checkpoint 'x'",), "CHECKPOINT_NOT_FOUND", LookupError),
    (E.CheckpointDamagedError, ("a copy is damaged",), "CHECKPOINT_DAMAGED", ValueError),
]


@pytest.mark.parametrize(("cls", "args", "code", "builtin"), CASES)
def test_codes_and_builtin_bases(cls, args, code, builtin):
    err = cls(*args)
    assert err.code == code
    assert isinstance(err, E.WorkspaceError) and isinstance(err, builtin)
    assert str(err) == err.message and err.message
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is cls and clone.code == code and str(clone) == str(err)
    assert clone.__dict__ == err.__dict__


def test_filesystem_errors_carry_errno_and_path():
    err = E.FileNotFound("data/x.csv")
    assert err.errno == errno.ENOENT and err.path == "data/x.csv" and err.filename == "data/x.csv"
    assert repr(err) == "FileNotFound('File not found: data/x.csv', code='ENOENT', path='data/x.csv')"
    assert E.FilesystemError("boom", code="EIO").errno is None


def test_messages():
    assert str(E.WorkspaceNotReadyError("destroyed")) == "Workspace is not ready (status: destroyed)"
    assert str(E.WriteLockTimeoutError("a.txt", 0.05)) == 'write-lock timeout on "a.txt" after 0.05s'
    assert str(E.ToolApprovalDeniedError("x")) == "Tool call refused by user."
    assert str(E.FileReadRequiredError("a.txt")) == (
        'File "a.txt" has not been read. You must read a file before writing to it.'
    )
    assert "expected mtime 1970-01-01T00:00:01+00:00" in str(E.StaleFileError("a", 1.0, 2.0))
    assert (
        str(E.IsolationUnavailableError("bwrap", "no userns"))
        == "Isolation backend 'bwrap' is not available: no userns"
    )


def test_workspace_id_and_details():
    err = E.WorkspaceError("x", code="CUSTOM", workspace_id="ws-1", hint="do y")
    assert (err.code, err.workspace_id, err.details) == ("CUSTOM", "ws-1", {"hint": "do y"})
    assert E.WorkspaceConfigError("bad").code == "INVALID_CONFIG"


def test_every_public_error_derives_from_workspace_error():
    for name in errors_mod.__all__:
        cls = getattr(errors_mod, name)
        assert issubclass(cls, E.WorkspaceError), name
        assert cls.default_code, name


def test_tree_in_docstring_names_every_error():
    doc = errors_mod.__doc__ or ""
    missing = [name for name in errors_mod.__all__ if name not in doc]
    assert missing == []
