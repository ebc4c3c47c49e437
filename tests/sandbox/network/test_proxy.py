"""The sandbox proxy spoken to directly on its Unix socket, as a hostile sandbox could.

Every request here is what a process inside the sandbox can send (the bridge forwards bytes
unchanged), so these are the policy and protocol tests: allowed and denied hosts, wildcard and
port rules, address checks (IP literals, loopback, the metadata address, DNS rebinding), malformed
and over-long requests, Host/SNI mismatches, header secrets over HTTP and HTTPS, the connection
limit and time limits. The end-to-end tests through bubblewrap are in test_sandbox_network.py.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import ssl
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone

import pytest

from ws_jupyter.sandbox.network.config import NetworkConfig
from ws_jupyter.sandbox.network.egress import EgressEvent
from ws_jupyter.sandbox.network.proxy import Timeouts
from ws_jupyter.sandbox.network.runtime import SandboxNetwork

from .conftest import Bridge, Internet

SECRET = "Bearer tok-" + "7" * 24


def rules(net: Internet) -> list[str]:
    return [
        f"pypi.test:{net.http_port}",
        f"pypi.test:{net.https_port}",
        f"*.example.test:{net.https_port}",
        f"api.test:{net.http_port}",
        f"api.test:{net.https_port}",
        "rebind.test:*",
        "private.test:*",
        "loopback.test:*",
        "mapped.test:*",
    ]


class Proxy:
    """A started ``SandboxNetwork`` and ways to talk to its socket."""

    def __init__(self, network: SandboxNetwork, net: Internet) -> None:
        self.network = network
        self.net = net
        assert network.directory is not None
        self.path = os.path.join(network.directory, "proxy.sock")
        self.bridge = Bridge(self.path)

    def connect(self) -> socket.socket:
        """A connection to the proxy, as a command inside gets it through the bridge."""
        return self.bridge.connect()

    def exchange(self, data: bytes) -> bytes:
        """Sends ``data`` and reads until the proxy closes."""
        with self.connect() as s:
            s.sendall(data)
            out = bytearray()
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    return bytes(out)
                out += chunk

    def tunnel(self, authority: str, extra: str = "") -> socket.socket:
        """A CONNECT tunnel; AssertionError (with the proxy's reply) when refused."""
        s = self.connect()
        s.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n{extra}\r\n".encode())
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
        if not reply.startswith(b"HTTP/1.1 200"):
            s.close()
            raise AssertionError(reply.decode("latin-1"))
        return s

    def https_get(
        self, host: str, path: str = "/echo", *, cafile: str | None = None, sni: str | None = None
    ) -> str:
        s = self.tunnel(f"{host}:{self.net.https_port}")
        ctx = ssl.create_default_context(cafile=cafile or self.net.ca_file)
        with ctx.wrap_socket(s, server_hostname=sni or host) as tls:
            tls.sendall(
                f"GET {path} HTTP/1.1\r\nHost: {host}:{self.net.https_port}\r\nConnection: close\r\n\r\n".encode()
            )
            return _read_all(tls).decode("latin-1")

    def last(self) -> EgressEvent:
        return self.network.events()[-1]


def _read_all(s: socket.socket) -> bytes:
    out = bytearray()
    while True:
        try:
            chunk = s.recv(65536)
        except (ssl.SSLError, ConnectionResetError):
            break
        if not chunk:
            break
        out += chunk
    return bytes(out)


def _read_response(s: socket.socket) -> bytes:
    """One HTTP response with a Content-Length body, from a kept-alive connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += s.recv(65536)
    return head + b"\r\n\r\n" + body


def _wait_closed(event_id: int, network: SandboxNetwork) -> EgressEvent:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        event = next(e for e in network.events() if e.id == event_id)
        if event.closed:
            return event
        time.sleep(0.02)
    raise AssertionError("the log entry was not closed")


def _start(
    net: Internet, *, timeouts: Timeouts | None = None, **options: object
) -> tuple[SandboxNetwork, str]:
    folder = tempfile.mkdtemp(prefix="wsn-")  # short: a Unix socket path has ~107 bytes
    config = NetworkConfig.coerce(
        {
            "allow": rules(net),
            "secrets": {"api.test": {"header": "Authorization", "value": SECRET}},
            **options,
        }
    )
    network = SandboxNetwork(config, name="test", timeouts=timeouts)
    network.start(folder, sys.executable)
    return network, folder


@pytest.fixture(scope="module")
def proxy(internet: Internet) -> Iterator[Proxy]:
    network, folder = _start(internet)
    yield Proxy(network, internet)
    network.stop()
    os.rmdir(folder)


# --- allowed, denied, wildcards, ports ------------------------------------------------------------


def test_plain_http_to_an_allowed_host_is_forwarded_and_logged(proxy: Proxy, internet: Internet) -> None:
    url = internet.http("pypi.test")
    reply = proxy.exchange(f"GET {url} HTTP/1.1\r\nHost: pypi.test:{internet.http_port}\r\n\r\n".encode())
    assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
    assert b"connection: close" in reply.lower()  # one request per proxy connection
    assert f"host=pypi.test:{internet.http_port} auth=absent".encode() in reply
    event = _wait_closed(proxy.last().id, proxy.network)
    assert (event.host, event.port, event.allowed, event.method) == (
        "pypi.test",
        internet.http_port,
        True,
        "GET",
    )
    assert event.reason == f"allowed by pypi.test:{internet.http_port}"
    assert event.address == "127.0.0.1" and event.bytes_up > 0 and event.bytes_down > len(b"host=")


def test_https_through_connect_reaches_the_real_server(proxy: Proxy, internet: Internet) -> None:
    body = proxy.https_get("pypi.test")
    assert body.startswith("HTTP/1.1 200") and f"host=pypi.test:{internet.https_port}" in body
    event = _wait_closed(proxy.last().id, proxy.network)
    assert (event.method, event.allowed, event.secret_header) == ("CONNECT", True, None)
    assert event.bytes_up > 200 and event.bytes_down > 200  # the TLS handshake went through


def test_a_host_outside_the_list_is_refused_with_a_clear_error(proxy: Proxy, internet: Internet) -> None:
    since = datetime.now(timezone.utc)
    reply = proxy.exchange(f"GET {internet.http('other.test')} HTTP/1.1\r\n\r\n".encode())
    assert reply.startswith(b"HTTP/1.1 403 Not in the sandbox network allow-list\r\n")
    assert f"connection other.test:{internet.http_port} refused: not in the allow-list".encode() in reply
    with pytest.raises(AssertionError, match="403 Not in the sandbox network allow-list"):
        proxy.tunnel(f"other.test:{internet.https_port}")
    denied = [e for e in proxy.network.events(denied_only=True) if e.time >= since]
    assert [(e.host, e.method, e.reason) for e in denied] == [
        ("other.test", "GET", "not in the allow-list"),
        ("other.test", "CONNECT", "not in the allow-list"),
    ]
    # the attempts are attributed to the process that connected (this one)
    assert len(proxy.network.log.denied_from(os.getpid(), since)) == 2
    assert proxy.network.log.denied_from(1, since) == []
    assert not any(e.host == "other.test" for e in internet.seen if "other" in e["host"])


def test_a_wildcard_covers_subdomains_not_the_domain_itself(proxy: Proxy) -> None:
    assert "host=a.example.test" in proxy.https_get("a.example.test")
    assert "host=b.c.example.test" in proxy.https_get("b.c.example.test")
    with pytest.raises(AssertionError, match="403"):
        proxy.tunnel(f"example.test:{proxy.net.https_port}")


def test_a_port_rule_allows_that_port_only(proxy: Proxy, internet: Internet) -> None:
    proxy.tunnel(f"pypi.test:{internet.https_port}").close()
    with pytest.raises(AssertionError, match="403"):
        proxy.tunnel(f"pypi.test:{internet.https_port + 1 if internet.https_port < 65535 else 1}")
    with pytest.raises(AssertionError, match="403"):
        proxy.tunnel("pypi.test:443")  # listed with a port: the default ports are not implied


# --- addresses ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("127.0.0.1:{https}", "not in the allow-list"),  # an IP literal
        ("127.0.0.1:3128", "not in the allow-list"),  # the bridge's port / the host's loopback
        ("[::1]:{https}", "not in the allow-list"),
        ("[::ffff:127.0.0.1]:{https}", "not in the allow-list"),
        ("169.254.169.254:80", "not in the allow-list"),
        ("rebind.test:{https}", "resolves to a non-public address 169.254.169.254"),
        ("private.test:{https}", "resolves to a non-public address 10.1.2.3"),
        ("loopback.test:{https}", "resolves to a non-public address 127.0.0.2"),
        (
            "mapped.test:{https}",
            f"resolves to a non-public address {ipaddress.ip_address('::ffff:127.0.0.1')}",
        ),
    ],
)
def test_addresses_that_are_not_public_are_refused(
    proxy: Proxy, internet: Internet, target: str, why: str
) -> None:
    target = target.format(https=internet.https_port)
    before = len(internet.seen)
    with pytest.raises(AssertionError, match="403"):
        proxy.tunnel(target)
    event = proxy.last()
    assert (event.allowed, event.reason, event.method) == (False, why, "CONNECT")
    assert len(internet.seen) == before


@pytest.mark.parametrize("host", ["2130706433", "0x7f.1", "127.1", "0x7f000001"])
def test_numeric_host_names_are_not_resolved(proxy: Proxy, host: str) -> None:
    reply = proxy.exchange(f"CONNECT {host}:443 HTTP/1.1\r\n\r\n".encode())
    assert reply.startswith(b"HTTP/1.1 400"), reply
    assert proxy.last().reason.startswith("malformed CONNECT target")


# --- malformed requests --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_bytes", "reason"),
    [
        (
            b"CONNECT " + b"a" * 40000 + b".test:443 HTTP/1.1\r\n\r\n",
            "malformed request: request head longer than 32768 bytes",
        ),
        (
            b"CONNECT " + b"a" * 100000 + b".test:443 HTTP/1.1\r\n\r\n",
            "malformed request: over-long line in the request head",
        ),
        (
            b"CONNECT pypi.test:443 HTTP/1.1\r\n" + b"X-Pad: y\r\n" * 200 + b"\r\n",
            "malformed request: more than 128 header lines",
        ),
        (b"CONNECT pypi.test HTTP/1.1\r\n\r\n", "malformed CONNECT target: missing port"),
        (b"CONNECT pypi.test:443 HTTP/2\r\n\r\n", "malformed request: not an HTTP/1.0 or HTTP/1.1 request"),
        (b"CONNECT  pypi.test:443 HTTP/1.1\r\n\r\n", "malformed request: malformed request line"),
        (
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
            "malformed request: malformed request line",
        ),
        (
            b"GET http://pypi.test/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            "malformed request: more than one Host header",
        ),
        (
            b"POST http://pypi.test/ HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "malformed request: both Content-Length and Transfer-Encoding",
        ),
        (
            b"GET http://pypi.test/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
            "malformed request: folded or empty header line",
        ),
        (
            b"GET /relative HTTP/1.1\r\nHost: pypi.test\r\n\r\n",
            "not a proxy request (expected an absolute http:// URL)",
        ),
        (b"GET http://user:pw@pypi.test/ HTTP/1.1\r\n\r\n", "user credentials in the URL authority"),
    ],
)
def test_malformed_or_over_long_requests_are_refused(proxy: Proxy, request_bytes: bytes, reason: str) -> None:
    reply = proxy.exchange(request_bytes)
    assert reply.startswith(b"HTTP/1.1 400"), reply[:100]
    event = proxy.last()
    assert (event.allowed, event.reason) == (False, reason)


def test_the_connect_host_header_must_match(proxy: Proxy, internet: Internet) -> None:
    target = f"pypi.test:{internet.https_port}"
    reply = proxy.exchange(
        f"CONNECT {target} HTTP/1.1\r\nHost: other.test:{internet.https_port}\r\n\r\n".encode()
    )
    assert reply.startswith(b"HTTP/1.1 400 Host header differs from the CONNECT target")
    url = internet.http("pypi.test")
    reply = proxy.exchange(f"GET {url} HTTP/1.1\r\nHost: other.test\r\n\r\n".encode())
    assert reply.startswith(b"HTTP/1.1 400 Host header differs from the URL")
    assert proxy.last().reason == "Host header differs from the URL"


def test_plain_http_inside_a_tunnel_must_keep_the_host(proxy: Proxy, internet: Internet) -> None:
    """A tunnel to an allowed host cannot carry requests for another virtual host."""
    s = proxy.tunnel(f"pypi.test:{internet.http_port}")
    with s:
        s.sendall(f"GET /echo HTTP/1.1\r\nHost: pypi.test:{internet.http_port}\r\n\r\n".encode())
        first = _read_response(s)
        assert first.startswith(b"HTTP/1.1 200") and b"host=pypi.test" in first
        s.sendall(b"GET /echo HTTP/1.1\r\nHost: other.test\r\n\r\n")
        assert _read_all(s) == b""  # closed without forwarding the second request
    event = _wait_closed(proxy.last().id, proxy.network)
    assert (event.allowed, event.reason) == (False, "Host header differs from the CONNECT target")
    assert not any(r["host"] == "other.test" for r in internet.seen)


def test_the_tls_server_name_must_match_the_connect_host(proxy: Proxy, internet: Internet) -> None:
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        proxy.https_get("pypi.test", sni="other.test")
    event = _wait_closed(proxy.last().id, proxy.network)
    assert (event.allowed, event.reason) == (
        False,
        "TLS server name other.test differs from the CONNECT host",
    )


def test_a_malformed_client_hello_ends_the_tunnel(proxy: Proxy, internet: Internet) -> None:
    with proxy.tunnel(f"pypi.test:{internet.https_port}") as s:
        s.sendall(b"\x16\x03\x01\x00\x05\x02\x00\x00\x01\x00")  # a handshake record, not a ClientHello
        assert _read_all(s) == b""
    event = _wait_closed(proxy.last().id, proxy.network)
    assert event.reason == "malformed TLS ClientHello: the first TLS message is not a ClientHello"


# --- secrets ----------------------------------------------------------------------------------------------


def test_the_secret_header_is_added_to_plain_http_requests(proxy: Proxy, internet: Internet) -> None:
    url = internet.http("api.test")
    reply = proxy.exchange(f"GET {url} HTTP/1.1\r\nAuthorization: Bearer forged\r\n\r\n".encode())
    assert b"auth=present" in reply and SECRET.encode() not in reply
    assert internet.seen[-1]["authorization"] == SECRET  # the sandbox's own value was replaced
    assert proxy.last().secret_header == "Authorization"


def test_the_secret_header_reaches_https_hosts_through_the_sandbox_ca(
    proxy: Proxy, internet: Internet
) -> None:
    assert proxy.network.directory is not None
    bundle = os.path.join(proxy.network.directory, "ca-bundle.pem")
    s = proxy.tunnel(f"api.test:{internet.https_port}")
    ctx = ssl.create_default_context(cafile=bundle)  # what SSL_CERT_FILE points to inside
    with ctx.wrap_socket(s, server_hostname="api.test") as tls:
        for _ in range(2):  # kept alive: every request gets the header
            tls.sendall(f"GET /echo HTTP/1.1\r\nHost: api.test:{internet.https_port}\r\n\r\n".encode())
            reply = _read_response(tls)
            assert reply.startswith(b"HTTP/1.1 200") and b"auth=present" in reply
        tls.sendall(
            f"POST /upload HTTP/1.1\r\nHost: api.test:{internet.https_port}\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n".encode()
        )
        assert b"posted 4" in _read_response(tls)
    recent = internet.seen[-3:]
    assert [(r["authorization"], r["tls"]) for r in recent] == [(SECRET, "True")] * 3
    event = _wait_closed(proxy.last().id, proxy.network)
    assert (event.allowed, event.secret_header) == (True, "Authorization")


def test_the_sandbox_ca_vouches_for_the_secret_hosts_only(proxy: Proxy, internet: Internet) -> None:
    """Other hosts are tunnelled untouched: the sandbox sees the real certificate, which the
    sandbox CA does not sign, and the CA itself is name-constrained to the secret hosts."""
    from cryptography import x509

    assert proxy.network.directory is not None
    ca_file = os.path.join(proxy.network.directory, "ca.pem")
    with pytest.raises(ssl.SSLCertVerificationError):
        proxy.https_get("pypi.test", cafile=ca_file)
    with open(ca_file, "rb") as f:
        ca = x509.load_pem_x509_certificate(f.read())
    constraints = ca.extensions.get_extension_for_class(x509.NameConstraints)
    assert constraints.critical
    assert [n.value for n in constraints.value.permitted_subtrees or []] == ["api.test"]
    assert not os.path.exists(os.path.join(proxy.network.directory, "ca-key.pem"))
    assert sorted(os.listdir(proxy.network.directory)) == [
        "bridge.py",
        "ca-bundle.pem",
        "ca.pem",
        "proxy.sock",
    ]


def test_an_upstream_that_fails_verification_gets_no_secret(internet: Internet) -> None:
    """The proxy verifies the real host: without the test CA it refuses to send the header."""
    from ws_jupyter.sandbox.network import tls

    saved, tls._extra_upstream_cafile = tls._extra_upstream_cafile, None
    network, folder = _start(internet)
    try:
        p = Proxy(network, internet)
        before = len(internet.seen)
        try:  # the sandbox's TLS (to the proxy) works; then the connection ends without a reply
            reply = p.https_get("api.test", cafile=os.path.join(p.network.directory or "", "ca-bundle.pem"))
        except (ssl.SSLError, ConnectionError):
            reply = ""
        assert reply == ""
        assert len(internet.seen) == before
        event = _wait_closed(p.last().id, network)
        assert (
            event.reason.startswith("TLS to api.test failed") and "CERTIFICATE_VERIFY_FAILED" in event.reason
        )
    finally:
        tls._extra_upstream_cafile = saved
        network.stop()
        os.rmdir(folder)


# --- bounds and lifetime -------------------------------------------------------------------------------


def test_connections_beyond_the_limit_get_503_and_slow_heads_time_out(internet: Internet) -> None:
    network, folder = _start(internet, timeouts=Timeouts(head=0.5), max_connections=2)
    p = Proxy(network, internet)
    try:
        idle = [p.connect() for _ in range(2)]
        time.sleep(0.1)
        reply = p.exchange(b"GET http://pypi.test/ HTTP/1.1\r\n\r\n")
        assert reply.startswith(b"HTTP/1.1 503")
        assert p.last().reason == "too many connections at once (limit 2)"
        t0 = time.monotonic()
        for s in idle:  # a head that never ends
            s.sendall(b"CONNECT pypi.test:443 HTTP/1.1\r\n")
            assert _read_all(s).startswith(b"HTTP/1.1 408")
            s.close()
        assert time.monotonic() - t0 < 5
    finally:
        network.stop()
        os.rmdir(folder)


def test_stop_ends_open_tunnels_the_thread_and_the_socket(internet: Internet) -> None:
    network, folder = _start(internet)
    p = Proxy(network, internet)
    tunnel = p.tunnel(f"pypi.test:{internet.https_port}")
    proxy_thread = network.proxy._thread if network.proxy else None
    assert proxy_thread is not None and proxy_thread.is_alive()
    stopper = threading.Thread(target=network.stop)
    stopper.start()
    stopper.join(10)
    assert _read_all(tunnel) == b""
    tunnel.close()
    assert not proxy_thread.is_alive()
    assert not os.path.exists(p.path) and os.listdir(folder) == []
    os.rmdir(folder)


def test_relayed_tunnels_end_on_stop_and_when_idle(internet: Internet) -> None:
    """Past its first bytes a tunnel runs in the kernel-side relay: stop() and the idle limit
    still end it (and the log entry closes with the bytes counted)."""
    network, folder = _start(internet, timeouts=Timeouts(idle=1.0))
    p = Proxy(network, internet)
    try:
        ctx = ssl.create_default_context(cafile=internet.ca_file)
        idle = ctx.wrap_socket(p.tunnel(f"pypi.test:{internet.https_port}"), server_hostname="pypi.test")
        t0 = time.monotonic()
        assert _read_all(idle) == b""  # nothing moves for 1 s: the proxy ends it
        assert 0.9 < time.monotonic() - t0 < 40
        event = _wait_closed(p.last().id, network)
        assert event.allowed and event.bytes_down > 0
        busy = ctx.wrap_socket(p.tunnel(f"pypi.test:{internet.https_port}"), server_hostname="pypi.test")
        busy.sendall(f"GET /big/{50 << 20} HTTP/1.1\r\nHost: pypi.test\r\n\r\n".encode())
        assert busy.recv(100).startswith(b"HTTP/1.1 200")
        assert network.proxy is not None and len(network.proxy._relays) == 1
        network.stop()
        with pytest.raises((ssl.SSLError, ConnectionError, OSError, AssertionError)):
            while busy.recv(1 << 20):
                pass
            raise AssertionError("ended")
        busy.close()
        idle.close()
    finally:
        network.stop()
        os.rmdir(folder)


def test_what_a_sandbox_hands_over_besides_tcp_connections_is_dropped(
    proxy: Proxy, internet: Internet
) -> None:
    """The Unix socket takes connected TCP sockets only: files, pipes, Unix sockets, listening
    sockets, several at once or none are closed or ignored — and the proxy keeps serving."""

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    before_events = len(proxy.network.events())
    before_fds = open_fds()
    bridge = Bridge(proxy.path)
    junk: list[int] = []
    with open(__file__, "rb") as f:
        bridge.send_fd(f.fileno())
    r, w = os.pipe()
    bridge.send_fd(r)
    a, b = socket.socketpair()
    bridge.send_fd(a.fileno())
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    bridge.send_fd(listening.fileno())
    fresh = socket.socket()
    bridge.send_fd(fresh.fileno())
    bridge.channel.sendall(b"no descriptor at all")
    import array

    many = [socket.socket() for _ in range(6)]  # more than a message may carry
    bridge.channel.sendmsg(
        [b"c"],
        [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [s.fileno() for s in many]).tobytes())],
    )
    junk += [r, w]
    # still serving, on this channel and on a new one
    with bridge.connect() as s:
        s.sendall(f"GET {internet.http('pypi.test')} HTTP/1.1\r\n\r\n".encode())
        assert _read_all(s).startswith(b"HTTP/1.1 200")
    assert proxy.https_get("pypi.test").startswith("HTTP/1.1 200")
    assert len(proxy.network.events()) == before_events + 2  # only the two real connections
    bridge.close()
    for fd in junk:
        os.close(fd)
    for s2 in (a, b, listening, fresh, *many):
        s2.close()
    deadline = time.monotonic() + 5
    while open_fds() > before_fds + 2 and time.monotonic() < deadline:  # the proxy closed its copies
        time.sleep(0.05)
    assert open_fds() <= before_fds + 2
