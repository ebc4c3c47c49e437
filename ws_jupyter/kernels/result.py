"""What running code in a kernel gives back: ``ExecutionResult``, ``MimeBundle``, ``ExecutionError``.

One value serves every consumer (the agent tool, the notebook, tests), after e2b's code
interpreter: ``stdout``/``stderr`` text, the rich ``display`` outputs and the ``result`` (the
value of the last expression) as MIME bundles that render themselves in Jupyter, and the error.
``OutputEvent`` is what ``execute(on_output=...)`` receives while the code runs.

Kernels run code an agent wrote, so their output is untrusted: everything kept here is bounded
(``OutputLimits``), and a bundle keeps only string or JSON values as Jupyter sends them.

>>> r = kernel.execute("print('hi'); 6 * 7")          # doctest: +SKIP
>>> r.status, r.stdout, r.text                         # doctest: +SKIP
('ok', 'hi\\n', '42')
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape as html_escape
from typing import Any, Literal

__all__ = [
    "IMAGE_TYPES",
    "BoundedText",
    "ExecutionError",
    "ExecutionResult",
    "ExecutionStatus",
    "MimeBundle",
    "OutputEvent",
    "OutputLimits",
    "sandboxed_html",
]

ExecutionStatus = Literal["ok", "error", "timeout"]

#: Binary image types a bundle carries base64-encoded (Jupyter's convention); SVG is text.
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
#: Output types a notebook renders without running anything (see ``MimeBundle._repr_mimebundle_``).
_INERT_TYPES = ("text/plain", "application/json", *IMAGE_TYPES)


def sandboxed_html(markup: str, height: int = 240) -> str:
    """``markup`` inside an ``<iframe sandbox="">``: rendered, but no script of it runs and it
    cannot reach the page that shows it (a kernel's HTML output, shown in the user's notebook)."""
    return (
        f'<iframe sandbox="" srcdoc="{html_escape(markup, quote=True)}" '
        f'style="width: 100%; height: {height}px; border: 0; background: white"></iframe>'
    )

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


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


def _clean_data(data: Any) -> dict[str, Any]:
    """A bundle's data as Jupyter defines it: MIME type -> str (or JSON for ``*json`` types)."""
    out: dict[str, Any] = {}
    if not isinstance(data, Mapping):
        return out
    for mime, value in data.items():
        if not isinstance(mime, str) or "/" not in mime:
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = "".join(value)  # nbformat's multi-line string form
        if isinstance(value, str) or mime.endswith("json"):
            out[mime] = value
    return out


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
        metadata = content.get("metadata")
        transient = content.get("transient")
        display_id = transient.get("display_id") if isinstance(transient, Mapping) else None
        return cls(
            data=_clean_data(content.get("data")),
            metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
            kind=kind,
            display_id=display_id if isinstance(display_id, str) else None,
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
        """``[(mime_type, raw bytes)]`` of the binary images in this bundle (bad base64 skipped)."""
        found = []
        for mime in IMAGE_TYPES:
            value = self.data.get(mime)
            if isinstance(value, str):
                try:
                    found.append((mime, base64.b64decode("".join(value.split()), validate=True)))
                except (binascii.Error, ValueError):
                    continue
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
        """The bundle as the notebook that shows it may render it: inert types only.

        The output comes from code in the sandbox, and a front-end trusts what the running
        session displays: JupyterLab runs ``application/javascript`` and renders HTML and
        Markdown unsanitised, scripts and event handlers included — with the user's access to
        the Jupyter server, outside the sandbox. So HTML is shown in a sandboxed frame (no
        scripts, no access to the page), SVG as an image, and JavaScript, Markdown, LaTeX and
        widget or other renderer types are left out (their ``text/plain`` remains).
        """
        data = {k: v for k, v in self.data.items() if k in _INERT_TYPES}
        if self.html is not None:
            data["text/html"] = sandboxed_html(self.html)
        elif self.svg is not None:
            encoded = base64.b64encode(self.svg.encode("utf-8", "replace")).decode("ascii")
            data["text/html"] = f'<img src="data:image/svg+xml;base64,{encoded}" alt="SVG output">'
        if "text/plain" not in data:
            data["text/plain"] = self.markdown or f"[{', '.join(self.mime_types) or 'empty'} output]"
        metadata = {k: v for k, v in self.metadata.items() if k in data and k != "text/html"}
        return data, metadata

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
        return _ANSI.sub("", "\n".join(self.traceback))

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
            from ..errors import KernelError

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
