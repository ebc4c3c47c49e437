"""Jupyter targets of QUALITY.md: `%load_ext ws_jupyter` time, and kernel responsiveness under a flood.

    .venv/bin/python bench/jupyter_speed.py [--runs 5]

1. ``%load_ext ws_jupyter`` in fresh interpreters (median of ``--runs``), with the cumulative import
   time of ws_jupyter from ``python -X importtime`` and the heavy modules it did *not* import.
2. A real "Python 3 (ws-jupyter)" kernel (installed into a temp prefix): the round trip of a tiny
   cell (what a widget click costs) while idle, then while a background process followed by a live
   widget streams as fast as it can; the process's line rate is reported.

The machine is shared: read the ratio (flood vs idle) rather than the absolute milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HEAVY = ("chromadb", "onnxruntime", "onnx", "tokenizers", "numpy", "ipywidgets")

LOAD_SCRIPT = """
import json, sys, time
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
t0 = time.perf_counter()
ip.run_line_magic("load_ext", "ws_jupyter")
print(json.dumps({"seconds": time.perf_counter() - t0,
                  "heavy": sorted(m for m in HEAVY if m in sys.modules)}))
""".replace("HEAVY", repr(HEAVY))


def measure_load(runs: int) -> dict[str, Any]:
    seconds = []
    heavy: list[str] = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", LOAD_SCRIPT], capture_output=True, text=True, check=True)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        seconds.append(result["seconds"])
        heavy = result["heavy"]
    timed = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", LOAD_SCRIPT], capture_output=True, text=True, check=True
    )
    ours = [int(line.split("|")[1]) for line in timed.stderr.splitlines() if "ws_jupyter" in line]
    return {"median": statistics.median(seconds), "max": max(seconds), "import_us": max(ours), "heavy": heavy}


def _execute(kc: Any, code: str, timeout: float = 60) -> tuple[float, list[dict[str, Any]]]:
    t0 = time.monotonic()
    msg_id = kc.execute(code)
    messages = []
    while True:
        try:
            msg = kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(code) from None
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    kc.get_shell_msg(timeout=timeout)
    return time.monotonic() - t0, messages


def measure_kernel(samples: int) -> dict[str, Any]:
    from jupyter_client.manager import KernelManager

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from ws_jupyter.install.kernel import install_kernel

    with tempfile.TemporaryDirectory() as tmp:
        install_kernel(prefix=tmp)
        os.environ["JUPYTER_PATH"] = os.path.join(tmp, "share", "jupyter")
        km = KernelManager(kernel_name="ws-jupyter")
        km.start_kernel(cwd=tmp)
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=60)
            _execute(kc, f"%ws init {os.path.join(tmp, 'ws')}")
            idle = [_execute(kc, "1 + 1")[0] for _ in range(samples)]
            _execute(kc, "flood = %ws bg seq 1 1000000000")  # followed by the live ProcessOutput widget
            time.sleep(1.0)
            busy = [_execute(kc, "1 + 1")[0] for _ in range(samples)]
            # seq prints 1, 2, 3...: the last complete line is the number of lines so far
            _, messages = _execute(
                kc, "print(int(flood.stdout.rsplit(chr(10), 2)[-2]) / (flood.execution_time_ms / 1000))"
            )
            rate = float("".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream"))
            _execute(kc, "flood.kill()")
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    return {"idle": statistics.median(idle), "busy": statistics.median(busy), "rate": rate}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=5, help="fresh interpreters for the load time (default 5)"
    )
    args = parser.parse_args()
    load = measure_load(args.runs)
    kernel = measure_kernel(args.runs)
    rows = [
        ("%load_ext ws_jupyter, median", f"{load['median'] * 1000:.1f} ms", "<= 500 ms"),
        ("%load_ext ws_jupyter, worst", f"{load['max'] * 1000:.1f} ms", ""),
        ("ws_jupyter imports (cumulative)", f"{load['import_us'] / 1000:.1f} ms", ""),
        ("heavy modules imported by the load", ", ".join(load["heavy"]) or "none", "none"),
        ("cell round trip, kernel idle", f"{kernel['idle'] * 1000:.1f} ms", ""),
        ("cell round trip, during a flood", f"{kernel['busy'] * 1000:.1f} ms", "stays responsive"),
        ("flood / idle round trip", f"{kernel['busy'] / kernel['idle']:.2f}x", ""),
        ("flood rate", f"{kernel['rate']:,.0f} lines/s", ">= 10,000"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>22}  target")
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:>22}  {target}")
    print(f"jupyter_load_ext: {load['median']:.3f} s (target <= 0.5 s)")


if __name__ == "__main__":
    main()
