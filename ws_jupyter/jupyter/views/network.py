"""The egress log of a sandbox in network ``allow`` mode: every connection attempt, newest first.

Hosts, reasons and addresses come from the sandbox (what it asked for): they are escaped like
any other text, never rendered as markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import RichView
from .common import BAD, MONO, MUTED, OK, badge, esc, format_bytes, table, text_table

__all__ = ["EgressRow", "EgressTableView"]


@dataclass(frozen=True)
class EgressRow:
    time: str
    allowed: bool
    method: str
    destination: str
    reason: str
    up: int
    down: int
    open: bool

    @classmethod
    def of(cls, event: Any) -> EgressRow:
        """A row from an ``EgressEvent``."""
        where = event.host if event.port is None else f"{event.host}:{event.port}"
        if event.host != "?" and ":" in event.host:
            where = f"[{event.host}]:{event.port}"
        reason = event.reason + (f" · adds {event.secret_header}" if event.secret_header else "")
        return cls(
            time=event.time.astimezone().strftime("%H:%M:%S"),
            allowed=bool(event.allowed),
            method=event.method or "-",
            destination=where,
            reason=reason,
            up=int(event.bytes_up),
            down=int(event.bytes_down),
            open=not event.closed,
        )


@dataclass(repr=False)
class EgressTableView(RichView):
    """The log as a table: time, verdict, method, destination, reason, bytes each way."""

    rows: list[EgressRow]
    mode: str = ""  # the sandbox's network, in one line
    dropped: int = 0
    limit: int | None = None
    notes: list[str] = field(default_factory=list)
    kind = "egress"

    def title(self) -> str:
        return "Network"

    def meta(self) -> str:
        denied = sum(1 for r in self.rows if not r.allowed)
        parts = [self.mode] if self.mode else []
        parts.append(f"{len(self.rows)} attempt{'' if len(self.rows) == 1 else 's'}, {denied} denied")
        if self.dropped:
            parts.append(f"{self.dropped} older ones dropped")
        return " · ".join(parts)

    def _cells(self) -> list[list[str]]:
        shown = list(reversed(self.rows))
        if self.limit is not None:
            shown = shown[: self.limit]
        return [
            [
                r.time,
                ("allowed" if r.allowed else "DENIED") + (" (open)" if r.open and r.allowed else ""),
                r.method,
                r.destination,
                r.reason,
                format_bytes(r.up) if r.allowed else "",
                format_bytes(r.down) if r.allowed else "",
            ]
            for r in shown
        ]

    def text(self) -> str:
        if not self.rows:
            return "No connection attempts yet."
        return text_table(
            ["TIME", "VERDICT", "METHOD", "DESTINATION", "REASON", "UP", "DOWN"],
            self._cells(),
            numeric=(5, 6),
        )

    def html_body(self) -> str:
        if not self.rows:
            return f'<div style="{MUTED}">No connection attempts yet.</div>'
        rows = [
            [
                esc(c[0]),
                badge(c[1], OK if c[1].startswith("allowed") else BAD),
                esc(c[2]),
                f'<span style="{MONO}">{esc(c[3])}</span>',
                f'<span style="{MUTED}">{esc(c[4])}</span>',
                esc(c[5]),
                esc(c[6]),
            ]
            for c in self._cells()
        ]
        hidden = len(self.rows) - len(rows)
        more = (
            f'<div style="{MUTED}">… {hidden} older attempts (ws.sandbox.egress_log())</div>'
            if hidden > 0
            else ""
        )
        return (
            table(["time", "verdict", "method", "destination", "reason", "up", "down"], rows, numeric=(5, 6))
            + more
        )
