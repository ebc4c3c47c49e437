"""User-data copies benchmark: a DataFrame into a sandbox kernel and back, and inspection latency.

    .venv/bin/python bench/user_data_speed.py [--rows N] [--runs N] [--isolation auto|bwrap|none]

A 1M-row x 10-column DataFrame (6 float64 columns with NaN, 2 int64, a categorical and a string
column) goes into the sandbox's kernel (``copy_into_kernel``: checked, sized, written as Arrow IPC
into the kernel's private folder, loaded there) and back (``fetch_from_kernel``: written by the
kernel, read and checked as hostile input, rebuilt). Against the baseline run in the same process
and interleaved: writing the same frame to a Parquet file and reading it back
(``df.to_parquet`` + ``pd.read_parquet``), which is what a user would otherwise do by hand.

Reported, medians of the runs:

1. time into the sandbox, time back, and their sum against the baseline (target: <= 2x);
2. peak extra memory of the notebook's process during each copy (the high-water mark of its
   resident memory, reset before each copy through ``/proc/self/clear_refs``) against the frame's
   size (target: <= 2x); the sandbox kernel's own peak while it loads the copy (sampled every
   5 ms, above its size before the copy) for context;
3. ``user_variable_inspect`` on the frame through the agent tool (p50, p95) and
   ``user_variables_list`` (p50).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from typing import Any

import numpy as np
import pandas as pd
import psutil

from ws_jupyter import LocalFilesystem, LocalSandbox, Workspace
from ws_jupyter.userdata import copy_into_kernel, fetch_from_kernel


def frame(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    data: dict[str, Any] = {}
    for i in range(6):
        column = rng.normal(size=rows)
        column[rng.random(rows) < 0.01] = np.nan
        data[f"f{i}"] = column
    data["i0"] = rng.integers(0, 1_000_000, rows)
    data["i1"] = np.arange(rows)
    data["region"] = pd.Categorical(rng.choice(["north", "south", "east", "west"], rows))
    data["label"] = pd.Series([f"item-{k % 50_000}" for k in range(rows)], dtype="str")
    return pd.DataFrame(data)


def rss() -> int:
    return psutil.Process().memory_info().rss


def peak_rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


def reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets the resident-memory high-water mark to the current size


class PeakOf:
    """The peak resident memory of a process tree (the sandbox kernel), sampled every 5 ms."""

    def __init__(self, pid: int | None) -> None:
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self.base = self._sample()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> int:
        try:
            root = psutil.Process(self.pid)
            return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])
        except (psutil.Error, ValueError):
            return 0

    @property
    def extra(self) -> int:
        return max(0, self.peak - self.base)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._sample())
            self._stop.wait(0.005)

    def __enter__(self) -> PeakOf:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def measure(fn: Any) -> tuple[float, int]:
    """(seconds, peak extra bytes of this process) of ``fn()``."""
    import gc

    gc.collect()
    before = rss()
    reset_peak()
    t0 = time.perf_counter()
    fn()
    seconds = time.perf_counter() - t0
    return seconds, max(0, peak_rss() - before)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--isolation", default="auto")
    args = parser.parse_args()

    df = frame(args.rows)
    size = int(df.memory_usage(deep=True, index=True).sum())
    root = tempfile.mkdtemp(prefix="ws-bench-userdata-")
    ws = Workspace(
        filesystem=LocalFilesystem(root),
        sandbox=LocalSandbox(working_directory=root, isolation=args.isolation, timeout=600),
        bm25=False,
    )
    ws.init()
    kernels = ws.sandbox.kernels
    kernel = kernels.start()
    kernels.execute("import pandas, pyarrow.ipc")  # the libraries' own memory is not the copy's
    parquet = os.path.join(tempfile.mkdtemp(prefix="ws-bench-parquet-"), "frame.parquet")
    print(
        f"frame: {args.rows:,} rows x {df.shape[1]} columns, {size / 2**20:.1f} MiB in memory; "
        f"isolation {ws.sandbox.isolation}; pandas {pd.__version__}; python {sys.version.split()[0]}"
    )

    base_t, into_t, back_t, base_m, into_m, back_m, kernel_m = [], [], [], [], [], [], []
    holder: dict[str, Any] = {}
    for run in range(args.runs + 1):  # the first round warms caches and imports up: not counted

        def baseline() -> None:
            df.to_parquet(parquet)
            holder["base"] = pd.read_parquet(parquet)

        t, m = measure(baseline)
        holder.pop("base")
        with PeakOf(kernel.pid) as peak:
            ti, mi = measure(
                lambda: copy_into_kernel(df, kernels=kernels, as_name="bench_df", max_bytes=1 << 30)
            )
        if run == 0:  # later copies reuse what the kernel's allocators kept: the first one tells
            kernel_m.append(peak.extra)

        def back() -> None:
            holder["back"] = fetch_from_kernel("bench_df", kernels=kernels, max_bytes=1 << 30).value

        tb, mb = measure(back)
        if run == 0:
            pd.testing.assert_frame_equal(holder["back"], df)
        holder.pop("back")
        if run:
            base_t.append(t), into_t.append(ti), back_t.append(tb)
            base_m.append(m), into_m.append(mi), back_m.append(mb)
        print(
            f"run {run}: parquet {t:.2f} s, into {ti:.2f} s, back {tb:.2f} s{' (warm-up)' if not run else ''}"
        )

    ws.share(df, name="bench_df")
    tools = {t.name: t for t in ws.tools()}
    inspect_t, list_t = [], []
    for _ in range(max(10, args.runs * 4)):
        t0 = time.perf_counter()
        out = tools["user_variable_inspect"].run({"name": "bench_df"})
        inspect_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        tools["user_variables_list"].run({})
        list_t.append(time.perf_counter() - t0)
    assert out.startswith("bench_df: pandas.DataFrame")
    ws.destroy()

    med = statistics.median
    total = med(into_t) + med(back_t)
    print()
    print("| what | median | vs baseline |")
    print("|---|---|---|")
    print(f"| Parquet write + read (baseline) | {med(base_t):.2f} s | 1.00 |")
    print(f"| copy into the sandbox | {med(into_t):.2f} s | {med(into_t) / med(base_t):.2f} |")
    print(f"| copy back | {med(back_t):.2f} s | {med(back_t) / med(base_t):.2f} |")
    print(f"| into + back | {total:.2f} s | {total / med(base_t):.2f} |")
    print(
        f"| peak extra memory, Parquet baseline | {med(base_m) / 2**20:.0f} MiB | {med(base_m) / size:.2f}x the frame |"
    )
    print(
        f"| peak extra memory, into | {med(into_m) / 2**20:.0f} MiB | {med(into_m) / size:.2f}x the frame |"
    )
    print(
        f"| peak extra memory, back | {med(back_m) / 2**20:.0f} MiB | {med(back_m) / size:.2f}x the frame |"
    )
    print(
        f"| sandbox kernel's peak extra memory, first copy in | {kernel_m[0] / 2**20:.0f} MiB | "
        f"{kernel_m[0] / size:.2f}x the frame (context) |"
    )
    inspect_sorted = sorted(inspect_t)
    p95 = inspect_sorted[min(len(inspect_sorted) - 1, int(0.95 * len(inspect_sorted)))]
    print(f"| user_variable_inspect p50 / p95 | {med(inspect_t) * 1000:.0f} / {p95 * 1000:.0f} ms | |")
    print(f"| user_variables_list p50 | {med(list_t) * 1000:.1f} ms | |")
    print()
    print(f"copy into + back vs Parquet write + read: {total / med(base_t):.2f}x (target <= 2)")
    print(f"peak extra memory: {max(med(into_m), med(back_m)) / size:.2f}x the frame (target <= 2)")
    print(f"inspect p50: {med(inspect_t) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
