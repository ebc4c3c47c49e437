"""Views of the agent tools: ``%ws tools`` (table or a provider's JSON schemas) and ``%ws call``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .base import RichView
from .common import (
    BAD,
    BORDER,
    MONO,
    MUTED,
    PRE,
    WARN,
    badge,
    esc,
    format_duration,
    one_line,
    text_table,
    to_json_text,
)

__all__ = ["CallProgressView", "JSONView", "ToolCallView", "ToolTableView"]


@dataclass(repr=False)
class ToolTableView(RichView):
    """``%ws tools``: the agent tools as a model sees them (name, description, schema)."""

    tools: list[Any]
    kind = "tools"

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tools]

    def title(self) -> str:
        return "Agent tools"

    def meta(self) -> str:
        n = len(self.tools)
        approval = sum(1 for t in self.tools if _needs_approval(t))
        text = f"{n} tool{'' if n == 1 else 's'}"
        if approval:
            text += f", {approval} need approval"
        return text

    def text(self) -> str:
        rows = [
            [
                t.name,
                "yes" if _needs_approval(t) else "",
                ", ".join(_params(t)),
                one_line(t.description, 60),
            ]
            for t in self.tools
        ]
        return text_table(["NAME", "APPROVAL", "PARAMETERS", "DESCRIPTION"], rows) if rows else "No tools."

    def html_body(self) -> str:
        if not self.tools:
            return f'<div style="{MUTED}">No tools (configure a filesystem, sandbox, search or skills).</div>'
        items = []
        for t in self.tools:
            flag = " " + badge("approval", WARN) if _needs_approval(t) else ""
            params = ", ".join(_params(t))
            items.append(
                f'<details style="margin: 3px 0"><summary style="cursor: pointer"><strong style="{MONO}">'
                f"{esc(t.name)}</strong>({esc(params)}){flag} "
                f'<span style="{MUTED}">{esc(one_line(t.description, 120))}</span></summary>'
                f'<div style="margin: 4px 0 6px 1.2em"><div style="white-space: pre-wrap">{esc(t.description)}</div>'
                f'<pre style="{PRE}; margin: 4px 0; padding: 4px; border: 1px solid {BORDER}">'
                f"{esc(to_json_text(t.input_schema))}</pre></div></details>"
            )
        return "".join(items)


def _needs_approval(tool: Any) -> bool:
    flag = getattr(tool, "require_approval", False)
    return bool(flag) if not callable(flag) else True


def _params(tool: Any) -> list[str]:
    schema = getattr(tool, "input_schema", None) or {}
    props = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
    required = set(schema.get("required", [])) if isinstance(schema, Mapping) else set()
    return [p if p in required else p + "?" for p in props]


@dataclass(repr=False)
class JSONView(RichView):
    """Tool schemas in a provider's format, as indented JSON text."""

    heading: str
    value: Any
    kind = "json"

    def title(self) -> str:
        return self.heading

    def text(self) -> str:
        return to_json_text(self.value)

    def html_body(self) -> str:
        # Pretty JSON as text: readable and searchable, where a JSON tree would start collapsed.
        return (
            f'<pre style="{PRE}; max-height: 36em; overflow: auto; padding: 4px; '
            f'border: 1px solid {BORDER}">{esc(self.text())}</pre>'
        )


@dataclass(repr=False)
class ToolCallView(RichView):
    """``%ws call``: a tool's output exactly as the model would receive it."""

    tool: str
    arguments: Any
    output: str
    duration: float
    is_error: bool = False
    media: list[tuple[str, str]] = field(default_factory=list)  # (mime, base64)
    blocked: bool = False  # a before_tool_call hook stopped the call: ``output`` is what it said
    cancelled: bool = False  # the notebook's stop button interrupted the call
    kind = "call"

    @classmethod
    def of(
        cls,
        tool: str,
        arguments: Any,
        output: Any,
        duration: float,
        blocked: bool = False,
        cancelled: bool = False,
    ) -> ToolCallView:
        """The view of what ``Tool.run`` returned: text (``ToolErrorText`` marks an error) or a
        ``ToolResult`` with media parts; ``duration``: the call's own time (not an approval wait)."""
        from ...tools.types import is_error_output, output_text

        media = [(m.mime_type, m.data) for m in getattr(output, "media", ())]
        return cls(
            tool, arguments, output_text(output), duration, is_error_output(output), media, blocked, cancelled
        )

    @property
    def status(self) -> str:
        """done, error, refused (by the user or the approver), blocked (by a hook) or cancelled."""
        if self.blocked:
            return "blocked"
        if self.cancelled:
            return "cancelled"
        if self.output.startswith("Tool call refused by user."):
            return "refused"
        return "error" if self.is_error else "done"

    def title(self) -> str:
        return f"{self.tool}({_short_args(self.arguments)})"

    def meta(self) -> str:
        status = {
            "blocked": "blocked by a hook · ",
            "refused": "refused · ",
            "error": "error · ",
            "cancelled": "interrupted · ",
        }
        return status.get(self.status, "") + format_duration(self.duration)

    def shown_in_place(self) -> ToolCallView:
        """Says the cell's live display already became this view, so the cell's value does not
        show it a second time (``_`` still holds it). Once: a later ``display(view)`` shows it."""

        def skip_once() -> None:
            self.__dict__.pop("_ipython_display_", None)

        self.__dict__["_ipython_display_"] = skip_once
        return self

    def text(self) -> str:
        return self.output

    def html_body(self) -> str:
        colour = {
            "error": f"color: {BAD}; ",
            "refused": f"color: {BAD}; ",
            "blocked": f"color: {WARN}; ",
            "cancelled": f"color: {WARN}; ",
        }.get(self.status, "")
        body = (
            f'<pre style="{PRE}; {colour}max-height: 36em; overflow: auto; '
            f'border-left: 3px solid {BORDER}; padding-left: 8px">{esc(self.output)}</pre>'
        )
        for mime, data in self.media:
            if mime.startswith("image/"):
                body += f'<img src="data:{esc(mime)};base64,{data}" style="max-width: 100%"/>'
        return body


def _short_args(arguments: Any, width: int = 80) -> str:
    text = json.dumps(arguments, ensure_ascii=False, default=repr)
    if isinstance(arguments, Mapping):
        text = text[1:-1]
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(repr=False)
class CallProgressView(RichView):
    """``%ws call`` while it runs: the call, what it is doing, and the newest lines of its output.

    The cell updates it in place (a few times a second) and finally replaces it with the
    ``ToolCallView``. ``lines`` are ``(stream, line)``, the newest complete ones; ``rich`` counts
    the rich outputs (plots, tables) so far, which the final view shows as the model gets them.
    """

    tool: str
    arguments: Any
    state: str  # what the call is doing: "starting kernel 'default'", "running in kernel 'default'"...
    elapsed: float
    lines: list[tuple[str, str]] = field(default_factory=list)
    hidden: int = 0  # earlier lines not shown
    rich: list[str] = field(default_factory=list)  # MIME types of the rich outputs so far
    stopping: bool = False  # the stop button was pressed; the call is being cancelled
    kind = "call-progress"

    def title(self) -> str:
        return f"{self.tool}({_short_args(self.arguments)})"

    def meta(self) -> str:
        state = "stopping…" if self.stopping else self.state + "…"
        return f"{state} {format_duration(self.elapsed)}"

    def _notes(self) -> list[str]:
        notes = []
        if self.hidden:
            notes.append(f"… {self.hidden:,} earlier line{'' if self.hidden == 1 else 's'} not shown …")
        if self.rich:
            kinds = ", ".join(sorted(set(self.rich)))
            notes.append(f"{len(self.rich)} rich output{'' if len(self.rich) == 1 else 's'} so far ({kinds})")
        if not self.stopping:
            notes.append("The notebook's stop button (■) interrupts it.")
        return notes

    def text(self) -> str:
        return "\n".join([f"{self.title()} — {self.meta()}", *self._notes(), *(line for _, line in self.lines)])

    def html_body(self) -> str:
        notes = "".join(f'<div style="{MUTED}; font-style: italic">{esc(n)}</div>' for n in self._notes())
        if not self.lines:
            return notes
        body = "".join(
            f'<span style="color: {BAD}">{esc(line)}</span>\n' if kind == "stderr" else f"{esc(line)}\n"
            for kind, line in self.lines
        )
        return f'{notes}<pre style="{PRE}; border-left: 3px solid {BORDER}; padding-left: 8px">{body}</pre>'
