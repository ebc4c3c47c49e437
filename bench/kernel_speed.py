"""Sandbox kernels benchmark (QUALITY.md, "Kernels").

    .venv/bin/python bench/kernel_speed.py [--runs N] [--starts N] [--quick]

Against baselines run in the same process (the machine is shared and noisy: ratios of medians
matter, absolute times are context):

1. execute round trip (``kernel.execute("1")``: request, reply and "idle", result built) vs a bare
   jupyter_client ``BlockingKernelClient.execute_interactive`` on the *same* kernel, interleaved —
   p50 ratio (target <= 1.2) —, and vs the leanest loop jupyter_client's channels allow (send,
   poll both sockets, match the reply and "idle"; no result kept), the floor of any client;
2. kernel start until it answers (``sandbox.kernels.start()``) vs a bare
   ``KernelManager.start_kernel()`` + ``wait_for_ready()`` of the stock ``python3`` kernelspec —
   reported;
3. with bubblewrap: what isolation adds to a start (bwrap sandbox vs unisolated sandbox, both
   ours, interleaved) — ms (target <= 150), and the round trip inside bwrap;
4. time to first output of a streaming cell (``print(..., flush=True)`` then a pause): ours
   (``on_output``) vs the bare client's first ``stream`` message.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from jupyter_client import BlockingKernelClient, KernelManager

from ws_jupyter import LocalSandbox
from ws_jupyter.sandbox.isolation import probe_backend

STREAM_CODE = "import time\nprint('first', flush=True)\ntime.sleep(0.3)\nprint('second')"


def p50(values: list[float]) -> float:
    return statistics.median(values)


def bare_client(connection_file: str) -> BlockingKernelClient:
    kc = BlockingKernelClient(connection_file=connection_file)
    kc.load_connection_file()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    return kc


def bare_round_trip(kc: BlockingKernelClient, code: str = "1") -> float:
    t0 = time.perf_counter()
    reply = kc.execute_interactive(code, output_hook=lambda msg: None, timeout=60)
    assert reply["content"]["status"] == "ok"
    return time.perf_counter() - t0


def lean_round_trip(kc: BlockingKernelClient, code: str = "1") -> float:
    """The fastest loop jupyter_client's channels allow: send, poll both sockets, match replies."""
    import zmq

    t0 = time.perf_counter()
    msg_id = kc.execute(code)
    poller = zmq.Poller()
    poller.register(kc.iopub_channel.socket, zmq.POLLIN)
    poller.register(kc.shell_channel.socket, zmq.POLLIN)
    idle = replied = False
    while not (idle and replied):
        events = dict(poller.poll(10_000))
        if kc.iopub_channel.socket in events:
            while kc.iopub_channel.msg_ready():
                msg = kc.iopub_channel.get_msg(timeout=0)
                if (
                    msg["parent_header"].get("msg_id") == msg_id
                    and msg["msg_type"] == "status"
                    and msg["content"]["execution_state"] == "idle"
                ):
                    idle = True
        if kc.shell_channel.socket in events:
            while kc.shell_channel.msg_ready():
                if kc.shell_channel.get_msg(timeout=0)["parent_header"].get("msg_id") == msg_id:
                    replied = True
    return time.perf_counter() - t0


def ours_round_trip(kernel: Any, code: str = "1") -> float:
    t0 = time.perf_counter()
    r = kernel.execute(code)
    dt = time.perf_counter() - t0
    assert r.ok, r
    return dt


def bench_round_trip(sb: LocalSandbox, runs: int) -> dict[str, float]:
    kernel = sb.kernels.start("rt")
    kc = bare_client(kernel.connection_file)
    try:
        for _ in range(20):  # warm-up: first executions import and allocate
            bare_round_trip(kc)
            lean_round_trip(kc)
            ours_round_trip(kernel)
        base: list[float] = []
        lean: list[float] = []
        ours: list[float] = []
        for _ in range(runs):
            base.append(bare_round_trip(kc))
            lean.append(lean_round_trip(kc))
            ours.append(ours_round_trip(kernel))
    finally:
        kc.stop_channels()
        sb.kernels.shutdown("rt", now=True)
    out = {"bare_p50_ms": p50(base) * 1e3, "lean_p50_ms": p50(lean) * 1e3, "ours_p50_ms": p50(ours) * 1e3}
    out["ratio"] = out["ours_p50_ms"] / out["bare_p50_ms"]
    out["lean_ratio"] = out["ours_p50_ms"] / out["lean_p50_ms"]
    return out


def bare_start(tmp: str) -> float:
    km = KernelManager(kernel_name="python3")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON"))}
    env["IPYTHONDIR"] = os.path.join(tmp, "ipython-bare")
    t0 = time.perf_counter()
    km.start_kernel(env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    dt = time.perf_counter() - t0
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    return dt


def ours_start(sb: LocalSandbox, name: str = "start") -> float:
    t0 = time.perf_counter()
    sb.kernels.start(name)
    dt = time.perf_counter() - t0
    sb.kernels.shutdown(name, now=True)
    return dt


def bench_start(tmp: str, sb: LocalSandbox, sbx: LocalSandbox | None, starts: int) -> dict[str, float]:
    bare_start(tmp)
    ours_start(sb)
    if sbx is not None:
        ours_start(sbx)
    bare: list[float] = []
    ours: list[float] = []
    iso: list[float] = []
    for _ in range(starts):
        bare.append(bare_start(tmp))
        ours.append(ours_start(sb))
        if sbx is not None:
            iso.append(ours_start(sbx))
    out = {"bare_p50_ms": p50(bare) * 1e3, "ours_p50_ms": p50(ours) * 1e3}
    out["ratio"] = out["ours_p50_ms"] / out["bare_p50_ms"]
    if iso:
        out["bwrap_p50_ms"] = p50(iso) * 1e3
        out["bwrap_added_ms"] = out["bwrap_p50_ms"] - out["ours_p50_ms"]
    return out


def bench_first_output(sb: LocalSandbox, runs: int) -> dict[str, float]:
    kernel = sb.kernels.start("stream")
    kc = bare_client(kernel.connection_file)
    ours: list[float] = []
    base: list[float] = []
    try:
        for i in range(runs + 2):
            first: list[float] = []
            t0 = time.perf_counter()
            kernel.execute(
                STREAM_CODE,
                on_output=lambda e, first=first: first.append(time.perf_counter()) if not first else None,
            )
            if i >= 2:
                ours.append(first[0] - t0)
            seen: list[float] = []

            def hook(msg: dict[str, Any], seen: list[float] = seen) -> None:
                if msg["msg_type"] == "stream" and not seen:
                    seen.append(time.perf_counter())

            t0 = time.perf_counter()
            kc.execute_interactive(STREAM_CODE, output_hook=hook, timeout=60)
            if i >= 2:
                base.append(seen[0] - t0)
    finally:
        kc.stop_channels()
        sb.kernels.shutdown("stream", now=True)
    out = {"bare_p50_ms": p50(base) * 1e3, "ours_p50_ms": p50(ours) * 1e3}
    out["ratio"] = out["ours_p50_ms"] / out["bare_p50_ms"]
    return out


def _row(label: str, *cells: str) -> None:
    print(f"{label:<36}" + "   ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=300, help="round trips per side")
    parser.add_argument("--starts", type=int, default=7, help="kernel starts per configuration")
    parser.add_argument("--quick", action="store_true", help="fewer runs (a smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.starts = 30, 2
    bwrap = probe_backend("bwrap")
    rtx: dict[str, float] | None = None
    with tempfile.TemporaryDirectory() as tmp:
        sb = LocalSandbox(working_directory=os.path.join(tmp, "wd"))
        sbx = None
        if bwrap.available:
            sbx = LocalSandbox(working_directory=os.path.join(tmp, "wdx"), isolation="bwrap")
        try:
            rt = bench_round_trip(sb, args.runs)
            if sbx is not None:
                rtx = bench_round_trip(sbx, args.runs)
            for label, r in (("execute round trip (p50)", rt), ("execute round trip in bwrap (p50)", rtx)):
                if r is not None:
                    _row(
                        label,
                        f"execute_interactive {r['bare_p50_ms']:6.2f} ms",
                        f"lean loop {r['lean_p50_ms']:6.2f} ms",
                        f"ours {r['ours_p50_ms']:6.2f} ms",
                        f"{r['ratio']:.2f}x / {r['lean_ratio']:.2f}x",
                    )
            st = bench_start(tmp, sb, sbx, args.starts)
            _row(
                "kernel start until ready (p50)",
                f"bare {st['bare_p50_ms']:6.0f} ms",
                f"ours {st['ours_p50_ms']:6.0f} ms",
                f"{st['ratio']:.2f}x",
            )
            if "bwrap_p50_ms" in st:
                _row(
                    "kernel start in bwrap (p50)",
                    f"ours {st['bwrap_p50_ms']:6.0f} ms",
                    f"added {st['bwrap_added_ms']:+.0f} ms",
                )
            fo = bench_first_output(sb, max(5, args.runs // 30))
            _row(
                "time to first output (p50)",
                f"bare {fo['bare_p50_ms']:6.2f} ms",
                f"ours {fo['ours_p50_ms']:6.2f} ms",
                f"{fo['ratio']:.2f}x",
            )
        finally:
            sb.destroy()
            if sbx is not None:
                sbx.destroy()
    print()
    print(f"execute_round_trip_ratio: {rt['ratio']:.2f}x vs execute_interactive (target <= 1.2)")
    print(f"execute_round_trip_ratio_lean: {rt['lean_ratio']:.2f}x vs the leanest channel loop (reported)")
    if rtx is not None:
        print(f"execute_round_trip_ratio_bwrap: {rtx['ratio']:.2f}x / {rtx['lean_ratio']:.2f}x (reported)")
    print(f"kernel_start_ratio: {st['ratio']:.2f}x vs bare KernelManager.start_kernel (reported)")
    if "bwrap_added_ms" in st:
        print(f"bwrap_start_added_ms: {st['bwrap_added_ms']:.0f} ms (target <= 150)")
    else:
        print(f"bwrap_start_added_ms: not measured ({bwrap.message})")
    print(f"first_output_ms: {fo['ours_p50_ms']:.1f} ms vs bare {fo['bare_p50_ms']:.1f} ms (reported)")


if __name__ == "__main__":
    sys.exit(main())
