"""Grep over notebooks, cold and warm, against ripgrep on the raw JSON.

    .venv/bin/python bench/notebook_grep.py [--notebooks 300]

Generates a corpus of varied notebooks (``tests/notebooks/wild.py``: Jupyter and Colab layouts,
stream outputs, small images) in a temporary directory and times ``workspace_grep``'s search
(``ws_jupyter.tools.grep.search``, cell by cell) for a few patterns:

* ``cold``: the cell-text cache emptied first (every notebook parsed);
* ``warm``: the median of 5 runs with the cache filled (the target: <= 0.3 s on 300 notebooks);
* ``rg``: ripgrep over the same files as JSON text (what a plain text search costs; it does not
  give cell locations, and its line numbers are the JSON's).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.notebooks.wild import corpus  # noqa: E402
from ws_jupyter import LocalFilesystem  # noqa: E402
from ws_jupyter.notebooks.cache import cell_text_cache  # noqa: E402
from ws_jupyter.tools.grep import search  # noqa: E402

PATTERNS = ("kmeans_1[0-9] = ", "answer", "loss\\(4")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notebooks", type=int, default=300)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="nb-grep-"))
    try:
        paths = corpus(root, args.notebooks)
        size = sum(p.stat().st_size for p in paths)
        fs = LocalFilesystem(root)
        rg = shutil.which("rg") or shutil.which("rg", path=str(Path(sys.executable).parent))
        print(f"{len(paths)} notebooks, {size / 1e6:.1f} MB")
        print(f"{'pattern':22} {'matches':>8} {'cold s':>7} {'warm s':>7} {'rg s':>6}")
        for pattern in PATTERNS:
            cell_text_cache.clear()
            t = time.perf_counter()
            result = search(fs, pattern, max_matches=50)
            cold = time.perf_counter() - t
            warm_runs = []
            for _ in range(5):
                t = time.perf_counter()
                again = search(fs, pattern, max_matches=50)
                warm_runs.append(time.perf_counter() - t)
            assert again.total_matches == result.total_matches
            rg_s = float("nan")
            if rg:
                t = time.perf_counter()
                subprocess.run([rg, "-c", pattern, str(root)], capture_output=True, check=False)
                rg_s = time.perf_counter() - t
            print(f"{pattern:22} {result.total_matches:>8} {cold:7.2f} {statistics.median(warm_runs):7.3f} {rg_s:6.3f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
