"""File benchmarks (QUALITY.md, "Files").

    .venv/bin/python bench/fs_speed.py [--runs N] [--files 20000] [--only grep|list_files]

The tree: a copy of this virtualenv's site-packages (whole top-level packages, in name order, until
``--files`` files; files over 2 MB skipped) in a temp dir, with a ``.gitignore`` ignoring
``__pycache__/`` and a git repository whose index holds the tracked files. The machine is shared
and noisy: each measure is the median of ``--runs`` runs, ours and the baseline interleaved, and
the ratio of medians is what counts (absolute times are context).

Sections:

* ``io`` — ``LocalFilesystem`` read/write/stat/readdir/exists vs plain ``pathlib`` on the same
  files (2,000 files of 1 KB in 20 directories), so the cost of containment (path checks,
  descriptor walks) and of atomic writes is visible. Writes are also compared with an atomic
  pathlib baseline (temp file + ``os.replace``), the fair comparison for what ``write_file`` does.
* ``grep`` — the ``workspace_grep`` tool (ripgrep engine, confined to the workspace: see
  ``ws_jupyter/tools/grep/confine.py``) vs plain ``rg -n PATTERN tree`` writing to a pipe that is
  drained, for a rare identifier, a common word and a regex; the default confinement is the
  target, the other one (Landlock or bubblewrap, when it works here) and the pure-Python fallback
  are reported against the same baseline. Target: within 2x of ripgrep.
* ``list_files`` — the ``workspace_list_files`` tool (gitignore-aware, depth 3, default output
  budget) vs a ``git ls-files``-based listing (``git ls-files`` plus building the same depth-3
  tree text from its output). Target: within 2x.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.tools import grep as grep_mod
from ws_jupyter.tools.grep import confine as grep_confine

MAX_FILE_BYTES = 2 * 1024 * 1024
GREP_PATTERNS = {
    "rare identifier": "def __init_subclass__",
    "common word": "import os",
    "regex": r"class \w+Error\b",
}


# --- the tree -----------------------------------------------------------------------------------------


def build_tree(dest: Path, n_files: int) -> int:
    """Copy whole site-packages entries into ``dest`` until ``n_files`` files; returns the count."""
    src = Path(sysconfig.get_paths()["purelib"])
    copied = 0
    for entry in sorted(src.iterdir(), key=lambda p: p.name.lower()):
        if copied >= n_files:
            break
        if entry.is_symlink():
            continue
        if entry.is_file():
            if entry.stat().st_size <= MAX_FILE_BYTES:
                shutil.copy2(entry, dest / entry.name)
                copied += 1
            continue
        for root, dirs, files in os.walk(entry):
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
            rel = Path(root).relative_to(src)
            (dest / rel).mkdir(parents=True, exist_ok=True)
            for name in files:
                p = Path(root) / name
                if p.is_symlink() or p.stat().st_size > MAX_FILE_BYTES:
                    continue
                shutil.copy2(p, dest / rel / name)
                copied += 1
    (dest / ".gitignore").write_text("__pycache__/\n*.pyc\n")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null"}
    subprocess.run(["git", "init", "-q", str(dest)], check=True, env=env)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True, env=env)
    return copied


# --- helpers ----------------------------------------------------------------------------------------


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved(runs: int, **fns: Callable[[], object]) -> dict[str, float]:
    """Median seconds of each function, run alternately after one warm-up round."""
    for fn in fns.values():
        fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            samples[name].append(timed(fn))
    return {name: statistics.median(values) for name, values in samples.items()}


def tool(ws: Workspace, name: str):
    return next(t for t in ws.tools() if t.name == name)


# --- io ------------------------------------------------------------------------------------------------


def bench_io(root: Path, runs: int) -> dict[str, dict[str, float]]:
    """Seconds per operation for ours vs pathlib, per operation kind (medians of ``runs`` passes)."""
    base = root / "io"
    dirs = [f"d{i:02d}" for i in range(20)]
    rels = [f"{d}/f{j:03d}.txt" for d in dirs for j in range(100)]
    payload = "x" * 1023 + "\n"
    for rel in rels:
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(payload)
    fs = LocalFilesystem(base)
    paths = [base / rel for rel in rels]

    def atomic_pathlib_write() -> None:
        for p in paths:
            tmp = p.with_name("." + p.name + ".tmp")
            tmp.write_text(payload)
            os.replace(tmp, p)

    cases: dict[str, dict[str, Callable[[], object]]] = {
        "read": {
            "ours": lambda: [fs.read_file(r) for r in rels],
            "pathlib": lambda: [p.read_text() for p in paths],
        },
        "write": {
            "ours": lambda: [fs.write_file(r, payload) for r in rels],
            "pathlib": lambda: [p.write_text(payload) for p in paths],
            "atomic_pathlib": atomic_pathlib_write,
        },
        "stat": {
            "ours": lambda: [fs.stat(r) for r in rels],
            "pathlib": lambda: [p.stat() for p in paths],
        },
        "exists": {
            "ours": lambda: [fs.exists(r) for r in rels],
            "pathlib": lambda: [p.exists() for p in paths],
        },
        "readdir": {
            "ours": lambda: [fs.readdir(d) for d in dirs],
            # what readdir returns: names, types and file sizes
            "pathlib": lambda: [
                [(c.name, c.is_dir(), c.stat().st_size) for c in (base / d).iterdir()] for d in dirs
            ],
        },
    }
    out: dict[str, dict[str, float]] = {}
    for kind, fns in cases.items():
        count = len(dirs) if kind == "readdir" else len(rels)
        medians = interleaved(runs, **fns)
        out[kind] = {name: seconds / count for name, seconds in medians.items()}
    return out


# --- grep ---------------------------------------------------------------------------------------------


def bench_grep(tree: Path, runs: int) -> dict[str, dict[str, float]]:
    rg = grep_mod.find_ripgrep()
    if rg is None:
        raise SystemExit("ripgrep is not installed (pip install ripgrep): the grep section needs it")
    modes = [m for m in grep_confine.MODES if grep_confine.usable(m)]
    if not modes:
        raise SystemExit("no confinement works here (Landlock, bubblewrap): grep would use its Python engine")
    ws = Workspace(filesystem=LocalFilesystem(tree), bm25=False)
    fs = ws.filesystem
    grep_tool = tool(ws, "workspace_grep")
    out: dict[str, dict[str, float]] = {}
    default_modes = grep_confine.MODES
    try:
        for label, pattern in GREP_PATTERNS.items():

            def ripgrep(pattern: str = pattern) -> None:
                subprocess.run(
                    [rg, "-n", "--no-config", "-e", pattern, str(tree)], stdout=subprocess.PIPE, check=False
                )

            def confined(mode: str, pattern: str = pattern) -> Callable[[], None]:
                def run() -> None:
                    grep_confine.MODES = (mode,)
                    try:
                        grep_tool.run({"pattern": pattern})
                    finally:
                        grep_confine.MODES = default_modes

                return run

            def python(pattern: str = pattern) -> None:
                grep_mod.search(fs, pattern, engine="python")

            medians = interleaved(runs, ripgrep=ripgrep, **{m: confined(m) for m in modes})
            medians["ours"] = medians[modes[0]]
            medians.update(interleaved(max(1, runs // 2), python=python))
            first = grep_tool.run({"pattern": pattern}).splitlines()[0]
            out[label] = {**medians, "summary": first, "modes": modes}  # type: ignore[dict-item]
    finally:
        ws.destroy()
    return out


# --- list_files ---------------------------------------------------------------------------------------


def git_listing(tree: Path, depth: int) -> str:
    """The depth-limited tree text built from ``git ls-files`` (the baseline)."""
    files = subprocess.run(
        ["git", "-C", str(tree), "ls-files", "-z"], stdout=subprocess.PIPE, check=True
    ).stdout.split(b"\0")
    children: dict[str, set[str]] = {}
    kinds: dict[str, bool] = {}
    for raw in files:
        if not raw:
            continue
        parts = raw.decode("utf-8", "surrogateescape").split("/")
        for i in range(min(len(parts), depth)):
            parent = "/".join(parts[:i])
            path = "/".join(parts[: i + 1])
            children.setdefault(parent, set()).add(path)
            kinds[path] = kinds.get(path, False) or i < len(parts) - 1
    lines = ["."]

    def emit(parent: str, level: int) -> None:
        entries = sorted(children.get(parent, ()), key=lambda p: (not kinds[p], p.rsplit("/", 1)[-1].lower()))
        for p in entries:
            name = p.rsplit("/", 1)[-1]
            lines.append("\t" * level + name + ("/" if kinds[p] else ""))
            if kinds[p]:
                emit(p, level + 1)

    emit("", 0)
    return "\n".join(lines)


def bench_list_files(tree: Path, runs: int) -> dict[str, float]:
    ws = Workspace(filesystem=LocalFilesystem(tree), bm25=False)
    listing = tool(ws, "workspace_list_files")
    unlimited_ws = Workspace(
        filesystem=LocalFilesystem(tree),
        bm25=False,
        tools={T.FILESYSTEM.LIST_FILES: {"max_output_tokens": 0}},
    )
    unlimited = tool(unlimited_ws, "workspace_list_files")
    try:
        medians = interleaved(
            runs,
            git=lambda: git_listing(tree, 3),
            ours=lambda: listing.run({"max_depth": 3}),
            ours_unlimited=lambda: unlimited.run({"max_depth": 3}),
        )
        full = unlimited.run({"max_depth": 3})
        medians["entries"] = float(full.count("\n") - 2)
        medians["git_entries"] = float(git_listing(tree, 3).count("\n"))
    finally:
        ws.destroy()
        unlimited_ws.destroy()
    return medians


# --- main ---------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="timed runs per measure (median reported)")
    ap.add_argument("--files", type=int, default=20_000, help="files in the tree")
    ap.add_argument("--only", choices=("io", "grep", "list_files"), help="run one section")
    args = ap.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="ws-fs-bench-") as tmp:
        tree = Path(tmp) / "tree"
        tree.mkdir()
        t0 = time.perf_counter()
        n = build_tree(tree, args.files)
        print(f"tree: {n} files copied from site-packages in {time.perf_counter() - t0:.1f}s")
        rows: list[tuple[str, str]] = []
        finals: list[str] = []
        if args.only in (None, "io"):
            io = bench_io(Path(tmp), args.runs)
            for kind, m in io.items():
                ratio = m["ours"] / m["pathlib"]
                extra = ""
                if "atomic_pathlib" in m:
                    extra = f", atomic pathlib {m['atomic_pathlib'] * 1e6:.1f} µs ({m['ours'] / m['atomic_pathlib']:.2f}x)"
                rows.append(
                    (
                        f"{kind} (per op)",
                        f"ours {m['ours'] * 1e6:.1f} µs, pathlib {m['pathlib'] * 1e6:.1f} µs ({ratio:.2f}x){extra}",
                    )
                )
                finals.append(f"fs_{kind}_vs_pathlib: {ratio:.2f}x (reported: cost of containment)")
            finals.append(
                f"fs_write_vs_atomic_pathlib: {io['write']['ours'] / io['write']['atomic_pathlib']:.2f}x (reported)"
            )
        if args.only in (None, "grep"):
            grep = bench_grep(tree, args.runs)
            worst = 0.0
            for label, m in grep.items():
                ratio = m["ours"] / m["ripgrep"]
                worst = max(worst, ratio)
                others = ", ".join(
                    f"{mode} {m[mode] * 1e3:.0f} ms ({m[mode] / m['ripgrep']:.2f}x)"
                    for mode in m["modes"][1:]
                )
                rows.append(
                    (
                        f"grep {label}",
                        f"ours ({m['modes'][0]}) {m['ours'] * 1e3:.0f} ms, rg {m['ripgrep'] * 1e3:.0f} ms "
                        f"({ratio:.2f}x), {others + ', ' if others else ''}"
                        f"python fallback {m['python'] * 1e3:.0f} ms ({m['python'] / m['ripgrep']:.1f}x) "
                        f"— {m['summary']}",
                    )
                )
            fallback = max(m["python"] / m["ripgrep"] for m in grep.values())
            finals.append(f"grep_vs_ripgrep: {worst:.2f}x (target <= 2, worst of {len(grep)} patterns)")
            finals.append(f"grep_python_fallback_vs_ripgrep: {fallback:.1f}x (reported, worst pattern)")
        if args.only in (None, "list_files"):
            lf = bench_list_files(tree, args.runs)
            ratio = lf["ours"] / lf["git"]
            rows.append(
                (
                    "list_files depth 3",
                    f"ours {lf['ours'] * 1e3:.0f} ms (no budget: {lf['ours_unlimited'] * 1e3:.0f} ms), "
                    f"git ls-files listing {lf['git'] * 1e3:.0f} ms; {lf['entries']:.0f} entries "
                    f"(git: {lf['git_entries']:.0f})",
                )
            )
            finals.append(f"list_files_vs_git_ls_files: {ratio:.2f}x (target <= 2)")
    width = max(len(r[0]) for r in rows)
    print()
    print(f"{'measure'.ljust(width)}  value")
    print(f"{'-' * width}  {'-' * 40}")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")
    print()
    for line in finals:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
