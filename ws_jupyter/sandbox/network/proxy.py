"""The filtering proxy of a sandbox in ``allow`` mode: outside the sandbox, on a Unix socket.

One ``ProxyServer`` per sandbox runs an asyncio loop on its own thread of the notebook's process
(so it lives and dies with the sandbox object and leaves no process behind). Inside the sandbox,
ordinary tools find 127.0.0.1:3128 through ``HTTP(S)_PROXY``; the bridge listening there
(``bridge_program.py``) hands each TCP connection it accepts to this proxy — the connected socket
itself, passed over the Unix socket bound read-only into the sandbox (``SCM_RIGHTS``) — so the
proxy reads and writes the sandbox's connection directly. Only connected TCP stream sockets are
kept from that channel: the sandbox may send any descriptor it holds. Each connection speaks
HTTP proxy:

* ``CONNECT host:port`` — a tunnel (TLS, usually). Checked: the authority is a well-formed host
  or address, any ``Host`` header equals it, the rule list allows it, the name resolves (here,
  never in the sandbox) to addresses that are public or listed, and — on the first bytes through
  the tunnel — the TLS server name (SNI) equals the host, or for plain HTTP every request's
  ``Host`` does. For a host with a header secret, the TLS is ended here (``tls.py``) and the
  header is added to each request.
* ``GET http://host/path`` (any method, absolute URL) — one plain-HTTP request, forwarded with the
  header secret if any, ``Connection: close`` both ways.

Once checked, a connection's bulk bytes move on relay threads (``relay.py``), off the loop.
Everything is bounded: head sizes (``wire.py``), connections at once (``max_connections``; a few
more get 503, the rest are closed), buffered bytes per direction (stream limits, ``drain()``, one
relay buffer), and time (the request head, name resolution, connecting, and an idle limit on open
tunnels). Every attempt goes to the egress log with the chain of processes that made it
(``SO_PEERCRED`` of the bridge's channel: from the kernel, not from anything the sandbox says).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ...errors import SandboxError
from .config import HeaderSecret
from .egress import EgressLog, EgressRecord
from .intake import client_socket, peer_lineage, received_fds
from .policy import Destination, IPAddress, NetworkPolicy, parse_destination
from .relay import Relays, hand_over
from .resolver import ResolveError, resolve
from .tls import WorkspaceCA, upstream_context
from .wire import (
    Malformed,
    RequestHead,
    body_framing,
    parse_request_head,
    parse_response_head,
    read_client_hello,
    read_head,
    read_line,
    relay_body,
)

__all__ = ["ProxyServer", "Timeouts"]

log = logging.getLogger(__name__)

_CHUNK = 256 * 1024
_STREAM_LIMIT = 64 * 1024
#: Descriptors a bridge sends per message (it sends one; more are closed on arrival).
_FDS_PER_MESSAGE = 4
#: Connections past ``max_connections`` that still get a 503 (more are closed at once).
_OVERFLOW = 32
_REQUEST_LINE = re.compile(rb"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [\x21-\x7e]+ HTTP/1\.[01]\r\n$")


@dataclass(frozen=True)
class Timeouts:
    """Seconds the proxy waits for each step before it gives up on a connection."""

    head: float = 30.0
    resolve: float = 10.0
    connect: float = 15.0
    client_hello: float = 15.0
    idle: float = 300.0


class _Refused(Exception):
    """Ends a connection with an HTTP error (before a tunnel exists) or a close (after)."""

    def __init__(self, status: int, phrase: str, reason: str, *, allowed: bool = False) -> None:
        super().__init__(reason)
        self.status = status
        self.phrase = phrase
        self.reason = reason
        self.allowed = allowed


def _same_authority(host_header: str, dest: Destination, default_port: int) -> bool:
    try:
        given = parse_destination(host_header, default_port=default_port)
    except ValueError:
        return False
    return given.host == dest.host and given.port == dest.port


def _reply_bytes(status: int, phrase: str, reason: str, where: str = "") -> bytes:
    body = f"ws-jupyter sandbox proxy: connection{where} refused: {reason}\n".encode()
    head = (
        f"HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode("latin-1", "replace")
    return head + body


class _Connection:
    """Bookkeeping of one client connection: its log record and byte counts."""

    def __init__(self, proxy: ProxyServer, lineage: tuple[int, ...]) -> None:
        self.proxy = proxy
        self.lineage = lineage
        self.record: EgressRecord | None = None
        self.last_activity = time.monotonic()
        self.tunnel = False  # a 200 went out: errors end the connection without an HTTP reply

    def open(self, host: str, port: int | None, method: str) -> EgressRecord:
        self.record = self.proxy.log.open(host, port, method, self.lineage)
        return self.record

    def up(self, n: int) -> None:
        self.last_activity = time.monotonic()
        if self.record is not None:
            self.record.bytes_up += n

    def down(self, n: int) -> None:
        self.last_activity = time.monotonic()
        if self.record is not None:
            self.record.bytes_down += n


class ProxyServer:
    """The proxy of one sandbox. ``start()`` binds ``socket_path``; ``stop()`` ends everything.

    ``secrets`` maps a host to the headers added to its requests; ``ca`` (needed when there are
    secrets) signs the certificates shown to the sandbox for those hosts.
    """

    def __init__(
        self,
        socket_path: str,
        policy: NetworkPolicy,
        log: EgressLog,
        *,
        secrets: Mapping[str, Sequence[HeaderSecret]] | None = None,
        ca: WorkspaceCA | None = None,
        max_connections: int = 256,
        timeouts: Timeouts | None = None,
        name: str = "ws-sandbox-proxy",
    ) -> None:
        self.socket_path = socket_path
        self.policy = policy
        self.log = log
        self.secrets = dict(secrets or {})
        if self.secrets and ca is None:
            raise ValueError("a proxy with secrets needs a WorkspaceCA")
        self.ca = ca
        self.max_connections = max_connections
        self.timeouts = timeouts or Timeouts()
        self.name = name
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._channels: set[asyncio.Future[None]] = set()
        self._relays = Relays()
        self._upstream_ctx = None if ca is None else upstream_context()

    # --- lifecycle -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def active_connections(self) -> int:
        return len(self._tasks)

    def start(self, timeout: float = 10.0) -> None:
        """Binds the socket and serves on a new thread; raises ``SandboxError`` if it cannot."""
        if self.running:
            return
        self._ready.clear()
        self._error = None
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout) or self._error is not None:
            error = self._error
            self.stop()
            raise SandboxError(
                f"The sandbox's network proxy did not start: {error or 'timed out'}",
                code="NETWORK_UNAVAILABLE",
            )

    def stop(self, timeout: float = 5.0) -> None:
        """Closes the socket and every connection, and ends the thread (idempotent)."""
        thread, loop, stopping = self._thread, self._loop, self._stopping
        if thread is None:
            return
        if loop is not None and stopping is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stopping.set)
        thread.join(timeout)
        self._thread = None
        with contextlib.suppress(OSError):
            os.unlink(self.socket_path)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported through start() when it happens before ready
            self._error = self._error or exc
            log.debug("sandbox proxy stopped with an error", exc_info=True)
        finally:
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.setblocking(False)
        listener.bind(self.socket_path)
        os.chmod(self.socket_path, 0o600)
        listener.listen(64)
        bridges = asyncio.ensure_future(self._bridges(listener))
        self._ready.set()
        try:
            await self._stopping.wait()
        finally:
            bridges.cancel()
            listener.close()
            self._relays.close_all()
            pending = list(self._tasks | self._channels)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=2.0)

    # --- bridges: where connections come from --------------------------------------------------------

    async def _bridges(self, listener: socket.socket) -> None:
        """Accepts bridges on the Unix socket (each sends the TCP connections it accepted)."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                channel, _ = await loop.sock_accept(listener)
            except OSError:  # out of descriptors, for one: let some connections end first
                await asyncio.sleep(0.05)
                continue
            if len(self._channels) >= self.max_connections:
                channel.close()
                continue
            task = asyncio.ensure_future(self._channel(channel))
            self._channels.add(task)
            task.add_done_callback(self._channels.discard)

    async def _channel(self, channel: socket.socket) -> None:
        """One bridge: each message carries one connected TCP socket of the sandbox (SCM_RIGHTS),
        which becomes a client connection of this proxy. The sandbox may send any descriptor it
        has, so only a connected TCP stream socket is kept; anything else is closed."""
        loop = asyncio.get_running_loop()
        lineage = peer_lineage(channel)
        channel.setblocking(False)
        readable = asyncio.Event()
        loop.add_reader(channel.fileno(), readable.set)
        try:
            while True:
                try:
                    data, ancillary, _flags, _addr = channel.recvmsg(
                        16, socket.CMSG_SPACE(4 * _FDS_PER_MESSAGE)
                    )
                except BlockingIOError:
                    readable.clear()
                    await readable.wait()
                    continue
                except OSError:
                    return
                for fd in received_fds(ancillary):
                    client = client_socket(fd)
                    if client is not None:
                        task = asyncio.ensure_future(self._accept(client, lineage))
                        self._tasks.add(task)
                        task.add_done_callback(self._tasks.discard)
                if not data:
                    return
        finally:
            loop.remove_reader(channel.fileno())
            channel.close()

    # --- one connection ------------------------------------------------------------------------

    async def _accept(self, client: socket.socket, lineage: tuple[int, ...]) -> None:
        conn = _Connection(self, lineage)
        over = len(self._tasks) > self.max_connections
        if over and len(self._tasks) > self.max_connections + _OVERFLOW:
            client.close()  # far beyond the limit: not even a reply
            return
        writer: asyncio.StreamWriter | None = None
        try:
            with contextlib.suppress(OSError):
                client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            reader, writer = await asyncio.open_connection(sock=client, limit=_STREAM_LIMIT)
            if over:  # the request is read (briefly) so that the refusal arrives, not a reset
                with contextlib.suppress(Exception):
                    await read_head(reader, 2.0)
                raise _Refused(
                    503,
                    "Too many connections through the sandbox proxy",
                    f"too many connections at once (limit {self.max_connections})",
                )
            await self._serve(conn, reader, writer)
        except _Refused as exc:
            if conn.record is None:
                conn.open("?", None, "")
            assert conn.record is not None
            self.log.decide(conn.record, exc.allowed, exc.reason)
            if exc.status and not conn.tunnel and writer is not None:
                await self._reply(writer, exc.status, exc.phrase, exc.reason, conn.record)
        except (
            asyncio.CancelledError,
            ConnectionError,
            asyncio.IncompleteReadError,
            TimeoutError,
            asyncio.TimeoutError,
        ):
            pass
        except Exception:  # a bug must cost one connection, never the proxy
            log.exception("sandbox proxy: unexpected error on a connection")
        finally:
            if conn.record is not None:
                if conn.record.reason == "pending":
                    self.log.decide(conn.record, False, "connection ended before a decision")
                self.log.close(conn.record)
            if writer is not None:
                await self._close(writer)
            else:
                client.close()

    @staticmethod
    async def _close(writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            writer.close()
            await asyncio.wait_for(writer.wait_closed(), 1.0)

    @staticmethod
    async def _reply(
        writer: asyncio.StreamWriter,
        status: int,
        phrase: str,
        reason: str,
        record: EgressRecord | None = None,
    ) -> None:
        where = ""
        if record is not None and record.host != "?":
            where = f" {record.host}" + (f":{record.port}" if record.port is not None else "")
        with contextlib.suppress(Exception):
            writer.write(_reply_bytes(status, phrase, reason, where))
            await asyncio.wait_for(writer.drain(), 5.0)

    async def _serve(
        self, conn: _Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            head = parse_request_head(await read_head(reader, self.timeouts.head))
        except Malformed as exc:
            raise _Refused(400, "Bad request to the sandbox proxy", f"malformed request: {exc}") from None
        except (TimeoutError, asyncio.TimeoutError):
            raise _Refused(408, "Request timeout", "no request received in time") from None
        if head.method == "CONNECT":
            await self._connect(conn, head, reader, writer)
        else:
            await self._forward(conn, head, reader, writer)

    # --- decisions -----------------------------------------------------------------------------

    def _check_host(self, conn: _Connection, dest: Destination) -> str:
        rule = self.policy.rule_for(dest)
        if rule is None:
            raise _Refused(403, "Not in the sandbox network allow-list", "not in the allow-list")
        return str(rule)

    async def _addresses(self, dest: Destination) -> list[IPAddress]:
        if dest.address is not None:
            candidates = [dest.address]
        else:
            try:
                candidates = await resolve(dest.host, dest.port, self.timeouts.resolve)
            except ResolveError as exc:
                raise _Refused(502, "Cannot resolve the host", str(exc), allowed=True) from None
        permitted = [a for a in candidates if self.policy.address_allowed(a)]
        if not permitted:
            raise _Refused(
                403,
                "Private address refused by the sandbox proxy",
                f"resolves to a non-public address {candidates[0]}",
            )
        return permitted

    async def _open_upstream(
        self, dest: Destination, addresses: list[IPAddress], *, tls: bool = False
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, IPAddress]:
        last: Exception | None = None
        for ip in addresses[:4]:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(
                        str(ip),
                        dest.port,
                        limit=_STREAM_LIMIT,
                        ssl=self._upstream_ctx if tls else None,
                        server_hostname=dest.host if tls else None,
                    ),
                    self.timeouts.connect,
                )
            except ssl.SSLError as exc:  # a certificate that does not verify: no other address helps
                raise _Refused(
                    502,
                    "Upstream TLS failed",
                    f"TLS to {dest.host} failed: {exc.reason or exc}",
                    allowed=True,
                ) from None
            except (OSError, asyncio.TimeoutError) as exc:
                last = exc
                continue
            sock = writer.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return reader, writer, ip
        why = (
            "timed out"
            if isinstance(last, asyncio.TimeoutError)
            else (getattr(last, "strerror", None) or str(last))
        )
        raise _Refused(502, "Upstream connection failed", f"cannot connect: {why}", allowed=True)

    # --- CONNECT ------------------------------------------------------------------------------------

    async def _connect(
        self, conn: _Connection, head: RequestHead, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            dest = parse_destination(head.target)
        except ValueError as exc:
            raise _Refused(400, "Bad CONNECT target", f"malformed CONNECT target: {exc}") from None
        record = conn.open(dest.host, dest.port, "CONNECT")
        host_header = head.get("host")
        if host_header is not None and not _same_authority(host_header, dest, dest.port):
            raise _Refused(
                400,
                "Host header differs from the CONNECT target",
                "Host header differs from the CONNECT target",
            )
        rule = self._check_host(conn, dest)
        addresses = await self._addresses(dest)
        secrets = self.secrets.get(dest.host, ()) if dest.address is None else ()
        if secrets:
            await self._connect_with_secrets(conn, dest, rule, addresses, secrets, reader, writer)
            return
        ureader, uwriter, ip = await self._open_upstream(dest, addresses)
        self.log.decide(record, True, f"allowed by {rule}", address=str(ip))
        try:
            await self._established(conn, writer)
            await self._relay(conn, dest, None, reader, writer, ureader, uwriter)
        finally:
            await self._close(uwriter)

    @staticmethod
    async def _established(conn: _Connection, writer: asyncio.StreamWriter) -> None:
        conn.tunnel = True
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()

    async def _first_bytes(
        self, conn: _Connection, dest: Destination, reader: asyncio.StreamReader
    ) -> tuple[bytes, RequestHead | None]:
        """Reads what identifies the tunnel's protocol and checks it against ``dest``.

        TLS: the whole ClientHello, whose server name must be ``dest``'s host (or, for an address,
        an allowed host). HTTP: the first request head, whose ``Host`` must be ``dest``. Other
        protocols pass as they are.
        """
        first = await reader.read(1)
        if not first:
            return b"", None
        if first == b"\x16":
            try:
                data, sni = await read_client_hello(reader, first, self.timeouts.client_hello)
            except Malformed as exc:
                raise _Refused(0, "", f"malformed TLS ClientHello: {exc}") from None
            except (TimeoutError, asyncio.TimeoutError):
                raise _Refused(0, "", "TLS ClientHello not received in time") from None
            if sni is not None:
                if dest.address is None and sni != dest.host:
                    shown = "".join(
                        c if c.isprintable() else "?" for c in sni[:100]
                    )  # it is the sandbox's text
                    raise _Refused(0, "", f"TLS server name {shown} differs from the CONNECT host")
                if dest.address is not None:
                    try:
                        named = parse_destination(sni, default_port=dest.port)
                    except ValueError:
                        raise _Refused(0, "", "malformed TLS server name") from None
                    if self.policy.rule_for(named) is None:
                        raise _Refused(0, "", f"TLS server name {named.host} is not in the allow-list")
            return data, None
        if first.isupper():
            try:
                line = first + await read_line(reader, self.timeouts.head, "request line")
            except (TimeoutError, asyncio.TimeoutError):
                raise _Refused(0, "", "incomplete first line in the tunnel") from None
            except Malformed as exc:
                raise _Refused(0, "", f"malformed data in the tunnel: {exc}") from None
            if not _REQUEST_LINE.match(line):
                return line, None
            head = await self._tunnel_request_head(reader, dest, line)
            return b"", head
        return first, None

    async def _tunnel_request_head(
        self, reader: asyncio.StreamReader, dest: Destination, first: bytes = b""
    ) -> RequestHead | None:
        """The next request head inside a tunnel (None at a clean end), its Host checked."""
        try:
            if not first:
                try:
                    first = await read_line(reader, self.timeouts.idle, "request head")
                except Malformed:
                    if reader.at_eof():
                        return None
                    raise
            head = parse_request_head(await read_head(reader, self.timeouts.head, first=first))
        except Malformed as exc:
            raise _Refused(0, "", f"malformed request in the tunnel: {exc}") from None
        except (TimeoutError, asyncio.TimeoutError):
            raise _Refused(0, "", "request head not received in time") from None
        host = head.get("host")
        if host is None or not _same_authority(host, dest, dest.port):
            raise _Refused(0, "", "Host header differs from the CONNECT target")
        return head

    async def _relay(
        self,
        conn: _Connection,
        dest: Destination,
        first: tuple[bytes, RequestHead | None] | None,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        ureader: asyncio.StreamReader,
        uwriter: asyncio.StreamWriter,
        secrets: Sequence[HeaderSecret] = (),
    ) -> None:
        """Relays a tunnel after checking its first bytes (``first``: already read and checked).

        HTTP inside it is checked request by request here (and gets the secret headers) while the
        responses flow through the kernel-side relay; anything else flows there both ways.
        """
        early = asyncio.ensure_future(self._pump(ureader, writer, conn.down))  # servers that speak first
        try:
            data, head = first if first is not None else await self._first_bytes(conn, dest, reader)
        finally:
            early.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await early
        if head is not None:
            down = await self._downstream(conn, writer, ureader, uwriter)
            up = asyncio.ensure_future(self._requests(conn, dest, head, reader, uwriter, secrets))
            await self._idle_watch(conn, up, down)
            return
        if data:
            uwriter.write(data)
            conn.up(len(data))
            await uwriter.drain()
        else:  # the sandbox closed its side without sending anything
            with contextlib.suppress(Exception):
                uwriter.write_eof()
        await self._idle_watch(conn, *await self._both_ways(conn, reader, writer, ureader, uwriter))

    async def _requests(
        self,
        conn: _Connection,
        dest: Destination,
        head: RequestHead | None,
        reader: asyncio.StreamReader,
        uwriter: asyncio.StreamWriter,
        secrets: Sequence[HeaderSecret],
    ) -> None:
        """Forwards the requests of a kept-alive connection to one host: each head checked and
        given the secret headers, each body copied by its framing."""

        async def send(data: bytes) -> None:
            uwriter.write(data)
            conn.up(len(data))
            await uwriter.drain()

        while head is not None:
            for secret in secrets:
                head.replace(secret.header, secret.value)
            if secrets and conn.record is not None:
                conn.record.secret_header = ", ".join(s.header for s in secrets)
            framing = body_framing(head.headers)
            await send(head.encode())
            if head.get("upgrade") is not None:  # a WebSocket (after its 101): bytes from now on
                await self._pump(reader, uwriter, conn.up)
                return
            try:
                await relay_body(reader, send, framing, self.timeouts.idle)
            except Malformed as exc:
                raise _Refused(0, "", f"malformed request body: {exc}") from None
            head = await self._tunnel_request_head(reader, dest)
        with contextlib.suppress(Exception):
            uwriter.write_eof()

    async def _connect_with_secrets(
        self,
        conn: _Connection,
        dest: Destination,
        rule: str,
        addresses: list[IPAddress],
        secrets: Sequence[HeaderSecret],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        """A tunnel to a host with header secrets: TLS ends here (sandbox CA), requests get the
        headers, and a new TLS connection, verified as usual, goes to the real host."""
        assert conn.record is not None and self.ca is not None
        await self._established(conn, writer)
        data, head = await self._first_bytes(conn, dest, reader)
        if not data.startswith(b"\x16"):  # not TLS: plain HTTP is checked and given the headers
            ureader, uwriter, ip = await self._open_upstream(dest, addresses)
            self.log.decide(conn.record, True, f"allowed by {rule}", address=str(ip))
            try:
                await self._relay(conn, dest, (data, head), reader, writer, ureader, uwriter, secrets)
            finally:
                await self._close(uwriter)
            return
        # TLS: hand the ClientHello and the rest of the client's bytes to a TLS server on one end
        # of a socket pair; the other end is ours, decrypted.
        inner, outer = socket.socketpair()
        loop = asyncio.get_running_loop()
        raw_reader, raw_writer = await asyncio.open_connection(sock=outer, limit=_STREAM_LIMIT)
        tls_reader = asyncio.StreamReader(limit=_STREAM_LIMIT)
        protocol = asyncio.StreamReaderProtocol(tls_reader)
        tasks: list[asyncio.Future[None]] = []
        try:
            raw_writer.write(data)
            tasks.append(asyncio.ensure_future(self._pump(reader, raw_writer, lambda n: None)))
            tasks.append(asyncio.ensure_future(self._pump(raw_reader, writer, lambda n: None)))
            inner.setblocking(False)
            try:
                transport, _ = await loop.connect_accepted_socket(
                    lambda: protocol,
                    sock=inner,
                    ssl=self.ca.server_context(dest.host),
                    ssl_handshake_timeout=self.timeouts.client_hello,
                )
            except (OSError, asyncio.TimeoutError) as exc:
                raise _Refused(0, "", f"TLS with the sandbox failed: {exc}") from None
            tls_writer = asyncio.StreamWriter(transport, protocol, tls_reader, loop)
            ureader, uwriter, ip = await self._open_upstream(dest, addresses, tls=True)
            self.log.decide(conn.record, True, f"allowed by {rule}", address=str(ip))
            try:
                down = asyncio.ensure_future(self._pump(ureader, tls_writer, conn.down))
                try:
                    head = await self._tunnel_request_head(tls_reader, dest)
                    up = asyncio.ensure_future(self._requests(conn, dest, head, tls_reader, uwriter, secrets))
                    await self._idle_watch(conn, up, down, first=True)
                finally:
                    down.cancel()
            finally:
                await self._close(uwriter)
                await self._close(tls_writer)
        finally:
            for task in tasks:
                task.cancel()
            await self._close(raw_writer)
            inner.close()

    # --- plain HTTP -----------------------------------------------------------------------------

    async def _forward(
        self, conn: _Connection, head: RequestHead, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        target = head.target
        if not target.lower().startswith("http://"):
            if target.lower().startswith("https://"):
                raise _Refused(400, "Use CONNECT for https", "an https:// URL must go through CONNECT")
            raise _Refused(
                400, "Not a proxy request", "not a proxy request (expected an absolute http:// URL)"
            )
        rest = target[7:]
        cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
        authority, path = rest[:cut], rest[cut:] or "/"
        if path.startswith("?"):
            path = "/" + path
        if "@" in authority:
            raise _Refused(400, "Credentials in the URL", "user credentials in the URL authority")
        try:
            dest = parse_destination(authority, default_port=80)
        except ValueError as exc:
            raise _Refused(400, "Bad URL", f"malformed URL host: {exc}") from None
        record = conn.open(dest.host, dest.port, head.method)
        host_header = head.get("host")
        if host_header is not None and not _same_authority(host_header, dest, 80):
            raise _Refused(400, "Host header differs from the URL", "Host header differs from the URL")
        rule = self._check_host(conn, dest)
        addresses = await self._addresses(dest)
        ureader, uwriter, ip = await self._open_upstream(dest, addresses)
        self.log.decide(record, True, f"allowed by {rule}", address=str(ip))
        try:
            head.target = path
            host = f"[{dest.host}]" if ":" in dest.host else dest.host
            head.replace("host", host if dest.port == 80 else f"{host}:{dest.port}")
            for name in ("proxy-connection", "proxy-authorization", "keep-alive"):
                head.replace(name, None)
            upgrade = head.get("upgrade") is not None
            head.replace("connection", "Upgrade" if upgrade else "close")
            secrets = self.secrets.get(dest.host, ()) if dest.address is None else ()
            for secret in secrets:
                head.replace(secret.header, secret.value)
            if secrets:
                record.secret_header = ", ".join(s.header for s in secrets)
            framing = body_framing(head.headers)

            async def send(data: bytes) -> None:
                uwriter.write(data)
                conn.up(len(data))
                await uwriter.drain()

            await send(head.encode())
            body = asyncio.ensure_future(relay_body(reader, send, framing, self.timeouts.idle))
            response = asyncio.ensure_future(self._response_head(conn, ureader, writer))
            try:
                await asyncio.wait([body, response], return_when=asyncio.FIRST_COMPLETED)
                if not response.done() and body.exception() is not None:
                    raise _Refused(400, "Bad request body", f"malformed request body: {body.exception()}")
                status = await response
                if status == 101 and upgrade:
                    await body
                    up = asyncio.ensure_future(self._pump(reader, uwriter, conn.up))
                    down = asyncio.ensure_future(self._pump(ureader, writer, conn.down))
                    await self._idle_watch(conn, up, down)
                    return
                await self._idle_watch(conn, await self._downstream(conn, writer, ureader, uwriter))
            finally:
                for task in (body, response):
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task  # an error here belongs to the request: already answered
        finally:
            await self._close(uwriter)

    async def _response_head(
        self, conn: _Connection, ureader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> int:
        """Copies the response head(s) (1xx first) with ``Connection: close``; returns the status."""
        while True:
            try:
                data = await read_head(ureader, self.timeouts.idle)
                head = parse_response_head(data)
            except (Malformed, TimeoutError, asyncio.TimeoutError) as exc:
                raise _Refused(
                    502, "Bad response from upstream", f"bad response from upstream: {exc}", allowed=True
                ) from None
            if head.status != 101:
                head.replace("connection", None if 100 <= head.status < 200 else "close")
                head.replace("keep-alive", None)
            encoded = head.encode()
            writer.write(encoded)
            conn.down(len(encoded))
            await writer.drain()
            if not 100 <= head.status < 200 or head.status == 101:
                return head.status

    # --- moving bytes ----------------------------------------------------------------------------

    async def _downstream(
        self,
        conn: _Connection,
        writer: asyncio.StreamWriter,
        ureader: asyncio.StreamReader,
        uwriter: asyncio.StreamWriter,
    ) -> asyncio.Future[None]:
        """Upstream -> sandbox from now on: through the kernel-side relay when the sockets allow
        it, else an asyncio pump. The loop must not read ``ureader`` or write ``writer`` again."""
        if await hand_over(ureader, uwriter, writer, conn.down):
            return self._relay_future(conn, writer, uwriter, up=False)
        return asyncio.ensure_future(self._pump(ureader, writer, conn.down))

    async def _both_ways(
        self,
        conn: _Connection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        ureader: asyncio.StreamReader,
        uwriter: asyncio.StreamWriter,
    ) -> list[asyncio.Future[None]]:
        """Both directions from now on, in the kernel-side relay when possible."""
        if await hand_over(ureader, uwriter, writer, conn.down) and await hand_over(
            reader, writer, uwriter, conn.up
        ):
            return [self._relay_future(conn, writer, uwriter, up=True)]
        return [
            asyncio.ensure_future(self._pump(ureader, writer, conn.down)),
            asyncio.ensure_future(self._pump(reader, uwriter, conn.up)),
        ]

    def _relay_future(
        self, conn: _Connection, writer: asyncio.StreamWriter, uwriter: asyncio.StreamWriter, *, up: bool
    ) -> asyncio.Future[None]:
        """Starts a relay between the two sockets; the future ends with it (cancelling it kills it)."""
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()

        def resolve() -> None:
            if not finished.done():
                finished.set_result(None)

        def done() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: the proxy stopped
                loop.call_soon_threadsafe(resolve)

        relay = self._relays.start(
            writer.get_extra_info("socket").fileno(),
            uwriter.get_extra_info("socket").fileno(),
            up=conn.up if up else None,
            down=conn.down,
            done=done,
        )
        finished.add_done_callback(lambda f: relay.kill() if f.cancelled() else None)
        return finished

    @staticmethod
    async def _pump(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, count: Callable[[int], None]
    ) -> None:
        """Copies until end of stream, then half-closes the other side."""
        try:
            while True:
                data = await reader.read(_CHUNK)
                if not data:
                    break
                writer.write(data)
                count(len(data))
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        with contextlib.suppress(Exception):
            if writer.can_write_eof():
                writer.write_eof()

    async def _idle_watch(self, conn: _Connection, *tasks: asyncio.Future[None], first: bool = False) -> None:
        """Waits for ``tasks``; the first to fail (a refusal inside the tunnel) ends them all, and so
        does ``timeouts.idle`` seconds without a byte moving. ``first``: the first to end ends all
        (TLS has no half-close: one side closing means the conversation is over)."""
        pending = set(tasks)
        when = asyncio.FIRST_COMPLETED if first else asyncio.FIRST_EXCEPTION
        try:
            while pending:
                done, pending = await asyncio.wait(
                    pending, timeout=min(30.0, self.timeouts.idle), return_when=when
                )
                for task in done:
                    exc = task.exception() if not task.cancelled() else None
                    if exc is not None:
                        raise exc
                if done and first:
                    break
                if pending and time.monotonic() - conn.last_activity > self.timeouts.idle:
                    break
        finally:
            for task in pending:
                task.cancel()
