"""Commands and processes benchmark (QUALITY.md, "Commands and processes").

    .venv/bin/python bench/sandbox_speed.py [--runs N] [--mb 200] [--quick]

Measures, against baselines run in the same process (the machine is shared and noisy, so
ratios of medians matter, absolute times are context):

1. ``execute_command("true")`` vs ``subprocess.run(["sh", "-c", "true"])`` — p50 ratio (<= 1.5);
2. the latency bubblewrap adds to a command — ms (<= 15);
3. draining a process that writes 200 MB to stdout vs ``cat file > /dev/null`` (>= 50%), and vs
   the fastest native pipe drain ``cat file | cat > /dev/null``; peak memory of this process
   while draining (bounded by ``max_retained_bytes``);
4. 100 concurrent background processes: spawn time, ``destroy()`` time, processes left behind.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import psutil

from ws_jupyter.sandbox import LocalSandbox
from ws_jupyter.sandbox.isolation import probe_backend


def p50(values: list[float]) -> float:
    return statistics.median(values)


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def bench_true(runs: int) -> dict[str, float]:
    """``execute_command("true")`` vs ``subprocess.run``, interleaved so load changes hit both."""
    with tempfile.TemporaryDirectory() as tmp:
        sb = LocalSandbox(working_directory=os.path.join(tmp, "wd"))
        sb.start()
        base: list[float] = []
        ours: list[float] = []
        for _ in range(3):  # warm-up
            subprocess.run(["sh", "-c", "true"])
            sb.execute_command("true")
        for _ in range(runs):
            base += timed(lambda: subprocess.run(["sh", "-c", "true"]), 1)
            ours += timed(lambda: sb.execute_command("true"), 1)
        sb.destroy()
    result = {"subprocess_p50_ms": p50(base) * 1e3, "execute_p50_ms": p50(ours) * 1e3}
    result["ratio"] = result["execute_p50_ms"] / result["subprocess_p50_ms"]
    return result


#: bubblewrap with the hardening off: namespaces and binds only (what "bare" measures).
BARE = {
    "seccomp": False,
    "uid": None,
    "gid": None,
    "cgroup": False,
    "max_processes": None,
    "max_memory_mb": None,
    "max_file_size_mb": None,
    "max_open_files": None,
    "tmp_size_mb": None,
}


def bench_bwrap(runs: int) -> dict[str, float]:
    """What bubblewrap adds to a command, against unisolated commands run alongside.

    Three sandboxes interleaved: unisolated, bubblewrap with the hardening off (``BARE``), and the
    default (seccomp filter, uid 1000, /proc masks, rlimits, a cgroup where one can be made).
    Run after ``bench_true``: tearing down bubblewrap's network namespaces keeps kernel workers
    busy for a while, which would slow whatever runs next.
    """
    with tempfile.TemporaryDirectory() as tmp:
        sb = LocalSandbox(working_directory=os.path.join(tmp, "wd"))
        bare = LocalSandbox(
            working_directory=os.path.join(tmp, "wdb"), isolation="bwrap", native_sandbox=BARE
        )
        sbx = LocalSandbox(working_directory=os.path.join(tmp, "wdx"), isolation="bwrap")
        plain: list[float] = []
        unhardened: list[float] = []
        iso: list[float] = []
        for _ in range(3):
            sb.execute_command("true")
            bare.execute_command("true")
            sbx.execute_command("true")
        for _ in range(runs):
            plain += timed(lambda: sb.execute_command("true"), 1)
            unhardened += timed(lambda: bare.execute_command("true"), 1)
            iso += timed(lambda: sbx.execute_command("true"), 1)
        hardening = sbx.get_info().metadata["hardening"]
        for s in (sb, bare, sbx):
            s.destroy()
    return {
        "bwrap_p50_ms": p50(iso) * 1e3,
        "bwrap_added_ms": (p50(iso) - p50(plain)) * 1e3,
        "bare_added_ms": (p50(unhardened) - p50(plain)) * 1e3,
        "hardening_added_ms": (p50(iso) - p50(unhardened)) * 1e3,
        "cgroup": str(hardening.get("cgroup")),
    }


class PeakRss:
    """Samples this process's RSS every few ms while the block runs."""

    def __enter__(self) -> PeakRss:
        self._proc = psutil.Process()
        self.start = self._proc.memory_info().rss
        self.peak = self.start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, self._proc.memory_info().rss)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def added_mb(self) -> float:
        return (self.peak - self.start) / (1 << 20)


def make_file(path: str, size: int) -> None:
    line = (uuid.uuid4().hex * 3)[:99] + "\n"
    block = (line * (1 << 14)).encode()
    with open(path, "wb") as f:
        written = 0
        while written < size:
            chunk = block[: size - written]
            f.write(chunk)
            written += len(chunk)


def bench_drain(mb: int, runs: int) -> dict[str, float]:
    size = mb * 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.txt")
        make_file(path, size)
        subprocess.run(["cat", path], stdout=subprocess.DEVNULL)  # page cache warm
        devnull: list[float] = []
        pipe: list[float] = []
        ours: list[float] = []
        peaks: list[float] = []
        retained = 0
        sb = LocalSandbox(working_directory=os.path.join(tmp, "wd"), timeout=None)
        sb.start()
        for _ in range(runs):
            devnull += timed(lambda: subprocess.run(f"cat '{path}' > /dev/null", shell=True), 1)
            pipe += timed(lambda: subprocess.run(f"cat '{path}' | cat > /dev/null", shell=True), 1)
            with PeakRss() as rss:
                t0 = time.perf_counter()
                h = sb.processes.spawn(f"cat '{path}'", stdin="ignore")
                r = h.wait()
                ours.append(time.perf_counter() - t0)
            assert r.exit_code == 0 and h.stdout_bytes == size, (r, h.stdout_bytes)
            retained = len(h.stdout.encode())
            peaks.append(rss.added_mb)
            sb.processes.release(h.pid)
        sb.destroy()
    t_ours, t_dev, t_pipe = p50(ours), p50(devnull), p50(pipe)
    return {
        "mb": mb,
        "ours_s": t_ours,
        "ours_mb_s": mb / t_ours,
        "devnull_s": t_dev,
        "pipe_s": t_pipe,
        "vs_devnull": t_dev / t_ours,
        "vs_pipe": t_pipe / t_ours,
        "peak_added_mb": max(peaks),
        "retained_mb": retained / (1 << 20),
    }


def bench_many(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        sb = LocalSandbox(working_directory=os.path.join(tmp, "wd"))
        marker = f"{500 + uuid.uuid4().int % 400}.{uuid.uuid4().int % 10**6:06d}"
        t0 = time.perf_counter()
        handles = [sb.processes.spawn(f"sleep {marker}") for _ in range(n)]
        spawn_s = time.perf_counter() - t0
        tracked = len(sb.processes.list())
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(_with_arg(marker)) < n:
            time.sleep(0.02)
        before = _with_arg(marker)
        t0 = time.perf_counter()
        sb.destroy()
        destroy_s = time.perf_counter() - t0
        time.sleep(0.2)
        left = _with_arg(marker)
    return {
        "n": n,
        "tracked": tracked,
        "seen_running": len(before),
        "spawn_s": spawn_s,
        "destroy_s": destroy_s,
        "left": len(left),
        "all_exited": all(h.exit_code is not None for h in handles),
    }


def _with_arg(arg: str) -> list[int]:
    pids = []
    for p in psutil.process_iter(["cmdline", "status"]):
        try:
            if p.info["status"] != psutil.STATUS_ZOMBIE and arg in (p.info["cmdline"] or ()):
                pids.append(p.pid)
        except psutil.Error:
            continue
    return pids


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200, help="commands per variant for the latency test")
    ap.add_argument("--drain-runs", type=int, default=3)
    ap.add_argument("--mb", type=int, default=200, help="output size for the drain test (MB)")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.mb, args.drain_runs = 30, 20, 1
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print(
        f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())} (shared machine: figures are noisy)\n"
    )

    t = bench_true(args.runs)
    if probe_backend("bwrap").available:  # probing runs a sandbox: only after the overhead phase
        t.update(bench_bwrap(max(20, args.runs // 4)))
    d = bench_drain(args.mb, args.drain_runs)
    m = bench_many(100)

    rows = [
        ("subprocess.run(['sh','-c','true']) p50", f"{t['subprocess_p50_ms']:.2f} ms"),
        ('execute_command("true") p50', f"{t['execute_p50_ms']:.2f} ms"),
        ("  ratio", f"{t['ratio']:.2f}x"),
    ]
    if "bwrap_p50_ms" in t:
        rows += [
            ('execute_command("true") under bwrap p50', f"{t['bwrap_p50_ms']:.2f} ms"),
            ("  added by bwrap", f"{t['bwrap_added_ms']:.2f} ms"),
            ("  of which namespaces and binds", f"{t['bare_added_ms']:.2f} ms"),
            (f"  of which hardening (cgroup: {t['cgroup']})", f"{t['hardening_added_ms']:.2f} ms"),
        ]
    rows += [
        (f"cat {d['mb']} MB > /dev/null (p50)", f"{d['devnull_s'] * 1e3:.0f} ms"),
        (f"cat {d['mb']} MB | cat > /dev/null (p50)", f"{d['pipe_s'] * 1e3:.0f} ms"),
        (
            f"spawn('cat {d['mb']} MB') + wait (p50)",
            f"{d['ours_s'] * 1e3:.0f} ms ({d['ours_mb_s']:.0f} MB/s)",
        ),
        ("  speed vs cat > /dev/null", f"{d['vs_devnull'] * 100:.0f}%"),
        ("  speed vs native pipe drain", f"{d['vs_pipe'] * 100:.0f}%"),
        (
            "  peak RSS added while draining",
            f"{d['peak_added_mb']:.1f} MB (retained {d['retained_mb']:.1f} MB)",
        ),
        (f"spawn {m['n']} background processes", f"{m['spawn_s'] * 1e3:.0f} ms, {m['tracked']} tracked"),
        ("destroy() with them running", f"{m['destroy_s'] * 1e3:.0f} ms, {m['left']} left behind"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure'.ljust(width)}  value")
    print(f"{'-' * width}  {'-' * 30}")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")
    print()
    print(f"execute_overhead_ratio: {t['ratio']:.2f} (target <= 1.5)")
    if "bwrap_added_ms" in t:
        print(f"bwrap_added_ms: {t['bwrap_added_ms']:.1f} (target <= 15)")
    else:
        print("bwrap_added_ms: n/a (bubblewrap cannot run here)")
    print(f"drain_speed_vs_cat_devnull: {d['vs_devnull'] * 100:.0f}% (target >= 50%)")
    print(f"drain_speed_vs_native_pipe: {d['vs_pipe'] * 100:.0f}% (context)")
    print(
        f"drain_peak_memory_mb: {d['peak_added_mb']:.1f} (target ~ max_retained_bytes 1 MiB + small overhead)"
    )
    print(f"processes_left_after_destroy: {m['left']} of {m['n']} (target 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
