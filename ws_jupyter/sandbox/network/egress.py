"""The egress log: every connection a sandbox tried to open through its proxy, and what happened.

The proxy records an attempt the moment it decides (allowed or denied, and why) and updates it
as bytes flow and when it closes; ``EgressLog.events()`` returns immutable snapshots. The log is
bounded (oldest entries dropped, ``dropped`` counts them), so a sandbox that opens connections in
a loop costs a fixed amount of memory.

Each attempt also remembers which host processes it came from (the chain of parent pids of the
process that connected, read by the proxy from the kernel, not from anything the sandbox says),
so a command's result can tell which denied attempts were its own.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

__all__ = ["EgressEvent", "EgressLog", "EgressRecord", "denied_summary"]


@dataclass(frozen=True)
class EgressEvent:
    """One connection attempt as logged.

    ``host``/``port`` are what the sandbox asked for (``host`` is ``"?"`` when the request could
    not be read); ``allowed`` is the proxy's decision and ``reason`` says why (``"allowed by
    pypi.org"``, ``"not in the allow-list"``, ``"resolves to a private address 10.0.0.1"``...);
    ``address`` is the IP address connected to; ``bytes_up``/``bytes_down`` count payload sent
    out / received (so far, until ``closed``); ``secret_header`` names a header the proxy added.
    """

    id: int
    time: datetime
    host: str
    port: int | None
    allowed: bool
    reason: str
    method: str = ""
    address: str | None = None
    bytes_up: int = 0
    bytes_down: int = 0
    closed: bool = False
    duration_ms: float | None = None
    secret_header: str | None = None

    def describe(self) -> str:
        """One line for logs and text views."""
        where = self.host if self.port is None else f"{self.host}:{self.port}"
        verdict = "allowed" if self.allowed else "DENIED"
        traffic = f", {self.bytes_up} B up / {self.bytes_down} B down" if self.allowed else ""
        return f"{self.time:%H:%M:%S} {verdict} {self.method or '-'} {where} ({self.reason}{traffic})"


class EgressRecord:
    """The live, mutable side of one entry (owned by the proxy's thread)."""

    __slots__ = (
        "_t0",
        "address",
        "allowed",
        "bytes_down",
        "bytes_up",
        "closed",
        "duration_ms",
        "host",
        "id",
        "lineage",
        "method",
        "port",
        "reason",
        "secret_header",
        "time",
    )

    def __init__(self, id: int, host: str, port: int | None, method: str, lineage: tuple[int, ...]) -> None:
        self.id = id
        self.time = datetime.now(timezone.utc)
        self._t0 = time.monotonic()
        self.host = host
        self.port = port
        self.method = method
        self.lineage = lineage
        self.allowed = False
        self.reason = "pending"
        self.address: str | None = None
        self.bytes_up = 0
        self.bytes_down = 0
        self.closed = False
        self.duration_ms: float | None = None
        self.secret_header: str | None = None

    def snapshot(self) -> EgressEvent:
        return EgressEvent(
            id=self.id,
            time=self.time,
            host=self.host,
            port=self.port,
            allowed=self.allowed,
            reason=self.reason,
            method=self.method,
            address=self.address,
            bytes_up=self.bytes_up,
            bytes_down=self.bytes_down,
            closed=self.closed,
            duration_ms=self.duration_ms,
            secret_header=self.secret_header,
        )


class EgressLog:
    """Bounded, thread-safe log of connection attempts; ``subscribe`` for live views.

    >>> log = EgressLog(max_entries=2)
    >>> rec = log.open("pypi.org", 443, "CONNECT", ())
    >>> log.decide(rec, False, "not in the allow-list"); log.close(rec)
    >>> [e.describe().split(" ", 1)[1] for e in log.events()]
    ['DENIED CONNECT pypi.org:443 (not in the allow-list)']
    """

    def __init__(self, max_entries: int = 5000) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError(f"max_entries must be a positive integer, got {max_entries!r}")
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._records: deque[EgressRecord] = deque(maxlen=max_entries)
        self._ids = itertools.count(1)
        self._subscribers: tuple[Callable[[], None], ...] = ()
        self.dropped = 0
        self.version = 0  # bumped on every change: views redraw when it moved

    # --- written by the proxy -------------------------------------------------------------------

    def open(self, host: str, port: int | None, method: str, lineage: tuple[int, ...]) -> EgressRecord:
        """A new attempt (pending until ``decide``)."""
        with self._lock:
            record = EgressRecord(next(self._ids), host, port, method, lineage)
            if len(self._records) == self.max_entries:
                self.dropped += 1
            self._records.append(record)
        return record

    def decide(self, record: EgressRecord, allowed: bool, reason: str, **fields: object) -> None:
        """Records the decision (and ``host``/``port``/``method``/``address``... when learnt)."""
        with self._lock:
            record.allowed = allowed
            record.reason = reason
            for name, value in fields.items():
                setattr(record, name, value)
        self._changed()

    def close(self, record: EgressRecord) -> None:
        with self._lock:
            if record.closed:
                return
            record.closed = True
            record.duration_ms = round((time.monotonic() - record._t0) * 1000.0, 1)
        self._changed()

    def _changed(self) -> None:
        self.version += 1
        for callback in self._subscribers:
            try:
                callback()
            except Exception:  # a broken view must not break the proxy
                pass

    # --- read by everyone else -----------------------------------------------------------------------

    def events(
        self, *, denied_only: bool = False, since: datetime | None = None, limit: int | None = None
    ) -> list[EgressEvent]:
        """Snapshots, oldest first (``limit``: the newest ``limit`` of them)."""
        with self._lock:
            records = list(self._records)
            events = [
                r.snapshot()
                for r in records
                if (not denied_only or (not r.allowed and r.reason != "pending"))
                and (since is None or r.time >= since)
            ]
        return events[-limit:] if limit is not None and limit >= 0 else events

    def denied_from(self, pid: int, since: datetime) -> list[EgressEvent]:
        """Denied attempts made since ``since`` by process ``pid`` or any of its descendants."""
        with self._lock:
            return [
                r.snapshot()
                for r in self._records
                if r.time >= since and not r.allowed and r.reason != "pending" and pid in r.lineage
            ]

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        """``callback()`` after each change (on the proxy's thread: must be quick); returns an
        unsubscribe function."""
        with self._lock:
            self._subscribers = (*self._subscribers, callback)

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers = tuple(c for c in self._subscribers if c is not callback)

        return unsubscribe

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
            self.dropped = 0
        self._changed()

    def __len__(self) -> int:
        return len(self._records)


def denied_summary(events: list[EgressEvent]) -> str:
    """``network: 2 connections to api.example.com denied by the allow-list`` ("" without events).

    Refusals for another reason than the allow-list itself (a private address, a malformed
    request) follow with their reason.
    """
    if not events:
        return ""
    listed: dict[str, int] = {}
    other: dict[tuple[str, str], int] = {}
    for event in events:
        host = event.host if event.port in (None, 80, 443) else f"{event.host}:{event.port}"
        if event.reason == "not in the allow-list":
            listed[host] = listed.get(host, 0) + 1
        else:
            other[(host, event.reason)] = other.get((host, event.reason), 0) + 1

    def count(n: int, host: str) -> str:
        return f"{n} connection{'' if n == 1 else 's'} to {host}"

    parts = []
    if listed:
        hosts = [count(n, h) for h, n in list(listed.items())[:5]]
        if len(listed) > 5:
            hosts.append(f"{len(listed) - 5} more hosts")
        parts.append(f"{', '.join(hosts)} denied by the allow-list")
    for (host, reason), n in list(other.items())[:5]:
        parts.append(f"{count(n, host)} refused ({reason})")
    if len(other) > 5:
        parts.append(f"{len(other) - 5} more refusals")
    return "network: " + "; ".join(parts)
