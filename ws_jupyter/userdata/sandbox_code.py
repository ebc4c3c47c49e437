"""The code run in the sandbox's kernel for a copy: load a value in, or write one out.

Sent as source text (the sandbox's Python may not have ws-jupyter importable) and run in the
kernel's namespace; it removes its own helper afterwards. It reports on one stdout line that
starts with :data:`MARKER`. Whatever the sandbox prints there, or writes to the file, is checked
by the notebook's side as hostile input (:mod:`.codecs`): a sandbox that replaced these
functions can lie, but cannot get anything past those checks.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MARKER", "dump_code", "load_code"]

MARKER = "\x1e__ws_transfer__ "

_LOAD = """
def _ws_transfer_load(path, fmt, kind, meta, name):
    import json
    meta = json.loads(meta)
    if fmt == "arrow":
        import pyarrow as pa, pyarrow.ipc
        with pa.OSFile(path, "rb") as source:
            table = pa.ipc.open_stream(source).read_all()
        if kind.startswith("pandas"):
            value = table.to_pandas()
            if kind == "pandas.Series":
                value = value.iloc[:, 0].rename(meta.get("name"))
        else:
            import polars as pl
            value = pl.from_arrow(table)
            if kind == "polars.Series":
                value = value.to_series(0).rename(meta.get("name") or "")
    elif fmt == "npy":
        import numpy as np
        value = np.load(path, allow_pickle=False)
        if kind == "numpy.scalar":
            value = value[()]
    else:
        with open(path, "rb") as f:
            value = json.loads(f.read().decode("utf-8"))
    globals()[name] = value
    print(MARKER + json.dumps({"ok": True, "type": type(value).__module__ + "." + type(value).__qualname__}))
try:
    _ws_transfer_load(ARGS)
finally:
    del _ws_transfer_load
"""

_DUMP = """
def _ws_transfer_dump(name, directory, max_bytes):
    import json, os, sys
    def report(**status):
        print(MARKER + json.dumps(status))
    if name not in globals():
        return report(error="missing")
    value = globals()[name]
    t = type(value)
    path = os.path.join(directory, "value")
    mods = sys.modules
    pd, pl, np = mods.get("pandas"), mods.get("polars"), mods.get("numpy")
    meta = {}
    try:
        if pd is not None and t in (pd.DataFrame, pd.Series) or pl is not None and t in (pl.DataFrame, pl.Series):
            import pyarrow as pa, pyarrow.ipc
            is_pandas = pd is not None and t in (pd.DataFrame, pd.Series)
            series = t in ((pd.Series,) if is_pandas else (pl.Series,))
            kind = ("pandas." if is_pandas else "polars.") + ("Series" if series else "DataFrame")
            if series:
                meta["name"] = value.name if value.name is None or type(value.name) in (str, int, float, bool) else str(value.name)
            frame = value.to_frame() if series else value
            table = pa.Table.from_pandas(frame) if is_pandas else frame.to_arrow()
            size = table.nbytes
            if size > max_bytes:
                return report(error="too_large", size=size)
            with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
                if table.num_rows:
                    writer.write_table(table, max_chunksize=1 << 16)
                else:
                    arrays = [c.chunk(0) if c.num_chunks else pa.array([], type=c.type) for c in table.columns]
                    writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=table.schema))
            fmt = "arrow"
        elif np is not None and (t is np.ndarray or isinstance(value, np.generic)):
            array = np.asarray(value)
            if array.dtype.hasobject:
                return report(error="unsupported", type="numpy array of Python objects")
            if array.nbytes > max_bytes:
                return report(error="too_large", size=int(array.nbytes))
            with open(path, "wb") as f:
                np.lib.format.write_array(f, array, allow_pickle=False)
            fmt, kind = "npy", ("numpy.ndarray" if t is np.ndarray else "numpy.scalar")
        else:
            try:
                data = json.dumps(value, allow_nan=True, ensure_ascii=False).encode("utf-8")
            except (TypeError, ValueError):
                return report(error="unsupported", type=t.__module__ + "." + t.__qualname__)
            if len(data) > max_bytes:
                return report(error="too_large", size=len(data))
            with open(path, "wb") as f:
                f.write(data)
            fmt, kind = "json", "json"
    except Exception as exc:
        return report(error="failed", detail=(type(exc).__name__ + ": " + str(exc))[:300])
    report(ok=True, format=fmt, kind=kind, meta=meta, type=t.__module__ + "." + t.__qualname__)
try:
    _ws_transfer_dump(ARGS)
finally:
    del _ws_transfer_dump
"""


def _with_args(template: str, *args: Any) -> str:
    literal = ", ".join(repr(a) for a in args)
    return template.replace("MARKER", repr(MARKER)).replace("ARGS", literal).strip() + "\n"


def load_code(path: str, fmt: str, kind: str, meta: dict[str, Any], name: str) -> str:
    """Code that loads the file at ``path`` (written by the notebook) as ``name``."""
    import json

    return _with_args(_LOAD, path, fmt, kind, json.dumps(meta), name)


def dump_code(name: str, directory: str, max_bytes: int) -> str:
    """Code that writes the sandbox's variable ``name`` into ``directory`` in a safe format."""
    return _with_args(_DUMP, name, directory, max_bytes)
