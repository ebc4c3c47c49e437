#!/usr/bin/env python3
"""Lint a Jupyter notebook (.ipynb, nbformat 4) for reproducibility and hygiene problems.

Usage: python nb_lint.py NOTEBOOK.ipynb [--json] [--max-cell-lines 60] [--max-output-kb 100]
Exit status: 0 no errors (warnings allowed), 1 errors found, 2 the file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

_ABS_PATH = re.compile(r"""["'](/home/|/Users/|/root/|[A-Za-z]:\\\\)[^"']*["']""")
_SECRET = re.compile(
    r"""(?i)\b(password|passwd|api[_-]?key|secret|token)\s*=\s*["'][^"']{4,}["']|\b(sk-[A-Za-z0-9]{16,}|ghp_[A-Za-z0-9]{20,})"""
)
_IMPORT = re.compile(r"^\s*(import\s+\w|from\s+[\w.]+\s+import\s)")


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _output_size(cell: dict) -> int:
    return len(json.dumps(cell.get("outputs", [])))


def lint(nb: dict, max_cell_lines: int = 60, max_output_kb: int = 100) -> list[dict]:
    findings: list[dict] = []

    def add(level: str, cell: int | None, message: str) -> None:
        findings.append({"level": level, "cell": cell, "message": message})

    cells = nb.get("cells", [])
    if not cells:
        add("error", None, "the notebook has no cells")
        return findings
    first = cells[0]
    if first.get("cell_type") != "markdown" or not _source(first).lstrip().startswith("#"):
        add("warning", 1, "the first cell should be a Markdown title ('# ...')")

    counts: list[tuple[int, int]] = []
    seen_non_import_code = False
    for number, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source = _source(cell)
        lines = source.splitlines()
        if not source.strip():
            continue
        count = cell.get("execution_count")
        if count is None:
            add("warning", number, "code cell was never executed")
        else:
            counts.append((number, count))
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                add("error", number, f"error output left in the notebook: {output.get('ename', 'Error')}")
        if _ABS_PATH.search(source):
            add("warning", number, "absolute path; use a path relative to the notebook or a parameter")
        if _SECRET.search(source):
            add("error", number, "looks like a hard-coded credential; read it from the environment")
        if len(lines) > max_cell_lines:
            add("warning", number, f"cell has {len(lines)} lines (over {max_cell_lines}); split it or move code to a module")
        size_kb = _output_size(cell) / 1024
        if size_kb > max_output_kb:
            add("warning", number, f"outputs are {size_kb:.0f} KB (over {max_output_kb} KB); clear or shrink them")
        code_lines = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith(("#", "%", "!"))]
        imports = [ln for ln in code_lines if _IMPORT.match(ln)]
        if imports and seen_non_import_code:
            add("warning", number, "imports after other code; move them to the first code cell")
        if any(not _IMPORT.match(ln) for ln in code_lines):
            seen_non_import_code = True

    if counts:
        if counts[0][1] != 1:
            add("warning", counts[0][0], f"first executed cell has count {counts[0][1]}; restart and run all")
        for (_, previous), (number, current) in zip(counts, counts[1:]):
            if current <= previous:
                add("error", number, f"executed out of order (count {current} after {previous})")
    findings.sort(key=lambda f: f["cell"] or 0)
    return findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--max-cell-lines", type=int, default=60)
    parser.add_argument("--max-output-kb", type=int, default=100)
    args = parser.parse_args(argv)
    try:
        with open(args.notebook, encoding="utf-8") as fh:
            nb = json.load(fh)
    except (OSError, ValueError) as exc:
        print(f"nb_lint: cannot read {args.notebook}: {exc}", file=sys.stderr)
        return 2
    findings = lint(nb, args.max_cell_lines, args.max_output_kb)
    if args.json:
        print(json.dumps({"notebook": args.notebook, "findings": findings}, indent=2))
    else:
        for f in findings:
            where = f"cell {f['cell']}" if f["cell"] else "notebook"
            print(f"{args.notebook}: {where}: {f['level']}: {f['message']}")
        errors = sum(f["level"] == "error" for f in findings)
        print(f"{len(findings)} findings ({errors} errors)")
    return 1 if any(f["level"] == "error" for f in findings) else 0


if __name__ == "__main__":
    sys.exit(main())
