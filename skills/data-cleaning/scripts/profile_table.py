#!/usr/bin/env python3
"""Profile a CSV file column by column (standard library only), as a Markdown or JSON report.

Usage: python profile_table.py FILE.csv [--delimiter ,] [--max-rows N] [--json] [--out REPORT]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import statistics
import sys
from collections import Counter
from datetime import datetime

MISSING = {"", "na", "n/a", "nan", "null", "none", "-", "?"}
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_DATE_FORMATS = ("%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%d/%m/%Y", "%m/%d/%Y")


def kind_of(value: str) -> str:
    v = value.strip()
    if v.lower() in MISSING:
        return "missing"
    if _NUMBER.match(v):
        return "integer" if re.match(r"^[+-]?\d+$", v) else "float"
    if v.lower() in {"true", "false", "yes", "no"}:
        return "boolean"
    for fmt in _DATE_FORMATS:
        try:
            datetime.strptime(v, fmt)
            return "date"
        except ValueError:
            pass
    return "text"


def profile_column(name: str, values: list[str]) -> dict:
    kinds = Counter(kind_of(v) for v in values)
    missing = kinds.pop("missing", 0)
    present = [v for v in values if kind_of(v) != "missing"]
    inferred = "empty"
    if kinds:
        if set(kinds) <= {"integer", "float"}:
            inferred = "float" if "float" in kinds else "integer"
        else:
            inferred = kinds.most_common(1)[0][0]
    flags = []
    total = len(values)
    if total and missing / total > 0.5:
        flags.append("mostly missing")
    distinct = len(set(present))
    if present and distinct == 1:
        flags.append("constant")
    if len(kinds) > 1 and not set(kinds) <= {"integer", "float"}:
        flags.append("mixed types: " + ", ".join(f"{k}={n}" for k, n in kinds.most_common()))
    padded = sum(1 for v in present if v != v.strip())
    if padded:
        flags.append(f"{padded} values with leading/trailing spaces")
    column = {
        "name": name,
        "type": inferred,
        "missing": missing,
        "missing_share": round(missing / total, 4) if total else 0.0,
        "distinct": distinct,
        "top": Counter(v.strip() for v in present).most_common(3),
        "flags": flags,
    }
    if inferred in {"integer", "float"}:
        numbers = [float(v) for v in present if kind_of(v) in {"integer", "float"}]
        numbers = [x for x in numbers if math.isfinite(x)]
        if numbers:
            column.update(min=min(numbers), max=max(numbers), mean=round(statistics.fmean(numbers), 6))
            if len(numbers) >= 4:
                q1, _, q3 = statistics.quantiles(numbers, n=4)
                iqr = q3 - q1
                low, high = q1 - 1.5 * iqr, q3 + 1.5 * iqr
                outliers = [x for x in numbers if x < low or x > high]
                if outliers:
                    flags.append(f"{len(outliers)} outliers outside [{low:g}, {high:g}]")
    return column


def profile(path: str, delimiter: str = ",", max_rows: int | None = None) -> dict:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh, delimiter=delimiter)
        try:
            header = next(reader)
        except StopIteration:
            return {"file": path, "rows": 0, "duplicate_rows": 0, "columns": []}
        rows = []
        ragged = 0
        for row in reader:
            if max_rows is not None and len(rows) >= max_rows:
                break
            if len(row) != len(header):
                ragged += 1
                row = (row + [""] * len(header))[: len(header)]
            rows.append(row)
    duplicates = len(rows) - len({tuple(r) for r in rows})
    columns = [profile_column(name, [r[i] for r in rows]) for i, name in enumerate(header)]
    return {
        "file": path,
        "rows": len(rows),
        "duplicate_rows": duplicates,
        "ragged_rows": ragged,
        "columns": columns,
    }


def to_markdown(report: dict) -> str:
    lines = [
        f"# Profile of {report['file']}",
        "",
        f"- rows: {report['rows']}",
        f"- duplicate rows: {report['duplicate_rows']}",
        f"- rows with a wrong number of fields: {report.get('ragged_rows', 0)}",
        "",
        "| column | type | missing | distinct | range | flags |",
        "|---|---|---|---|---|---|",
    ]
    for c in report["columns"]:
        span = f"{c['min']:g} .. {c['max']:g}" if "min" in c else ""
        share = f"{c['missing']} ({c['missing_share']:.0%})"
        lines.append(
            f"| {c['name']} | {c['type']} | {share} | {c['distinct']} | {span} | {'; '.join(c['flags'])} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--delimiter", default=",")
    parser.add_argument("--max-rows", type=int, default=None)
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.add_argument("--out", help="also write the report to this file")
    args = parser.parse_args(argv)
    try:
        report = profile(args.file, args.delimiter, args.max_rows)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        print(f"profile_table: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(report, indent=2) + "\n" if args.json else to_markdown(report)
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
