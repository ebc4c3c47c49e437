"""The Python engine's file search: one file read in blocks of whole lines through the filesystem,
matched by RE2 (:mod:`.regex`), with ripgrep's binary rule (a NUL byte met while searching skips
the file) and context lines; and the files a walk of the workspace yields for it."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING

from ...filesystem.mime import SNIFF_BYTES, looks_like_text
from ...filesystem.reading import file_chunks, sized_line_blocks
from ...filesystem.walk import walk
from .regex import GrepPattern
from .result import FileMatches

if TYPE_CHECKING:
    from ...filesystem.types import WorkspaceFilesystem

__all__ = ["NUL_WINDOW", "BinaryFile", "count_file", "is_text", "per_file_limit", "python_candidates", "search_file"]

#: A NUL byte within this many leading bytes makes a file binary (ripgrep's first buffer).
NUL_WINDOW = 64 * 1024

_ALL = 1 << 62

class BinaryFile(Exception):
    pass


def _through_first_nul(chunks: Generator[bytes, None, None]) -> Generator[bytes, None, None]:
    """The bytes of a file up to and including its first NUL byte. ripgrep stops reading a file at
    its first NUL (the file is binary); so does grep, at once: a multi-gigabyte file with a hole
    (zeros) after a text header is decided in the time of reading the header, not of reading it
    all (as a whole-line reader would: the hole is one endless line)."""
    try:
        for chunk in chunks:
            nul = chunk.find(b"\0")
            if nul >= 0:
                yield chunk[: nul + 1]
                return
            yield chunk
    finally:
        chunks.close()


def _blocks(fs: WorkspaceFilesystem, path: str) -> Iterator[tuple[bytes, int, int]]:
    """``(block, offset, first line number)`` over a text file: blocks of whole lines
    (``line_blocks``), with the file offset of their first byte. Raises ``BinaryFile`` when the first
    8 KiB do not look like text or a NUL byte is met within the first 64 KiB (ripgrep's first
    buffer). Reading ends just after the first NUL byte, wherever it is: the callers then decide
    (binary, unless ripgrep would have stopped reading before it)."""
    chunks = _through_first_nul(file_chunks(fs, path))
    head: list[bytes] = []
    size = 0
    for chunk in chunks:
        head.append(chunk)
        size += len(chunk)
        if size >= NUL_WINDOW:
            break
    data = b"".join(head)
    if b"\0" in data[:NUL_WINDOW] or not looks_like_text(data[:SNIFF_BYTES]):
        chunks.close()
        raise BinaryFile()

    def rest() -> Iterator[bytes]:
        yield data
        yield from chunks

    offset, line = 0, 1
    for block, consumed, _ended in sized_line_blocks(rest()):
        yield block, offset, line
        offset += consumed
        line += block.count(b"\n") + 1


def _normalized(block: bytes) -> bytes:
    """The block as lines are matched and shown: without the ``\r`` of CRLF line ends (the last
    line's newline is not in the block, so its ``\r`` is removed on its own)."""
    if b"\r" not in block:
        return block
    norm = block.replace(b"\r\n", b"\n")
    return norm[:-1] if norm.endswith(b"\r") else norm


def _line_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _drain(raw: bytes, rel_stop: int) -> tuple[bytes, bool]:
    """What ripgrep still reads of a block after its last wanted match: the bytes before
    ``rel_stop`` (block-relative end of the 64 KiB buffer holding that match) and the rest of
    the line that crosses it. Second value: the reading stops within this block."""
    if rel_stop >= len(raw):
        return raw, False
    end = raw.find(b"\n", max(rel_stop, 0))
    return (raw if end < 0 else raw[:end]), True


def search_file(
    fs: WorkspaceFilesystem,
    path: str,
    shown: str,
    rx: GrepPattern,
    context: int,
    limit: int | None,
    deadline: float,
    max_count: int | None = None,
) -> FileMatches:
    """Matching lines of one file; raises ``BinaryFile`` for a binary file, ``TimeoutError`` past
    ``deadline``.

    Keeps ``limit`` matches and their context. To decide "binary" as ripgrep does, reading goes on
    (without matching) until ripgrep would stop: the end of the file, or — with ``max_count`` —
    the end of the 64 KiB buffer holding the ``max_count``-th match. A block of lines without a
    match costs one RE2 search; only the lines around matches are decoded.
    """
    result = FileMatches(shown)
    before: deque[tuple[int, str]] = deque(maxlen=max(context, 1))
    after_left = 0
    seen = 0
    stop_at: int | None = None  # file offset where reading ends once max_count is reached
    for raw, offset, first_no in _blocks(fs, path):
        if time.monotonic() > deadline:
            raise TimeoutError()
        if stop_at is not None:
            part, done = _drain(raw, stop_at - offset)
            if b"\0" in part:
                raise BinaryFile()
            if after_left:
                for k, piece in enumerate(_normalized(part).split(b"\n")[:after_left]):
                    result.lines[first_no + k] = _line_text(piece)
                after_left = max(0, after_left - (part.count(b"\n") + 1))
            if done:
                break
            continue
        collecting = limit is None or len(result.matches) < limit
        if max_count is None and not collecting and after_left == 0:
            if b"\0" in raw:
                raise BinaryFile()
            continue  # only looking for binary data until the end of the file
        norm = _normalized(raw)
        if max_count is not None:
            wanted = max_count - seen
        else:
            wanted = _ALL if limit is None else limit - len(result.matches)
        hits = rx.find_lines(norm, wanted, deadline)
        if not hits and not after_left:
            if b"\0" in raw:
                raise BinaryFile()
            if context and collecting:
                count = norm.count(b"\n") + 1
                tail = norm.rsplit(b"\n", context)[-context:]
                for k, piece in enumerate(tail):
                    before.append((first_no + count - len(tail) + k, _line_text(piece)))
            continue
        lines = norm.split(b"\n")
        cols = dict(hits)
        stop_line: int | None = None
        if max_count is not None and seen + len(hits) >= max_count:
            stop_line = hits[max_count - seen - 1][0]
            stop_at = -(-(offset + _raw_line_end(raw, stop_line)) // NUL_WINDOW) * NUL_WINDOW
            part, _ = _drain(raw, stop_at - offset)
        else:
            part = raw
        if b"\0" in part:
            raise BinaryFile()
        lo = 0 if after_left else max(0, hits[0][0] - context)
        hi = len(lines) - 1
        if not hits:
            hi = min(hi, after_left - 1)
        elif stop_line is None:
            hi = min(hi, hits[-1][0] + context)
        else:
            hi = min(hi, stop_line + context, part.count(b"\n"))
        if context:
            for k in range(max(0, lo - context), lo):
                before.append((first_no + k, _line_text(lines[k])))
        for idx in range(lo, hi + 1):
            n = first_no + idx
            line = _line_text(lines[idx])
            collecting = limit is None or len(result.matches) < limit
            if max_count is not None and seen >= max_count:
                if after_left > 0:
                    result.lines[n] = line
                    after_left -= 1
                continue
            col = cols.get(idx)
            if col is not None:
                seen += 1
                if collecting:
                    for bn, bt in before:
                        result.lines.setdefault(bn, bt)
                    before.clear()
                    result.matches.append((n, col, line))
                    result.lines[n] = line
                    after_left = context
                    continue
            if after_left > 0:
                result.lines[n] = line
                after_left -= 1
            elif context and collecting:
                before.append((n, line))
        if context and hi < len(lines) - 1 and stop_line is None:
            for k in range(max(hi + 1, len(lines) - context), len(lines)):
                before.append((first_no + k, _line_text(lines[k])))
        if stop_line is not None and part is not raw:
            break
    return result


def count_file(fs: WorkspaceFilesystem, path: str, rx: GrepPattern, deadline: float, max_count: int | None = None) -> int:
    """Number of matching lines of one file (at most ``max_count``), without keeping any; raises
    ``BinaryFile`` and ``TimeoutError`` as :func:`search_file` does."""
    seen = 0
    for raw, _offset, _first in _blocks(fs, path):
        if time.monotonic() > deadline:
            raise TimeoutError()
        if b"\0" in raw:
            raise BinaryFile()
        wanted = _ALL if max_count is None else max_count - seen
        seen += len(rx.find_lines(_normalized(raw), wanted, deadline))
        if max_count is not None and seen >= max_count:
            break
    return seen


def _raw_line_end(raw: bytes, index: int) -> int:
    """Block-relative offset just past line ``index`` of ``raw`` (after its newline)."""
    pieces = raw.split(b"\n", index + 1)
    return sum(len(p) for p in pieces[: index + 1]) + index + 1


def python_candidates(
    fs: WorkspaceFilesystem,
    base: str,
    include_hidden: bool,
    on_error: Callable[[str, Exception], None],
    respect_gitignore: bool = True,
) -> Iterator[str]:
    for entry in walk(
        fs,
        base,
        include_hidden=include_hidden,
        respect_gitignore=respect_gitignore,
        on_error=on_error,
        stat=False,
    ):
        if not entry.is_dir and not entry.is_symlink:
            yield entry.path

def is_text(head: bytes) -> bool:
    return b"\0" not in head and looks_like_text(head)


def per_file_limit(max_count: int | None, remaining: int) -> int:
    return remaining if max_count is None else min(max_count, remaining)
