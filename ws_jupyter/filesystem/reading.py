"""Bounded reading: the one way the package reads file contents it did not write itself.

Workspace files are hostile input (an agent may have planted them), so every read of their
contents goes through here and is bounded in time and memory:

* only **regular files** are opened — ``O_NOFOLLOW | O_NONBLOCK``, then an ``fstat`` check — so a
  FIFO cannot hang a read, and a symlink to ``/dev/zero`` cannot feed one forever;
* a **whole-file read** stops with :class:`~ws_jupyter.errors.FileTooLargeError` past its limit
  (:data:`MAX_FILE_BYTES` for files read whole — edits, raw ``base64``/``hex`` reads, previews,
  skill files; :data:`MAX_CONFIG_BYTES` for small control files — ``.gitignore``, ``SKILL.md``);
  the size is checked before anything is read and counted while reading (a file may grow);
* **lines** are split in one linear pass with at most :data:`MAX_LINE_BYTES` kept per line (a
  longer line is cut there; the rest of it is skipped), so a multi-gigabyte file without a newline
  costs one pass and bounded memory, never quadratic re-scanning.

>>> from ws_jupyter.filesystem.reading import iter_lines
>>> list(iter_lines([b"a\\nb", b"c\\n"]))
[b'a', b'bc']
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod
from collections.abc import Generator, Iterable, Iterator
from typing import Any

from ..errors import FileEncodingError, FilesystemError, FileTooLargeError, PathEscapeError, WorkspaceError

__all__ = [
    "CHUNK_BYTES",
    "MAX_CONFIG_BYTES",
    "MAX_FILE_BYTES",
    "MAX_LINE_BYTES",
    "decode_text",
    "file_chunks",
    "iter_fd",
    "iter_lines",
    "line_blocks",
    "not_regular",
    "open_regular",
    "read_config",
    "read_fd",
    "read_head",
    "read_host_file",
    "read_limited",
    "sized_line_blocks",
]

#: Largest file read whole into memory (edit_file, raw read_file, previews, skill files).
MAX_FILE_BYTES = 32 << 20
#: Largest control file read (``.gitignore``, ``.git/info/exclude``, ``SKILL.md``, skill manifests).
MAX_CONFIG_BYTES = 1 << 20
#: Longest line kept when a file is read line by line; the rest of a longer line is skipped.
MAX_LINE_BYTES = 4 << 20
#: Size of one read.
CHUNK_BYTES = 1 << 20

_READ_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


def not_regular(rel: str) -> FilesystemError:
    """The error for a FIFO, socket or device where a file's contents were asked for."""
    return FilesystemError(
        f"Not a regular file: {rel} (FIFOs, sockets and devices are never read)", code="EINVAL", path=rel
    )


def open_regular(
    name: str, *, dir_fd: int | None = None, rel: str | None = None, follow_symlinks: bool = False
) -> tuple[int, os.stat_result]:
    """Open a regular file for reading; ``(fd, fstat)``. A final symlink is not followed unless
    ``follow_symlinks`` (for host paths the user chose, never for an agent's paths).

    ``O_NONBLOCK`` makes opening a FIFO return at once (instead of waiting for a writer); the
    ``fstat`` check then refuses it, and devices and sockets too. A refused symlink raises
    ``PathEscapeError``.
    """
    shown = rel if rel is not None else name
    flags = _READ_FLAGS & ~getattr(os, "O_NOFOLLOW", 0) if follow_symlinks else _READ_FLAGS
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathEscapeError(shown, f'Permission denied: "{shown}" is a symlink') from None
        raise
    try:
        st = os.fstat(fd)
        if stat_mod.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", shown)
        if not stat_mod.S_ISREG(st.st_mode):
            raise not_regular(shown)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def iter_fd(
    fd: int, *, max_bytes: int | None = None, rel: str = "", size: int | None = None
) -> Iterator[bytes]:
    """The bytes of an open file in chunks; ``FileTooLargeError`` once more than ``max_bytes``."""
    if max_bytes is not None and size is not None and size > max_bytes:
        raise FileTooLargeError(rel, size, max_bytes)
    total = 0
    while True:
        try:
            chunk = os.read(fd, CHUNK_BYTES)
        except BlockingIOError:  # pragma: no cover - regular files never block
            continue
        if not chunk:
            return
        total += len(chunk)
        if max_bytes is not None and total > max_bytes:
            raise FileTooLargeError(rel, max(total, size or 0), max_bytes)
        yield chunk


def read_fd(fd: int, *, max_bytes: int, rel: str = "", size: int | None = None) -> bytes:
    """A whole open file, at most ``max_bytes`` (else ``FileTooLargeError``)."""
    return b"".join(iter_fd(fd, max_bytes=max_bytes, rel=rel, size=size))


def file_chunks(fs: Any, path: str) -> Generator[bytes, None, None]:
    """A workspace file's bytes in chunks: streamed when the provider can (``open_read``), else
    the provider's whole-file read (which then holds the file in memory once)."""
    opener = getattr(fs, "open_read", None)
    if callable(opener):
        yield from opener(path)
    else:
        data = fs.read_file(path, encoding="binary")
        yield data.encode("utf-8") if isinstance(data, str) else bytes(data)


def read_limited(fs: Any, path: str, max_bytes: int = MAX_FILE_BYTES, *, size: int | None = None) -> bytes:
    """A whole workspace file, refused with ``FileTooLargeError`` past ``max_bytes``.

    ``size`` is the file's size when the caller already knows it (from a ``stat``): an oversized
    file is then refused before anything is read. The limit is also enforced while reading.
    """
    if size is None:
        try:
            size = int(fs.stat(path).size)
        except (AttributeError, TypeError, ValueError):  # pragma: no cover - odd providers
            size = None
    # (the path as the error shows it is resolved only for the error: most reads never raise)
    if size is not None and size > max_bytes:
        raise FileTooLargeError(_shown(fs, path), size, max_bytes)
    chunks = file_chunks(fs, path)
    parts: list[bytes] = []
    total = 0
    try:
        for chunk in chunks:
            total += len(chunk)
            if total > max_bytes:
                raise FileTooLargeError(_shown(fs, path), total, max_bytes)
            parts.append(chunk)
    finally:
        chunks.close()
    return b"".join(parts)


def read_host_file(
    path: str | os.PathLike[str], max_bytes: int = MAX_FILE_BYTES, *, follow_symlinks: bool = True
) -> bytes:
    """A whole regular file on the host (skill sources, the skill store), bounded like the rest."""
    shown = os.fspath(path)
    fd, st = open_regular(shown, follow_symlinks=follow_symlinks)
    try:
        return read_fd(fd, max_bytes=max_bytes, rel=shown, size=st.st_size)
    finally:
        os.close(fd)


def read_head(fs: Any, path: str, max_bytes: int) -> bytes:
    """The first ``max_bytes`` bytes of a workspace file (the rest is never read)."""
    chunks = file_chunks(fs, path)
    parts: list[bytes] = []
    total = 0
    try:
        for chunk in chunks:
            parts.append(chunk[: max_bytes - total])
            total += len(parts[-1])
            if total >= max_bytes:
                break
    finally:
        chunks.close()
    return b"".join(parts)


def read_config(fs: Any, rel: str, max_bytes: int = MAX_CONFIG_BYTES) -> bytes | None:
    """A small control file of the workspace (``.gitignore``...), or None when it cannot be used.

    None for a missing file, a symlink (never followed, as git does not follow a symlinked
    ``.gitignore``), a FIFO/device, a file over ``max_bytes``, or any read error: such a file
    is treated as absent, never waited on.
    """
    containment = getattr(fs, "containment", None)
    try:
        if containment is not None and hasattr(fs, "host_path"):
            resolved = containment.resolve(rel, follow=False)
            with containment.parent_dir_fd(resolved) as dfd:
                fd, st = open_regular(resolved.name, dir_fd=dfd, rel=rel)
            try:
                return read_fd(fd, max_bytes=max_bytes, rel=rel, size=st.st_size)
            finally:
                os.close(fd)
        return read_limited(fs, rel, max_bytes)
    except (WorkspaceError, OSError, ValueError):
        return None


def decode_text(data: bytes, rel: str, encoding: str = "utf-8") -> str:
    """``data`` as text; ``FileEncodingError`` naming the first bad byte when it is not valid."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise FileEncodingError(
            rel, encoding, f"invalid byte 0x{data[exc.start]:02x} at offset {exc.start}"
        ) from None


def line_blocks(chunks: Iterable[bytes], max_line: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """Whole lines, several at a time: each block is ``line\\nline...\\nline`` (no final newline).

    One linear pass: each chunk is scanned once for its last newline and the bytes are copied
    once into their block. A line that spans chunks is kept up to ``max_line`` bytes and the rest
    of it is skipped (memory stays at one chunk plus ``max_line``). A final newline does not start
    another line, so a file has ``sum(block.count(b"\\n") + 1)`` lines.
    """
    for block, _consumed, _ended in sized_line_blocks(chunks, max_line):
        yield block


def sized_line_blocks(
    chunks: Iterable[bytes], max_line: int = MAX_LINE_BYTES
) -> Iterator[tuple[bytes, int, bool]]:
    """:func:`line_blocks` with, for each block, how many bytes of the file it stands for (a cut
    line stands for more than it keeps) and whether a newline ended it."""
    carry: list[bytes] = []  # pieces of the current, unfinished line
    carry_len = 0  # bytes kept of it
    carry_raw = 0  # bytes of the file it stands for
    for chunk in _bounded_pieces(chunks):
        last = chunk.rfind(b"\n")
        if last < 0:
            if carry_len < max_line:
                piece = chunk[: max_line - carry_len]
                carry.append(piece)
                carry_len += len(piece)
            carry_raw += len(chunk)
            continue
        first = chunk.find(b"\n")
        if carry:
            head = chunk[: min(first, max(0, max_line - carry_len))]
            block = b"".join([*carry, head, chunk[first:last]])
        else:
            block = chunk[:last]
        yield block, carry_raw + last + 1, True
        rest = chunk[last + 1 :]
        carry = [rest[:max_line]] if rest else []
        carry_len = min(len(rest), max_line)
        carry_raw = len(rest)
    if carry_raw:
        yield b"".join(carry), carry_raw, False


def _bounded_pieces(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Chunks of at most ``CHUNK_BYTES`` (a provider's whole-file read is split up)."""
    for chunk in chunks:
        if not chunk:
            continue
        if len(chunk) <= CHUNK_BYTES:
            yield chunk
            continue
        view = memoryview(chunk)
        for start in range(0, len(chunk), CHUNK_BYTES):
            yield bytes(view[start : start + CHUNK_BYTES])


def iter_lines(chunks: Iterable[bytes], max_line: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """Raw lines without their ``\\n`` (see :func:`line_blocks` for the bounds)."""
    for block in line_blocks(chunks, max_line):
        yield from block.split(b"\n")


def _shown(fs: Any, path: str) -> str:
    containment = getattr(fs, "containment", None)
    if containment is not None:
        try:
            return str(containment.resolve(path, follow=False).rel)
        except Exception:
            pass
    return str(path)
