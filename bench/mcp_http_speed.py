"""MCP tool-call round trip over Streamable HTTP vs stdio vs an in-process call, and how many
concurrent HTTP clients are served with p95 < 100 ms.

    .venv/bin/python bench/mcp_http_speed.py [--calls N] [--seconds S] [--max-clients N]

The call is ``workspace_read_file`` of a small file (what an agent does most). Three ways:

1. in-process: ``tool.run(...)`` on the workspace's tool (the floor every transport adds to);
2. stdio: the official ``mcp`` client driving ``ws-jupyter mcp --dir D`` over its stdin/stdout;
3. HTTP: the same client over Streamable HTTP to ``ws-jupyter mcp --http --dir D`` (a server in
   another process, as a notebook's kernel is to Claude Code), in both protocol eras: the
   2025-11-25 handshake with a session (what clients speak today) and 2026-07-28.

Reported: p50 and p95 of each (target: HTTP p50 <= 2x stdio p50), then for 1, 2, 4, 8...
concurrent HTTP clients (each its own session, all in this one client process), each calling in
a loop for ``--seconds``: calls per second and p50/p95 latency; the answer is the largest count
whose p95 stays under 100 ms on this machine (the clients' own CPU counts: they share it with the
server on the same cores).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from ws_jupyter import LocalFilesystem, Workspace

CLI = str(Path(sys.executable).with_name("ws-jupyter"))
ARGS = {"path": "notes.txt"}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def in_process(root: str, calls: int) -> list[float]:
    ws = Workspace(filesystem=LocalFilesystem(root), bm25=False)
    ws.init()
    try:
        tool = {t.name: t for t in ws.tools()}["workspace_read_file"]
        out = []
        for _ in range(calls):
            t = time.perf_counter()
            tool.run(ARGS)
            out.append((time.perf_counter() - t) * 1000)
        return out
    finally:
        ws.destroy()


async def _one(client: Client) -> float:
    t = time.perf_counter()
    result = await client.call_tool("workspace_read_file", ARGS)
    took = (time.perf_counter() - t) * 1000
    assert not result.is_error
    return took


def start_http(root: str) -> tuple[subprocess.Popen[str], str, str]:
    proc = subprocess.Popen(
        [CLI, "mcp", "--http", "--dir", root, "--no-search", "--no-sandbox"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    url = token = ""
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while not (url and token) and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        if m := re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line):
            url = m[1]
        if m := re.match(r"token: (\S+)", line):
            token = m[1]
    if not (url and token):
        proc.kill()
        raise SystemExit("the HTTP server did not start")
    return proc, url, token


def http_client(url: str, token: str, mode: str, name: str = "bench") -> Any:
    @contextlib.asynccontextmanager
    async def connect() -> AsyncIterator[Client]:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as h,
            Client(
                streamable_http_client(url, http_client=h),
                mode=mode,
                client_info=types.Implementation(name=name, version="1"),
            ) as client,
        ):
            yield client

    return connect()


async def transports(root: str, url: str, token: str, calls: int) -> dict[str, list[float]]:
    """The three transports' round trips, interleaved call by call (load drifts alike for all)."""
    params = StdioServerParameters(command=CLI, args=["mcp", "--dir", root, "--no-search", "--no-sandbox"])
    async with (
        Client(params, mode="legacy") as stdio,
        http_client(url, token, "legacy") as legacy,
        http_client(url, token, "auto") as modern,
    ):
        clients = {"stdio": stdio, "HTTP (2025-11-25, session)": legacy, "HTTP (2026-07-28)": modern}
        out: dict[str, list[float]] = {name: [] for name in clients}
        for client in clients.values():
            await _one(client)  # warm up
        for _ in range(calls):
            for name, client in clients.items():
                out[name].append(await _one(client))
        return out


async def concurrent(url: str, token: str, clients: int, seconds: float) -> tuple[float, float, float]:
    """(calls per second, p50 ms, p95 ms) of ``clients`` sessions calling for ``seconds``."""
    latencies: list[float] = []
    stop = time.monotonic() + seconds

    async def one(i: int) -> None:
        async with http_client(url, token, "legacy", f"bench-{i}") as client:
            await client.call_tool("workspace_read_file", ARGS)
            await start.wait()
            while time.monotonic() < stop:
                t = time.perf_counter()
                await client.call_tool("workspace_read_file", ARGS)
                latencies.append((time.perf_counter() - t) * 1000)

    start = asyncio.Event()
    tasks = [asyncio.create_task(one(i)) for i in range(clients)]
    await asyncio.sleep(0.5 + 0.05 * clients)
    begun = time.monotonic()
    stop = begun + seconds
    start.set()
    await asyncio.gather(*tasks)
    took = time.monotonic() - begun
    return len(latencies) / took, pct(latencies, 0.5), pct(latencies, 0.95)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--max-clients", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        Path(root, "notes.txt").write_text("".join(f"line {i}\n" for i in range(40)))
        rows: list[tuple[str, list[float]]] = [("in-process", in_process(root, args.calls))]
        proc, url, token = start_http(root)
        try:
            rows += list(asyncio.run(transports(root, url, token, args.calls)).items())
            print(f"{'transport':<28} {'p50 ms':>8} {'p95 ms':>8}")
            for name, values in rows:
                print(f"{name:<28} {statistics.median(values):>8.2f} {pct(values, 0.95):>8.2f}")
            print()
            print(f"{'clients':>7} {'calls/s':>8} {'p50 ms':>8} {'p95 ms':>8}")
            best = 0
            n = 1
            while n <= args.max_clients:
                rate, p50, p95 = asyncio.run(concurrent(url, token, n, args.seconds))
                print(f"{n:>7} {rate:>8.0f} {p50:>8.1f} {p95:>8.1f}")
                if p95 < 100:
                    best = n
                else:
                    break
                n *= 2
        finally:
            proc.terminate()
            proc.wait(15)
    medians = {name: statistics.median(values) for name, values in rows}
    ratio = medians["HTTP (2025-11-25, session)"] / medians["stdio"]
    ratio_modern = medians["HTTP (2026-07-28)"] / medians["stdio"]
    print()
    print(f"http_vs_stdio_p50: {ratio:.2f}x (target <= 2x)")
    print(f"http_2026_vs_stdio_p50: {ratio_modern:.2f}x (target <= 2x)")
    print(f"http_vs_in_process_p50: {medians['HTTP (2025-11-25, session)'] / medians['in-process']:.1f}x")
    print(f"concurrent_clients_p95_under_100ms: {best} (of up to {args.max_clients} tried)")
    print(f"machine: {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
