"""DataFrames through Arrow IPC streams: written from the user's frames, read back from the
sandbox under strict checks.

The sandbox is hostile by assumption, and an Arrow stream can ask its reader to run code in two
ways, both closed here before pyarrow sees the stream:

* **extension types** — a field whose metadata names a registered extension type makes pyarrow
  call that type's Python deserializer (any library, or the user, may have registered one; the
  old ``arrow.py_extension_type`` unpickled its payload). The schema message is parsed from the
  raw bytes and a stream whose schema carries any ``ARROW:extension`` metadata is refused; the
  decoded schema is then checked again, type by type;
* **pandas metadata** — ``to_pandas()`` follows the schema's ``pandas`` JSON: dtype names are
  looked up in pandas' registry (where any package, or the user, can register a dtype whose
  constructor runs), column-index levels are ``ast.literal_eval``-ed, time zones are loaded by
  name. The JSON is validated key by key against what pandas itself writes (dtype names and
  time zones from allow-lists, bounded sizes) and rebuilt from the validated parts only;
  other schema metadata is dropped.

Reading happens from an in-memory copy of the file (a memory map of a file the sandbox can still
truncate would crash the notebook's process), zero-copy into the Arrow table.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

from ..errors import UnsafeTransferError, UserDataError

__all__ = ["DATA_EXTRA_HINT", "read_arrow_stream", "require_pyarrow", "table_of", "write_arrow_stream"]

DATA_EXTRA_HINT = "pip install 'ws-jupyter[data]'"
_MIN_PYARROW = (14, 0, 1)  # earlier releases unpickle arrow.py_extension_type payloads (CVE-2023-47248)
_MAX_SCHEMA_BYTES = 16 << 20
_MAX_PANDAS_METADATA = 8 << 20
_MAX_FIELDS = 100_000
_MAX_DEPTH = 16

_TZ = re.compile(r"^(?:[A-Za-z][A-Za-z0-9_+-]{0,30}(?:/[A-Za-z0-9_+-]{1,30}){0,3}|[+-]\d{2}:\d{2})$")
_UNIT = r"(?:s|ms|us|ns)"
_NUMPY_TYPES = re.compile(
    rf"""^(?:
    u?int(?:8|16|32|64) | float(?:16|32|64) | bool | object | str | string | bytes | category | boolean
    | U?Int(?:8|16|32|64) | Float(?:32|64) | string\[(?:python|pyarrow|pyarrow_numpy)\]
    | datetime64\[{_UNIT}\] | timedelta64\[{_UNIT}\] | datetime64\[{_UNIT},\ (?P<tz>[^\]]{{1,64}})\]
    | [a-z][a-z0-9_]{{0,31}}(?:\[[a-z0-9_ ,=/:+-]{{0,64}}\])?\[pyarrow\]
    )$""",
    re.X,
)
_PANDAS_TYPES = frozenset(
    {
        "empty", "bool", "boolean", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "floating", "integer", "date", "time", "datetime", "datetimetz",
        "timedelta", "bytes", "unicode", "string", "decimal", "object", "categorical", "mixed",
        "mixed-integer", "mixed-integer-float",
    }
)  # fmt: skip
_LIST_TYPE = re.compile(r"^list\[[a-z0-9\[\]]{1,64}\]$")
_COLUMN_META_KEYS = frozenset(
    {"timezone", "num_categories", "ordered", "precision", "scale", "encoding", "unit"}
)


def require_pyarrow(what: str = "Copying a DataFrame") -> Any:
    """pyarrow (>= 14.0.1), or a ``UserDataError`` naming the extra that installs it."""
    try:
        import pyarrow as pa
        import pyarrow.ipc
    except ImportError:
        raise UserDataError(
            f"{what} needs pyarrow (the Arrow IPC format): {DATA_EXTRA_HINT}", code="DATA_EXTRA_MISSING"
        ) from None
    version = tuple(int(p) for p in re.findall(r"\d+", pa.__version__)[:3])
    if version < _MIN_PYARROW:
        raise UserDataError(
            f"{what} needs pyarrow 14.0.1 or later (found {pa.__version__}; older releases can run "
            f"code hidden in Arrow files): {DATA_EXTRA_HINT}",
            code="DATA_EXTRA_MISSING",
        )
    return pa


# --- writing (the user's frames, already checked by .codecs) ----------------------------------------


def table_of(value: Any, kind: str) -> Any:
    """The Arrow table of a checked frame or series (pandas metadata included)."""
    pa = require_pyarrow()
    if kind == "pandas.DataFrame":
        return pa.Table.from_pandas(value, preserve_index=None)
    if kind == "pandas.Series":
        return pa.Table.from_pandas(value.to_frame(), preserve_index=None)
    if kind == "polars.DataFrame":
        return value.to_arrow()
    return value.to_frame().to_arrow()


def write_arrow_stream(table: Any, sink: BinaryIO) -> None:
    pa = require_pyarrow()
    with pa.ipc.new_stream(pa.PythonFile(sink, mode="w"), table.schema) as writer:
        if table.num_rows:
            writer.write_table(table, max_chunksize=1 << 16)
        else:  # one empty batch, so dictionaries (a categorical's categories) are written too
            writer.write_batch(_empty_batch(pa, table))


def _empty_batch(pa: Any, table: Any) -> Any:
    arrays = [c.chunk(0) if c.num_chunks else pa.array([], type=c.type) for c in table.columns]
    return pa.RecordBatch.from_arrays(arrays, schema=table.schema)


# --- reading (from the sandbox: hostile) -----------------------------------------------------------


def _refuse(why: str) -> UnsafeTransferError:
    return UnsafeTransferError(f"Refused the sandbox's Arrow data: {why}")


def _schema_message(data: Any) -> bytes:
    """The flatbuffer of the stream's first message (the schema), from the raw bytes."""
    view = memoryview(data)
    if len(view) < 8 or bytes(view[:4]) != b"\xff\xff\xff\xff":
        raise _refuse("not an Arrow IPC stream")
    length = int.from_bytes(view[4:8], "little", signed=True)
    if length <= 0 or length > _MAX_SCHEMA_BYTES or 8 + length > len(view):
        raise _refuse("its schema message has an invalid length")
    return bytes(view[8 : 8 + length])


def _fields(fields: Any, depth: int = 0) -> Iterator[Any]:
    if depth > _MAX_DEPTH:
        raise _refuse("its types are nested too deeply")
    for field in fields:
        yield field
        t = field.type
        yield from _fields([t.field(i) for i in range(t.num_fields)], depth + 1)


def _check_types(pa: Any, schema: Any) -> None:
    for count, field in enumerate(_fields(schema), 1):
        if count > _MAX_FIELDS:
            raise _refuse("it has too many fields")
        t = field.type
        if isinstance(t, pa.BaseExtensionType):
            raise _refuse(f"field {field.name!r} has an extension type")
        if field.metadata and any(k.startswith(b"ARROW:extension") for k in field.metadata):
            raise _refuse(f"field {field.name!r} names an extension type")
        if pa.types.is_dictionary(t):
            value_type = t.value_type
            if isinstance(value_type, pa.BaseExtensionType):
                raise _refuse(f"field {field.name!r} has an extension type")
        if pa.types.is_timestamp(t) and t.tz is not None and not _TZ.match(t.tz):
            raise _refuse(f"field {field.name!r} has an invalid time zone")


def _json_scalar(value: Any) -> bool:
    return value is None or type(value) in (str, int, float, bool)


def _check_name(value: Any, what: str) -> Any:
    if _json_scalar(value) and (type(value) is not str or len(value) <= 1024):
        return value
    raise _refuse(f"its pandas metadata has an invalid {what}")


def _check_numpy_type(value: Any) -> str:
    if type(value) is not str or len(value) > 128:
        raise _refuse("its pandas metadata names an invalid dtype")
    match = _NUMPY_TYPES.match(value)
    if match is None or (match.group("tz") is not None and not _TZ.match(match.group("tz"))):
        raise _refuse(f"its pandas metadata names the dtype {value[:60]!r}, which is not one of pandas' own")
    return value


def _check_pandas_type(value: Any) -> str:
    if type(value) is str and (value in _PANDAS_TYPES or _LIST_TYPE.match(value)):
        return value
    raise _refuse(f"its pandas metadata names the type {str(value)[:60]!r}")


def _check_column_meta(meta: Any) -> dict[str, Any] | None:
    if meta is None:
        return None
    if type(meta) is not dict or not set(meta) <= _COLUMN_META_KEYS:
        raise _refuse("its pandas metadata has unexpected column details")
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if key == "timezone":
            if type(value) is not str or not _TZ.match(value):
                raise _refuse("its pandas metadata names an invalid time zone")
        elif key == "ordered":
            if type(value) is not bool:
                raise _refuse("its pandas metadata is malformed (ordered)")
        elif key in ("num_categories", "precision", "scale"):
            if value is not None and (type(value) is not int or not 0 <= value < 1 << 40):
                raise _refuse(f"its pandas metadata is malformed ({key})")
        elif key == "encoding":
            if value != "UTF-8":
                raise _refuse("its pandas metadata names an unknown encoding")
        elif key == "unit" and (type(value) is not str or value not in ("s", "ms", "us", "ns")):
            raise _refuse("its pandas metadata names an unknown unit")
        out[key] = value
    return out


def _check_column(entry: Any, field_names: set[str] | None) -> dict[str, Any]:
    if type(entry) is not dict or not set(entry) <= {
        "name",
        "field_name",
        "pandas_type",
        "numpy_type",
        "metadata",
    }:
        raise _refuse("its pandas metadata has an unexpected column entry")
    field_name = entry.get("field_name")
    if field_name is not None and (
        type(field_name) is not str or (field_names is not None and field_name not in field_names)
    ):
        raise _refuse("its pandas metadata names a column that is not in the data")
    out = {
        "name": _check_name(entry.get("name"), "column name"),
        "pandas_type": _check_pandas_type(entry.get("pandas_type")),
        "numpy_type": _check_numpy_type(entry.get("numpy_type")),
        "metadata": _check_column_meta(entry.get("metadata")),
    }
    if "field_name" in entry:
        out["field_name"] = field_name
    return out


def _check_index(entry: Any, field_names: set[str], rows: int) -> Any:
    if type(entry) is str:
        if entry not in field_names:
            raise _refuse("its pandas metadata names an index column that is not in the data")
        return entry
    if (
        type(entry) is not dict
        or entry.get("kind") != "range"
        or not set(entry) <= {"kind", "name", "start", "stop", "step"}
    ):
        raise _refuse("its pandas metadata has an unexpected index entry")
    start, stop, step = entry.get("start"), entry.get("stop"), entry.get("step")
    if not (type(start) is int and type(stop) is int and type(step) is int) or step == 0:
        raise _refuse("its pandas metadata has an invalid range index")
    if not all(abs(v) < 1 << 62 for v in (start, stop, step)):
        raise _refuse("its pandas metadata has an invalid range index")
    if len(range(start, stop, step)) != rows:
        raise _refuse("its pandas metadata has a range index of the wrong length")
    return {
        "kind": "range",
        "name": _check_name(entry.get("name"), "index name"),
        "start": start,
        "stop": stop,
        "step": step,
    }


def _plain_json(value: Any, depth: int = 0) -> bool:
    if depth > 32:
        return False
    if _json_scalar(value):
        return True
    if type(value) is list:
        return all(_plain_json(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _plain_json(v, depth + 1) for k, v in value.items())
    return False


def clean_pandas_metadata(raw: bytes, field_names: list[str], rows: int) -> bytes:
    """The schema's ``pandas`` JSON, validated and rebuilt from its validated parts."""
    if len(raw) > _MAX_PANDAS_METADATA:
        raise _refuse("its pandas metadata is too large")
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _refuse("its pandas metadata is not valid JSON") from None
    if type(meta) is not dict:
        raise _refuse("its pandas metadata is not a JSON object")
    names = set(field_names)
    columns = meta.get("columns")
    if type(columns) is not list or len(columns) > _MAX_FIELDS:
        raise _refuse("its pandas metadata has no valid column list")
    index_columns = meta.get("index_columns", [])
    column_indexes = meta.get("column_indexes", [])
    if type(index_columns) is not list or type(column_indexes) is not list or len(column_indexes) > 32:
        raise _refuse("its pandas metadata has invalid index entries")
    cleaned: dict[str, Any] = {
        "index_columns": [_check_index(e, names, rows) for e in index_columns],
        "column_indexes": [_check_column(e, None) for e in column_indexes],
        "columns": [_check_column(e, names) for e in columns],
    }
    for entry in cleaned["columns"]:
        if entry["name"] is None and "field_name" not in entry:
            raise _refuse("its pandas metadata has a column without a name")
    attributes = meta.get("attributes", {})
    if attributes and type(attributes) is dict and _plain_json(attributes):
        cleaned["attributes"] = attributes
    return json.dumps(cleaned).encode("utf-8")


def read_arrow_stream(data: Any, kind: str) -> Any:
    """A pandas or polars frame/series from an Arrow IPC stream the sandbox wrote (checked as
    the module docstring says; ``UnsafeTransferError`` when anything is off)."""
    pa = require_pyarrow("Fetching a DataFrame")
    if b"ARROW:extension" in _schema_message(data):
        raise _refuse("its schema names an extension type (reading it would run that type's code)")
    try:
        reader = pa.ipc.open_stream(pa.py_buffer(data))
        _check_types(pa, reader.schema)
        table = reader.read_all()
    except UnsafeTransferError:
        raise
    except (pa.ArrowException, ValueError, OSError, IndexError) as exc:
        raise _refuse(
            f"it is not a valid Arrow IPC stream ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    if table.num_columns == 0 and kind.endswith("Series"):
        raise _refuse("a series without a column")
    if kind.startswith("pandas"):
        return _to_pandas(pa, table, kind)
    return _to_polars(table, kind)


def _to_pandas(pa: Any, table: Any, kind: str) -> Any:
    raw = (table.schema.metadata or {}).get(b"pandas")
    cleaned = None if raw is None else clean_pandas_metadata(raw, table.column_names, table.num_rows)
    table = table.replace_schema_metadata({} if cleaned is None else {b"pandas": cleaned})
    try:
        frame = table.to_pandas()  # consolidated blocks: writable arrays, not views of the bytes
    except (pa.ArrowException, ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        raise _refuse(f"it does not convert to pandas ({type(exc).__name__}: {str(exc)[:200]})") from None
    if cleaned is not None:
        _restore_object_columns(frame, table, json.loads(cleaned))
    if kind == "pandas.Series":
        if frame.shape[1] != 1:
            raise _refuse("a series must have exactly one column")
        return frame.iloc[:, 0]
    return frame


def _restore_object_columns(frame: Any, table: Any, meta: dict[str, Any]) -> None:
    """Columns that were ``object`` (strings and None) come back as ``object``: pandas 3 reads
    Arrow strings as its ``str`` dtype whatever the metadata says."""
    pd = sys.modules["pandas"]
    if type(frame.columns) is not pd.Index or not frame.columns.is_unique:
        return
    for entry in meta["columns"]:
        field, name = entry.get("field_name", entry["name"]), entry["name"]
        if entry["numpy_type"] != "object" or field not in table.column_names or name not in frame.columns:
            continue
        if type(frame[name].dtype) is pd.StringDtype:
            frame[name] = table.column(field).to_numpy(zero_copy_only=False)


def _to_polars(table: Any, kind: str) -> Any:
    try:
        import polars as pl
    except ImportError:
        raise UserDataError(
            "The sandbox sent a polars frame, and polars is not installed here", code="MISSING_LIBRARY"
        ) from None
    table = table.replace_schema_metadata({})
    try:
        frame = pl.from_arrow(table, rechunk=False)
    except Exception as exc:  # polars raises its own exception classes
        raise _refuse(f"it does not convert to polars ({type(exc).__name__}: {str(exc)[:200]})") from None
    if kind == "polars.Series":
        if type(frame) is not pl.DataFrame or frame.width != 1:
            raise _refuse("a series must have exactly one column")
        return frame.to_series(0)
    return frame
