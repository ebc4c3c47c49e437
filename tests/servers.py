"""Real servers on 127.0.0.1 for the scale-out tests and benchmarks: an S3 API server (moto in
server mode) and a Jupyter Kernel Gateway, each a child process started and stopped here (so a
test can also kill one mid-operation)."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float, what: str, log: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}: {_tail(log)}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {timeout:g}s: {_tail(log)}")


def _tail(log: str) -> str:
    try:
        with open(log, "rb") as fh:
            return fh.read()[-2000:].decode("utf-8", "replace")
    except OSError:
        return ""


class _Server:
    """A child process serving on 127.0.0.1:port; ``kill()`` ends it at once (SIGKILL)."""

    def __init__(self, argv: list[str], port: int, what: str, env: dict[str, str] | None = None) -> None:
        self.port = port
        self.what = what
        fd, self.log = tempfile.mkstemp(prefix="ws-server-", suffix=".log")
        with os.fdopen(fd, "wb") as out:
            self.proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=env, start_new_session=True,
            )  # fmt: skip
        try:
            _wait_port(port, self.proc, 60.0, what, self.log)
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _descendants(self) -> list[Any]:
        """The server's child processes (a gateway's kernels run in sessions of their own, so a
        signal to its process group misses them)."""
        import psutil

        try:
            return list(psutil.Process(self.proc.pid).children(recursive=True))
        except psutil.Error:
            return []

    def _reap(self, children: list[Any]) -> None:
        import psutil

        for child in children:
            with contextlib.suppress(psutil.Error):
                child.kill()
        psutil.wait_procs(children, timeout=10)

    def kill(self) -> None:
        if self.proc.poll() is None:
            children = self._descendants()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
            self._reap(children)

    def stop(self) -> None:
        if self.proc.poll() is None:
            children = self._descendants()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
            self._reap(children)
        with contextlib.suppress(OSError):
            os.unlink(self.log)


class S3Server(_Server):
    """moto's S3 API server; ``s3fs()`` gives a client for it (no listing cache: other clients
    write to the same buckets in the tests)."""

    def __init__(self, port: int | None = None) -> None:
        port = port or free_port()
        env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
        super().__init__([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], port,
                         "moto S3 server", env)  # fmt: skip

    def storage_options(self) -> dict[str, Any]:
        return {
            "key": "testing",
            "secret": "testing",
            "client_kwargs": {"endpoint_url": self.url, "region_name": "us-east-1"},
            "use_listings_cache": False,
            "skip_instance_cache": True,
        }

    def s3fs(self, **extra: Any) -> Any:
        import s3fs

        return s3fs.S3FileSystem(**{**self.storage_options(), **extra})

    def client(self) -> Any:
        """A plain boto3 client of the server (the tests' second, independent writer)."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.url,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def new_bucket(self) -> str:
        name = "ws-" + secrets.token_hex(6)
        self.client().create_bucket(Bucket=name)
        return name


@contextlib.contextmanager
def s3_server() -> Iterator[S3Server]:
    server = S3Server()
    try:
        yield server
    finally:
        server.stop()


class KernelGateway(_Server):
    """``jupyter kernelgateway`` on 127.0.0.1 with a token (kernels it started die with it)."""

    def __init__(self, token: str | None = None, port: int | None = None) -> None:
        port = port or free_port()
        self.token = token or secrets.token_hex(16)
        argv = [
            sys.executable, "-m", "kernel_gateway",
            "--KernelGatewayApp.ip=127.0.0.1", f"--KernelGatewayApp.port={port}",
            f"--KernelGatewayApp.auth_token={self.token}",
            "--KernelGatewayApp.port_retries=0",
            "--JupyterWebsocketPersonality.list_kernels=True",
        ]  # fmt: skip
        super().__init__(argv, port, "Jupyter Kernel Gateway", dict(os.environ))


class CuttableProxy:
    """A TCP proxy 127.0.0.1:port -> 127.0.0.1:target; ``cut()`` drops every connection and stops
    listening, as a dying network or server would, while the server behind it keeps its data (so a
    test can then check what a client left visible). ``stall()`` keeps the connections open but
    stops answering: requests still reach the server, its answers are held back (all of each, or
    everything after the headers and the first body byte). ``freeze()`` makes the connections open
    now pass nothing more either way, not even a close — a NAT or load balancer that forgot
    them — and lets new ones through."""

    def __init__(self, target: int) -> None:
        import threading

        self.target = target
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = int(self._listener.getsockname()[1])
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        self._stall: str | None = None
        self._frozen: set[socket.socket] = set()
        self.bytes_up = 0
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        import threading

        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=10)
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._closed:
                    client.close()
                    upstream.close()
                    return
                self._socks += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def stall(self, after: str = "nothing") -> None:
        """From now on answers are held back: ``"nothing"`` of them is forwarded, or only their
        ``"headers"`` (and the first byte of the body), as a server that hangs mid-response."""
        assert after in ("nothing", "headers")
        self._stall = after

    def freeze(self) -> None:
        """The open connections pass nothing more, either way, not even a close (``cut()`` and
        ``drop()`` still close them)."""
        with self._lock:
            self._frozen.update(self._socks)

    def _pump(self, src: socket.socket, dst: socket.socket, up: bool) -> None:
        held: bytes | None = b""
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if src in self._frozen:
                    continue
                if up:
                    self.bytes_up += len(data)
                elif self._stall == "nothing":
                    continue
                elif self._stall == "headers":
                    if held is None:
                        continue  # this answer's headers went through: hold the rest
                    held += data
                    end = held.find(b"\r\n\r\n")
                    if end < 0:
                        continue
                    data, held = held[: end + 5], None
                dst.sendall(data)
        except OSError:
            pass
        finally:
            if src not in self._frozen:  # a forgotten connection does not pass on a close either
                with contextlib.suppress(OSError):
                    dst.shutdown(socket.SHUT_WR)

    def cut(self) -> None:
        with self._lock:
            self._closed = True
        with contextlib.suppress(OSError):
            self._listener.close()
        self.drop()

    def drop(self) -> None:
        """Drops every open connection (a network blip) but keeps accepting new ones."""
        with self._lock:
            socks, self._socks = self._socks, []
        for s in socks:
            with contextlib.suppress(OSError):
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)  # wakes the pump blocked in recv(); close() alone would not
            with contextlib.suppress(OSError):
                s.close()
