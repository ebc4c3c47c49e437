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
    the start and the final error or summary survive), ``max_displays`` rich outputs and
    ``max_display_bytes`` in total for them.
    """

    max_stream_chars: int = 1_000_000
    max_displays: int = 100
    max_display_bytes: int = 32 * 1024 * 1024


class BoundedText:
    """Text that keeps its first ``head`` and last ``tail`` characters, counting what it dropped.

    >>> t = BoundedText(4)
    >>> for piece in ("abcdef", "ghij"):
    ...     t.append(piece)
    >>> t.text, t.dropped
    ('a\\n[... 6 characters not kept ...]\\nghij', 6)
    """

    __slots__ = ("_head", "_head_room", "_tail", "_tail_room", "dropped", "total")

    def __init__(self, max_chars: int) -> None:
        self._head_room = max_chars // 5
        self._tail_room = max_chars - self._head_room
        self._head: list[str] = []
        self._tail: list[str] = []
        self.total = 0
        self.dropped = 0

    def append(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        head_used = sum(map(len, self._head))
        if head_used < self._head_room:
            take = text[: self._head_room - head_used]
            self._head.append(take)
            text = text[len(take) :]
            if not text:
                return
        self._tail.append(text)
        tail_used = sum(map(len, self._tail))
        if tail_used > self._tail_room:
            joined = "".join(self._tail)
            excess = len(joined) - self._tail_room
            self.dropped += excess
            self._tail = [joined[excess:]] if self._tail_room else []

    def clear(self) -> None:
        self._head.clear()
        self._tail.clear()

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    @property
    def text(self) -> str:
        head, tail = "".join(self._head), "".join(self._tail)
        if not self.dropped:
            return head + tail
        return f"{head}\n[... {self.dropped:,} characters not kept ...]\n{tail}"


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
        """Approximate size in bytes (what the output limits count)."""
        return sum(len(v) if isinstance(v, str) else len(repr(v)) for v in self.data.values())

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


@dataclass(frozen=True)
class ExecutionResult:
    """The outcome of ``Kernel.execute`` (see the module docstring).

    ``status`` is ``"ok"``, ``"error"`` (the code raised, or the kernel died) or ``"timeout"``
    (the time limit passed: the kernel was interrupted — its state survives — or, when it did not
    respond, restarted). ``notes`` say what happened to the kernel beyond the code's own output
    ("restarted: state lost"); ``restarted`` is True when the kernel's state was lost.
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
