"""Moving a checked connection's bytes in the kernel: ``splice(2)``, one thread per direction.

Once the proxy has decided about a connection (and seen what it must see of it), the bulk of its
bytes need not pass through Python: a thread per direction moves them socket -> pipe -> socket
with ``os.splice``, and the asyncio loop stays free for decisions. A direction can be relayed
while the loop keeps the other one (the requests of a tunnel it checks one by one, while the
responses flow here).

The threads work on duplicates of the descriptors and wait with ``poll``, so the sockets may stay
non-blocking and owned by asyncio; whoever started a relay closes the originals after it ended.
Where splice is not available (not Linux, Python < 3.10) the threads copy through a buffer.

Bounds: each direction holds one pipe (1 MiB) or one 256 KiB buffer; ``kill()`` (and the proxy's
``close_all()`` at stop) shuts the sockets down, which ends both directions at once.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import socket
import threading
from collections.abc import Callable

__all__ = ["Relay", "Relays"]

_PIPE_SIZE = 1 << 20
_F_SETPIPE_SZ = 1031
_NONBLOCK = getattr(os, "SPLICE_F_NONBLOCK", 2)
_WAIT_MS = 5000  # how long a blocked direction sleeps before it looks at ``killed`` again


class Relay:
    """One relayed connection: ``kill()`` ends it; ``done`` is called once both directions ended."""

    def __init__(self, client: int, upstream: int, done: Callable[[], None]) -> None:
        self.client = os.dup(client)
        self.upstream = os.dup(upstream)
        self.killed = False
        self._done = done
        self._left = 0
        self._lock = threading.Lock()

    def kill(self) -> None:
        """Shuts both sockets down (for their every descriptor): each direction ends at once."""
        self.killed = True
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
            self.kill()  # reset, broken pipe: the other direction is over too
        finally:
            with self._lock:
                self._left -= 1
                last = self._left == 0
            if last:
                os.close(self.client)
                os.close(self.upstream)
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
    r = w = -1
    if hasattr(os, "splice"):
        r, w = os.pipe()
        with contextlib.suppress(OSError):
            import fcntl

            fcntl.fcntl(w, _F_SETPIPE_SZ, _PIPE_SIZE)
    buf = bytearray(256 * 1024)
    try:
        while not relay.killed:
            try:
                n = os.splice(src, w, _PIPE_SIZE, flags=_NONBLOCK) if r >= 0 else os.readv(src, [buf])
            except BlockingIOError:
                _wait(src, select.POLLIN)
                continue
            except OSError as exc:
                if r >= 0 and exc.errno == errno.EINVAL:  # this kernel cannot splice this socket
                    os.close(r)
                    os.close(w)
                    r = w = -1
                    continue
                raise
            if not n:  # end of stream: pass it on
                _shutdown(dst, socket.SHUT_WR)
                return
            if r >= 0:
                left = n
                while left and not relay.killed:
                    try:
                        left -= os.splice(r, dst, left, flags=_NONBLOCK)
                    except BlockingIOError:
                        _wait(dst, select.POLLOUT)
            else:
                _write_all(relay, dst, memoryview(buf)[:n])
            count(n)
    finally:
        if r >= 0:
            os.close(r)
            os.close(w)


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
