"""The view of ``%ws live``: whether this notebook's page is connected, and the user's settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import RichView
from .common import OK, WARN, badge, esc

__all__ = ["LiveStatusView"]


@dataclass(repr=False)
class LiveStatusView(RichView):
    """A :class:`~ws_jupyter.live.LiveStatus` as lines of text (``status`` keeps it)."""

    status: Any
    kind = "live"

    def title(self) -> str:
        return "Live link to this notebook"

    def lines(self) -> list[str]:
        s = self.status
        if not s.connected:
            return [f"Not connected to the notebook page: {s.problem}"]
        lines = [
            f"Connected to {s.path or 'the notebook'} in {s.frontend} (ws-jupyter extension {s.version})",
            "agent proposals: " + ("applied at once (accept mode)" if s.mode == "accept" else "reviewed by you"),
            "agent runs in this kernel: " + ("ask you first" if s.user_runs == "ask" else "off"),
        ]
        if not s.subshells:
            lines.append("this kernel has no subshells: the link works between cells only (ipykernel 7 lifts this)")
        return lines

    def text(self) -> str:
        return "\n".join(self.lines())

    def html_body(self) -> str:
        state = badge("connected", OK) if self.status.connected else badge("not connected", WARN)
        rows = "".join(f"<div>{esc(line)}</div>" for line in self.lines())
        return f"<div>{state}</div>{rows}"
