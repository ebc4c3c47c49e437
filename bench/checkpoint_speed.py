"""Checkpoint benchmarks: the time to take one, to list the changes since one, and the store's size.

    .venv/bin/python bench/checkpoint_speed.py [--files 5000] [--mb 200] [--changed 10] [--runs 5]

The workspace: ``--files`` files (text of varied sizes, ``--mb`` MB in all) in 50 folders, in a
temp dir, with its checkpoint store in another. Measured, each the median of ``--runs`` runs:

* **first** checkpoint (every file read, hashed and copied) — against copying the workspace with
  ``shutil.copytree`` and against ``git add -A && git commit`` into a fresh repository (both on the
  same files, in the same run);
* **incremental** checkpoint after ``--changed`` files were rewritten (target: <= 0.5 s for 10
  files of a 5,000-file, 200 MB workspace) — against one ``os.walk`` + ``lstat`` of every file
  (the least any change detection must do) and against ``git add -A && git commit`` of the same
  change. The changes are made 2.5 s before the checkpoint (files written in the last two seconds
  are hashed again on purpose: see ``ws_jupyter/checkpoints/scan.py``);
* **changes()** against the first checkpoint, after the same edits;
* the **store's size** after all runs, against the workspace's own size.

The machine is shared and noisy: the ratios of medians taken in the same run are what count.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ws_jupyter import LocalFilesystem, Workspace


def _tree(root: Path, files: int, total_mb: int, rng: random.Random) -> list[Path]:
    mean = total_mb * (1 << 20) // files
    paths = []
    words = [f"w{i}" for i in range(5000)]
    for i in range(files):
        p = root / f"d{i % 50:02d}" / f"f{i:05d}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        size = max(64, int(rng.uniform(0.2, 1.8) * mean))
        line = (" ".join(rng.choices(words, k=40)) + "\n").encode()
        p.write_bytes((line * (size // len(line) + 1))[:size])
        paths.append(p)
    return paths


def _walk_lstat(root: Path) -> int:
    n = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            os.lstat(os.path.join(dirpath, name))
            n += 1
    return n


def _du(path: Path) -> tuple[int, int]:
    """(apparent bytes, allocated bytes) of every file below ``path``."""
    apparent = allocated = 0
    for dirpath, _dirs, names in os.walk(path):
        for name in names:
            st = os.lstat(os.path.join(dirpath, name))
            apparent += st.st_size
            allocated += st.st_blocks * 512
    return apparent, allocated


def _git(args: list[str], git_dir: Path, work: Path) -> None:
    env = {**os.environ, "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(work), "GIT_AUTHOR_NAME": "b",
           "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}  # fmt: skip
    subprocess.run(["git", *args], env=env, check=True, capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--changed", type=int, default=10)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rng = random.Random(7)
    base = Path(tempfile.mkdtemp(prefix="ckpt-bench-"))
    os.environ["WS_JUPYTER_DATA_DIR"] = str(base / "data")
    git = shutil.which("git")
    try:
        root = base / "ws"
        paths = _tree(root, args.files, args.mb, rng)
        size = sum(p.stat().st_size for p in paths)
        print(f"workspace: {len(paths)} files, {size / 2**20:.1f} MB")

        # --- first checkpoint, against a plain copy and git ---------------------------------
        firsts, copies, gits = [], [], []
        for run in range(max(1, min(args.runs, 3))):
            store = base / f"first-store-{run}"
            ws = Workspace(
                filesystem=LocalFilesystem(root), bm25=False, checkpoints={"auto": "off", "store": str(store)}
            )
            t = time.perf_counter()
            ws.checkpoint()
            firsts.append(time.perf_counter() - t)
            ws.destroy()
            shutil.rmtree(store)
            t = time.perf_counter()
            shutil.copytree(root, base / "copy")
            copies.append(time.perf_counter() - t)
            shutil.rmtree(base / "copy")
            if git:
                g = base / f"git-{run}"
                _git(["init", "-q"], g, root)
                t = time.perf_counter()
                _git(["add", "-A"], g, root)
                _git(["commit", "-q", "-m", "first"], g, root)
                gits.append(time.perf_counter() - t)
                shutil.rmtree(g)
        first, copy = statistics.median(firsts), statistics.median(copies)
        print(f"first checkpoint: {first:.2f} s   copytree: {copy:.2f} s ({first / copy:.2f}x)", end="")
        if gits:
            g_first = statistics.median(gits)
            print(f"   git add+commit: {g_first:.2f} s ({first / g_first:.2f}x)")
        else:
            print()

        # --- incremental, changes() ------------------------------------------------------------
        ws = Workspace(
            filesystem=LocalFilesystem(root),
            bm25=False,
            checkpoints={"auto": "off", "store": str(base / "store")},
        )
        ws.init()
        cp0 = ws.checkpoint("base")
        g = base / "git-incr"
        if git:
            _git(["init", "-q"], g, root)
            _git(["add", "-A"], g, root)
            _git(["commit", "-q", "-m", "base"], g, root)
        counter = [0]

        def edit() -> None:
            counter[0] += 1
            for p in rng.sample(paths, args.changed):
                p.write_bytes(p.read_bytes()[:-20] + f"edit {counter[0]:>14}\n".encode())
            time.sleep(2.5)  # out of the racy window (see the docstring)

        times, walks, git_times, change_times = [], [], [], []
        for _ in range(args.runs):
            edit()
            t = time.perf_counter()
            _walk_lstat(root)
            walks.append(time.perf_counter() - t)
            t = time.perf_counter()
            changes = ws.changes(cp0)
            change_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            cp = ws.checkpoints.take()
            times.append(time.perf_counter() - t)
            assert cp.new
            if git:
                t = time.perf_counter()
                _git(["add", "-A"], g, root)
                _git(["commit", "-q", "-m", "edit"], g, root)
                git_times.append(time.perf_counter() - t)
        incr = statistics.median(times)
        walk = statistics.median(walks)
        print(
            f"incremental checkpoint ({args.changed} files changed): {incr:.3f} s   "
            f"walk+lstat: {walk:.3f} s ({incr / walk:.1f}x)",
            end="",
        )
        if git_times:
            g_incr = statistics.median(git_times)
            print(f"   git add+commit: {g_incr:.3f} s ({incr / g_incr:.2f}x)")
        else:
            print()
        chg = statistics.median(change_times)
        print(
            f"changes() since the first checkpoint ({len(changes)} files): {chg:.3f} s ({chg / walk:.1f}x walk+lstat)"
        )
        usage = ws.checkpoints.usage()
        apparent, allocated = _du(base / "store")
        w_apparent, w_allocated = _du(root)
        print(
            f"store after {len(ws.checkpoints.list())} checkpoints: {apparent / 2**20:.1f} MB "
            f"({apparent / w_apparent:.2f}x the workspace; on disk {allocated / 2**20:.1f} MB vs "
            f"{w_allocated / 2**20:.1f} MB); copies {usage.blob_bytes / 2**20:.1f} MB, manifests "
            f"{usage.manifest_bytes / 2**10:.0f} KB"
        )
        ws.destroy()
        ok = incr <= 0.5 or args.files != 5000
        print("target incremental <= 0.5 s:", "met" if ok else "NOT met")
        return 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
