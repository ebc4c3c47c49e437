"""What the proxy reads from the sandbox, parsed strictly and within bounds.

Everything here comes from a possibly hostile sandbox: request heads are limited in size and
count of headers, anything ambiguous is refused rather than guessed (two ``Host`` headers, both
``Content-Length`` and ``Transfer-Encoding``, folded header lines, bare LF line ends), and the TLS
ClientHello is walked with a length check at every step. Functions raise ``Malformed`` with a
short reason that is safe to show and log.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

__all__ = [
    "MAX_HEAD_BYTES",
    "Malformed",
    "RequestHead",
    "ResponseHead",
    "body_framing",
    "looks_like_http",
    "parse_client_hello",
    "parse_request_head",
    "parse_response_head",
    "read_client_hello",
    "read_head",
    "read_line",
    "relay_body",
]

#: A request or response head (request line and headers) larger than this is refused.
MAX_HEAD_BYTES = 32 * 1024
_MAX_HEADERS = 128
#: A ClientHello spread over more bytes than this is refused (real ones are under 2 KiB).
_MAX_CLIENT_HELLO = 64 * 1024
_MAX_CHUNK_LINE = 4096

_TOKEN = re.compile(rb"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_TARGET = re.compile(rb"^[\x21-\x7e]+$")
_VERSION = re.compile(rb"^HTTP/1\.[01]$")
_BAD_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_METHOD_START = re.compile(rb"^[A-Z]{3,12} ")


class Malformed(Exception):
    """The peer sent something that is not a well-formed request (the message says what)."""


class _Headers:
    """A head's header lines, in order (what request and response heads share)."""

    headers: list[tuple[str, str]]

    def get(self, name: str) -> str | None:
        """The value of header ``name`` (case-insensitive), or None."""
        lname = name.lower()
        return next((v for k, v in self.headers if k.lower() == lname), None)

    def count(self, name: str) -> int:
        lname = name.lower()
        return sum(1 for k, _ in self.headers if k.lower() == lname)

    def replace(self, name: str, value: str | None) -> None:
        """Drops every ``name`` header, then adds ``name: value`` (unless None)."""
        lname = name.lower()
        self.headers = [(k, v) for k, v in self.headers if k.lower() != lname]
        if value is not None:
            self.headers.append((name, value))

    def _encode(self, first_line: str) -> bytes:
        lines = [first_line, *(f"{k}: {v}" for k, v in self.headers)]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


@dataclass
class RequestHead(_Headers):
    method: str
    target: str
    version: str
    headers: list[tuple[str, str]]

    def encode(self) -> bytes:
        return self._encode(f"{self.method} {self.target} {self.version}")


@dataclass
class ResponseHead(_Headers):
    version: str
    status: int
    reason: str
    headers: list[tuple[str, str]]

    def encode(self) -> bytes:
        return self._encode(f"{self.version} {self.status} {self.reason}".rstrip())


async def read_head(reader: asyncio.StreamReader, timeout: float, *, first: bytes = b"") -> bytes:
    """Reads a head line by line, up to and including the blank line that ends it.

    ``first`` holds whole lines already read. Raises ``Malformed`` when the head is longer than
    ``MAX_HEAD_BYTES`` (or has too many lines) or the peer closes first, and ``TimeoutError`` when
    it does not arrive within ``timeout`` seconds. Bytes after the head stay in ``reader``.
    """
    data = bytearray(first)
    if data.endswith(b"\r\n\r\n") or data == b"\r\n":
        return bytes(data)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    lines = data.count(b"\n")
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise TimeoutError
        line = await read_line(reader, remaining, "request head")
        data += line
        lines += 1
        if len(data) > MAX_HEAD_BYTES:
            raise Malformed(f"request head longer than {MAX_HEAD_BYTES} bytes")
        if lines > _MAX_HEADERS + 1:
            raise Malformed(f"more than {_MAX_HEADERS} header lines")
        if line == b"\r\n":
            return bytes(data)


def _split_head(data: bytes) -> tuple[bytes, list[tuple[str, str]]]:
    if not data.endswith(b"\r\n\r\n"):
        raise Malformed("the head does not end with an empty line")
    lines = data[:-4].split(b"\r\n")
    first, rest = lines[0], lines[1:]
    if len(rest) > _MAX_HEADERS:
        raise Malformed(f"more than {_MAX_HEADERS} header lines")
    headers: list[tuple[str, str]] = []
    for line in rest:
        if not line or line[:1] in (b" ", b"\t"):
            raise Malformed("folded or empty header line")
        if b"\n" in line or b"\r" in line:
            raise Malformed("bare CR or LF in a header line")
        name, sep, value = line.partition(b":")
        if not sep or not _TOKEN.match(name):
            raise Malformed("invalid header line")
        value = value.strip(b" \t")
        if _BAD_VALUE.search(value):
            raise Malformed("control character in a header value")
        headers.append((name.decode("ascii"), value.decode("latin-1")))
    return first, headers


def parse_request_head(data: bytes) -> RequestHead:
    """Parses ``METHOD SP TARGET SP HTTP/1.x`` and the headers; ``Malformed`` for anything else."""
    first, headers = _split_head(data)
    parts = first.split(b" ")
    if len(parts) != 3 or not _TOKEN.match(parts[0]) or not _TARGET.match(parts[1]):
        raise Malformed("malformed request line")
    if not _VERSION.match(parts[2]):
        raise Malformed("not an HTTP/1.0 or HTTP/1.1 request")
    head = RequestHead(parts[0].decode("ascii"), parts[1].decode("ascii"), parts[2].decode("ascii"), headers)
    if head.count("host") > 1:
        raise Malformed("more than one Host header")
    body_framing(head.headers)  # refuses ambiguous framing now
    return head


def parse_response_head(data: bytes) -> ResponseHead:
    first, headers = _split_head(data)
    parts = first.split(b" ", 2)
    if len(parts) < 2 or not _VERSION.match(parts[0]) or not parts[1].isdigit() or len(parts[1]) != 3:
        raise Malformed("malformed status line")
    reason = parts[2].decode("latin-1") if len(parts) == 3 else ""
    if _BAD_VALUE.search(parts[2] if len(parts) == 3 else b""):
        raise Malformed("control character in the status line")
    return ResponseHead(parts[0].decode("ascii"), int(parts[1]), reason, headers)


def body_framing(headers: list[tuple[str, str]]) -> int | None:
    """A request body's length: an int (``Content-Length``, 0 when absent) or None for chunked.

    Refuses what request smuggling is made of: both headers, several different lengths, a
    transfer coding other than a final ``chunked``.
    """
    lengths = {v.strip() for k, v in headers if k.lower() == "content-length"}
    codings = [v.strip().lower() for k, v in headers if k.lower() == "transfer-encoding"]
    if codings:
        if lengths:
            raise Malformed("both Content-Length and Transfer-Encoding")
        if ",".join(codings).replace(" ", "") != "chunked":
            raise Malformed("unsupported Transfer-Encoding")
        return None
    if not lengths:
        return 0
    if len(lengths) > 1:
        raise Malformed("conflicting Content-Length headers")
    value = lengths.pop()
    if not value.isdigit() or len(value) > 18:
        raise Malformed("invalid Content-Length")
    return int(value)


async def relay_body(
    reader: asyncio.StreamReader,
    send: Callable[[bytes], Awaitable[None]],
    framing: int | None,
    timeout: float,
) -> int:
    """Copies one request body from ``reader`` to ``await send(bytes)``; returns bytes copied.

    ``framing`` is ``body_framing()``'s answer; chunked bodies are copied chunk by chunk with
    their framing (each size line bounded), trailers included.
    """
    if framing is not None:
        await _copy_exactly(reader, send, framing, timeout, "request body")
        return framing
    total = 0
    while True:
        line = await read_line(reader, timeout)
        if len(line) > _MAX_CHUNK_LINE:
            raise Malformed("over-long chunk line")
        size_text = line.split(b";", 1)[0].strip()
        if not size_text or len(size_text) > 16 or not re.fullmatch(rb"[0-9A-Fa-f]+", size_text):
            raise Malformed("invalid chunk size")
        size = int(size_text, 16)
        await send(line)
        if size == 0:
            for _ in range(_MAX_HEADERS):  # trailers, then the empty line
                trailer = await read_line(reader, timeout)
                if len(trailer) > _MAX_CHUNK_LINE:
                    raise Malformed("over-long trailer line")
                await send(trailer)
                if trailer == b"\r\n":
                    return total
            raise Malformed("too many trailer lines")
        await _copy_exactly(reader, send, size, timeout, "chunk")
        total += size
        if await read_line(reader, timeout) != b"\r\n":
            raise Malformed("chunk data not followed by CRLF")
        await send(b"\r\n")


async def _copy_exactly(
    reader: asyncio.StreamReader,
    send: Callable[[bytes], Awaitable[None]],
    size: int,
    timeout: float,
    what: str,
) -> None:
    left = size
    while left:
        chunk = await asyncio.wait_for(reader.read(min(left, 256 * 1024)), timeout)
        if not chunk:
            raise Malformed(f"connection closed in the middle of a {what}")
        await send(chunk)
        left -= len(chunk)


async def read_line(reader: asyncio.StreamReader, timeout: float, what: str = "chunked body") -> bytes:
    """One CRLF-terminated line (``Malformed`` past the reader's limit or at end of stream)."""
    try:
        return await asyncio.wait_for(reader.readuntil(b"\r\n"), timeout)
    except asyncio.IncompleteReadError:
        raise Malformed(f"connection closed in the middle of the {what}") from None
    except asyncio.LimitOverrunError:
        raise Malformed(f"over-long line in the {what}") from None


def looks_like_http(data: bytes) -> bool:
    """Whether a tunnel's first bytes start an HTTP request (``GET /``...)."""
    return bool(_METHOD_START.match(data[:13]))


async def read_client_hello(
    reader: asyncio.StreamReader, first: bytes, timeout: float
) -> tuple[bytes, str | None]:
    """Reads the whole TLS ClientHello that ``first`` starts; returns (bytes read, SNI or None).

    The handshake message may span several TLS records; all are read (bounded) and returned so
    they can be passed on unchanged.
    """
    data = bytearray(first)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        done = _client_hello_end(bytes(data))
        if done is not None:
            return bytes(data), parse_client_hello(done)
        if len(data) > _MAX_CLIENT_HELLO:
            raise Malformed("TLS ClientHello too large")
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise TimeoutError
        chunk = await asyncio.wait_for(reader.read(16 * 1024), remaining)
        if not chunk:
            raise Malformed("connection closed in the middle of the TLS ClientHello")
        data += chunk


def _client_hello_end(data: bytes) -> bytes | None:
    """The ClientHello handshake message once ``data`` holds all of its records."""
    handshake = bytearray()
    pos = 0
    while True:
        if len(data) < pos + 5:
            return None
        if data[pos] != 0x16:
            raise Malformed("not a TLS handshake record")
        if data[pos + 1] != 0x03:
            raise Malformed("unknown TLS record version")
        length = int.from_bytes(data[pos + 3 : pos + 5], "big")
        if length == 0 or length > 16384 + 256:
            raise Malformed("invalid TLS record length")
        if len(data) < pos + 5 + length:
            return None
        handshake += data[pos + 5 : pos + 5 + length]
        pos += 5 + length
        if len(handshake) >= 4:
            if handshake[0] != 0x01:
                raise Malformed("the first TLS message is not a ClientHello")
            need = 4 + int.from_bytes(handshake[1:4], "big")
            if need > _MAX_CLIENT_HELLO:
                raise Malformed("TLS ClientHello too large")
            if len(handshake) >= need:
                return bytes(handshake[:need])


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise Malformed("truncated TLS ClientHello")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def number(self, n: int) -> int:
        return int.from_bytes(self.take(n), "big")

    def vector(self, size_bytes: int) -> bytes:
        return self.take(self.number(size_bytes))


def parse_client_hello(handshake: bytes) -> str | None:
    """The server name (SNI) of a ClientHello handshake message, lower case; None when absent."""
    c = _Cursor(handshake)
    if c.number(1) != 0x01:
        raise Malformed("not a ClientHello")
    body = _Cursor(c.vector(3))
    body.take(2 + 32)  # legacy_version, random
    body.vector(1)  # session id
    body.vector(2)  # cipher suites
    body.vector(1)  # compression methods
    if body.pos == len(body.data):
        return None  # no extensions at all
    extensions = _Cursor(body.vector(2))
    server_name: str | None = None
    seen: set[int] = set()
    while extensions.pos < len(extensions.data):
        kind = extensions.number(2)
        data = extensions.vector(2)
        if kind in seen:
            raise Malformed("repeated TLS extension")
        seen.add(kind)
        if kind != 0:
            continue
        names = _Cursor(_Cursor(data).vector(2))
        while names.pos < len(names.data):
            name_type = names.number(1)
            name = names.vector(2)
            if name_type != 0:
                continue
            if server_name is not None:
                raise Malformed("more than one TLS server name")
            try:
                server_name = name.decode("ascii").lower().rstrip(".")
            except UnicodeDecodeError:
                raise Malformed("non-ASCII TLS server name") from None
    return server_name
