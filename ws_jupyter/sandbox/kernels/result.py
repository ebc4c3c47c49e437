"""What running code in a kernel gives back: ``ExecutionResult``, ``MimeBundle``, ``ExecutionError``.

One value serves every consumer (the agent tool, the notebook, tests), after e2b's code
interpreter: ``stdout``/``stderr`` text, the rich ``display`` outputs and the ``result`` (the
value of the last expression) as MIME bundles that render themselves in Jupyter, and the error.
``OutputEvent`` is what ``execute(on_output=...)`` receives while the code runs.

Kernels run code an agent wrote, so their output is untrusted: everything kept here is bounded
(``OutputLimits``), and a bundle keeps only what it can check — MIME type names as RFC 6838 spells
them with string or JSON values, output metadata by a whitelist of typed values (an image's
``width``/``height``, ``unconfined``, ``needs_background``; ``isolated``), a display id of bounded
length — and drops the rest (``transient`` beyond the display id, ``filenames``, anything else).

>>> r = kernel.execute("print('hi'); 6 * 7")          # doctest: +SKIP
>>> r.status, r.stdout, r.text                         # doctest: +SKIP
('ok', 'hi\\n', '42')
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape as html_escape
from typing import Any, Literal

from ...filesystem.mime import image_type
from ...text.ansi import strip_ansi

__all__ = [
    "FRAME_CSP",
    "IMAGE_TYPES",
    "MAX_IMAGE_SIDE",
    "MAX_SHOWN_CHARS",
    "BoundedText",
    "ExecutionError",
    "ExecutionResult",
    "ExecutionStatus",
    "MimeBundle",
    "OutputEvent",
    "OutputLimits",
    "clip_text",
    "sandboxed_html",
]

ExecutionStatus = Literal["ok", "error", "timeout"]

#: Binary image types a bundle carries base64-encoded (Jupyter's convention); SVG is text.
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


#: What a frame showing a kernel's HTML may load: images from ``data:`` URIs and inline styles,
#: nothing from the network. The kernel runs in a sandbox without network access; without this
#: policy its HTML (``<img src=http://...?secret>``, CSS ``url()``, ``<link>``...) would make the
#: user's browser fetch the URL, carrying out whatever the sandbox put in it.
FRAME_CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
)


#: The frame's document cannot see JupyterLab's theme (its own ``prefers-color-scheme`` stays
#: light), so on a dark theme the frame is drawn inverted: a DataFrame's white page becomes dark
#: grey with light text instead of a white block (hues turned back by the rotation). JupyterLab
#: marks its theme on ``<body data-jp-theme-light>``; elsewhere the rule matches nothing.
FRAME_THEME_CSS = (
    '<style>body[data-jp-theme-light="false"] iframe.ws-html-frame '
    "{ filter: invert(0.88) hue-rotate(180deg); }</style>"
)


def sandboxed_html(markup: str, height: int | None = None) -> str:
    """``markup`` inside an ``<iframe sandbox="">`` under ``FRAME_CSP``: rendered, but no script of
    it runs, it cannot reach the page that shows it, and it fetches nothing (a kernel's HTML
    output, shown in the user's notebook and in an HTML export of it).

    The policy is given twice: as the frame's ``csp`` attribute (Chromium) and as the first
    element of the framed document (every browser honours a ``<meta>`` policy; markup after it
    can add restrictions, never lift them). ``height`` in pixels; by default it follows the
    number of table rows (a DataFrame).
    """
    if height is None:
        rows = markup.count("<tr")
        height = min(420, max(60, 26 * rows + 40)) if rows else 160
    document = f'<meta http-equiv="Content-Security-Policy" content="{FRAME_CSP}">{markup}'
    return (
        f'{FRAME_THEME_CSS}<iframe sandbox="" class="ws-html-frame" csp="{FRAME_CSP}" '
        f'srcdoc="{html_escape(document, quote=True)}" '
        f'style="width: 100%; box-sizing: border-box; height: {height}px; border: 0; background: white"></iframe>'
    )


#: Characters of one text output a notebook is given (``MimeBundle._repr_mimebundle_``): a
#: value's repr can be megabytes, and the notebook saves what it shows.
MAX_SHOWN_CHARS = 100_000


def clip_text(text: str, limit: int) -> str:
    """``text`` cut to its first fifth and last four fifths of ``limit`` characters, saying how
    many were left out between (the end of an output, its error or summary, matters most).

    >>> clip_text("abcdefghij", 5)
    'a\\n[… 5 characters not shown …]\\nghij'
    """
    if len(text) <= limit:
        return text
    head = limit // 5
    return f"{text[:head]}\n[… {len(text) - limit:,} characters not shown …]\n{text[len(text) - (limit - head):]}"


@dataclass(frozen=True)
class OutputLimits:
    """How much of one execution's output is kept (the rest is counted, not stored).

    ``max_stream_chars`` per stream (its first fifth and its last four fifths are kept, so both
    the start and the final error or summary survive; what lies between is counted in lines and
    characters), ``max_displays`` rich outputs and ``max_display_bytes`` in total for them and
    the result (a result over it keeps its text form only).
    """

    max_stream_chars: int = 1_000_000
    max_displays: int = 100
    max_display_bytes: int = 32 * 1024 * 1024


class BoundedText:
    """Text that keeps its first ``max_chars // 5`` and its last characters, counting what it dropped.

    Both cuts fall on line ends when one is near, so what is left out is whole lines, counted
    exactly: ``dropped`` characters in ``dropped_lines`` lines (the line ends left out; a very
    long line is cut inside). Appending costs
    the length of the piece, not of what is kept — a kernel can send a million one-line messages.

    >>> t = BoundedText(25)
    >>> for n in range(10):
    ...     t.append(f"{n}:ok\\n")
    >>> t.text, t.dropped, t.dropped_lines
    ('0:ok\\n[... 5 lines (25 characters) not kept ...]\\n6:ok\\n7:ok\\n8:ok\\n9:ok\\n', 25, 5)
    """

    __slots__ = (
        "_head",
        "_head_closed",
        "_head_room",
        "_head_used",
        "_tail",
        "_tail_room",
        "_tail_used",
        "dropped",
        "dropped_lines",
        "total",
    )

    #: Consecutive small pieces are joined up to this size (fewer objects, bounded copying).
    _PIECE = 4096
    #: A cut moves at most this far to fall on a line end (a longer line is cut inside).
    _ALIGN = 2000

    def __init__(self, max_chars: int) -> None:
        self._head_room = max(0, max_chars) // 5
        self._tail_room = max(0, max_chars) - self._head_room
        self._head: list[str] = []
        self._tail: deque[str] = deque()
        self._head_used = self._tail_used = 0
        self._head_closed = False
        self.total = self.dropped = self.dropped_lines = 0

    def append(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        if not self._head_closed:
            room = self._head_room - self._head_used
            if len(text) <= room:
                self._head.append(text)
                self._head_used += len(text)
                return
            take = text[:room]
            end = take.rfind("\n", max(0, room - self._ALIGN)) + 1
            if end:  # the head ends at a line end (a long line is cut inside)
                take = take[:end]
            if take:
                self._head.append(take)
                self._head_used += len(take)
            self._head_closed = True
            text = text[len(take) :]
        tail = self._tail
        if tail and len(tail[-1]) < self._PIECE and len(text) < self._PIECE:
            tail[-1] += text
        else:
            tail.append(text)
        self._tail_used += len(text)
        if self._tail_used > self._tail_room:
            self._trim()

    def _trim(self) -> None:
        """Drops the oldest tail text over the room, up to a line start when the rest holds one."""
        tail = self._tail
        while tail and self._tail_used > self._tail_room:
            excess = self._tail_used - self._tail_room
            first = tail[0]
            if len(first) <= excess:
                tail.popleft()
                self._dropped(first)
                continue
            cut = first.find("\n", excess - 1, excess + self._ALIGN) + 1
            if cut <= 0:  # no line end near: a long line is cut inside
                cut = excess
            tail[0] = first[cut:]
            if not tail[0]:
                tail.popleft()
            self._dropped(first[:cut])

    def _dropped(self, text: str) -> None:
        self._tail_used -= len(text)
        self.dropped += len(text)
        self.dropped_lines += text.count("\n")

    def clear(self) -> None:
        """Forgets everything (a ``clear_output``): what was dropped is gone with the rest."""
        self.__init__(self._head_room + self._tail_room)  # type: ignore[misc]

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    @property
    def text(self) -> str:
        head, tail = "".join(self._head), "".join(self._tail)
        if not self.dropped:
            return head + tail
        sep = "" if not head or head.endswith("\n") else "\n"
        return f"{head}{sep}[... {omitted(self.dropped_lines, self.dropped)} not kept ...]\n{tail}"


def omitted(lines: int, chars: int) -> str:
    """``"3 lines (15 characters)"``: how output that was not kept is counted everywhere."""
    return f"{lines:,} line{'s' if lines != 1 else ''} ({chars:,} characters)"


def bound_text(text: str, max_chars: int) -> str:
    """``text`` as a :class:`BoundedText` of ``max_chars`` keeps it (unchanged when it fits)."""
    if len(text) <= max_chars:
        return text
    bounded = BoundedText(max_chars)
    bounded.append(text)
    return bounded.text


def _json_size(value: Any) -> int:
    """Bytes of ``value`` as JSON, about (no recursion: values may nest deeply)."""
    total, stack = 0, [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            total += len(node) + 2
        elif isinstance(node, Mapping):
            total += 2
            for k, v in node.items():
                total += len(str(k)) + 4
                stack.append(v)
        elif isinstance(node, (list, tuple)):
            total += 2 + len(node)
            stack.extend(node)
        else:
            total += 8
    return total


#: A MIME type name as RFC 6838 allows it: ``type/subtype``, each a restricted name of at most
#: 127 characters (anything else a kernel sends as a key is dropped).
_MIME_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}")
#: Longest display id kept (Jupyter makes them from UUIDs).
_MAX_DISPLAY_ID = 256
#: The largest width or height (pixels) an output's metadata may give an image.
MAX_IMAGE_SIDE = 16_384


def _clean_data(data: Any) -> dict[str, Any]:
    """A bundle's data as Jupyter defines it: MIME type -> str (or JSON for ``*json`` types)."""
    out: dict[str, Any] = {}
    if not isinstance(data, Mapping):
        return out
    for mime, value in data.items():
        if not isinstance(mime, str) or not _MIME_NAME.fullmatch(mime):
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = "".join(value)  # nbformat's multi-line string form
        if isinstance(value, str) or mime.endswith("json"):
            out[mime] = value
    return out


def _side(value: Any) -> int | None:
    """A width or height: a positive whole number of pixels up to ``MAX_IMAGE_SIDE``."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if type(value) is int and 0 < value <= MAX_IMAGE_SIDE:
        return value
    return None


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _background(value: Any) -> str | None:
    return value if value in ("light", "dark") else None


#: The metadata an image output may carry, each with the check that returns its clean value.
_IMAGE_METADATA = {"width": _side, "height": _side, "unconfined": _flag, "needs_background": _background}


def _clean_metadata(metadata: Any, mime_types: Iterable[str]) -> dict[str, Any]:
    """Output metadata by whitelist: per image type its ``_IMAGE_METADATA`` keys with valid
    values, and a boolean ``isolated``. Front-ends and nbconvert's HTML templates write these
    values into markup unquoted (``<img width={{ width }}>``): a string there becomes an
    attribute of the exported page (``1 onerror=...``)."""
    out: dict[str, Any] = {}
    if not isinstance(metadata, Mapping):
        return out
    if isinstance(metadata.get("isolated"), bool):
        out["isolated"] = metadata["isolated"]
    for mime in mime_types:
        entry = metadata.get(mime)
        if mime not in IMAGE_TYPES or not isinstance(entry, Mapping):
            continue
        kept = {}
        for key, check in _IMAGE_METADATA.items():
            value = check(entry.get(key))
            if value is not None:
                kept[key] = value
        if kept:
            out[mime] = kept
    return out


def _clean_display_id(value: Any) -> str | None:
    if isinstance(value, str) and 0 < len(value) <= _MAX_DISPLAY_ID and value.isprintable():
        return value
    return None


@dataclass(frozen=True)
class MimeBundle:
    """One rich output — a display (``display()``, a plot) or an execution's result — as MIME data.

    It renders itself in Jupyter as the kernel meant it, minus what would run there (HTML in a
    sandboxed frame, no JavaScript: see ``_repr_mimebundle_``), and gives
    the pieces a program needs: ``text``, ``html``, ``markdown``, ``images()`` (decoded bytes).
    """

    data: Mapping[str, Any]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    kind: Literal["display", "result"] = "display"
    display_id: str | None = None

    @classmethod
    def from_message(
        cls, content: Mapping[str, Any], kind: Literal["display", "result"] = "display"
    ) -> MimeBundle:
        data = _clean_data(content.get("data"))
        transient = content.get("transient")
        display_id = transient.get("display_id") if isinstance(transient, Mapping) else None
        return cls(
            data=data,
            metadata=_clean_metadata(content.get("metadata"), data),
            kind=kind,
            display_id=_clean_display_id(display_id),
        )

    @property
    def mime_types(self) -> list[str]:
        return list(self.data)

    @property
    def text(self) -> str | None:
        """The ``text/plain`` form (what ``repr`` of the value gave in the kernel)."""
        value = self.data.get("text/plain")
        return value if isinstance(value, str) else None

    @property
    def html(self) -> str | None:
        value = self.data.get("text/html")
        return value if isinstance(value, str) else None

    @property
    def markdown(self) -> str | None:
        value = self.data.get("text/markdown")
        return value if isinstance(value, str) else None

    @property
    def svg(self) -> str | None:
        value = self.data.get("image/svg+xml")
        return value if isinstance(value, str) else None

    def images(self) -> list[tuple[str, bytes]]:
        """``[(mime_type, raw bytes)]`` of the binary images in this bundle: those whose base64
        decodes to bytes of the type they are filed under (anything else is skipped)."""
        found = []
        for mime in IMAGE_TYPES:
            value = self.data.get(mime)
            if isinstance(value, str):
                try:
                    raw = base64.b64decode("".join(value.split()), validate=True)
                except (binascii.Error, ValueError):
                    continue
                if image_type(raw) == mime:
                    found.append((mime, raw))
        return found

    @property
    def has_image(self) -> bool:
        return any(isinstance(self.data.get(m), str) for m in IMAGE_TYPES)

    @property
    def size(self) -> int:
        """Approximate size in bytes (what the output limits count): its data and metadata."""
        return sum(len(v) if isinstance(v, str) else _json_size(v) for v in self.data.values()) + (
            _json_size(self.metadata) if self.metadata else 0
        )

    def slim(self, max_bytes: int) -> MimeBundle:
        """This bundle if its ``size`` is within ``max_bytes``; else one that keeps only its
        ``text/plain`` (head and tail, within the bound) and says which types were left out."""
        size = self.size
        if size <= max_bytes:
            return self
        left_out = ", ".join(f"{mime} ({_json_size(v) if not isinstance(v, str) else len(v):,} bytes)"
                             for mime, v in self.data.items() if mime != "text/plain")
        note = f"[{left_out or 'output'} not kept: {size:,} bytes, over {max_bytes:,}]"
        text = self.text
        plain = note if text is None else bound_text(text, max(0, max_bytes - len(note) - 1)) + "\n" + note
        return MimeBundle({"text/plain": plain}, {}, self.kind, self.display_id)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict, dict]:
        """The bundle as the notebook that shows it may render it: inert types only, checked.

        The output comes from code in the sandbox, and a front-end trusts what the running
        session displays: JupyterLab runs ``application/javascript`` and renders HTML and
        Markdown unsanitised, scripts and event handlers included — with the user's access to
        the Jupyter server, outside the sandbox. So HTML is shown in a sandboxed frame that may
        fetch nothing (``sandboxed_html``), SVG as an image, images re-encoded from bytes that
        are the image type they claim (else left out), metadata by whitelist, and JavaScript,
        Markdown, LaTeX and widget or other renderer types are left out (their ``text/plain``
        remains). The notebook keeps what is shown here, and an HTML export of it too, so text
        is cut to ``MAX_SHOWN_CHARS`` (HTML to ten times that; ``data`` keeps it all).
        """
        data: dict[str, Any] = {mime: base64.b64encode(raw).decode("ascii") for mime, raw in self.images()}
        value = self.data.get("application/json")
        if value is not None and len(repr(value)) <= MAX_SHOWN_CHARS:  # JSON: front-ends draw a tree
            data["application/json"] = value
        if self.text is not None:
            data["text/plain"] = clip_text(self.text, MAX_SHOWN_CHARS)
        if self.html is not None:
            data["text/html"] = sandboxed_html(clip_text(self.html, MAX_SHOWN_CHARS * 10))
        elif self.svg is not None:
            encoded = base64.b64encode(self.svg.encode("utf-8", "replace")).decode("ascii")
            data["text/html"] = f'<img src="data:image/svg+xml;base64,{encoded}" alt="SVG output">'
        if "text/plain" not in data:
            data["text/plain"] = self.markdown or f"[{', '.join(self.mime_types) or 'empty'} output]"
        return data, _clean_metadata(self.metadata, data)

    def __repr__(self) -> str:
        if self.text is not None and len(self.text) <= 200:
            return self.text
        return f"<MimeBundle {self.kind} {', '.join(self.mime_types) or 'empty'}>"


@dataclass(frozen=True)
class ExecutionError:
    """The exception the code raised: ``ename``, ``evalue`` and the traceback lines.

    ``traceback`` is what the kernel sent (with terminal colour codes, as notebooks show it);
    ``traceback_text`` is the same without them.
    """

    ename: str
    evalue: str
    traceback: tuple[str, ...] = ()

    @classmethod
    def from_message(cls, content: Mapping[str, Any]) -> ExecutionError:
        tb = content.get("traceback")
        lines = tuple(str(t) for t in tb) if isinstance(tb, Sequence) and not isinstance(tb, str) else ()
        return cls(str(content.get("ename", "Error")), str(content.get("evalue", "")), lines)

    @property
    def traceback_text(self) -> str:
        return strip_ansi("\n".join(self.traceback))

    def __str__(self) -> str:
        return f"{self.ename}: {self.evalue}" if self.evalue else self.ename


@dataclass(frozen=True)
class OutputEvent:
    """One piece of output while code runs (``execute(on_output=...)``, the activity feed).

    ``kind``: ``"stdout"``/``"stderr"`` (``text``), ``"display"``/``"result"`` (``bundle``),
    ``"update"`` (``bundle`` replaces the display with its ``display_id``), ``"clear"`` (the cell's
    output so far is cleared; ``wait`` defers that until the next output), ``"error"`` (``error``).
    """

    kind: Literal["stdout", "stderr", "display", "result", "update", "clear", "error"]
    text: str = ""
    bundle: MimeBundle | None = None
    error: ExecutionError | None = None
    wait: bool = False

    @property
    def size(self) -> int:
        """Approximate bytes it holds (what the activity feed counts)."""
        size = len(self.text) + 64
        if self.bundle is not None:
            size += self.bundle.size
        if self.error is not None:
            size += len(self.error.ename) + len(self.error.evalue) + sum(map(len, self.error.traceback))
        return size


@dataclass(frozen=True)
class ExecutionResult:
    """The outcome of ``Kernel.execute`` (see the module docstring).

    ``status`` is ``"ok"``, ``"error"`` (the code raised, or the kernel died) or ``"timeout"``
    (the time limit passed: the kernel was interrupted — its state survives — or, when it did not
    respond, restarted). ``notes`` say what happened to the kernel beyond the code's own output
    ("restarted: state lost"); ``restarted`` is True when the kernel's state was lost.

    Nothing the kernel sent is lost silently: past ``OutputLimits``, ``stdout``/``stderr`` keep
    their head and tail around a marker, and ``stdout_dropped``/``stdout_dropped_lines`` (and
    stderr's) count the characters and lines left out; ``displays_dropped`` counts rich outputs
    not kept.
    """

    status: ExecutionStatus
    code: str
    kernel: str
    stdout: str = ""
    stderr: str = ""
    display: tuple[MimeBundle, ...] = ()
    result: MimeBundle | None = None
    error: ExecutionError | None = None
    execution_count: int | None = None
    duration: float = 0.0
    timeout: float | None = None
    restarted: bool = False
    notes: tuple[str, ...] = ()
    stdout_dropped: int = 0
    stderr_dropped: int = 0
    displays_dropped: int = 0
    stdout_dropped_lines: int = 0
    stderr_dropped_lines: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def timed_out(self) -> bool:
        return self.status == "timeout"

    @property
    def ename(self) -> str | None:
        return self.error.ename if self.error else None

    @property
    def evalue(self) -> str | None:
        return self.error.evalue if self.error else None

    @property
    def traceback(self) -> tuple[str, ...]:
        return self.error.traceback if self.error else ()

    @property
    def text(self) -> str | None:
        """The result's ``text/plain`` (None when the last statement was not an expression)."""
        return self.result.text if self.result is not None else None

    @property
    def outputs(self) -> tuple[MimeBundle, ...]:
        """Every rich output, the result last."""
        return (*self.display, *((self.result,) if self.result is not None else ()))

    def images(self) -> list[tuple[str, bytes]]:
        """Every binary image the code displayed or returned, in order."""
        return [img for b in self.outputs for img in b.images()]

    def raise_for_error(self) -> ExecutionResult:
        """Raises ``KernelError`` (code ``EXECUTION_FAILED``) unless the status is ok; else returns self."""
        if self.status != "ok":
            from ...errors import KernelError

            detail = str(self.error) if self.error else self.status
            raise KernelError(
                f"Code failed in kernel {self.kernel!r}: {detail}",
                code="EXECUTION_FAILED",
                kernel=self.kernel,
            )
        return self

    def __repr__(self) -> str:
        parts = [f"status={self.status!r}", f"kernel={self.kernel!r}"]
        if self.execution_count is not None:
            parts.append(f"execution_count={self.execution_count}")
        if self.stdout:
            parts.append(f"stdout={_short(self.stdout)!r}")
        if self.stderr:
            parts.append(f"stderr={_short(self.stderr)!r}")
        if self.display:
            parts.append(f"display=[{len(self.display)} output(s)]")
        if self.text is not None:
            parts.append(f"text={_short(self.text)!r}")
        if self.error:
            parts.append(f"error={str(self.error)!r}")
        parts.append(f"duration={self.duration:.3f}")
        return f"ExecutionResult({', '.join(parts)})"


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
