"""Concurrent async tool calls: ``Tool.arun`` on the tools' own pool vs the event loop's default
executor (``asyncio.to_thread``, what ``arun`` used before).

Ten ``workspace_execute_command`` calls of ``sleep 1`` are awaited together, and while they run
the loop's default executor is asked for a DNS lookup (``loop.getaddrinfo``), as an application's
own LLM client would. Reported: the wall time of the ten calls, and how long the lookup waited.

    .venv/bin/python bench/arun_concurrency.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time

from ws_jupyter import LocalSandbox, Workspace

CALLS = 10


async def _measure(tool, via_default_executor: bool) -> tuple[float, float]:
    loop = asyncio.get_running_loop()
    started = time.perf_counter()

    async def one() -> object:
        if via_default_executor:
            return await asyncio.to_thread(tool.run, {"command": "sleep 1"})
        return await tool.arun({"command": "sleep 1"})

    calls = [asyncio.ensure_future(one()) for _ in range(CALLS)]
    await asyncio.sleep(0.1)
    asked = time.perf_counter()
    await loop.getaddrinfo("localhost", 80)
    lookup = time.perf_counter() - asked
    outs = await asyncio.gather(*calls)
    assert all(o == "(no output)" for o in outs), outs
    return time.perf_counter() - started, lookup


def main() -> None:
    with tempfile.TemporaryDirectory() as root:
        ws = Workspace(
            sandbox=LocalSandbox(working_directory=root, isolation="none"), tools={"require_approval": False}
        )
        try:
            tool = next(t for t in ws.tools() if t.name == "workspace_execute_command")
            asyncio.run(_measure(tool, False))  # warm up both paths
            own_total, own_lookup = asyncio.run(_measure(tool, False))
            old_total, old_lookup = asyncio.run(_measure(tool, True))
        finally:
            ws.destroy()
    print(f"cpus: {os.cpu_count()}  ({CALLS} concurrent 'sleep 1' commands)")
    print(f"{'executor':<30} {'10 calls':>10} {'DNS lookup waited':>18}")
    print(f"{'tools pool (Tool.arun)':<30} {own_total:>9.2f}s {own_lookup * 1000:>16.1f}ms")
    print(f"{'loop default (to_thread)':<30} {old_total:>9.2f}s {old_lookup * 1000:>16.1f}ms")
    print(f"arun 10 x sleep 1: {own_total:.2f} s (target ~1 s)")
    print(f"default-executor wait during the calls: {own_lookup * 1000:.1f} ms (target: not blocked)")


if __name__ == "__main__":
    main()
