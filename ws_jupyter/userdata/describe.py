"""What the agent is told about one shared value: a one-line summary, and a bounded detailed view.

Known types — pandas and polars frames and series, numpy arrays, Python scalars, strings, bytes,
lists/tuples/dicts/sets (recursively, a few items per level), dates and times, paths — are read
through the standard library's or the library's own code on exact classes (:mod:`.safety`,
:mod:`.frames`). Everything else — user classes, subclasses of known types, modules' objects —
is described by type name and a measured size only, without calling any of its methods.

>>> summarize([1, 2, 3]).describe()
'list, 3 items, 172 B'
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .frames import describe_frame, frame_kind, frame_shape, frame_size
from .safety import CONTAINERS, DICTS, Budget, estimate_size, is_plain_scalar, mro_names, type_name
from .secrets import looks_secret_name, looks_secret_value
from .text import HIDDEN, format_size, scalar_text, short_type_name, shorten

__all__ = ["Summary", "describe", "summarize"]

_ITEMS = 10  # items shown per container level
_DEPTH = 3
_STR_CHARS = 2000
_ARRAY_STATS_SAMPLE = 5_000_000  # min/max/mean on an even sample of a bigger array


@dataclass(frozen=True)
class Summary:
    """One shared value at a glance: ``type_name``, ``shape`` (rows x columns, length, array
    shape), ``size`` in bytes (``size_exact`` False for an estimate) and ``kind`` (dataframe,
    series, array, scalar, string, container, unknown)."""

    type_name: str
    kind: str
    shape: str | None
    size: int
    size_exact: bool

    @property
    def size_text(self) -> str:
        return ("" if self.size_exact else "~") + format_size(self.size)

    def describe(self) -> str:
        return ", ".join(x for x in (self.type_name, self.shape, self.size_text) if x)


def _dict_items(value: Any) -> list[tuple[Any, Any]]:
    out = []
    for i, item in enumerate(dict.items(value)):
        if i >= _ITEMS:
            break
        out.append(item)
    return out


def _container_len(value: Any) -> int:
    if type(value) in DICTS:
        return dict.__len__(value)
    return len(value)


def summarize(value: Any, budget: Budget | None = None) -> Summary:
    """The summary of ``value`` (bounded time; runs none of the value's own code)."""
    budget = budget or Budget(0.3)
    t = type(value)
    name = type_name(t)
    kind = frame_kind(value)
    if kind is not None:
        size = frame_size(value, budget) or (0, False)
        return Summary(
            kind, "dataframe" if kind.endswith("DataFrame") else "series", frame_shape(value, kind), *size
        )
    np = sys.modules.get("numpy")
    if np is not None and t is np.ndarray:
        size = estimate_size(value, budget)
        shape = "x".join(str(d) for d in value.shape) or "scalar"
        return Summary(f"numpy.ndarray {value.dtype}", "array", shape, *size)
    if t in CONTAINERS:
        n = _container_len(value)
        return Summary(name, "container", f"{n:,} item{'s' if n != 1 else ''}", *estimate_size(value, budget))
    if t is str:
        return Summary("str", "string", f"{len(value):,} chars", *estimate_size(value, budget))
    if t is bytes or t is bytearray:
        return Summary(name, "string", f"{len(value):,} bytes", *estimate_size(value, budget))
    if is_plain_scalar(value):
        return Summary(name, "scalar", None, *estimate_size(value, budget))
    return Summary(name, "unknown", None, *estimate_size(value, budget))


def describe(
    value: Any,
    *,
    name: str,
    rows: int = 5,
    columns: Sequence[str] | None = None,
    budget: Budget | None = None,
) -> str:
    """The detailed view of ``user_variable_inspect``: a header line, then type-specific lines."""
    budget = budget or Budget(0.8)
    summary = summarize(value, budget)
    lines = [f"{name}: {summary.describe()}"]
    kind = frame_kind(value)
    if kind is not None:
        lines += describe_frame(value, kind, rows=rows, columns=columns, budget=budget)
    elif summary.kind == "array":
        lines += _describe_array(value, rows)
    elif summary.kind in ("container", "string", "scalar"):
        lines.append(
            _value_text(value, budget, depth=0, width=_STR_CHARS if summary.kind == "string" else 200)
        )
    else:
        lines += _describe_unknown(value)
    return "\n".join(lines)


def _describe_unknown(value: Any) -> list[str]:
    t = type(value)
    bases = [b for b in mro_names(t) if b not in ("object",)]
    lines = [
        "An object of a type this view does not read: only its type and size are shown (none of its code was run)."
    ]
    if bases:
        lines.append(f"Its class derives from {', '.join(bases[:5])}.")
    lines.append(
        "Ask the user to share it in a known form (a DataFrame, an array, plain data), or request a copy if it is one."
    )
    return lines


def _value_text(value: Any, budget: Budget, *, depth: int, width: int) -> str:
    """A value written out, containers item by item down to ``_DEPTH`` levels."""
    t = type(value)
    if not budget.spend():
        return "…"
    if t is str:
        if looks_secret_value(value):
            return HIDDEN
        if len(value) > width:
            return repr(value[:width]) + f" … ({len(value):,} chars)"
        return repr(value)
    if t not in CONTAINERS:
        if t is bytearray:
            return shorten(repr(bytes(value[:width])), width + 14)
        if is_plain_scalar(value) or frame_kind(value) is not None:
            return scalar_text(value, width) if is_plain_scalar(value) else f"<{frame_kind(value)}>"
        np = sys.modules.get("numpy")
        if np is not None and t is np.ndarray:
            return f"<ndarray {value.dtype} {'x'.join(map(str, value.shape))}>"
        return f"<{short_type_name(t)}>"
    n = _container_len(value)
    if depth >= _DEPTH:
        return f"<{type_name(t)} of {n:,} items>"
    inner = max(20, width // 2)
    if t in DICTS:
        parts = []
        for k, v in _dict_items(value):
            key = scalar_text(k, 40)
            shown = (
                "[hidden]"
                if type(k) is str and looks_secret_name(k)
                else _value_text(v, budget, depth=depth + 1, width=inner)
            )
            parts.append(f"{key}: {shown}")
        more = f", … {n - len(parts):,} more" if n > len(parts) else ""
        return "{" + ", ".join(parts) + more + "}"
    items = []
    for i, item in enumerate(value):  # exact builtin containers: C iteration
        if i >= _ITEMS:
            break
        items.append(_value_text(item, budget, depth=depth + 1, width=inner))
    more = f", … {n - len(items):,} more" if n > len(items) else ""
    if (t is set or t is frozenset) and not items:
        return f"{type_name(t)}()"
    brackets = "[]" if t is list or t is deque else "()" if t is tuple else "{}"
    if t is tuple and len(items) == 1 and not more:
        return f"({items[0]},)"
    return brackets[0] + ", ".join(items) + more + brackets[1]


def _describe_array(array: Any, rows: int) -> list[str]:
    np = sys.modules["numpy"]
    lines = [f"dtype {array.dtype}, shape {tuple(array.shape)}"]
    if array.dtype.hasobject:
        flat = array.reshape(-1) if array.flags.c_contiguous else array.ravel()
        first = [scalar_text(flat[i], 30) for i in range(min(rows, flat.size))]
        lines.append("object array: values " + ", ".join(first) + (" …" if flat.size > rows else ""))
        return lines
    if array.dtype.names is not None:
        lines.append(f"structured: fields {', '.join(array.dtype.names[:20])}")
        return lines
    if not array.size:
        return lines
    flat = array.reshape(-1) if array.flags.c_contiguous else array.ravel()
    sampled = ""
    data = flat
    if flat.size > _ARRAY_STATS_SAMPLE:
        step = -(-flat.size // _ARRAY_STATS_SAMPLE)
        data = flat[::step]
        sampled = f" (on every {step}th value)"
    kind = array.dtype.kind
    if kind in "iufb":
        with np.errstate(all="ignore"):
            numbers = data.astype(np.float64) if kind == "b" else data
            finite = numbers[np.isfinite(numbers)] if kind == "f" else numbers
            nan = int(np.isnan(numbers).sum()) if kind == "f" else 0
            if finite.size:
                stats = f"min {scalar_text(finite.min())}, max {scalar_text(finite.max())}, mean {float(finite.mean()):.6g}"
            else:
                stats = "no finite values"
        lines.append(stats + (f", {nan:,} NaN" if nan else "") + sampled)
    elif kind in "mM":
        valid = data[~np.isnat(data)]
        if valid.size:
            lines.append(f"min {valid.min()}, max {valid.max()}{sampled}")
    head = [scalar_text(v, 24) for v in flat[: 2 * rows].tolist()]
    tail = [scalar_text(v, 24) for v in flat[-rows:].tolist()] if flat.size > 3 * rows else []
    lines.append("values: " + ", ".join(head) + (" … " + ", ".join(tail) if tail else ""))
    return lines
