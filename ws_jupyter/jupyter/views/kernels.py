"""Views of the sandbox's kernels: an execution as a notebook cell, and the kernel table.

``execution_html`` draws one execution — its source, its outputs in order (streams, rich outputs,
the result, the error), its status and duration — and serves both ``ExecutionView`` (an
``ExecutionResult`` displayed in a cell) and the live ``KernelActivity`` widget.

The code that produced these outputs ran in the workspace kernel, i.e. it is the agent's: its HTML
is shown in a sandboxed ``iframe`` (no scripts, no access to JupyterLab, drawn inverted on a dark theme,
and a content security policy that lets it fetch nothing: ``ws_jupyter.sandbox.kernels.sandboxed_html``), images only from
decoded bytes of the image type they claim, re-encoded, SVG as an image (an ``<img>`` never runs
the SVG's scripts).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...text import strip_ansi
from .base import RichView
from .common import (
    BAD,
    BORDER,
    ERROR_BACKGROUND,
    GREY,
    INFO,
    MONO,
    MUTED,
    OK,
    PRE,
    WARN,
    badge,
    esc,
    format_duration,
    table,
    text_table,
)

__all__ = [
    "ExecutionView",
    "KernelTableView",
    "execution_body_html",
    "execution_head_html",
    "execution_html",
    "outputs_html",
    "shown_status",
    "status_badge",
]

#: Executions (ok, error...) and kernels (idle, busy...).
_STATUS_COLOURS = {
    "ok": OK,
    "error": BAD,
    "timeout": WARN,
    "interrupted": WARN,
    "failed": BAD,
    "running": INFO,
    "queued": GREY,
    "idle": OK,
    "busy": INFO,
    "starting": INFO,
    "dead": BAD,
    "stopped": GREY,
}
_MAX_TEXT = 20_000  # characters of one text output drawn (the rest is counted)


def status_badge(status: str) -> str:
    return badge(status, _STATUS_COLOURS.get(status, GREY))


def shown_status(status: str, result: Any = None, error: str | None = None) -> str:
    """The status a person reads: code stopped by an interrupt (the stop button, KernelActivity's
    Interrupt, an agent's cancellation) is "interrupted", not an error or a failure."""
    if status == "error" and getattr(getattr(result, "error", None), "ename", None) == "KeyboardInterrupt":
        return "interrupted"
    if status == "failed" and error == "interrupted":  # the caller's thread got the interrupt
        return "interrupted"
    return status


def _clip(text: str) -> str:
    from ws_jupyter.sandbox.kernels import clip_text

    return clip_text(text, _MAX_TEXT)


def _pre(text: str, style: str = "") -> str:
    return f'<pre style="{PRE}; padding: 2px 4px; {style}">{esc(_clip(strip_ansi(text)))}</pre>'


def bundle_html(bundle: Any) -> str:
    """One rich output as safe HTML (see the module docstring)."""
    for mime, raw in bundle.images():
        encoded = base64.b64encode(raw).decode("ascii")
        return f'<img src="data:{mime};base64,{encoded}" style="max-width: 100%" alt="{esc(mime)} output">'
    svg = bundle.svg
    if svg:
        encoded = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        return f'<img src="data:image/svg+xml;base64,{encoded}" style="max-width: 100%" alt="SVG output">'
    if bundle.html:
        from ws_jupyter.sandbox.kernels import sandboxed_html

        return f'<div style="border: 1px solid {BORDER}">{sandboxed_html(bundle.html)}</div>'
    if bundle.markdown:
        return _pre(bundle.markdown)
    if bundle.text is not None:
        return _pre(bundle.text)
    return f'<div style="{MUTED}">[{esc(", ".join(bundle.mime_types) or "empty")} output]</div>'


def _error_html(error: Any) -> str:
    tb = error.traceback_text if error.traceback else str(error)
    return _pre(tb, f"color: {BAD}; background: rgba(207, 34, 46, 0.06)")


@dataclass
class _Piece:
    kind: str  # stdout | stderr | bundle | error
    text: str = ""
    bundle: Any = None
    error: Any = None


def _pieces(events: Iterable[Any]) -> list[_Piece]:
    """Output events in arrival order, adjacent stream chunks merged, clears and updates applied."""
    pieces: list[_Piece] = []
    clear_pending = False
    for e in events:
        if clear_pending and e.kind not in ("clear",):
            pieces.clear()
            clear_pending = False
        if e.kind in ("stdout", "stderr"):
            if pieces and pieces[-1].kind == e.kind:
                pieces[-1].text += e.text
            else:
                pieces.append(_Piece(e.kind, text=e.text))
        elif e.kind in ("display", "result"):
            pieces.append(_Piece("bundle", bundle=e.bundle))
        elif e.kind == "update" and e.bundle is not None:
            for p in pieces:
                if p.bundle is not None and p.bundle.display_id == e.bundle.display_id:
                    p.bundle = e.bundle
        elif e.kind == "error":
            pieces.append(_Piece("error", error=e.error))
        elif e.kind == "clear":
            if e.wait:
                clear_pending = True
            else:
                pieces.clear()
    return pieces


def outputs_html(events: Iterable[Any]) -> str:
    """The output area of a cell, drawn from its ``OutputEvent`` list."""
    out = []
    for p in _pieces(events):
        if p.kind == "stdout":
            out.append(_pre(p.text))
        elif p.kind == "stderr":
            out.append(_pre(p.text, f"background: {ERROR_BACKGROUND}"))
        elif p.kind == "bundle":
            out.append(f'<div style="margin: 2px 0">{bundle_html(p.bundle)}</div>')
        elif p.kind == "error":
            out.append(_error_html(p.error))
    return "".join(out)


def result_events(result: Any) -> list[Any]:
    """The output events an ``ExecutionResult`` stands for (streams first: their order is lost)."""
    from ws_jupyter import OutputEvent

    events = []
    if result.stdout:
        events.append(OutputEvent("stdout", text=result.stdout))
    if result.stderr:
        events.append(OutputEvent("stderr", text=result.stderr))
    events += [OutputEvent("display", bundle=b) for b in result.display]
    if result.result is not None:
        events.append(OutputEvent("result", bundle=result.result))
    if result.error is not None:
        events.append(OutputEvent("error", error=result.error))
    return events


def execution_head_html(
    *,
    kernel: str,
    status: str,
    execution_count: int | None = None,
    duration: float | None = None,
    origin: str | None = None,
) -> str:
    """The prompt line of a cell: ``[n]``, the status, kernel · origin · duration."""
    prompt = (
        f"[{execution_count}]" if execution_count is not None else ("[*]" if status == "running" else "[ ]")
    )
    meta = [esc(kernel)]
    if origin:
        meta.append(esc(origin))
    if duration is not None:
        meta.append(esc(format_duration(duration)))
    return (
        f'<div style="display: flex; gap: 8px; align-items: baseline">'
        f'<span style="{MONO}; {MUTED}">{esc(prompt)}</span>{status_badge(status)}'
        f'<span style="{MUTED}">{" · ".join(meta)}</span></div>'
    )


def execution_body_html(*, code: str, events: Sequence[Any], notes: Sequence[str] = ()) -> str:
    """The source and the output area of a cell."""
    source = (
        f'<pre style="{PRE}; padding: 4px 6px; background: var(--jp-cell-editor-background, #f7f7f7); '
        f'border: 1px solid {BORDER}; border-radius: 2px">{esc(_clip(code))}</pre>'
    )
    notes_html = "".join(f'<div style="color: {WARN}; font-size: 0.92em">{esc(n)}</div>' for n in notes)
    return f'<div class="ws-jupyter ws-execution" style="line-height: 1.45; text-align: left">{source}{outputs_html(events)}{notes_html}</div>'


def execution_html(
    *,
    code: str,
    kernel: str,
    status: str,
    events: Sequence[Any],
    execution_count: int | None = None,
    duration: float | None = None,
    origin: str | None = None,
    notes: Sequence[str] = (),
) -> str:
    """One execution drawn as a notebook cell: the prompt line, the source, then the outputs."""
    head = execution_head_html(
        kernel=kernel, status=status, execution_count=execution_count, duration=duration, origin=origin
    )
    body = execution_body_html(code=code, events=events, notes=notes)
    return f'<div style="margin: 4px 0">{head}{body}</div>'


@dataclass(repr=False)
class ExecutionView(RichView):
    """An ``ExecutionResult`` drawn as the notebook cell it would have been."""

    result: Any
    kind = "execution"

    def text(self) -> str:
        return repr(self.result)

    def html(self) -> str:
        r = self.result
        return execution_html(
            code=r.code,
            kernel=r.kernel,
            status=shown_status(r.status, r),
            events=result_events(r),
            execution_count=r.execution_count,
            duration=r.duration,
            notes=r.notes,
        )


@dataclass(repr=False)
class KernelTableView(RichView):
    """``%ws kernel list``: the sandbox's kernels."""

    kernels: Sequence[Any] = field(default_factory=list)
    kind = "kernels"

    def title(self) -> str:
        n = len(self.kernels)
        return f"{n} kernel{'' if n == 1 else 's'}"

    def meta(self) -> str:
        return "" if self.kernels else "none yet: `%ws kernel start [NAME]` or `%%ws py` starts one"

    def _rows(self) -> list[list[str]]:
        rows = []
        for k in self.kernels:
            idle = k.idle_seconds
            rows.append(
                [
                    k.name,
                    k.status,
                    f"{k.spec} ({k.language})",
                    str(k.pid or "-"),
                    k.isolation,
                    str(k.executions),
                    format_duration(idle) if idle is not None else "-",
                    str(k.restarts),
                ]
            )
        return rows

    _HEADERS = ("name", "status", "kernelspec", "pid", "isolation", "executions", "idle", "restarts")

    def text(self) -> str:
        head = self.title() + (f" ({self.meta()})" if self.meta() else "")
        return (
            head
            if not self.kernels
            else head + "\n" + text_table(self._HEADERS, self._rows(), numeric=(3, 5, 7))
        )

    def html_body(self) -> str:
        if not self.kernels:
            return ""
        rows = [
            [f'<span style="{MONO}">{esc(r[0])}</span>', status_badge(r[1]), *(esc(c) for c in r[2:])]
            for r in self._rows()
        ]
        return table(self._HEADERS, rows, numeric=(3, 5, 7))
