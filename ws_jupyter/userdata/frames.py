"""pandas and polars frames and series, read through the libraries' own code only.

A frame is read only when its class is exactly ``pandas.DataFrame``/``Series`` or
``polars.DataFrame``/``Series`` and (pandas) its index and column labels are pandas' own index
classes: a subclass, or a custom index class, may override whatever pandas calls, so such a value
is an unknown object (type and size only). Inside a frame, a column whose dtype is not one of the
library's own is listed by dtype only; values of ``object`` columns are written only when each is
a plain scalar (:func:`~.safety.is_plain_scalar`), nulls in them are counted by a loop that looks
at types only, and every loop stops at the inspection's :class:`~.safety.Budget`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .safety import (
    Budget,
    TypeSet,
    add_frame_sizer,
    estimate_size,
    is_plain_data,
    is_plain_scalar,
    known_tz,
    type_name,
)
from .secrets import looks_secret_name
from .text import format_size, scalar_text, shorten, stat_text, text_table

__all__ = [
    "PandasColumn",
    "column_size",
    "describe_frame",
    "frame_kind",
    "frame_shape",
    "frame_size",
    "pandas_columns",
]

_ROWS_STATS_SAMPLE = 2_000_000  # statistics run on an even sample of a longer frame
_QUANTILE_SAMPLE = 100_000
_SAMPLE = 256
_MAX_TABLE_COLUMNS = 10
_MAX_LISTED_COLUMNS = 60
_CELL = 32  # characters per table cell (a timestamp with its offset fits)


def frame_kind(value: Any) -> str | None:
    """``"pandas.DataFrame"``, ``"pandas.Series"``, ``"polars.DataFrame"``, ``"polars.Series"``,
    or None (also for subclasses, and for pandas objects with a custom index class)."""
    t = type(value)
    pd = sys.modules.get("pandas")
    if pd is not None and (t is pd.DataFrame or t is pd.Series):
        if not _pandas_index_known(pd, value.index):
            return None
        if t is pd.DataFrame and not _pandas_index_known(pd, value.columns):
            return None
        attrs = value.attrs  # pandas deep-copies attrs into every derived frame: plain data only
        if attrs and not is_plain_data(attrs):
            return None
        return "pandas.DataFrame" if t is pd.DataFrame else "pandas.Series"
    pl = sys.modules.get("polars")
    if pl is not None and (t is pl.DataFrame or t is pl.Series):
        return "polars.DataFrame" if t is pl.DataFrame else "polars.Series"
    return None


def _pandas_index_known(pd: Any, index: Any) -> bool:
    known = TypeSet(
        pd.Index, pd.RangeIndex, pd.DatetimeIndex, pd.TimedeltaIndex, pd.PeriodIndex,
        pd.CategoricalIndex, pd.MultiIndex, pd.IntervalIndex,
    )  # fmt: skip
    return type(index) in known


def frame_shape(value: Any, kind: str) -> str:
    if kind.endswith("DataFrame"):
        rows, cols = value.shape
        return f"{rows:,} rows x {cols:,} columns"
    return f"{len(value):,} values"


# --- pandas columns --------------------------------------------------------------------------------


@dataclass
class PandasColumn:
    """One column (or a Series, or an index level): its label as text, dtype, kind and values.

    ``kind``: numeric, bool, complex, datetime, timedelta, string, category, object, arrow,
    pandas (period/interval/sparse: pandas' own classes), other (numpy bytes/unicode/void), or
    unknown (a dtype of another library: never touched beyond its class name).
    """

    label: str
    dtype: str
    kind: str
    values: Any  # an exact pandas Series / Index (None for unknown kinds)
    secret_name: bool = False


def pandas_kind(dtype: Any) -> str:
    pd, np = sys.modules["pandas"], sys.modules["numpy"]
    t = type(dtype)
    if issubclass(t, np.dtype):
        return {"i": "numeric", "u": "numeric", "f": "numeric", "b": "bool", "c": "complex", "M": "datetime",
                "m": "timedelta", "O": "object"}.get(dtype.kind, "other")  # fmt: skip
    if t is pd.CategoricalDtype:
        return "category"
    if t is pd.DatetimeTZDtype:
        return "datetime" if known_tz(dtype.tz) else "unknown"
    if t is pd.StringDtype:
        return "string"
    masked = TypeSet(
        pd.Int8Dtype, pd.Int16Dtype, pd.Int32Dtype, pd.Int64Dtype, pd.UInt8Dtype, pd.UInt16Dtype,
        pd.UInt32Dtype, pd.UInt64Dtype, pd.Float32Dtype, pd.Float64Dtype,
    )  # fmt: skip
    if t in masked:
        return "numeric"
    if t is pd.BooleanDtype:
        return "bool"
    if t is pd.ArrowDtype:
        return "arrow"
    if t in TypeSet(pd.PeriodDtype, pd.IntervalDtype, pd.SparseDtype):
        return "pandas"
    return "unknown"


def dtype_text(dtype: Any, kind: str) -> str:
    return type_name(type(dtype)) if kind == "unknown" else str(dtype)


def label_text(label: Any, width: int = 40) -> str:
    """A column or index label: plain scalars by value, tuples (MultiIndex) item by item."""
    if type(label) is tuple and len(label) <= 8:
        return "(" + ", ".join(scalar_text(x, width) for x in label) + ")"
    if type(label) is str:
        return shorten(label, width)
    return scalar_text(label, width)


def pandas_columns(frame: Any) -> list[PandasColumn]:
    """The columns of an exact DataFrame (or the one column of a Series)."""
    pd = sys.modules["pandas"]
    if type(frame) is pd.Series:
        series_list = [(frame.name, frame)]
    else:
        series_list = [(label, frame.iloc[:, j]) for j, label in enumerate(frame.columns.tolist())]
    out = []
    for label, series in series_list:
        kind = pandas_kind(series.dtype)
        text = label_text(label) if label is not None else "(unnamed)"
        secret = type(label) is str and looks_secret_name(label)
        out.append(
            PandasColumn(
                text, dtype_text(series.dtype, kind), kind, None if kind == "unknown" else series, secret
            )
        )
    return out


def object_scan(values: Any, budget: Budget) -> tuple[int, list[str], bool]:
    """``(nulls, types of non-plain values, complete)`` of an object column, by type only."""
    pd = sys.modules.get("pandas")
    na, nat = (pd.NA, pd.NaT) if pd is not None else (None, None)
    array = values.to_numpy(dtype=object, copy=False) if hasattr(values, "to_numpy") else values
    nulls = 0
    odd: dict[str, None] = {}
    step = 4096
    n = len(array)
    for start in range(0, n, step):
        if not budget.spend(step):
            return nulls, list(odd), False
        for v in array[start : start + step].tolist():
            t = type(v)
            if v is None or v is na or v is nat or (t is float and v != v):
                nulls += 1
            elif not is_plain_scalar(v) and len(odd) < 5:
                odd[type_name(t)] = None
    return nulls, list(odd), True


def _null_count(col: PandasColumn, budget: Budget) -> str:
    if col.values is None:
        return "?"
    if col.kind == "object":
        nulls, _odd, complete = object_scan(col.values, budget)
        return f"{nulls:,}" if complete else f">={nulls:,} (not all checked)"
    return f"{int(col.values.isna().sum()):,}"


def column_size(col: PandasColumn, budget: Budget) -> tuple[int, bool]:
    values = col.values
    if values is None:
        return 0, False
    if col.kind == "object" or (col.kind == "string" and values.dtype.storage == "python"):
        n = len(values)
        base = 8 * n
        if not n:
            return base, True
        array = values.to_numpy(dtype=object, copy=False)
        step = max(1, n // _SAMPLE)
        sample = array[::step][:_SAMPLE].tolist()
        measured = sum(estimate_size(v, budget)[0] for v in sample)
        return base + measured * n // max(1, len(sample)), len(sample) == n
    size = int(values.nbytes)  # the buffers (pointers for objects, counted above)
    if col.kind == "category" and pandas_kind(values.dtype.categories.dtype) == "object":
        cats = values.dtype.categories
        extra, exact = column_size(PandasColumn("", "", "object", pd_series(cats)), budget)
        return size + extra, exact
    return size, True


def pd_series(index: Any) -> Any:
    """An Index's values as a Series (same values, no copy of the objects)."""
    pd = sys.modules["pandas"]
    return pd.Series(index.to_numpy(dtype=object, copy=False) if index.dtype == object else index)


def _index_size(index: Any, budget: Budget) -> tuple[int, bool]:
    pd = sys.modules["pandas"]
    t = type(index)
    if t is pd.RangeIndex:
        return int(index.memory_usage()), True
    if t is pd.MultiIndex:
        total, exact = sum(int(c.nbytes) for c in index.codes), True
        for level in index.levels:
            size, ok = _index_size(level, budget)
            total, exact = total + size, exact and ok
        return total, exact
    kind = pandas_kind(index.dtype)
    if kind == "unknown":
        return 0, False
    return column_size(PandasColumn("", "", kind, pd_series(index) if kind == "object" else index), budget)


def frame_size(value: Any, budget: Budget) -> tuple[int, bool] | None:
    """``(bytes, exact)`` of a frame or series, or None when ``value`` is not one."""
    kind = frame_kind(value)
    if kind is None:
        return None
    if kind.startswith("polars"):
        pl = sys.modules["polars"]
        has_objects = any(dt == pl.Object for dt in _polars_dtypes(value))
        return int(value.estimated_size()), not has_objects
    total, exact = _index_size(value.index, budget)
    for col in pandas_columns(value):
        size, ok = column_size(col, budget)
        total, exact = total + size, exact and ok
    return total, exact


add_frame_sizer(frame_size)


def _polars_dtypes(value: Any) -> list[Any]:
    pl = sys.modules["polars"]
    return list(value.schema.values()) if type(value) is pl.DataFrame else [value.dtype]


# --- the detailed view -----------------------------------------------------------------------------


def _positions(n: int, rows: int) -> tuple[list[int], bool]:
    if n <= 2 * rows:
        return list(range(n)), False
    return [*range(rows), *range(n - rows, n)], True


def _select(labels: list[str], wanted: Sequence[str] | None) -> tuple[list[int], list[str]]:
    """Indices of the wanted columns (all when None) and the names that matched nothing."""
    if not wanted:
        return list(range(len(labels))), []
    chosen, missing = [], []
    for name in wanted:
        matches = [i for i, label in enumerate(labels) if label == name or label == repr(name)]
        if matches:
            chosen += [i for i in matches if i not in chosen]
        else:
            missing.append(name)
    return chosen, missing


def describe_frame(
    value: Any, kind: str, *, rows: int, columns: Sequence[str] | None, budget: Budget
) -> list[str]:
    """The lines of ``user_variable_inspect`` for a frame or series."""
    if kind.startswith("pandas"):
        return _describe_pandas(value, kind, rows=rows, columns=columns, budget=budget)
    return _describe_polars(value, kind, rows=rows, columns=columns, budget=budget)


def _cell(col_kind: str, value: Any, secret: bool) -> str:
    if secret:
        return "[hidden]"
    return scalar_text(value, _CELL)


def _describe_pandas(
    frame: Any, kind: str, *, rows: int, columns: Sequence[str] | None, budget: Budget
) -> list[str]:
    cols = pandas_columns(frame)
    chosen, missing = _select([c.label for c in cols], columns)
    lines: list[str] = []
    if missing:
        lines.append(f"No column named {', '.join(repr(m) for m in missing)}.")
    listed = chosen[:_MAX_LISTED_COLUMNS]
    lines.append("columns (dtype, nulls):" if kind.endswith("DataFrame") else "dtype, nulls:")
    table = []
    for i in listed:
        col = cols[i]
        note = ""
        if col.kind == "unknown":
            note = "values not read (a dtype of another library)"
        elif col.kind == "object" and col.values is not None:
            _nulls, odd, _ = object_scan(col.values.iloc[: min(len(col.values), 10_000)], Budget(0.05))
            if odd:
                note = "holds objects of " + ", ".join(odd)
        if col.secret_name:
            note = (note + "; " if note else "") + "values hidden: the name looks like a secret"
        table.append([col.label, col.dtype, _null_count(col, budget), note])
    lines += ["  " + line for line in text_table(["name", "dtype", "nulls", ""], table, max_width=40)]
    if len(chosen) > len(listed):
        lines.append(f"  ... {len(chosen) - len(listed)} more columns (name them with columns=[...])")
    shown = [i for i in chosen if cols[i].values is not None][:_MAX_TABLE_COLUMNS]
    lines += _pandas_rows(frame, [cols[i] for i in shown], rows, len(chosen) > len(shown))
    lines += _pandas_stats(frame, kind, [cols[i] for i in shown if cols[i].kind == "numeric"])
    return lines


def _index_texts(frame: Any, positions: list[int]) -> list[str]:
    index = frame.index
    if pandas_kind(index.dtype) == "unknown" and type(index) is not sys.modules["pandas"].MultiIndex:
        return [str(p) for p in positions]
    return [label_text(v, _CELL) for v in index.take(positions).tolist()]


def _pandas_rows(frame: Any, cols: list[PandasColumn], rows: int, more_columns: bool) -> list[str]:
    n = len(frame)
    if not n or not cols or rows <= 0:
        return []
    positions, gap = _positions(n, rows)
    index = _index_texts(frame, positions)
    values = [c.values.iloc[positions].tolist() for c in cols]
    body = [
        [index[r]] + [_cell(c.kind, values[j][r], c.secret_name) for j, c in enumerate(cols)]
        for r in range(len(positions))
    ]
    head = "rows (first and last " + str(rows) + "):" if gap else "rows:"
    table = text_table(["", *(c.label for c in cols)], body, max_width=_CELL)
    if gap:
        table.insert(1 + rows, "...")
    note = ["  (more columns not shown: name them with columns=[...])"] if more_columns else []
    return [head, *("  " + line for line in table), *note]


def numeric_stats(values: Any) -> list[float]:
    """count, mean, std, min, 25%, 50%, 75%, max of a float array with NaN for missing values:
    exact over every value, except the quartiles, taken from an even sample of at most
    ``_QUANTILE_SAMPLE`` values (a partition of a million values per column costs ~0.1 s)."""
    np = sys.modules["numpy"]
    finite = values[~np.isnan(values)]
    if not finite.size:
        return [0.0] + [float("nan")] * 7
    sample = finite[:: -(-finite.size // _QUANTILE_SAMPLE)]
    q25, q50, q75 = np.percentile(sample, [25, 50, 75])
    std = float(finite.std(ddof=1)) if finite.size > 1 else float("nan")
    return [
        float(finite.size),
        float(finite.mean()),
        std,
        float(finite.min()),
        q25,
        q50,
        q75,
        float(finite.max()),
    ]


_STATS = ("count", "mean", "std", "min", "25%", "50%", "75%", "max")


def _pandas_stats(frame: Any, kind: str, numeric: list[PandasColumn]) -> list[str]:
    if not numeric or not len(frame):
        return []
    np = sys.modules["numpy"]
    step = -(-len(frame) // _ROWS_STATS_SAMPLE)  # 1 up to the sample's size
    columns = []
    with np.errstate(all="ignore"):
        for c in numeric:
            values = c.values.iloc[::step] if step > 1 else c.values
            columns.append(numeric_stats(values.to_numpy(dtype="float64", na_value=np.nan)))
    body = [[name] + [stat_text(col[i]) for col in columns] for i, name in enumerate(_STATS)]
    sampled = ""
    if step > 1:
        sampled = f" (on every {step}th row; quartiles from {_QUANTILE_SAMPLE:,} of them)"
    elif len(frame) > _QUANTILE_SAMPLE:
        sampled = f" (quartiles from {_QUANTILE_SAMPLE:,} evenly spaced rows)"
    return [
        f"numeric summary{sampled}:",
        *("  " + line for line in text_table(["", *(c.label for c in numeric)], body)),
    ]


# --- polars ----------------------------------------------------------------------------------------


def _describe_polars(
    frame: Any, kind: str, *, rows: int, columns: Sequence[str] | None, budget: Budget
) -> list[str]:
    pl = sys.modules["polars"]
    if kind == "polars.Series":
        frame = frame.to_frame()
    names = list(frame.columns)
    chosen, missing = _select(names, columns)
    lines: list[str] = []
    if missing:
        lines.append(f"No column named {', '.join(repr(m) for m in missing)}.")
    schema = frame.schema
    nulls = frame.null_count().row(0)
    listed = chosen[:_MAX_LISTED_COLUMNS]
    table = []
    for i in listed:
        name = names[i]
        note = "values hidden: the name looks like a secret" if looks_secret_name(name) else ""
        if schema[name] == pl.Object:
            note = "Python objects" + ("; " + note if note else "")
        table.append([shorten(name, 40), str(schema[name]), f"{nulls[i]:,}", note])
    lines.append("columns (dtype, nulls):")
    lines += ["  " + line for line in text_table(["name", "dtype", "nulls", ""], table, max_width=40)]
    if len(chosen) > len(listed):
        lines.append(f"  ... {len(chosen) - len(listed)} more columns (name them with columns=[...])")
    shown = [names[i] for i in chosen[:_MAX_TABLE_COLUMNS]]
    n = frame.height
    if n and shown and rows > 0:
        positions, gap = _positions(n, rows)
        sub = frame.select(shown)
        picked = sub.head(rows).rows() + (sub.tail(rows).rows() if gap else [])
        body = [
            [str(p)]
            + ["[hidden]" if looks_secret_name(name) else scalar_text(v, 24) for name, v in zip(shown, row)]
            for p, row in zip(positions, picked)
        ]
        table_lines = text_table(["", *shown], body, max_width=_CELL)
        if gap:
            table_lines.insert(1 + rows, "...")
        lines += [f"rows (first and last {rows}):" if gap else "rows:", *("  " + t for t in table_lines)]
    numeric = [name for name in shown if schema[name].is_numeric()]
    if numeric and n:
        data = frame.select(numeric)
        sampled = ""
        if n > _ROWS_STATS_SAMPLE:
            step = -(-n // _ROWS_STATS_SAMPLE)
            data = data.gather_every(step)
            sampled = f" (on every {step}th row)"
        stats = data.describe()
        body = [[str(row[0])] + [stat_text(v) for v in row[1:]] for row in stats.rows()]
        lines += [f"numeric summary{sampled}:", *("  " + t for t in text_table(["", *numeric], body))]
    return lines


def describe_size(value: Any, budget: Budget) -> str:
    size = frame_size(value, budget)
    if size is None:
        return ""
    return ("" if size[1] else "~") + format_size(size[0])
