"""Object-storage benchmark: FsspecFilesystem vs plain s3fs calls on the same S3 API server.

    .venv/bin/python bench/s3_speed.py [--runs 7] [--files 40]

A moto S3 server on 127.0.0.1 (started and stopped here). For each measure, ``--files`` files per
run, ours and the baseline interleaved run by run; the ratio of the medians is what counts
(target <= 1.3x; the machine is shared, absolute times are context):

* ``write`` — ``FsspecFilesystem.write_file("d/f.txt", data)`` (containment, the checks that no
  parent is a file and that the target is not a directory, one PUT) vs ``s3fs.pipe_file``;
* ``read`` — ``read_file(path, encoding="binary")`` vs ``s3fs.cat_file``;
* ``list`` — ``readdir(dir)`` of a 200-file directory vs ``s3fs.ls(dir, detail=True)``;

each for 1 KiB and 1 MiB files (list: once).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.servers import S3Server
from ws_jupyter.filesystem.fsspec_fs import FsspecFilesystem


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def compare(
    name: str, ours: Callable[[int], object], base: Callable[[int], object], runs: int, n: int
) -> float:
    ours_t: list[float] = []
    base_t: list[float] = []
    for r in range(runs):
        pair = [(ours_t, ours), (base_t, base)] if r % 2 == 0 else [(base_t, base), (ours_t, ours)]
        for bucket, fn in pair:
            bucket.append(timed(lambda fn=fn: [fn(i) for i in range(n)]) / n)
    mo, mb = statistics.median(ours_t), statistics.median(base_t)
    ratio = mo / mb
    print(f"{name:<22} ours {mo * 1000:8.2f} ms/op   s3fs {mb * 1000:8.2f} ms/op   ratio {ratio:5.2f}x")
    return ratio


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--files", type=int, default=40)
    args = ap.parse_args()
    server = S3Server()
    try:
        bucket = server.new_bucket()
        raw = server.s3fs()
        fs = FsspecFilesystem(f"s3://{bucket}/ours", storage_options=server.storage_options())
        base_root = f"{bucket}/base"
        ratios: dict[str, float] = {}
        for label, size in (("1 KiB", 1024), ("1 MiB", 1 << 20)):
            data = b"x" * size
            # warm both clients (connection pool, first requests)
            fs.write_file("warm/w.txt", data)
            raw.pipe_file(f"{base_root}/warm/w.txt", data)
            ratios[f"write {label}"] = compare(
                f"write {label}",
                lambda i, d=data: fs.write_file(f"d/f{i}.txt", d),
                lambda i, d=data: raw.pipe_file(f"{base_root}/d/f{i}.txt", d),
                args.runs,
                args.files,
            )
            ratios[f"read {label}"] = compare(
                f"read {label}",
                lambda i: fs.read_file(f"d/f{i}.txt", encoding="binary"),
                lambda i: raw.cat_file(f"{base_root}/d/f{i}.txt"),
                args.runs,
                args.files,
            )
        for i in range(200):
            fs.write_file(f"many/f{i:03d}.txt", b"y")
            raw.pipe_file(f"{base_root}/many/f{i:03d}.txt", b"y")
        ratios["list 200 files"] = compare(
            "list 200 files",
            lambda i: fs.readdir("many"),
            lambda i: raw.ls(f"{base_root}/many", detail=True),
            args.runs,
            max(5, args.files // 4),
        )
        print()
        for name, ratio in ratios.items():
            verdict = "ok" if ratio <= 1.3 else "MISSED"
            print(f"s3 {name}: {ratio:.2f}x plain s3fs (target <= 1.3x) {verdict}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
