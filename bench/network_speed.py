"""Sandbox network benchmark: the ``allow`` mode proxy against a direct connection.

    .venv/bin/python bench/network_speed.py [--mb 100] [--runs 5] [--requests 50]

Both sides run curl inside a bubblewrap sandbox against one HTTP server on 127.0.0.1 (memory
only, so the server is not what is measured): *direct* is a sandbox with ``network="full"``
(the host's network), *proxy* one with ``network=[...]`` whose traffic goes bridge -> Unix
socket -> proxy -> server. ``fake_internet`` maps the test name to 127.0.0.1 for the proxy.
Runs are interleaved so load on this shared machine hits both sides alike; ratios of medians are
the result, absolute numbers are context.

1. throughput of a ``--mb`` download, direct vs through the proxy: a plain-HTTP request
   (forwarded), plain HTTP inside a CONNECT tunnel (``--proxytunnel``: each request head is
   checked), and HTTPS (TLS through CONNECT, the usual case) — target >= 70% of direct;
2. connection set-up time added: curl's time to first byte of a tiny response, p50 over
   ``--requests`` requests, proxy minus direct — target <= 5 ms;
3. the start-up cost the bridge adds to every command: p50 of ``execute_command("true")`` in
   ``allow`` mode minus ``none`` mode.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import ssl
import statistics
import sys
import tempfile
import threading
import time

from ws_jupyter.sandbox import LocalSandbox
from ws_jupyter.sandbox.isolation import probe_backend
from ws_jupyter.sandbox.network.testing import fake_internet

_BLOCK = memoryview(b"x" * (1 << 20))


def _serve(conn: socket.socket) -> None:
    with conn:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        path = data.split(b" ", 2)[1].decode()
        size = int(path.rsplit("/", 1)[-1] or 0)
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n".encode())
        while size > 0:
            n = min(size, len(_BLOCK))
            conn.sendall(_BLOCK[:n])
            size -= n


def start_server(tls: ssl.SSLContext | None = None) -> int:
    """An HTTP(S) server on 127.0.0.1 answering ``GET /N`` with N bytes from memory."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)

    def serve(conn: socket.socket) -> None:
        try:
            _serve(tls.wrap_socket(conn, server_side=True) if tls else conn)
        except OSError:
            pass

    def loop() -> None:
        while True:
            conn, _ = listener.accept()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return int(listener.getsockname()[1])


def tls_server(folder: str) -> tuple[ssl.SSLContext, str]:
    """A server context for bench.test and a CA file that trusts it (made with cryptography)."""
    from ws_jupyter.sandbox.network.tls import WorkspaceCA

    ca = WorkspaceCA(["bench.test"], label="bench")
    ca_file = os.path.join(folder, "ca.pem")
    with open(ca_file, "wb") as f:
        f.write(ca.cert_pem)
    return ca.server_context("bench.test"), ca_file


def curl_times(sb: LocalSandbox, url: str, n: int, fmt: str, extra: str = "") -> list[float]:
    out = sb.execute_command(
        f"for i in $(seq {n}); do curl -sS -o /dev/null {extra} -w '{fmt}\\n' '{url}'; done", timeout=600
    )
    if out.exit_code != 0:
        raise SystemExit(f"curl failed: {out.stderr[-500:]}")
    return [float(line) for line in out.stdout.split()]


def p50(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    if not probe_backend("bwrap").available or shutil.which("curl") is None:
        raise SystemExit("needs bubblewrap and curl")
    tmp = tempfile.mkdtemp(prefix="ws-net-bench-")
    port = start_server()
    server_tls, ca_file = tls_server(tmp)
    tls_port = start_server(server_tls)
    size = args.mb << 20
    with fake_internet({"bench.test": "127.0.0.1"}):
        direct = LocalSandbox(
            working_directory=os.path.join(tmp, "d"), isolation="bwrap", network="full", timeout=600
        )
        proxied = LocalSandbox(
            working_directory=os.path.join(tmp, "p"),
            isolation="bwrap",
            network=[f"bench.test:{port}", f"bench.test:{tls_port}"],
            timeout=600,
        )
        closed = LocalSandbox(working_directory=os.path.join(tmp, "n"), isolation="bwrap", timeout=600)
        for sb in (direct, proxied, closed):
            sb.start()
            shutil.copy(ca_file, os.path.join(sb.working_directory, "ca.pem"))
        http_direct = f"http://127.0.0.1:{port}"
        http_proxy = f"http://bench.test:{port}"
        https = f"https://bench.test:{tls_port}"
        resolve = f"--cacert ca.pem --resolve bench.test:{tls_port}:127.0.0.1"  # direct: curl resolves

        # (label, sandbox, url, curl options, baseline label)
        cases = [
            ("HTTP direct (network='full')", direct, http_direct, "", None),
            ("HTTP through the proxy, forwarded", proxied, http_proxy, "", "HTTP direct (network='full')"),
            (
                "HTTP in a CONNECT tunnel",
                proxied,
                http_proxy,
                "--proxytunnel",
                "HTTP direct (network='full')",
            ),
            ("HTTPS direct (network='full')", direct, https, resolve, None),
            (
                "HTTPS through the proxy (CONNECT)",
                proxied,
                https,
                "--cacert ca.pem",
                "HTTPS direct (network='full')",
            ),
        ]

        # 1. throughput, interleaved
        speeds: dict[str, list[float]] = {c[0]: [] for c in cases}
        for _ in range(args.runs):
            for label, sb, url, extra, _base in cases:
                speeds[label] += curl_times(sb, f"{url}/{size}", 1, "%{speed_download}", extra)
        print(f"throughput of a {args.mb} MB download (p50 of {args.runs}, MB/s):")
        for label, _sb, _url, _extra, base in cases:
            mbps = p50(speeds[label]) / 1e6
            ratio = f"   {p50(speeds[label]) / p50(speeds[base]):.0%} of direct" if base else ""
            print(f"  {label:36} {mbps:7.0f}{ratio}")

        # 2. connection set-up time: time to first byte of a 10-byte response
        ttfb: dict[str, list[float]] = {c[0]: [] for c in cases}
        half = max(1, args.requests // 2)
        for _ in range(2):
            for label, sb, url, extra, _base in cases:
                ttfb[label] += curl_times(sb, f"{url}/10", half, "%{time_starttransfer}", extra)
        print(f"time to first byte, p50 of {2 * half} requests (ms):")
        for label, _sb, _url, _extra, base in cases:
            ms = p50(ttfb[label]) * 1e3
            added = f"   +{ms - p50(ttfb[base]) * 1e3:.2f} ms" if base else ""
            print(f"  {label:36} {ms:7.2f}{added}")

        # 3. what the bridge adds to every command
        plain: list[float] = []
        bridged: list[float] = []
        for sb in (closed, proxied):
            sb.execute_command("true")
        for _ in range(max(10, args.requests)):
            for sb, into in ((closed, plain), (proxied, bridged)):
                t0 = time.perf_counter()
                sb.execute_command("true")
                into.append(time.perf_counter() - t0)
        print("execute_command('true'), p50 (ms):")
        print(f"  network='none'                       {p50(plain) * 1e3:7.2f}")
        added = (p50(bridged) - p50(plain)) * 1e3
        print(f"  network=[...] (the bridge starts)    {p50(bridged) * 1e3:7.2f}   +{added:.2f} ms")
        for sb in (direct, proxied, closed):
            sb.destroy()
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
