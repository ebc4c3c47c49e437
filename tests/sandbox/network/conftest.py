"""A small internet on 127.0.0.1 for the sandbox network tests.

One HTTP and one HTTPS server (certificate from a test CA, valid for every test name) stand in
for the outside world; ``fake_internet`` makes the proxy resolve the test names to them (and
``rebind.test``/``private.test`` to addresses it must refuse). The servers record each request's
Host and Authorization headers, serve a PEP 503 package index with one tiny wheel built here,
and answer ``/echo`` with the headers they saw, and ``/big/N`` with N bytes.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import http.server
import io
import os
import socket
import ssl
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ws_jupyter.sandbox.network.testing import fake_internet

#: Every name a test may ask the proxy for, and what it resolves to.
NAMES = {
    "pypi.test": "127.0.0.1",
    "api.test": "127.0.0.1",
    "other.test": "127.0.0.1",
    "example.test": "127.0.0.1",
    "a.example.test": "127.0.0.1",
    "b.c.example.test": "127.0.0.1",
    "rebind.test": "169.254.169.254",  # the cloud metadata address
    "private.test": "10.1.2.3",
    "loopback.test": "127.0.0.2",
    "mapped.test": "::ffff:127.0.0.1",
}
CERT_NAMES = ["pypi.test", "api.test", "other.test", "example.test", "*.example.test", "*.c.example.test"]
PACKAGE = "wsnettiny"
PACKAGE_VALUE = 4217


@dataclass
class Internet:
    http_port: int
    https_port: int
    ca_file: str  # the test CA (the servers' certificates), PEM
    index_dir: str
    seen: list[dict[str, str]] = field(default_factory=list)

    def http(self, host: str, path: str = "/echo") -> str:
        return f"http://{host}:{self.http_port}{path}"

    def https(self, host: str, path: str = "/echo") -> str:
        return f"https://{host}:{self.https_port}{path}"


def _make_ca_and_cert(folder: Path) -> tuple[str, str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ws-jupyter test internet CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pypi.test")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in CERT_NAMES]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_file = folder / "test-ca.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    server_file = folder / "server.pem"
    server_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        + cert.public_bytes(serialization.Encoding.PEM)
    )
    return str(ca_file), str(server_file)


def build_index(root: Path) -> None:
    """A PEP 503 simple index with one pure-Python wheel, ``wsnettiny`` 0.1."""
    files = {
        f"{PACKAGE}/__init__.py": f"VALUE = {PACKAGE_VALUE}\n".encode(),
        f"{PACKAGE}-0.1.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: 0.1\n".encode(),
        f"{PACKAGE}-0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{PACKAGE}-0.1.dist-info/RECORD,,")
    files[f"{PACKAGE}-0.1.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    wheel = buf.getvalue()
    wheel_name = f"{PACKAGE}-0.1-py3-none-any.whl"
    (root / "packages").mkdir(parents=True)
    (root / "packages" / wheel_name).write_bytes(wheel)
    sha = hashlib.sha256(wheel).hexdigest()
    (root / "simple" / PACKAGE).mkdir(parents=True)
    (root / "simple" / "index.html").write_text(
        f'<html><body><a href="{PACKAGE}/">{PACKAGE}</a></body></html>\n'
    )
    (root / "simple" / PACKAGE / "index.html").write_text(
        f'<html><body><a href="../../packages/{wheel_name}#sha256={sha}">{wheel_name}</a></body></html>\n'
    )


def _handler(index_dir: str, seen: list[dict[str, str]]) -> type[http.server.SimpleHTTPRequestHandler]:
    class Handler(http.server.SimpleHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, directory=index_dir, **kwargs)

        def log_message(self, *args: object) -> None:
            pass

        def _record(self) -> None:
            seen.append(
                {
                    "path": self.path,
                    "host": self.headers.get("Host", ""),
                    "authorization": self.headers.get("Authorization", ""),
                    "x-api-key": self.headers.get("X-Api-Key", ""),
                    "tls": str(isinstance(self.connection, ssl.SSLSocket)),
                }
            )

        def _send(self, body: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            self._record()
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                data = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0], 16)
                    data += self.rfile.read(size)
                    self.rfile.readline()
                    if not size:
                        break
            else:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._send(b"posted " + str(len(data)).encode())

        def do_GET(self) -> None:
            self._record()
            if self.path.startswith("/echo"):  # never echoes a credential's value
                auth = "present" if self.headers.get("Authorization") else "absent"
                self._send(f"host={self.headers.get('Host')} auth={auth}\n".encode())
            elif self.path.startswith("/big/"):
                size = int(self.path[5:])
                self.send_response(200)
                self.send_header("Content-Length", str(size))
                self.end_headers()
                block = b"x" * (1 << 20)
                while size > 0:
                    n = min(size, len(block))
                    self.wfile.write(block[:n])
                    size -= n
            else:
                super().do_GET()

    return Handler


def start_internet(folder: Path) -> tuple[Internet, list[http.server.ThreadingHTTPServer]]:
    ca_file, server_pem = _make_ca_and_cert(folder)
    index = folder / "index"
    build_index(index)
    seen: list[dict[str, str]] = []
    handler = _handler(str(index), seen)
    plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    secure = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(server_pem)
    secure.socket = ctx.wrap_socket(secure.socket, server_side=True, do_handshake_on_connect=False)
    for server in (plain, secure):
        server.daemon_threads = True
        server.handle_error = lambda *args: None  # type: ignore[method-assign]  # TLS refusals are expected
        threading.Thread(target=server.serve_forever, daemon=True).start()
    net = Internet(plain.server_address[1], secure.server_address[1], ca_file, str(index), seen)
    return net, [plain, secure]


@pytest.fixture(scope="module")
def internet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Internet]:
    """The test internet, and the proxy's DNS pointed at it, for one test module."""
    pytest.importorskip("cryptography")
    folder = Path(os.path.realpath(tmp_path_factory.mktemp("internet")))
    net, servers = start_internet(folder)
    with fake_internet(NAMES, cafile=net.ca_file):
        yield net
    for server in servers:
        server.shutdown()
        server.server_close()


class Bridge:
    """What the in-sandbox bridge does, from a test: a TCP connection whose far end goes to the
    proxy as a descriptor over its Unix socket. ``connect()`` returns the near end to talk on."""

    def __init__(self, socket_path: str) -> None:
        self.channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.channel.settimeout(10)
        self.channel.connect(socket_path)
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)

    def connect(self) -> socket.socket:
        near = socket.create_connection(self.listener.getsockname(), timeout=10)
        far, _ = self.listener.accept()
        self.send_fd(far.fileno())
        far.close()
        return near

    def send_fd(self, fd: int, data: bytes = b"c") -> None:
        import array

        self.channel.sendmsg(
            [data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]).tobytes())]
        )

    def close(self) -> None:
        self.channel.close()
        self.listener.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
