"""``workspace_read_file``: a file as numbered lines, a window of it, or a media part.

Text is streamed: a window (``offset``/``limit``) of a multi-gigabyte log costs one pass over the
bytes up to the window and decodes only the lines shown. Lines are counted in the first
:data:`COUNT_LINES_BYTES` (64 MiB) only: past them, reading stops once the lines to show are read,
and the header says ``of about N`` (from the density of the part read) or ``of an unknown number``
(when that part held a line too long to keep, such as a hole of zeros), so ``limit: 1`` on a 4 GiB file
takes the time of reading 64 MiB. Output beyond the token budget ends with a marker that gives the
``offset`` to continue from. Images and PDFs come back as media parts a multimodal model
can look at; other binary files as one line of metadata.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...errors import FileNotFound, FileTooLargeError, IsADirectory, ToolArgumentError
from ...filesystem.mime import SNIFF_BYTES, guess_mime_type, looks_like_text
from ...filesystem.reading import MAX_FILE_BYTES, file_chunks, read_head, read_limited, sized_line_blocks
from ...notebooks.document import is_notebook_path
from ...text.shaping import cut_line, number_line, truncate_head
from ...text.tokens import count_tokens
from ..base import ToolCall, ToolSpec
from ..facts import DEFAULT_MAX_MEDIA_BYTES, DEFAULT_MEDIA_TYPES, LOOKS, WORKSPACE_TOOLS
from ..schema import Param
from ..types import MediaPart, ToolResult

if TYPE_CHECKING:
    from ...filesystem.types import FileStat

__all__ = ["SPEC", "read_file"]

_RAW_ENCODINGS = ("base64", "hex")
_TEXT_ENCODINGS = ("utf-8", "latin-1")
# Window lines are decoded and kept until they clearly exceed any budget; past that, only counted.
_KEEP_CHARS_PER_TOKEN = 24
#: Lines are counted (for "lines 1-40 of N") in this many leading bytes of a file; past them,
#: reading stops as soon as everything to show is read, and N is estimated ("about N").
COUNT_LINES_BYTES = 64 << 20

DESCRIPTION = (
    "Read a file from the workspace. Text comes back as numbered lines ('     1→first line'); use "
    "offset and limit to read a window of a long file (the output says which offset to continue "
    "from when it is cut). Images (png, jpeg, webp) and PDFs come back as media you can look at; "
    "other binary files give their size and type only, unless you pass encoding='base64' or 'hex'. "
    "Notebooks (.ipynb) come back as cells: a header '[index] type id In[n]' per cell (index from "
    "0), its source lines numbered from 1 within the cell, and its outputs summarised after '»' "
    "(images as media) — only these start a line with '[' or '»': cell text that would is quoted "
    "with '│ '; for a notebook offset is the first cell index and limit a number of "
    "cells (cell=N reads cell N's lines, offset/limit counting them), and raw=true gives the JSON instead. "
    "Paths are relative to the workspace root. Reading a file first is what allows it to be edited "
    "safely: a later write is refused if the file changed in between."
)

PARAMS = (
    Param(
        "path",
        "string",
        "File path relative to the workspace root, e.g. 'src/app.py'.",
        required=True,
        allow_empty=False,
    ),
    Param(
        "offset",
        "integer",
        "First line to show (1-based); for a notebook, the first cell to show (cell index, 0-based). "
        "Default: the start.",
        minimum=0,
    ),
    Param(
        "limit",
        "integer",
        "Maximum number of lines (notebooks: cells) to show. Default: all (within the output budget).",
        minimum=1,
    ),
    Param("show_line_numbers", "boolean", "Prefix each line with its number.", default=True),
    Param(
        "encoding",
        "string",
        "Read with an explicit encoding: 'utf-8' or 'latin-1' (text, even for files detected as binary), "
        "'base64' or 'hex' (the raw bytes). Default: automatic.",
        enum=(*_TEXT_ENCODINGS, *_RAW_ENCODINGS),
    ),
    Param(
        "cell",
        "integer",
        "Notebooks (.ipynb) only: read this cell's lines (index from 0); offset and limit then count its "
        "lines from 1. For a cell too long for one read.",
        minimum=0,
    ),
    Param(
        "raw",
        "boolean",
        "Notebooks (.ipynb) only: return the notebook's JSON text as numbered lines instead of its cells.",
        default=False,
    ),
)


def read_file(call: ToolCall) -> str | ToolResult:
    args = call.args
    fs = call.filesystem()
    path = args["path"]
    if args["offset"] == 0 and (not is_notebook_path(path) or args["cell"] is not None):
        raise ToolArgumentError('Invalid arguments: "offset" must be an integer >= 1 (got 0)')  # lines count from 1
    if args["cell"] is not None and (not is_notebook_path(path) or args["raw"]):
        raise ToolArgumentError('Invalid arguments: "cell" is for reading a notebook\'s cells (not with raw=true)')
    try:
        st = fs.stat(path)
    except FileNotFound:
        call.tracker.clear(call.key(path))
        raise
    rel = st.path
    if st.type == "directory":
        raise IsADirectory(
            rel,
            f"Path is a directory: {rel} (use {call.exposed(WORKSPACE_TOOLS.FILESYSTEM.LIST_FILES)} to see what it contains)",
        )
    key = call.key(path)
    encoding = args["encoding"]
    mime = st.mime_type or guess_mime_type(rel)

    if encoding in _RAW_ENCODINGS:
        # Only what the output budget can show is read (a few KB by default), and never more
        # than MAX_FILE_BYTES: an 8 GB file cannot fill the memory.
        budget = call.max_tokens
        cap = MAX_FILE_BYTES if not budget else min(MAX_FILE_BYTES, budget * 8)
        if st.size > cap and not budget:
            raise FileTooLargeError(rel, st.size, MAX_FILE_BYTES)
        raw = read_head(fs, path, cap)
        data = base64.b64encode(raw).decode("ascii") if encoding == "base64" else raw.hex()
        whole_digest = hashlib.sha256(raw).hexdigest() if len(raw) == st.size else None
        call.tracker.record(key, st.mtime, st.size, whole=True, digest=whole_digest)
        return truncate_head(f"{rel} ({st.size} bytes, {encoding})\n{data}", call.max_tokens)

    media_types = tuple(call.option("media_types", DEFAULT_MEDIA_TYPES))
    if encoding is None and mime in media_types:
        limit = call.option("max_media_bytes", DEFAULT_MAX_MEDIA_BYTES)
        call.tracker.record(key, st.mtime, st.size, whole=True)
        if st.size > limit:
            return (
                f"{rel} ({st.size} bytes, {mime}) — exceeds max_media_bytes ({limit}). Returning metadata only; "
                "raise max_media_bytes in the read_file tool config to receive it."
            )
        raw = read_limited(fs, path, limit, size=st.size)
        call.tracker.record(key, st.mtime, st.size, whole=True, digest=hashlib.sha256(raw).hexdigest())
        return ToolResult(text=f"{rel} ({len(raw)} bytes, {mime})", media=(MediaPart.from_bytes(mime, raw),))

    note = ""
    if encoding is None and is_notebook_path(rel) and not args["raw"]:
        from .notebook_files import read_notebook

        rendered, note = read_notebook(call, key, st, rel)
        if rendered is not None:
            return rendered
    if args["offset"] == 0:  # a notebook shown as its text
        raise ToolArgumentError('Invalid arguments: "offset" must be an integer >= 1 (got 0)')

    chunks = file_chunks(fs, path)
    first = next(chunks, b"")
    if encoding is None and not looks_like_text(first[:SNIFF_BYTES]):
        chunks.close()
        call.tracker.record(key, st.mtime, st.size, whole=True)
        return (
            f"{rel} ({st.size} bytes, {mime}) — binary file not readable as text. Pass an explicit encoding "
            "(e.g. 'base64') to read the raw bytes, or add its type to media_types in the read_file tool "
            "config to receive it as a media part." + (f"\n{note}" if note else "")
        )

    digest = hashlib.sha256()

    def all_chunks() -> Iterator[bytes]:
        if first:
            digest.update(first)
            yield first
        for chunk in chunks:
            digest.update(chunk)
            yield chunk

    out = _render_text(
        call, key, st, rel, all_chunks(), encoding or "utf-8", digest, record_lines=not is_notebook_path(rel)
    )
    if note:
        header, _, body = out.partition("\n")
        out = f"{header}\n{note}" + (f"\n{body}" if body else "")
    return out


def _render_text(
    call: ToolCall,
    key: str,
    st: FileStat,
    rel: str,
    chunks: Iterator[bytes],
    encoding: str,
    digest: hashlib._Hash,
    *,
    record_lines: bool = True,
) -> str:
    args = call.args
    offset = args["offset"] or 1
    limit = args["limit"]
    numbered = args["show_line_numbers"]
    budget = call.max_tokens
    last_wanted = offset + limit - 1 if limit else None
    keep_chars = budget * _KEEP_CHARS_PER_TOKEN if budget else None

    kept: list[str] = []
    kept_chars = 0
    total = 0
    cut = False  # a line longer than the line limit was met (it counts as one line)
    reading = _Reading()
    # Blocks of lines outside the window (or past what the budget can show) are only counted, in
    # the first COUNT_LINES_BYTES; past them, reading stops once nothing more can be shown.
    for block, consumed, _ended in sized_line_blocks(reading.chunks(chunks)):
        first = total + 1
        total += block.count(b"\n") + 1
        cut = cut or consumed > len(block) + 1
        full = keep_chars is not None and kept_chars > keep_chars
        if not (full or total < offset or (last_wanted is not None and first > last_wanted)):
            for n, raw in enumerate(block.split(b"\n"), start=first):
                if n < offset or (last_wanted is not None and n > last_wanted):
                    continue
                if keep_chars is not None and kept_chars > keep_chars:
                    break
                text = raw.decode(encoding, "replace")
                if text.endswith("\r"):
                    text = text[:-1]
                kept.append(text)
                kept_chars += len(text) + 8
        window_done = last_wanted is not None and total >= last_wanted
        reading.shown_all = total >= offset and (
            window_done or (keep_chars is not None and kept_chars > keep_chars)
        )
    counted = not reading.stopped
    read = reading.read

    windowed = args["offset"] is not None or limit is not None
    if counted and total == 0:
        call.tracker.record(key, st.mtime, st.size, total_lines=0, whole=True, digest=digest.hexdigest())
        return f"{rel} (0 lines, {st.size} bytes)" if windowed else f"{rel} ({st.size} bytes)"
    if counted and offset > total:
        call.tracker.record(key, st.mtime, st.size, total_lines=total, digest=digest.hexdigest())
        return (
            f"{rel} ({total} lines, {st.size} bytes)\n"
            f"[offset {offset} is past the end of the file: it has {total} lines; the file has been fully read]"
        )
    of_total = str(total) if counted else _estimate(total, read, st.size, cut)
    wanted_end = min(total, last_wanted) if last_wanted is not None else total
    rendered = [number_line(n, t) if numbered else t for n, t in zip(range(offset, offset + len(kept)), kept)]
    shown, cut_note = _fit(rendered, budget, numbered, offset)
    end = offset + shown - 1
    truncated = end < wanted_end or cut_note or not counted
    header = (
        f"{rel} (lines {offset}-{end if truncated else wanted_end} of {of_total}, {st.size} bytes)"
        if windowed
        else f"{rel} ({st.size} bytes)"
    )
    body = rendered[:shown]
    if cut_note:
        body = [*body[:-1], cut_note]
    out = header + ("\n" + "\n".join(body) if body else "")
    if end < wanted_end or (not counted and not windowed):
        out += f"\n[output truncated: showing lines {offset}-{end} of {of_total}; continue with offset={end + 1}]"
    elif cut_note and end < total:
        out += f"\n[line {end} was cut to fit the output budget; continue with offset={end + 1}]"
    whole = not windowed and not truncated
    # a read that stopped early saw part of the file: no line total, no digest of the whole
    seen = digest.hexdigest() if counted else None
    if record_lines:
        call.tracker.record(
            key, st.mtime, st.size, lines=(offset, end), total_lines=total if counted else None, whole=whole,
            digest=seen,
        )  # fmt: skip
    else:  # a notebook's JSON: its line numbers are not cell positions
        call.tracker.record(key, st.mtime, st.size, whole=whole, digest=seen)
    return out


class _Reading:
    """The chunks of a file as the line counter reads them: it stops past
    :data:`COUNT_LINES_BYTES` once ``shown_all`` (everything to show was read), also inside an
    endless line (a hole of zeros has no newline to stop at)."""

    def __init__(self) -> None:
        self.read = 0
        self.shown_all = False
        self.stopped = False

    def chunks(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            if self.shown_all and self.read > COUNT_LINES_BYTES:
                self.stopped = True
                return
            self.read += len(chunk)
            yield chunk


def _estimate(lines: int, read: int, size: int, cut: bool) -> str:
    """The line total of a file read in part: about ``lines * size / read`` (the density of the
    part read), or "unknown" when that part held a line too long to keep (a hole, a minified
    blob), which makes the density say nothing."""
    first = f"the first {COUNT_LINES_BYTES >> 20} MiB"
    if cut or read <= 0:
        return f"an unknown number (not counted past {first})"
    return f"about {round(lines * size / read)} (estimated from {first})"


def _fit(rendered: list[str], budget: int | None, numbered: bool, offset: int) -> tuple[int, str]:
    """How many rendered lines fit the budget; a cut version of the first line if even it does not."""
    if not budget or not rendered:
        return len(rendered), ""
    room = max(1, budget - 40)  # header and marker
    used = 0
    for i, line in enumerate(rendered):
        n = count_tokens(line)
        if used + n + 1 > room:
            if i == 0:
                piece = cut_line(line, room - 20)
                note = f" … [line {offset} has {len(line) - (7 if numbered else 0):,} characters; the rest is not shown]"
                return 1, piece + note
            return i, ""
        used += n + 1
    return len(rendered), ""


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.FILESYSTEM.READ_FILE,
    description=DESCRIPTION,
    params=PARAMS,
    run=read_file,
    title="Read file",
    hints=LOOKS,
    needs={"filesystem"},
    writes=False,
    options=("media_types", "max_media_bytes"),
)
