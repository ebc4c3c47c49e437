"""What the proxy parses from the sandbox: TLS ClientHellos (real ones, split, and fuzzed) and HTTP
request bodies — only well-formed input passes, and bad input fails as ``Malformed``, never as
another exception."""

from __future__ import annotations

import asyncio
import ssl

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ws_jupyter.sandbox.network.wire import (
    Malformed,
    parse_client_hello,
    parse_request_head,
    read_client_hello,
    relay_body,
)


def client_hello(server_name: str | None) -> bytes:
    """The first flight of a real TLS client (Python's ssl), SNI included when given."""
    ctx = ssl.create_default_context()
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname=server_name)
    if server_name is None:
        ctx.check_hostname = False
        obj = ctx.wrap_bio(incoming, outgoing)
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    return outgoing.read()


def feed(data: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return reader


def read_hello(data: bytes) -> tuple[bytes, str | None]:
    async def go() -> tuple[bytes, str | None]:
        reader = feed(data[1:])
        return await read_client_hello(reader, data[:1], 5.0)

    return asyncio.run(go())


def test_the_server_name_of_a_real_client_hello() -> None:
    hello = client_hello("API.Example.COM")
    assert read_hello(hello) == (hello, "api.example.com")
    assert read_hello(client_hello(None))[1] is None


def test_a_client_hello_split_over_two_records() -> None:
    hello = client_hello("pypi.org")
    body = hello[5:]
    split = 40
    records = b"".join(
        b"\x16\x03\x01" + len(part).to_bytes(2, "big") + part for part in (body[:split], body[split:])
    )
    assert read_hello(records)[1] == "pypi.org"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x17\x03\x03\x00\x05hello", "not a TLS handshake record"),
        (b"\x16\x03\x01\x00\x00", "invalid TLS record length"),
        (b"\x16\x03\x01\x00\x04\x02\x00\x00\x00", "the first TLS message is not a ClientHello"),
        (b"\x16\x03\x01\x00\x04\x01\xff\xff\xff", "TLS ClientHello too large"),
        (b"\x16\x03\x01\x00\x02\x01\x00", "connection closed in the middle of the TLS ClientHello"),
    ],
)
def test_bad_client_hellos(data: bytes, message: str) -> None:
    with pytest.raises(Malformed, match=message):
        read_hello(data)


HELLO = client_hello("fuzz.example")


@settings(max_examples=300, deadline=None)
@given(
    cut=st.integers(min_value=0, max_value=len(HELLO) - 1),
    flips=st.lists(st.tuples(st.integers(0, len(HELLO) - 1), st.integers(0, 255)), max_size=4),
)
def test_fuzzed_client_hellos_fail_only_as_malformed(cut: int, flips: list[tuple[int, int]]) -> None:
    data = bytearray(HELLO)
    for pos, value in flips:
        data[pos] = value
    body = bytes(data[9:])  # the ClientHello body, past record and handshake headers
    try:
        parse_client_hello(bytes(data[5:]))
        parse_client_hello(b"\x01" + len(body[:cut]).to_bytes(3, "big") + body[:cut])
    except Malformed:
        pass


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_fuzzed_request_heads_fail_only_as_malformed(junk: bytes) -> None:
    try:
        parse_request_head(b"CONNECT a.test:443 HTTP/1.1\r\n" + junk + b"\r\n\r\n")
    except Malformed:
        pass


def relay(data: bytes, framing: int | None) -> bytes:
    async def go() -> bytes:
        out = bytearray()

        async def send(chunk: bytes) -> None:
            out.extend(chunk)

        await relay_body(feed(data), send, framing, 5.0)
        return bytes(out)

    return asyncio.run(go())


def test_request_bodies_are_copied_by_their_framing_only() -> None:
    assert relay(b"abcdefNEXT", 6) == b"abcdef"
    chunked = b"4\r\nabcd\r\n3;ext=1\r\nefg\r\n0\r\nX-Trailer: 1\r\n\r\n"
    assert relay(chunked + b"GET /next", None) == chunked
    for bad, message in [
        (b"zz\r\n", "invalid chunk size"),
        (b"4\r\nabcdXY\r\n", "chunk data not followed by CRLF"),
        (b"4\r\nab", "connection closed in the middle of a chunk"),
        (b"0\r\n" + b"X: y\r\n" * 200, "too many trailer lines"),
    ]:
        with pytest.raises(Malformed, match=message):
            relay(bad, None)
    with pytest.raises(Malformed, match="in the middle of a request body"):
        relay(b"abc", 10)
