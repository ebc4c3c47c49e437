"""Copies between the notebook's kernel and a sandbox kernel, through a private directory.

Each copy makes a fresh directory (random name, mode 0700) inside the kernel's own private
directory — the one that holds its connection file and sockets, bound into that kernel's sandbox
only (commands do not see it, nor does the workspace's file tree) — writes or reads exactly one
file there, and removes the directory afterwards. bubblewrap fixes a sandbox's mounts when it
starts, so a directory bound "just for the copy" would mean restarting the kernel: the kernel's
existing private directory is the narrowest place both sides already see.

The sandbox can do anything inside that directory while the copy runs, so the notebook's side
works through directory descriptors: the file is created with ``O_EXCL|O_NOFOLLOW`` and read with
``O_NOFOLLOW|O_NONBLOCK``; it must be a regular file with one link and at most ``max_bytes``
(checked with ``fstat`` before a byte is read — a 10 GB sparse file costs nothing), and it is read
into memory exactly once (no memory map the sandbox could truncate under us). Then
:func:`~.codecs.decode` checks the bytes.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import shutil
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from ..errors import KernelError, UnsafeTransferError, UserDataError
from .codecs import DEFAULT_MAX_BYTES, FORMATS, KINDS, Encoding, decode, plan
from .sandbox_code import MARKER, dump_code, load_code
from .text import format_size, shorten

if TYPE_CHECKING:
    from ..sandbox.kernels.provider import KernelProvider, SandboxKernel
    from ..sandbox.kernels.result import ExecutionResult

__all__ = ["CopyReport", "FetchResult", "TransferDir", "copy_into_kernel", "fetch_from_kernel"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
_FILE = "value"
_OPEN_FLAGS = os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
_STATUS_MAX = 64 * 1024
ORIGIN = "user-data"


def check_name(name: Any, what: str = "name") -> str:
    """``name`` when it is a Python identifier and not a keyword (a copy binds a variable by it);
    else a one-line ``UserDataError`` naming ``what``."""
    import keyword

    if type(name) is not str or not _NAME.match(name) or keyword.iskeyword(name):
        raise UserDataError(
            f"{what} must be a Python identifier, got {shorten(repr(name), 60)}", code="INVALID_ARGUMENT"
        )
    return name


class TransferDir:
    """A fresh private directory inside ``parent`` (a kernel's private directory), used through
    descriptors, removed by ``close()``."""

    def __init__(self, parent: str) -> None:
        self.name = f"transfer-{secrets.token_hex(16)}"
        try:
            self._parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | _OPEN_FLAGS)
        except OSError as exc:
            raise UserDataError(
                f"The sandbox kernel's private folder cannot be opened ({exc.strerror})"
            ) from None
        try:
            os.mkdir(self.name, 0o700, dir_fd=self._parent_fd)
            self._fd = os.open(self.name, os.O_RDONLY | os.O_DIRECTORY | _OPEN_FLAGS, dir_fd=self._parent_fd)
        except OSError as exc:
            os.close(self._parent_fd)
            raise UserDataError(f"Cannot make a transfer folder for the copy ({exc.strerror})") from None
        self.parent = parent
        self.path = os.path.join(parent, self.name)

    def __enter__(self) -> TransferDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def file_path(self, name: str = _FILE) -> str:
        """Where the kernel sees the file ``name``."""
        return os.path.join(self.path, name)

    def create(self, name: str = _FILE) -> BinaryIO:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_FLAGS, 0o600, dir_fd=self._fd)
        return os.fdopen(fd, "wb", buffering=1 << 20)

    def read(self, max_bytes: int, name: str = _FILE) -> bytearray:
        """The file's bytes, refused unless it is a regular file of at most ``max_bytes``."""
        try:
            fd = os.open(
                name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | _OPEN_FLAGS, dir_fd=self._fd
            )
        except FileNotFoundError:
            raise UnsafeTransferError(
                "Refused: the sandbox did not write the value where it was asked to"
            ) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a symbolic link
                raise UnsafeTransferError(
                    "Refused: the sandbox put a symbolic link where the value belongs"
                ) from None
            raise UnsafeTransferError(
                f"Refused: the sandbox's file cannot be opened ({exc.strerror})"
            ) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise UnsafeTransferError("Refused: what the sandbox wrote is not a regular file")
            if st.st_nlink != 1:
                raise UnsafeTransferError(
                    "Refused: the sandbox's file has other links (a hard link to another file)"
                )
            if st.st_size > max_bytes:
                from ..errors import TransferTooLargeError

                raise TransferTooLargeError(
                    f"Refused: the sandbox's value is {format_size(st.st_size)}, over the {format_size(max_bytes)} "
                    "copy limit (nothing was read)"
                )
            buffer = bytearray(st.st_size)
            view = memoryview(buffer)
            done = 0
            while done < st.st_size:
                n = os.readv(fd, [view[done:]])
                if n <= 0:
                    raise UnsafeTransferError("Refused: the sandbox's file changed while it was read")
                done += n
            return buffer
        finally:
            os.close(fd)

    def close(self) -> None:
        """Removes the directory and whatever the sandbox put in it (never following a link)."""
        fd, self._fd = getattr(self, "_fd", -1), -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.unlink(_FILE, dir_fd=fd)
            os.close(fd)
        parent = getattr(self, "_parent_fd", -1)
        if parent < 0:
            return
        self._parent_fd = -1
        try:
            # rmtree never follows a link on platforms with fd-based walking (Linux); elsewhere
            # only the directory itself is removed when it is empty
            if shutil.rmtree.avoids_symlink_attacks:
                shutil.rmtree(self.path, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.rmdir(self.name, dir_fd=parent)
            with contextlib.suppress(OSError):
                os.unlink(self.name, dir_fd=parent)  # a symbolic link put in its place
        finally:
            os.close(parent)


def _kernel_dir(kernels: KernelProvider, kernel_name: str, *, start: bool) -> tuple[SandboxKernel, str]:
    """The kernel object and its private directory (its connection file's folder)."""
    if kernels.remote:
        raise UserDataError(
            "Copies go through the sandbox kernel's private folder; this workspace's kernels run on a "
            "remote gateway, which has none",
            code="KERNELS_UNAVAILABLE",
        )
    if start:
        kernel = kernels.start(kernel_name)
    else:
        found = kernels.get(kernel_name)
        if found is None or found.status not in ("idle", "busy"):
            raise UserDataError(
                f"The sandbox kernel {kernel_name!r} is not running: there is nothing to fetch from it",
                code="KERNEL_NOT_RUNNING",
            )
        kernel = found
    connection = kernel.connection_file
    if not connection:
        raise UserDataError(
            f"The sandbox kernel {kernel_name!r} has no private folder to copy through",
            code="KERNELS_UNAVAILABLE",
        )
    return kernel, os.path.dirname(connection)


def _status(result: ExecutionResult, private: str) -> dict[str, Any]:
    """The report line of a transfer snippet (validated: it comes from the sandbox)."""
    if result.status != "ok":
        detail = result.ename or result.status
        evalue = result.evalue or ""
        raise UserDataError(
            f"The copy failed in the sandbox kernel: {_printable(f'{detail}: {evalue}', 300, private)}"
        )
    stdout = result.stdout or ""
    line = None
    for candidate in stdout.split("\n"):
        if candidate.startswith(MARKER):
            line = candidate[len(MARKER) :]
    if line is None or len(line) > _STATUS_MAX:
        raise UnsafeTransferError("The copy failed in the sandbox kernel: it did not report")
    try:
        status = json.loads(line)
    except ValueError:
        raise UnsafeTransferError("The copy failed in the sandbox kernel: its report is malformed") from None
    if type(status) is not dict:
        raise UnsafeTransferError("The copy failed in the sandbox kernel: its report is malformed")
    return status


def _printable(value: Any, width: int = 200, private: str = "") -> str:
    """Text from the sandbox, shown: printable characters only, cut to ``width``, without the
    (host) path of the kernel's private folder."""
    text = value if type(value) is str else ""
    if private:
        text = text.replace(private, "<transfer folder>")
    return shorten("".join(c for c in text if c.isprintable()), width)


@dataclass(frozen=True)
class CopyReport:
    """A finished copy into a sandbox kernel."""

    name: str
    kernel: str
    format: str
    kind: str
    bytes: int
    sandbox_type: str

    def __str__(self) -> str:
        return (
            f"Copied into the sandbox kernel {self.kernel!r} as {self.name} ({self.sandbox_type}, "
            f"{format_size(self.bytes)} through {self.format})"
        )


def copy_into_kernel(
    value: Any,
    *,
    kernels: KernelProvider,
    as_name: str,
    kernel_name: str = "default",
    max_bytes: int = DEFAULT_MAX_BYTES,
    what: str = "The value",
    encoding: Encoding | None = None,
    timeout: float | None = 600.0,
    abort: Any = None,
) -> CopyReport:
    """Copies ``value`` into the sandbox kernel ``kernel_name`` as the variable ``as_name``.

    The value is checked and sized first (nothing is written when it has no safe format or is
    over ``max_bytes``), then written through a private directory and loaded by the kernel.
    """
    check_name(as_name, "as")
    encoding = encoding or plan(value, max_bytes=max_bytes, what=what)
    _kernel, parent = _kernel_dir(kernels, kernel_name, start=True)
    with TransferDir(parent) as directory:
        with directory.create() as sink:
            written = encoding.write(sink, max_bytes)
        code = load_code(directory.file_path(), encoding.format, encoding.kind, dict(encoding.meta), as_name)
        try:
            result = kernels.execute(code, kernel=kernel_name, timeout=timeout, origin=ORIGIN, abort=abort)
        except KernelError as exc:
            raise UserDataError(f"The copy failed: {exc}") from None
        status = _status(result, parent)
    if status.get("ok") is not True:
        raise UserDataError("The copy failed in the sandbox kernel: it did not confirm")
    return CopyReport(
        as_name, kernel_name, encoding.format, encoding.kind, written, _printable(status.get("type"), 80)
    )


@dataclass(frozen=True)
class FetchResult:
    """A value fetched from a sandbox kernel (checked), with how it came."""

    value: Any
    format: str
    kind: str
    bytes: int


_ERRORS = {
    "missing": "The sandbox kernel {kernel!r} has no variable {name}",
    "unsupported": "The sandbox's variable {name} is a {type}, which has no safe format",
    "too_large": "The sandbox's variable {name} is over the {limit} copy limit (nothing was copied)",
}


def fetch_from_kernel(
    name: str,
    *,
    kernels: KernelProvider,
    kernel_name: str = "default",
    max_bytes: int = DEFAULT_MAX_BYTES,
    timeout: float | None = 600.0,
) -> FetchResult:
    """The sandbox kernel's variable ``name``, copied out in a safe format and checked.

    Raises ``UnsafeTransferError`` for anything the sandbox sends that is not exactly a safe
    encoding (a pickle, an object array, a crafted schema, a link, a special file), and
    ``TransferTooLargeError`` past ``max_bytes``; nothing from the sandbox is run.
    """
    from .codecs import SAFE_FORMATS_TEXT

    check_name(name)
    _kernel, parent = _kernel_dir(kernels, kernel_name, start=False)
    with TransferDir(parent) as directory:
        code = dump_code(name, directory.path, max_bytes)
        try:
            result = kernels.execute(code, kernel=kernel_name, timeout=timeout, origin=ORIGIN)
        except KernelError as exc:
            raise UserDataError(f"The copy failed: {exc}") from None
        status = _status(result, parent)
        error = status.get("error")
        if error is not None:
            template = _ERRORS.get(
                error if type(error) is str else "", "The sandbox could not write {name}: {detail}"
            )
            message = template.format(
                kernel=kernel_name, name=name, type=_printable(status.get("type"), 80),
                limit=format_size(max_bytes), detail=_printable(status.get("detail"), 200, parent),
            )  # fmt: skip
            if error == "unsupported":
                message += f". What can be copied: {SAFE_FORMATS_TEXT}"
            code_ = (
                "TOO_LARGE"
                if error == "too_large"
                else "NOT_SHARED"
                if error == "missing"
                else "UNSUPPORTED_VALUE"
            )
            raise UserDataError(message, code=code_)
        fmt, kind = status.get("format"), status.get("kind")
        if fmt not in FORMATS or type(kind) is not str or kind not in KINDS[fmt]:
            raise UnsafeTransferError("Refused: the sandbox reported an unknown format")
        meta = status.get("meta") if type(status.get("meta")) is dict else {}
        data = directory.read(max_bytes)
    value = decode(data, fmt, kind, meta)
    return FetchResult(value, fmt, kind, len(data))
