"""Kernel tools: ``workspace_execute_code``, ``workspace_restart_kernel``, ``workspace_list_kernels``.

A code interpreter for the agent: Python runs statefully in one of the sandbox's kernels (load a
CSV once, explore it over many calls), in the sandbox's isolation. The model gets what a person
reading the notebook cell would need, as text — stdout/stderr, each rich output's text form,
``Out[n]: <result>``, the error with its traceback trimmed and without terminal colours — within
the token budget, and images (PNG, JPEG, GIF, WebP) as image parts through the same
``ToolResult``/``MediaPart`` path as ``workspace_read_file`` (every adapter already handles it);
SVG comes as its text. A time limit interrupts the kernel (its state survives) and says so.

Approval follows ``workspace_execute_command``: code in a kernel can do what a command can, so on
a sandbox without isolation the tool waits for approval unless the config says otherwise.
The tools exist only when the sandbox can run kernels (``sandbox.kernels.available``).
"""

from __future__ import annotations

import dataclasses
import html
import re
from datetime import datetime, timezone

from ...errors import KernelError
from ...sandbox.capabilities import sandbox_kernels, sandbox_network_note, sandbox_timeout
from ...sandbox.kernels.provider import KernelProvider
from ...sandbox.kernels.result import ExecutionError, ExecutionResult, MimeBundle, omitted
from ...text.ansi import strip_ansi
from ...text.shaping import truncate_head, truncate_head_tail
from ...text.tokens import count_tokens
from ..base import ToolCall, ToolSpec
from ..facts import DEFAULT_MAX_MEDIA_BYTES, LOOKS, WORKSPACE_TOOLS, ToolHints
from ..schema import Param
from ..types import MediaPart, ToolResult
from .execute_command import _default_approval, _static_default_approval, format_streams

__all__ = ["EXECUTE_CODE_SPEC", "LIST_KERNELS_SPEC", "RESTART_KERNEL_SPEC", "format_execution"]

T = WORKSPACE_TOOLS.SANDBOX
_MAX_IMAGES = 8
_TAG = re.compile(r"<[^>]+>")
_BLANK_RUNS = re.compile(r"\n\s*\n\s*\n+")
_RULE = re.compile(r"^-{20,}$")

EXECUTE_CODE_DESCRIPTION = (
    "Run Python code in a persistent Jupyter kernel inside the workspace sandbox, like a notebook cell: "
    "variables, imports and loaded data stay available to later calls on the same kernel. The working "
    "directory is the workspace root. Returns stdout/stderr, the value of the last expression as "
    "'Out[n]: ...', text forms of displayed objects, plots and images as images, and errors with a "
    "trimmed traceback. timeout is in seconds (default: the sandbox's command limit); when it passes "
    "the code is interrupted and the kernel keeps its state. kernel names a separate kernel (default "
    "'default'); use workspace_restart_kernel to start over and workspace_list_kernels to see them."
)

_KERNEL = Param(
    "kernel",
    "string",
    "Kernel name (letters, digits, '_', '.', '-'); each name is an independent kernel, started on first use.",
    default="default",
)

EXECUTE_CODE_PARAMS = (
    Param(
        "code",
        "string",
        "Python code to run, e.g. \"import pandas as pd\\ndf = pd.read_csv('data.csv')\\ndf.describe()\".",
        required=True,
        allow_empty=False,
    ),
    _KERNEL,
    Param("timeout", "number", "Time limit in seconds. Default: the sandbox's command limit.", minimum=0.001),
)


def _kernels(call: ToolCall) -> KernelProvider:
    kernels = sandbox_kernels(call.sandbox())
    if kernels is None:
        raise KernelError("This sandbox cannot run kernels", code="KERNELS_UNAVAILABLE")
    ok, why = kernels.availability()
    if not ok:
        raise KernelError(f"This sandbox cannot run kernels: {why}", code="KERNELS_UNAVAILABLE")
    return kernels


def execute_code(call: ToolCall) -> str | ToolResult:
    sandbox = call.sandbox()
    kernels = _kernels(call)
    timeout = call.args["timeout"]
    if timeout is None:
        timeout = sandbox_timeout(sandbox)
    since = datetime.now(timezone.utc)
    result = kernels.execute(
        call.args["code"],
        kernel=call.args["kernel"],
        timeout=timeout,
        origin="agent",
        abort=call.context.abort,
        tool_call_id=call.context.tool_call_id,
    )
    output = format_execution(
        result,
        max_tokens=call.max_tokens,
        max_media_bytes=int(call.option("max_media_bytes", DEFAULT_MAX_MEDIA_BYTES)),
    )
    # network allow mode: the connection attempts of this execution that the allow-list denied
    kernel = kernels.get(call.args["kernel"])
    note = sandbox_network_note(sandbox, kernel.pid if kernel is not None else None, since)
    if not note:
        return output
    if isinstance(output, ToolResult):
        return dataclasses.replace(output, text=f"{output.text}\n\n{note}")
    return f"{output}\n\n{note}"


def _html_text(markup: str) -> str:
    text = html.unescape(_TAG.sub("", markup))
    return _BLANK_RUNS.sub("\n\n", text).strip()


def _bundle_text(bundle: MimeBundle) -> str:
    """What a model reads of one rich output (images are sent separately)."""
    if bundle.markdown:
        return bundle.markdown.strip()
    if bundle.svg:
        return f"[SVG image]\n{bundle.svg.strip()}"
    text = bundle.text
    if bundle.html and (text is None or (text.startswith("<") and text.endswith(" object>"))):
        return _html_text(bundle.html)
    if text is not None:
        return text
    if "application/json" in bundle.data:
        import json

        return json.dumps(bundle.data["application/json"], ensure_ascii=False, default=str)[:100_000]
    return f"[{', '.join(bundle.mime_types) or 'empty'} output]"


def trim_traceback(error: ExecutionError, max_tokens: int | None) -> str:
    """The error as text: the traceback without colours, blank lines and IPython's ruler, cut to
    the budget (the end — the innermost frames and the error line — is what matters most)."""
    text = strip_ansi("\n".join(error.traceback))
    lines = [ln for ln in text.splitlines() if ln.strip() and not _RULE.match(ln.strip())]
    text = "\n".join(lines).strip()
    if not text:
        text = str(error)
    elif str(error).split(":")[0] not in text:
        text += f"\n{error}"
    return truncate_head_tail(text, max_tokens, head_ratio=0.2)


def _dropped_note(stream: str, chars: int, lines: int) -> str:
    if not chars:
        return ""
    return f"[{omitted(lines, chars)} of {stream} in the middle were not kept; its start and end are shown]"


def format_execution(
    result: ExecutionResult, *, max_tokens: int | None = 2000, max_media_bytes: int = DEFAULT_MAX_MEDIA_BYTES
) -> str | ToolResult:
    """The tool output for an :class:`~ws_jupyter.sandbox.kernels.ExecutionResult` (text + image parts).

    The budget goes first to the error (up to half), then to the result and the rich outputs
    (up to a quarter each), and the rest to stdout/stderr (head and tail kept).
    """
    budget = max_tokens or None
    sections: dict[str, str] = {}
    media: list[MediaPart] = []
    shown_bytes = 0
    display_lines: list[str] = []
    for bundle in result.display:
        for mime, raw in bundle.images():
            if len(media) < _MAX_IMAGES and shown_bytes + len(raw) <= max_media_bytes:
                media.append(MediaPart.from_bytes(mime, raw))
                shown_bytes += len(raw)
                display_lines.append(f"[image {len(media)}: {mime}, {len(raw):,} bytes]")
            else:
                display_lines.append(f"[{mime} image of {len(raw):,} bytes not sent: over the media limits]")
        if not bundle.has_image or bundle.markdown or bundle.svg:
            display_lines.append(_bundle_text(bundle))
    if result.displays_dropped:
        display_lines.append(f"[{result.displays_dropped} more outputs were not kept]")

    def cap(text: str, share: float) -> str:
        return truncate_head(text, max(50, int(budget * share))) if budget else text

    if result.error is not None:
        sections["error"] = trim_traceback(result.error, max(100, budget // 2) if budget else None)
    if result.result is not None:
        for mime, raw in result.result.images():
            if len(media) < _MAX_IMAGES and shown_bytes + len(raw) <= max_media_bytes:
                media.append(MediaPart.from_bytes(mime, raw))
                shown_bytes += len(raw)
        label = f"Out[{result.execution_count}]: " if result.execution_count is not None else "Out: "
        text = _bundle_text(result.result)
        sections["result"] = cap(label + text, 0.25)
    if display_lines:
        sections["display"] = cap("\n".join(display_lines), 0.25)
    used = sum(count_tokens(t) for t in sections.values())
    stream_budget = max(100, budget - used - 30) if budget else None
    streams = format_streams(
        result.stdout,
        result.stderr,
        tail=0,
        max_tokens=stream_budget,
        empty="",
        notes=(
            _dropped_note("stdout", result.stdout_dropped, result.stdout_dropped_lines),
            _dropped_note("stderr", result.stderr_dropped, result.stderr_dropped_lines),
        ),
    )
    parts = [
        p for p in (streams, sections.get("display"), sections.get("result"), sections.get("error")) if p
    ]
    notes = [f"[{n}]" for n in result.notes]
    body = "\n\n".join(parts + (["\n".join(notes)] if notes else []))
    if not body:
        body = "(no output)"
    return ToolResult(text=body, media=tuple(media)) if media else body


def restart_kernel(call: ToolCall) -> str:
    name = call.args["kernel"]
    kernels = _kernels(call)
    kernels.restart(name)
    return f'Kernel "{name}" restarted: its variables and imports are gone.'


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


def list_kernels(call: ToolCall) -> str:
    infos = _kernels(call).list()
    if not infos:
        return 'No kernels yet. workspace_execute_code starts the "default" kernel on first use.'
    lines = []
    for i in infos:
        lines.append(
            f"{i.name}\t{i.status}\t{i.spec} ({i.language})\texecutions: {i.executions}\t"
            f"idle: {_age(i.idle_seconds)}\trestarts: {i.restarts}"
        )
    return "\n".join(lines)


EXECUTE_CODE_SPEC = ToolSpec(
    name=T.EXECUTE_CODE,
    description=EXECUTE_CODE_DESCRIPTION,
    params=EXECUTE_CODE_PARAMS,
    run=execute_code,
    title="Run Python code (kernel)",
    # code in a kernel can do what a command can
    hints=ToolHints(destructive=True, idempotent=False, runs_code=True),
    needs={"sandbox", "kernels"},
    writes=False,
    options=("max_media_bytes",),
    default_approval=_default_approval,
    static_default_approval=_static_default_approval,
)

RESTART_KERNEL_SPEC = ToolSpec(
    name=T.RESTART_KERNEL,
    description=(
        "Restart a kernel of the workspace sandbox: all its variables and imports are lost, and the next "
        "workspace_execute_code on it starts fresh. Use it when the kernel is in a bad state."
    ),
    params=(_KERNEL,),
    run=restart_kernel,
    title="Restart kernel",
    # restarting drops the kernel's state
    hints=ToolHints(destructive=True, idempotent=False),
    needs={"sandbox", "kernels"},
    writes=False,
    options=(),
    max_output_tokens=None,
)

LIST_KERNELS_SPEC = ToolSpec(
    name=T.LIST_KERNELS,
    description=(
        "List the kernels of the workspace sandbox: name, state (idle, busy, stopped), kernelspec, how "
        "many executions ran, how long it has been idle. Idle kernels are shut down after a while."
    ),
    params=(),
    run=list_kernels,
    title="List kernels",
    hints=LOOKS,
    needs={"sandbox", "kernels"},
    writes=False,
    options=(),
)
