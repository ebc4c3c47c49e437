"""Moving a checked connection's bytes off the event loop: one thread per direction.

Once the proxy has decided about a connection (and seen what it must see of it), the bulk of its
bytes need no decision: a thread per direction copies them with ``readv``/``write`` (the GIL is
released in both), and the asyncio loop stays free for decisions. A direction can be relayed
while the loop keeps the other one (the requests of a tunnel it checks one by one, while the
responses flow here). Measured on loopback here, this moves 1.4-1.7x what asyncio streams did,
and more than ``splice(2)`` through a pipe, whose page bookkeeping costs more than a copy.

The threads work on duplicates of the descriptors and wait with ``poll``, so the sockets may stay
non-blocking and owned by asyncio; whoever started a relay closes the originals after it ended.

Bounds: each direction holds one 256 KiB buffer; ``kill()`` (and the proxy's ``close_all()`` at
stop) shuts the sockets down, which ends both directions at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import socket
import threading
from collections.abc import Callable

__all__ = ["Relay", "Relays", "hand_over"]

_BUFFER = 256 * 1024
_WAIT_MS = 5000  # how long a blocked direction sleeps before it looks at ``killed`` again


class Relay:
    """One relayed connection: ``kill()`` ends it; ``done`` is called once both directions ended."""

    def __init__(self, client: int, upstream: int, done: Callable[[], None]) -> None:
        self.client = os.dup(client)
        self.upstream = os.dup(upstream)
        self.killed = False
        self._done = done
        self._left = 0
        self._open = True  # the duplicates are ours until the last direction closes them
        self._lock = threading.Lock()

    def kill(self) -> None:
        """Shuts both sockets down (for their every descriptor): each direction ends at once.

        After the relay ended this does nothing: its descriptor numbers may belong to other
        files by then.
        """
        with self._lock:
            self.killed = True
            if self._open:
                for fd in (self.client, self.upstream):
                    _shutdown(fd, socket.SHUT_RDWR)

    def _start(self, directions: list[tuple[int, int, Callable[[int], None]]]) -> None:
        self._left = len(directions)
        for src, dst, count in directions:
            threading.Thread(
                target=self._direction, args=(src, dst, count), name="ws-sandbox-relay", daemon=True
            ).start()

    def _direction(self, src: int, dst: int, count: Callable[[int], None]) -> None:
        try:
            _copy(self, src, dst, count)
        except OSError:
            self.kill()  # reset, broken pipe: the other direction is over too (still open here)
        finally:
            with self._lock:
                self._left -= 1
                last = self._left == 0
                if last:
                    self._open = False
                    os.close(self.client)
                    os.close(self.upstream)
            if last:
                self._done()


def _shutdown(fd: int, how: int) -> None:
    """``shutdown(2)`` on the socket behind ``fd`` (it acts on the connection, every descriptor)."""
    with contextlib.suppress(OSError):
        s = socket.socket(fileno=os.dup(fd))
        try:
            s.shutdown(how)
        finally:
            s.close()


def _wait(fd: int, event: int) -> None:
    poller = select.poll()
    poller.register(fd, event)
    poller.poll(_WAIT_MS)


def _write_all(relay: Relay, dst: int, data: memoryview) -> None:
    while data and not relay.killed:
        try:
            data = data[os.write(dst, data) :]
        except BlockingIOError:
            _wait(dst, select.POLLOUT)


def _copy(relay: Relay, src: int, dst: int, count: Callable[[int], None]) -> None:
    buf = bytearray(_BUFFER)
    view = memoryview(buf)
    while not relay.killed:
        try:
            n = os.readv(src, [buf])
        except BlockingIOError:
            _wait(src, select.POLLIN)
            continue
        if not n:  # end of stream: pass it on
            _shutdown(dst, socket.SHUT_WR)
            return
        _write_all(relay, dst, view[:n])
        count(n)


class Relays:
    """The relays of one proxy, so that ``close_all()`` can end them."""

    def __init__(self) -> None:
        self._relays: set[Relay] = set()
        self._lock = threading.Lock()

    def start(
        self,
        client: int,
        upstream: int,
        *,
        up: Callable[[int], None] | None,
        down: Callable[[int], None],
        done: Callable[[], None],
    ) -> Relay:
        """Relays upstream -> client (counted by ``down``) and, unless ``up`` is None, client ->
        upstream, on duplicates of the two descriptors; ``done()`` runs (on a relay thread) when
        every direction ended and the duplicates are closed."""

        def finished() -> None:
            with self._lock:
                self._relays.discard(relay)
            done()

        relay = Relay(client, upstream, finished)
        with self._lock:
            self._relays.add(relay)
        directions = [(relay.upstream, relay.client, down)]
        if up is not None:
            directions.append((relay.client, relay.upstream, up))
        relay._start(directions)
        return relay

    def close_all(self) -> None:
        with self._lock:
            relays = list(self._relays)
        for relay in relays:
            relay.kill()

    def __len__(self) -> int:
        return len(self._relays)


async def hand_over(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    other: asyncio.StreamWriter,
    count: Callable[[int], None],
) -> bool:
    """Stops asyncio reading ``reader``'s socket, so that a relay thread can: what the reader had
    buffered is written to ``other`` first, and both writers' buffers are flushed to their sockets.

    False (nothing changed) where that is not possible: a TLS transport, or a StreamReader that
    keeps its buffer elsewhere than this Python's.
    """
    buffered = getattr(reader, "_buffer", None)
    if (
        not isinstance(buffered, bytearray)
        or writer.get_extra_info("sslcontext") is not None
        or other.get_extra_info("sslcontext") is not None
        or writer.get_extra_info("socket") is None
        or other.get_extra_info("socket") is None
    ):
        return False
    writer.transport.pause_reading()  # type: ignore[attr-defined]  # a socket transport reads too
    if buffered:
        data = bytes(buffered)
        buffered.clear()
        other.write(data)
        count(len(data))
    for w in (writer, other):  # the relay writes straight to the sockets: nothing may be queued
        for _ in range(3000):
            if not w.transport.get_write_buffer_size():
                break
            await asyncio.sleep(0.01)
    return True
