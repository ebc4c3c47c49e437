"""Bounded, UTF-8-safe capture of one output stream (stdout or stderr) of a process.

A notebook may leave a chatty server running for hours: memory must stay bounded, yet the
*newest* output is what matters ("why did it crash?"). ``RetainedOutput`` keeps the last
``max_bytes`` bytes, counts what it dropped, and never hands out text that starts or ends in the
middle of a UTF-8 character. ``Utf8Splitter`` cuts a byte stream into decodable pieces for the
live callbacks, so a multi-byte character split across two reads is delivered whole.
"""

from __future__ import annotations

import threading

__all__ = ["RetainedOutput", "Utf8Splitter", "incomplete_utf8_tail"]


def incomplete_utf8_tail(data: bytes | bytearray | memoryview) -> int:
    """Number of trailing bytes of ``data`` that start a UTF-8 character not yet complete.

    >>> incomplete_utf8_tail("é".encode()[:1])
    1
    >>> incomplete_utf8_tail(b"abc")
    0
    """
    n = len(data)
    # A character is at most 4 bytes: look back over at most 3 continuation bytes to its lead byte.
    for back in range(1, min(4, n) + 1):
        byte = data[n - back]
        if byte & 0xC0 == 0x80:  # continuation byte: keep looking for the lead byte
            continue
        if byte < 0x80:
            return 0
        need = 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4 if byte >> 3 == 0b11110 else 1
        return back if back < need else 0
    return 0


def _skip_leading_continuations(data: bytes) -> bytes:
    """Drop up to 3 leading continuation bytes (the tail of a character cut by trimming)."""
    i = 0
    while i < min(3, len(data)) and data[i] & 0xC0 == 0x80:
        i += 1
    return data[i:] if i else data


class Utf8Splitter:
    """Turns arbitrary byte chunks into text, holding back an incomplete trailing character.

    Invalid bytes (a binary program's output) become U+FFFD rather than raising.

    >>> s = Utf8Splitter()
    >>> s.feed("é".encode()[:1]), s.feed("é".encode()[1:])
    ('', 'é')
    """

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> str:
        data = self._pending + chunk if self._pending else chunk
        cut = incomplete_utf8_tail(data)
        if cut:
            self._pending = bytes(data[-cut:])
            data = data[:-cut]
        else:
            self._pending = b""
        return data.decode("utf-8", "replace") if data else ""

    def skip(self, chunk: bytes) -> None:
        """Like ``feed`` for a chunk nobody reads: no decoding, only the trailing character is kept.

        So a reader that starts listening later still gets its first character whole.
        """
        tail = chunk[-4:] if len(chunk) >= 4 else (self._pending + chunk)[-4:]
        cut = incomplete_utf8_tail(tail)
        self._pending = bytes(tail[-cut:]) if cut else b""

    def flush(self) -> str:
        """End of stream: whatever is pending is an invalid (truncated) character."""
        data, self._pending = self._pending, b""
        return data.decode("utf-8", "replace") if data else ""


class RetainedOutput:
    """The newest ``max_bytes`` bytes of a stream, plus counts of everything seen.

    ``max_bytes=None`` keeps everything; ``0`` keeps nothing (callbacks still see all output).
    Thread-safe: one I/O thread appends while notebook code reads ``text``.

    >>> out = RetainedOutput(max_bytes=4)
    >>> out.append(b"hello ") ; out.append(b"world")
    >>> out.text, out.dropped_bytes, out.truncated
    ('orld', 7, True)
    """

    __slots__ = ("_buf", "_closed", "_lock", "_max", "total_bytes")

    def __init__(self, max_bytes: int | None = 1 << 20) -> None:
        self._max = max_bytes
        self._buf = bytearray()
        self._lock = threading.Lock()
        self._closed = False
        self.total_bytes = 0

    @property
    def max_bytes(self) -> int | None:
        return self._max

    def append(self, data: bytes) -> None:
        with self._lock:
            self.total_bytes += len(data)
            limit = self._max
            if limit is None:
                self._buf += data
            elif len(data) >= limit:
                self._buf[:] = data[len(data) - limit :] if limit else b""
            else:
                self._buf += data
                excess = len(self._buf) - limit
                if excess > 0:
                    del self._buf[:excess]  # O(1) amortised for bytearray front deletion

    def close(self) -> None:
        """The stream ended: a trailing incomplete character is now shown (as U+FFFD)."""
        with self._lock:
            self._closed = True

    @property
    def retained_bytes(self) -> int:
        return len(self._buf)

    @property
    def dropped_bytes(self) -> int:
        """Bytes the process wrote that are no longer retained (oldest first)."""
        return self.total_bytes - len(self._buf)

    @property
    def truncated(self) -> bool:
        return self.dropped_bytes > 0

    @property
    def data(self) -> bytes:
        """The retained raw bytes (may start inside a character when truncated)."""
        with self._lock:
            return bytes(self._buf)

    @property
    def text(self) -> str:
        """Retained output as text: never starts or (while running) ends inside a character."""
        with self._lock:
            data = bytes(self._buf)
            truncated = self.total_bytes > len(data)
            closed = self._closed
        if truncated:
            data = _skip_leading_continuations(data)
        if not closed:
            cut = incomplete_utf8_tail(data)
            if cut:
                data = data[:-cut]
        return data.decode("utf-8", "replace")

    def __repr__(self) -> str:
        return (
            f"RetainedOutput(retained={self.retained_bytes}, dropped={self.dropped_bytes}, "
            f"max_bytes={self._max})"
        )
