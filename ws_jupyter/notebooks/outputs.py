"""Cell outputs, summarised: what an agent, a search index or a preview needs of them, bounded.

A notebook's outputs are mostly bulk — base64 images, HTML tables, widget state — around a little
text. :func:`summarize_output` turns one output into an :class:`OutputSummary`: stream text and
``text/plain`` results shortened to their first and last lines, errors as ``ename: evalue`` plus
the last traceback lines with terminal colours removed, images decoded (so a tool can hand them to
a model as images), and every other MIME type named with its size. :func:`output_text` is the
whole text of an output (streams, ``text/plain``, errors) for search and grep, never HTML.

>>> s = summarize_output({"output_type": "error", "ename": "ZeroDivisionError",
...                       "evalue": "division by zero", "traceback": ["----> 1 1/0", "ZeroDivisionError: division by zero"]})
>>> s.headline
'ZeroDivisionError: division by zero'
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..text.ansi import strip_ansi

__all__ = [
    "IMAGE_MIME_TYPES",
    "ImageOutput",
    "OutputSummary",
    "cell_outputs",
    "data_uri_images",
    "display_text",
    "format_size",
    "merged_streams",
    "output_text",
    "outputs_text",
    "shorten",
    "summarize_output",
]

#: Output images decoded from base64 (SVG is text: it is named with its size, not decoded).
IMAGE_MIME_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
#: A ``text/plain`` that only names the object (``<IPython.core.display.Markdown object>``): the
#: content is in its other MIME types.
_BARE_REPR = re.compile(r"^\s*<[\w.]+ (?:object|instance)(?: at 0x[0-9a-fA-F]+)?>\s*$")
DEFAULT_MAX_LINES = 12
DEFAULT_MAX_LINE_CHARS = 300
DEFAULT_TRACEBACK_LINES = 4
# IPython's banner lines: a rule of dashes, and "NameError     Traceback (most recent call last)"
_TRACEBACK_NOISE = re.compile(r"^\s*(?:-{10,}|\S+\s+Traceback \(most recent call last\)|Traceback \(most recent call last\):?)\s*$")


@dataclass(frozen=True)
class ImageOutput:
    """A decoded output image; ``width``/``height`` when the header says (PNG, GIF)."""

    mime_type: str
    data: bytes
    width: int | None = None
    height: int | None = None

    @property
    def size(self) -> int:
        return len(self.data)

    def describe(self) -> str:
        dims = f" {self.width}x{self.height}" if self.width and self.height else ""
        return f"{self.mime_type}{dims}, {format_size(self.size)}"


@dataclass(frozen=True)
class OutputSummary:
    """One output, bounded (see the module docstring).

    ``kind`` is the nbformat ``output_type`` (``stream``, ``execute_result``, ``display_data``,
    ``error``; anything else is kept as found); ``name`` the stream (``stdout``/``stderr``);
    ``text`` the shown text (cut: ``omitted_lines`` lines left out of ``total_lines``);
    ``images`` the decoded images; ``others`` the remaining MIME types with their sizes.
    """

    kind: str
    name: str | None = None
    text: str = ""
    total_lines: int = 0
    omitted_lines: int = 0
    execution_count: int | None = None
    ename: str | None = None
    evalue: str | None = None
    traceback: tuple[str, ...] = ()
    images: tuple[ImageOutput, ...] = ()
    others: tuple[tuple[str, int], ...] = field(default=())

    @property
    def headline(self) -> str:
        """One line naming the output: ``stdout``, ``ZeroDivisionError: division by zero``..."""
        if self.kind == "error":
            return f"{self.ename or 'Error'}: {self.evalue}" if self.evalue else (self.ename or "Error")
        if self.kind == "stream":
            return self.name or "stream"
        return self.kind


def format_size(n: int) -> str:
    """``812 B``, ``3.2 KB``, ``1.4 MB`` (1024-based, as the Jupyter views show sizes)."""
    size = float(n)
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def display_text(data: dict[str, Any]) -> tuple[str | None, str]:
    """``(MIME type, text)`` a result or display shows as text, as a reader would take it in:
    its Markdown (``display(Markdown(...))``), else its ``text/plain`` unless that only names the
    object, else its HTML converted to text (never rendered), else LaTeX, else whatever
    ``text/plain`` there is. ``(None, "")`` when there is no text."""
    plain = _text(data.get("text/plain")) if "text/plain" in data else None
    if "text/markdown" in data:
        return "text/markdown", _text(data["text/markdown"])
    if plain is not None and not _BARE_REPR.match(plain):
        return "text/plain", plain
    if "text/html" in data:
        from .html_text import html_to_text

        return "text/html", html_to_text(_text(data["text/html"]))
    if "text/latex" in data:
        return "text/latex", _text(data["text/latex"])
    if plain is not None:
        return "text/plain", plain
    return None, ""


#: An image inline in Markdown as a data URI (``![plot](data:image/png;base64,...)``).
DATA_URI = re.compile(r"data:(image/[A-Za-z0-9.+-]+);base64,([A-Za-z0-9+/]{16,}={0,2})")


def data_uri_images(
    source: str, label: Callable[[ImageOutput | None, str, int], str] | None = None
) -> tuple[str, list[ImageOutput]]:
    """``source`` with each data-URI image replaced by a short label, and the images decoded
    (``IMAGE_MIME_TYPES`` only). ``label(image or None, MIME type, size)`` writes the label; by
    default ``[image png 7.3 KB]``."""
    images: list[ImageOutput] = []
    if "data:image/" not in source:
        return source, images

    def repl(m: re.Match[str]) -> str:
        mime, payload = m.group(1).lower(), m.group(2)
        img = _image(mime, payload) if mime in IMAGE_MIME_TYPES else None
        size = img.size if img is not None else len(payload) * 3 // 4
        if img is not None:
            images.append(img)
        if label is not None:
            return label(img, mime, size)
        return f"[image {mime.split('/')[-1]} {format_size(size)}]"

    return DATA_URI.sub(repl, source), images


def merged_streams(outputs: Sequence[Any]) -> list[Any]:
    """``outputs`` with each run of consecutive outputs of the same stream joined into one, as
    front ends show them (a ``curl`` cell's hundreds of chunks read as one text)."""
    out: list[Any] = []
    for o in outputs:
        if (
            isinstance(o, dict)
            and o.get("output_type") == "stream"
            and out
            and isinstance(out[-1], dict)
            and out[-1].get("output_type") == "stream"
            and out[-1].get("name") == o.get("name")
        ):
            out[-1] = {**out[-1], "text": _text(out[-1].get("text")) + _text(o.get("text"))}
        else:
            out.append(o)
    return out


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return ""


def _size(value: Any) -> int:
    if isinstance(value, (str, list)):
        return len(_text(value).encode("utf-8", "surrogatepass"))
    try:
        return len(json.dumps(value))
    except (TypeError, ValueError):
        return 0


def _clip_line(line: str, max_chars: int) -> str:
    return line if len(line) <= max_chars else line[: max_chars - 1] + "…"


def shorten(text: str, max_lines: int, max_chars: int = DEFAULT_MAX_LINE_CHARS) -> tuple[str, int, int]:
    """``(shown, total lines, omitted lines)``: the first and last lines of ``text`` (ANSI codes and
    carriage-return redraws resolved), each line cut at ``max_chars``."""
    clean = strip_ansi(text)
    if clean.endswith("\n"):
        clean = clean[:-1]
    lines = clean.split("\n") if clean else []
    total = len(lines)
    if total > max_lines:
        head = max(1, max_lines * 2 // 3)
        tail = max(1, max_lines - head)
        omitted = total - head - tail
        lines = [*lines[:head], f"… ({omitted} more lines)", *lines[-tail:]]
    else:
        omitted = 0
    return "\n".join(_clip_line(ln, max_chars) for ln in lines), total, omitted


def _image(mime: str, value: Any) -> ImageOutput | None:
    raw = _text(value)
    try:
        data = base64.b64decode(raw, validate=False)
    except (binascii.Error, ValueError):
        return None
    if not data:
        return None
    width = height = None
    if mime == "image/png" and data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
    elif mime == "image/gif" and data[:4] == b"GIF8" and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
    return ImageOutput(mime, data, width, height)


def _traceback_tail(traceback: Any, ename: str | None, evalue: str | None, keep: int) -> tuple[str, ...]:
    lines: list[str] = []
    for frame in traceback if isinstance(traceback, list) else ():
        if isinstance(frame, str):
            lines.extend(strip_ansi(frame).split("\n"))
    lines = [ln.rstrip() for ln in lines if ln.strip() and not _TRACEBACK_NOISE.match(ln)]
    last = f"{ename}: {evalue}" if evalue else (ename or "")
    while lines and (lines[-1].strip() == last.strip() or lines[-1].strip() == (ename or "")):
        lines.pop()  # the headline says it already
    return tuple(_clip_line(ln, DEFAULT_MAX_LINE_CHARS) for ln in lines[-keep:]) if keep else ()


def summarize_output(
    output: Any,
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_chars: int = DEFAULT_MAX_LINE_CHARS,
    traceback_lines: int = DEFAULT_TRACEBACK_LINES,
) -> OutputSummary:
    """A bounded :class:`OutputSummary` of one nbformat output (malformed ones included)."""
    if not isinstance(output, dict):
        return OutputSummary("unknown")
    kind = str(output.get("output_type", "unknown"))
    if kind == "stream":
        text, total, omitted = shorten(_text(output.get("text")), max_lines, max_chars)
        name = output.get("name")
        return OutputSummary(kind, name if isinstance(name, str) else None, text, total, omitted)
    if kind == "error":
        ename = output.get("ename")
        evalue = output.get("evalue")
        ename = strip_ansi(ename) if isinstance(ename, str) else None
        evalue = strip_ansi(evalue) if isinstance(evalue, str) else None
        tb = _traceback_tail(output.get("traceback"), ename, evalue, traceback_lines)
        return OutputSummary(kind, ename=ename, evalue=evalue, traceback=tb, total_lines=len(tb))
    data = output.get("data")
    data = data if isinstance(data, dict) else {}
    count = output.get("execution_count")
    count = count if isinstance(count, int) and not isinstance(count, bool) else None
    images: list[ImageOutput] = []
    others: list[tuple[str, int]] = []
    text_mime, shown = display_text(data)
    for mime, value in data.items():
        if mime == text_mime or (mime == "text/plain" and _BARE_REPR.match(_text(value))):
            continue
        if mime in IMAGE_MIME_TYPES:
            img = _image(mime, value)
            if img is not None:
                images.append(img)
                continue
        others.append((str(mime), _size(value)))
    text, total, omitted = ("", 0, 0)
    if text_mime is not None:
        text, total, omitted = shorten(shown, max_lines, max_chars)
    return OutputSummary(
        kind,
        text=text,
        total_lines=total,
        omitted_lines=omitted,
        execution_count=count,
        images=tuple(images),
        others=tuple(others),
    )


def cell_outputs(cell: Any, **limits: Any) -> list[OutputSummary]:
    """Summaries of a code cell's outputs (``[]`` for other cells), consecutive outputs of one
    stream as one."""
    outputs = cell.get("outputs") if isinstance(cell, dict) else None
    if not isinstance(outputs, list):
        return []
    return [summarize_output(o, **limits) for o in merged_streams(outputs)]


def output_text(output: Any, *, with_errors: bool = True) -> str:
    """The whole text of one output: stream text, a result's text as :func:`display_text` picks
    it (Markdown, ``text/plain``, HTML as text, LaTeX), an error's traceback (or ``ename: evalue``
    without one) — ANSI codes removed. Images and other payloads are not text."""
    if not isinstance(output, dict):
        return ""
    kind = output.get("output_type")
    if kind == "stream":
        return strip_ansi(_text(output.get("text")))
    if kind == "error":
        if not with_errors:
            return ""
        ename, evalue = output.get("ename"), output.get("evalue")
        frames = output.get("traceback")
        if isinstance(frames, list) and any(isinstance(f, str) and f for f in frames):
            return strip_ansi("\n".join(f for f in frames if isinstance(f, str)))
        parts = [p for p in (ename, evalue) if isinstance(p, str) and p]
        return strip_ansi(": ".join(parts))
    data = output.get("data")
    if isinstance(data, dict):
        return strip_ansi(display_text(data)[1])
    return ""


def outputs_text(outputs: Sequence[Any]) -> str:
    """The text of several outputs, one after the other (each ending with a newline)."""
    parts = []
    for o in merged_streams(outputs):
        t = output_text(o)
        if t:
            parts.append(t if t.endswith("\n") else t + "\n")
    return "".join(parts)
