"""The safe transfer formats: what a value may cross the sandbox boundary as, and the checks.

============  =====================================================  =========================
format        values                                                 reader
============  =====================================================  =========================
``arrow``     pandas and polars DataFrames and Series                :mod:`.arrow` (checked)
``npy``       numpy arrays and scalars (no object dtype)              header parsed, no pickle
``json``      plain data: dicts with str keys, lists, tuples (read    ``json.loads`` (data only)
              back as lists), str, int, float, bool, None
============  =====================================================  =========================

Nothing else crosses: no pickle, no ``eval``, no import of a name the data gives. Going *into*
the sandbox, a value is checked and its size estimated before one byte is written
(:func:`plan`); coming *back*, the bytes are checked before they become a value
(:func:`decode`). Values that hold what looks like a secret are refused both ways.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from ..errors import TransferTooLargeError, UnsafeTransferError, UnsupportedValueError
from .frames import PandasColumn, column_size, frame_kind, pandas_columns, pandas_kind
from .safety import Budget, TypeSet, is_plain_scalar, type_name
from .secrets import looks_like_environment, looks_secret_name, looks_secret_value
from .text import format_size

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FORMATS",
    "KINDS",
    "SAFE_FORMATS_TEXT",
    "Encoding",
    "decode",
    "plan",
]

DEFAULT_MAX_BYTES = 256 << 20
FORMATS = ("arrow", "npy", "json")
#: The kinds of value each format carries (what the reader rebuilds).
KINDS: Mapping[str, tuple[str, ...]] = {
    "arrow": ("pandas.DataFrame", "pandas.Series", "polars.DataFrame", "polars.Series"),
    "npy": ("numpy.ndarray", "numpy.scalar"),
    "json": ("json",),
}
SAFE_FORMATS_TEXT = (
    "pandas or polars DataFrames and Series (Arrow IPC), numpy arrays and scalars without objects "
    "(.npy, no pickle), and plain data: dicts with string keys, lists, strings, numbers, booleans, None (JSON)"
)
_NPY_KINDS = "biufcmMUSV"
_JSON_DEPTH = 100
_ARROW_KINDS = frozenset({"numeric", "bool", "datetime", "timedelta", "string", "arrow", "category"})


@dataclass(frozen=True)
class Encoding:
    """How one value will be written: ``format``, ``kind``, the ``estimate`` of its size (bytes,
    known before writing) and ``meta`` the reader needs (a series' name)."""

    format: str
    kind: str
    estimate: int
    meta: Mapping[str, Any] = field(default_factory=dict)
    writer: Callable[[BinaryIO], None] | None = field(default=None, repr=False)

    def write(self, sink: BinaryIO, max_bytes: int) -> int:
        """Writes the value to ``sink``; stops with ``TransferTooLargeError`` past ``max_bytes``."""
        assert self.writer is not None
        limited = _LimitedSink(sink, max_bytes)
        self.writer(limited)  # type: ignore[arg-type]
        return limited.written


class _LimitedSink(io.RawIOBase):
    """A write-only stream that refuses to go past ``limit`` bytes (the estimate was wrong)."""

    def __init__(self, sink: BinaryIO, limit: int) -> None:
        self.sink, self.limit, self.written = sink, limit, 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        n = memoryview(data).nbytes
        if self.written + n > self.limit:
            raise TransferTooLargeError(
                f"The copy grew past the {format_size(self.limit)} limit while being written"
            )
        self.sink.write(data)
        self.written += n
        return n


def _too_large(what: str, estimate: int, limit: int) -> TransferTooLargeError:
    return TransferTooLargeError(
        f"{what} is about {format_size(estimate)}, over the {format_size(limit)} copy limit: nothing was "
        "copied. Share a smaller part (a selection of rows or columns), or raise the limit."
    )


def unsupported(what: str, why: str) -> UnsupportedValueError:
    return UnsupportedValueError(f"{what} cannot be copied: {why}. What can be copied: {SAFE_FORMATS_TEXT}.")


# --- planning a copy (the user's value, into the sandbox) -------------------------------------------


def plan(value: Any, *, max_bytes: int = DEFAULT_MAX_BYTES, what: str = "The value") -> Encoding:
    """The encoding of ``value``, checked and sized before anything is written.

    Raises ``UnsupportedValueError`` (no safe format; what does work is named),
    ``TransferTooLargeError`` (over ``max_bytes``) or ``UserDataError`` (pyarrow missing).
    """
    kind = frame_kind(value)
    if kind is not None:
        return _plan_frame(value, kind, max_bytes, what)
    t = type(value)
    np = sys.modules.get("numpy")
    if np is not None and (t is np.ndarray or (is_plain_scalar(value) and issubclass(t, np.generic))):
        return _plan_numpy(np, value, t is np.ndarray, max_bytes, what)
    if looks_like_environment(value):
        raise UnsupportedValueError(
            f"{what} looks like a process environment (os.environ): it is never copied", code="LOOKS_SECRET"
        )
    estimate = _json_size(value, what, "", 0, max_bytes)
    if estimate > max_bytes:
        raise _too_large(what, estimate, max_bytes)

    def write(sink: BinaryIO) -> None:
        sink.write(json.dumps(value, allow_nan=True, ensure_ascii=False).encode("utf-8"))

    return Encoding("json", "json", estimate, {}, write)


def _json_size(value: Any, what: str, path: str, depth: int, limit: int) -> int:
    """The size of ``value`` as JSON (an upper bound), checking that it is plain data."""
    t = type(value)
    where = f" at {path}" if path else ""
    if value is None or t is bool:
        return 5
    if t is int:
        return value.bit_length() // 3 + 2
    if t is float:
        return 24
    if t is str:
        if looks_secret_value(value):
            raise UnsupportedValueError(
                f"{what}{where} holds a string that looks like a secret: not copied", code="LOOKS_SECRET"
            )
        return (len(value) if value.isascii() else 4 * len(value)) + 2
    if depth >= _JSON_DEPTH:
        raise unsupported(what, f"it is nested more than {_JSON_DEPTH} levels deep")
    if t is list or t is tuple:
        total = 2
        for i, item in enumerate(value):
            total += _json_size(item, what, f"{path}[{i}]", depth + 1, limit) + 1
            if total > limit:
                return total
        return total
    if t is dict:
        total = 2
        for key, item in dict.items(value):
            if type(key) is not str:
                raise unsupported(what, f"a key{where} is a {type_name(type(key))}; JSON keys are strings")
            if looks_secret_name(key):
                raise UnsupportedValueError(
                    f"{what} has the key {key!r}{where}, which looks like a secret: not copied",
                    code="LOOKS_SECRET",
                )
            total += (
                _json_size(key, what, path, depth + 1, limit)
                + _json_size(item, what, f"{path}[{key!r}]", depth + 1, limit)
                + 2
            )
            if total > limit:
                return total
        return total
    return _refuse_type(value, what, where)


def _refuse_type(value: Any, what: str, where: str) -> int:
    t = type(value)
    name = type_name(t)
    if frame_kind(value) is None and name.startswith(("pandas.", "polars.")):
        raise unsupported(
            what,
            f"{where.strip() + ': ' if where else ''}{name} is not a plain DataFrame/Series (a subclass, a custom index, or attrs holding objects)",
        )
    raise unsupported(what, f"{where.strip() + ' ' if where else ''}it is a {name}, which has no safe format")


def _plan_numpy(np: Any, value: Any, is_array: bool, max_bytes: int, what: str) -> Encoding:
    array = value if is_array else np.asarray(value)
    if array.dtype.hasobject or array.dtype.kind not in _NPY_KINDS:
        raise unsupported(what, f"a numpy array of dtype {array.dtype} holds Python objects")
    estimate = int(array.nbytes) + 256
    if estimate > max_bytes:
        raise _too_large(what, estimate, max_bytes)

    def write(sink: BinaryIO) -> None:
        np.lib.format.write_array(sink, array, allow_pickle=False)

    return Encoding("npy", "numpy.ndarray" if is_array else "numpy.scalar", estimate, {}, write)


def _plan_frame(value: Any, kind: str, max_bytes: int, what: str) -> Encoding:
    from .arrow import require_pyarrow, table_of, write_arrow_stream

    require_pyarrow()
    meta: dict[str, Any] = {}
    if kind.startswith("pandas"):
        estimate = _check_pandas(value, kind, what)
        if kind == "pandas.Series":
            meta = {"name": value.name}
    else:
        pl = sys.modules["polars"]
        dtypes = list(value.schema.items()) if kind == "polars.DataFrame" else [(value.name, value.dtype)]
        for name, dtype in dtypes:
            if dtype == pl.Object:
                raise unsupported(what, f"column {name!r} holds Python objects (polars Object dtype)")
        # polars hands its buffers to Arrow without copying: their sizes are what gets written
        estimate = int(table_of(value, kind).get_total_buffer_size())
        if kind == "polars.Series":
            meta = {"name": value.name}
    estimate += _arrow_overhead(value, kind)
    if estimate > max_bytes:
        raise _too_large(what, estimate, max_bytes)

    def write(sink: BinaryIO) -> None:
        write_arrow_stream(table_of(value, kind), sink)

    return Encoding("arrow", kind, estimate, meta, write)


_LABELS = TypeSet(str, int, float, bool)


def _arrow_overhead(value: Any, kind: str) -> int:
    """Bytes an Arrow stream adds to the data: the schema (with pandas' metadata), and per batch
    of 65,536 rows a header and padding for each column's buffers."""
    columns = (value.shape[1] if kind.endswith("DataFrame") else 1) + 1
    batches = len(value) // 65_536 + 1
    return 2048 + 640 * columns + batches * (256 + 96 * columns)


def _label_ok(label: Any) -> bool:
    if label is None or type(label) in _LABELS:
        return True
    return type(label) is tuple and all(x is None or type(x) in _LABELS for x in label)


def _check_pandas(value: Any, kind: str, what: str) -> int:
    pd = sys.modules["pandas"]
    labels = [value.name] if kind == "pandas.Series" else value.columns.tolist()
    for label in labels:
        if type(label) is str and looks_secret_name(label):
            raise UnsupportedValueError(
                f"{what} has a column {label!r} whose name looks like a secret: not copied (drop that column, "
                "or share a frame without it)",
                code="LOOKS_SECRET",
            )
        if not _label_ok(label):
            raise unsupported(
                what, f"a column label is a {type_name(type(label))} (labels must be strings or numbers)"
            )
    total = 0
    for col in pandas_columns(value):
        total += _column_estimate(col, what)
    index = value.index
    if not _label_ok(index.name) or not all(_label_ok(n) for n in index.names):
        raise unsupported(what, "an index name is not a string or a number")
    if type(index) is pd.MultiIndex:
        for level in index.levels:
            total += _column_estimate(
                PandasColumn(str(level.name), str(level.dtype), pandas_kind(level.dtype), level),
                what,
                "an index level",
            )
        total += sum(int(c.nbytes) for c in index.codes)
    elif type(index) is not pd.RangeIndex:
        total += _column_estimate(
            PandasColumn("index", str(index.dtype), pandas_kind(index.dtype), index), what, "the index"
        )
    return total


def _column_estimate(col: PandasColumn, what: str, role: str = "") -> int:
    role = role or f"column {col.label}"
    if col.kind == "object":
        return _object_estimate(col.values, what, role)
    if col.kind == "category":
        categories = col.values.dtype.categories
        inner = pandas_kind(categories.dtype)
        if inner == "object":
            _object_estimate(categories, what, f"the categories of {role}")
        elif inner not in _ARROW_KINDS:
            raise unsupported(what, f"the categories of {role} have dtype {categories.dtype}")
        return _exact_size(col)
    if col.kind not in _ARROW_KINDS:
        dtype = col.dtype
        why = {
            "complex": f"{role} holds complex numbers (Arrow has no complex type; split real and imaginary parts)",
            "pandas": f"{role} has dtype {dtype}, which has no safe transfer format (convert it, e.g. to strings or timestamps)",
            "unknown": f"{role} has dtype {dtype} of another library",
        }.get(col.kind, f"{role} has dtype {dtype}")
        raise unsupported(what, why)
    return _exact_size(col)


def _exact_size(col: PandasColumn) -> int:
    return column_size(col, Budget(60.0, 1 << 62))[0]


def _object_estimate(values: Any, what: str, role: str) -> int:
    """An object column may be copied when every value is a plain scalar Arrow understands
    (strings, bytes, numbers, booleans, dates and times, decimals, nulls); its strings are
    counted exactly."""
    pd = sys.modules["pandas"]
    array = values.to_numpy(dtype=object, copy=False)
    total = 8 * len(array)
    for v in array.tolist():
        t = type(v)
        if t is str:
            total += len(v) if v.isascii() else 4 * len(v)
        elif t is bytes:
            total += len(v)
        elif not (v is None or v is pd.NA or v is pd.NaT or is_plain_scalar(v)) or t is complex or t is range:
            raise unsupported(what, f"{role} holds {type_name(t)} values")
    return total


# --- reading a copy back (from the sandbox: hostile) ------------------------------------------------


def decode(data: Any, fmt: str, kind: str, meta: Mapping[str, Any] | None = None) -> Any:
    """The value the sandbox sent as ``data`` (bytes), checked as :mod:`.arrow` / ``read_npy`` /
    ``read_json`` say. ``UnsafeTransferError`` when anything is off; nothing in ``data`` is run."""
    if fmt not in KINDS or kind not in KINDS[fmt]:
        raise UnsafeTransferError(f"Refused: unknown transfer format {fmt!r}/{kind!r}")
    meta = meta or {}
    if fmt == "json":
        return read_json(data)
    if fmt == "npy":
        array = read_npy(data)
        return array[()] if kind == "numpy.scalar" and array.ndim == 0 else array
    from .arrow import read_arrow_stream

    value = read_arrow_stream(data, kind)
    if kind in ("pandas.Series", "polars.Series") and "name" in meta:
        name = meta["name"]
        if name is None or type(name) in (str, int, float, bool):
            value = value.rename(name)
    return value


def read_json(data: Any) -> Any:
    try:
        text = bytes(data).decode("utf-8")
        return json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UnsafeTransferError(
            f"Refused the sandbox's JSON: {type(exc).__name__}: {str(exc)[:200]}"
        ) from None


_NPY_MAGIC = b"\x93NUMPY"
_NPY_MAX_HEADER = 64 * 1024


def read_npy(data: Any) -> Any:
    """An array from ``.npy`` bytes: header parsed by numpy (a literal, never code), object
    dtypes refused before any data is read, the data's length checked exactly, then the
    array is made over the bytes (no copy)."""
    import numpy as np

    view = memoryview(data)
    if len(view) < 10 or bytes(view[:6]) != _NPY_MAGIC:
        raise UnsafeTransferError("Refused the sandbox's array: not a .npy file")
    major = view[6]
    if major == 1:
        header_len, start = int.from_bytes(view[8:10], "little"), 10
    elif major in (2, 3):
        header_len, start = int.from_bytes(view[8:12], "little"), 12
    else:
        raise UnsafeTransferError(f"Refused the sandbox's array: unknown .npy version {major}")
    if header_len > _NPY_MAX_HEADER or start + header_len > len(view):
        raise UnsafeTransferError("Refused the sandbox's array: invalid header length")
    if major == 3:
        raise UnsafeTransferError("Refused the sandbox's array: .npy version 3 (non-Latin-1 field names)")
    reader = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
    head = io.BytesIO(bytes(view[8 : start + header_len]))
    try:
        shape, fortran, dtype = reader(head, max_header_size=_NPY_MAX_HEADER)
        shape = tuple(shape)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise UnsafeTransferError(f"Refused the sandbox's array: invalid header ({str(exc)[:200]})") from None
    if dtype.hasobject or dtype.kind not in _NPY_KINDS:
        raise UnsafeTransferError(
            f"Refused the sandbox's array: dtype {dtype} holds Python objects (that would need pickle)"
        )
    if len(shape) > 32 or not all(type(d) is int and d >= 0 for d in shape):
        raise UnsafeTransferError("Refused the sandbox's array: invalid shape")
    count = 1
    for d in shape:
        count *= d
    offset = start + header_len
    if count * dtype.itemsize != len(view) - offset:
        raise UnsafeTransferError("Refused the sandbox's array: its data does not match its header")
    order: Any = "F" if fortran else "C"
    if dtype.itemsize == 0 or count == 0:
        return np.zeros(shape, dtype=dtype, order=order)
    return np.frombuffer(data, dtype=dtype, count=count, offset=offset).reshape(shape, order=order)
