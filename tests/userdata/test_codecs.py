"""The safe transfer formats, without kernels: what may be copied (and what is refused before a byte
is written), exact round trips through the encoders and decoders, and hostile bytes — pickles,
object arrays, crafted Arrow schemas and pandas metadata — refused without running anything."""

from __future__ import annotations

import io
import json
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from ws_jupyter.errors import TransferTooLargeError, UnsafeTransferError, UnsupportedValueError, UserDataError
from ws_jupyter.userdata import decode, plan

from .hostile import trap_class


def mixed_frame(rows: int = 50) -> pd.DataFrame:
    """Mixed dtypes, NaN and None, categoricals, time zones (across a DST change), nullable ints."""
    i = np.arange(rows)
    return pd.DataFrame(
        {
            "int": i.astype("int64"),
            "small": (i % 7).astype("int8"),
            "unsigned": (i * 3).astype("uint32"),
            "float": np.where(i % 5 == 0, np.nan, i / 3),
            "f32": (i / 7).astype("float32"),
            "text": [None if k % 6 == 0 else f"row {k} é" for k in i],
            "cat": pd.Categorical(
                ["b", "a", None, "c", "a"] * (rows // 5), categories=["c", "b", "a"], ordered=True
            ),
            "paris": pd.date_range("2024-03-30 22:00", periods=rows, freq="37min", tz="Europe/Paris"),
            "naive": pd.date_range("2020-01-01", periods=rows, freq="D"),
            "delta": pd.to_timedelta(i, unit="s"),
            "flag": i % 2 == 0,
            "nullable": pd.array([None if k % 4 == 0 else int(k) for k in i], dtype="Int64"),
            "obj": np.array([None if k % 3 == 0 else f"o{k}" for k in i], dtype=object),
        },
        index=pd.Index([f"id{k}" for k in i], name="id"),
    )


def encode(value: Any, **kw: Any) -> tuple[bytes, Any]:
    encoding = plan(value, **kw)
    sink = io.BytesIO()
    encoding.write(sink, kw.get("max_bytes", 1 << 30))
    return sink.getvalue(), encoding


def round_trip(value: Any) -> Any:
    data, encoding = encode(value)
    return decode(bytearray(data), encoding.format, encoding.kind, encoding.meta)


def test_what_comes_back_can_be_changed() -> None:
    """Values are the user's to edit, not read-only views of the bytes they came in."""
    frame = round_trip(pd.DataFrame({"a": np.arange(5.0), "b": np.arange(5)}))
    frame.iloc[0, 0] = 99.0
    frame.loc[1, "b"] = 7
    assert frame["a"].tolist()[0] == 99.0 and frame["b"].tolist()[1] == 7
    array = round_trip(np.arange(4))
    array[0] = 9
    assert array.tolist() == [9, 1, 2, 3]


# --- round trips --------------------------------------------------------------------------------


def test_pandas_frames_and_series_round_trip_exactly() -> None:
    frame = mixed_frame()
    pd.testing.assert_frame_equal(round_trip(frame), frame)
    multi = frame.set_index(["small", "flag"], append=True)
    pd.testing.assert_frame_equal(round_trip(multi), multi)
    series = frame["paris"].rename("when")
    pd.testing.assert_series_equal(round_trip(series), series)
    unnamed = pd.Series([1.5, np.nan, 3.0])
    pd.testing.assert_series_equal(round_trip(unnamed), unnamed)
    empty = frame.iloc[:0]
    pd.testing.assert_frame_equal(round_trip(empty), empty)


def test_polars_round_trip() -> None:
    frame = pl.DataFrame(
        {
            "a": [1, None, 3],
            "b": ["x", "y", None],
            "c": pl.Series(["u", "v", "u"], dtype=pl.Categorical),
            "t": pl.datetime_range(
                pl.datetime(2024, 1, 1), pl.datetime(2024, 1, 3), "1d", time_zone="Asia/Tokyo", eager=True
            ),
            "l": [[1, 2], [], None],
        }
    )
    back = round_trip(frame)
    assert back.schema == frame.schema and back.equals(frame)
    series = frame["a"]
    assert round_trip(series).equals(series)


@pytest.mark.parametrize(
    "array",
    [
        np.arange(24, dtype=np.int8).reshape(2, 3, 4),
        np.array([0, 2**64 - 1], dtype=np.uint64),
        np.array([1.5, np.nan, -np.inf], dtype=np.float16),
        np.asfortranarray(np.arange(6.0).reshape(2, 3)),
        np.array([True, False]),
        np.array(["2024-01-01T00:00", "NaT"], dtype="datetime64[ns]"),
        np.array([1, 2], dtype="timedelta64[ms]"),
        np.array([1 + 2j], dtype=np.complex128),
        np.array(["α", "bb"]),
        np.array([(1, 2.5)], dtype=[("a", "i4"), ("b", "f8")]),
        np.zeros((0, 3)),
        np.float32(2.5),
        np.datetime64("2024-05-01"),
    ],
    ids=lambda a: str(getattr(a, "dtype", type(a).__name__)),
)
def test_numpy_round_trip(array: Any) -> None:
    back = round_trip(array)
    assert type(back) is type(array)
    if isinstance(array, np.ndarray):
        assert back.dtype == array.dtype and back.shape == array.shape
        if array.dtype.kind in "mM":
            assert np.array_equal(back.view("i8"), array.view("i8"))
        else:
            assert np.array_equal(back, array, equal_nan=array.dtype.kind in "fc")
        assert back.flags.f_contiguous == array.flags.f_contiguous
    else:
        assert back == array


def test_plain_data_round_trip() -> None:
    value = {
        "name": "sales",
        "n": [1, 2.5, None, True],
        "nested": {"deep": [{"x": "é"}]},
        "inf": float("inf"),
    }
    assert round_trip(value) == value
    assert round_trip((1, 2)) == [1, 2]  # JSON has no tuples
    nan = round_trip(float("nan"))
    assert nan != nan


# --- refused before anything is written ----------------------------------------------------------


class Custom:
    pass


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (Custom(), "Custom, which has no safe format"),
        ({1, 2}, "set, which has no safe format"),
        ({1: "a"}, "JSON keys are strings"),
        (np.array([object()], dtype=object), "holds Python objects"),
        (pd.DataFrame({"c": [1 + 1j]}), "complex numbers"),
        (pd.DataFrame({"p": pd.period_range("2024-01", periods=2, freq="M")}), "period[M]"),
        (pd.DataFrame({"o": [Custom()]}), "holds tests.userdata.test_codecs.Custom values"),
        (pl.DataFrame({"o": [Custom()]}, schema={"o": pl.Object}), "polars Object dtype"),
        (pd.DataFrame({1 + 2j: [1]}), "labels must be strings or numbers"),
    ],
)
def test_values_without_a_safe_format_are_refused(value: Any, why: str) -> None:
    with pytest.raises(UnsupportedValueError) as info:
        plan(value)
    assert why in str(info.value) and "What can be copied" in str(info.value)


def test_secrets_are_not_copied() -> None:
    for value in (
        {"api_key": "abc"},
        ["ghp_" + "a" * 36],
        pd.DataFrame({"password": ["hunter2"]}),
        os.environ,
    ):
        with pytest.raises(UnsupportedValueError) as info:
            plan(value)
        assert info.value.code == "LOOKS_SECRET"


def test_hostile_objects_in_a_frame_are_refused_without_running_them(tmp_path: Path) -> None:
    marker, victim = tmp_path / "ran", tmp_path / "victim"
    hostile = trap_class(marker, victim)()
    column = np.empty(2, dtype=object)
    column[0], column[1] = "ok", hostile
    frame = pd.DataFrame({"o": column})
    marker.unlink(missing_ok=True)
    victim.write_text("x")
    with pytest.raises(UnsupportedValueError, match="Hostile"):
        plan(frame)
    assert not marker.exists() and victim.exists()


def test_over_the_limit_is_refused_before_a_byte_is_written() -> None:
    frame = pd.DataFrame({"x": np.zeros(200_000)})  # 1.6 MB
    text = pd.DataFrame({"s": ["a" * 100] * 20_000})  # 2 MB of strings
    for value in (frame, text, np.zeros(300_000), ["a" * 1000] * 3000):
        with pytest.raises(TransferTooLargeError, match=r"over the 1\.0 MB copy limit: nothing was copied"):
            plan(value, max_bytes=1 << 20)
    encoding = plan(frame, max_bytes=2 << 20)
    sink = io.BytesIO()
    with pytest.raises(TransferTooLargeError):  # a wrong estimate still cannot write past the limit
        encoding.write(sink, 1000)
    assert len(sink.getvalue()) <= 1000


def test_without_pyarrow_a_frame_copy_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_pyarrow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("No module named 'pyarrow'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(UserDataError, match=r"pip install 'ws-jupyter\[data\]'") as info:
        plan(pd.DataFrame({"a": [1]}))
    assert info.value.code == "DATA_EXTRA_MISSING"
    assert plan(np.arange(3)).format == "npy"  # arrays and plain data need no pyarrow


# --- hostile bytes from the sandbox ------------------------------------------------------------------


class Payload:
    """Unpickling this writes a file: proof that code from the data ran."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (open, (self.path, "w"))


@pytest.mark.parametrize(
    ("fmt", "kind"), [("json", "json"), ("npy", "numpy.ndarray"), ("arrow", "pandas.DataFrame")]
)
def test_a_pickle_is_refused_in_every_format(tmp_path: Path, fmt: str, kind: str) -> None:
    marker = tmp_path / "pwned"
    data = pickle.dumps(Payload(str(marker)))
    with pytest.raises(UnsafeTransferError):
        decode(bytearray(data), fmt, kind)
    assert not marker.exists()
    with pytest.raises(UnsafeTransferError, match="unknown transfer format"):
        decode(bytearray(data), "pickle", "pandas.DataFrame")


def test_npy_with_objects_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    sink = io.BytesIO()
    np.save(sink, np.array([Payload(str(marker))], dtype=object), allow_pickle=True)
    with pytest.raises(UnsafeTransferError, match="holds Python objects"):
        decode(bytearray(sink.getvalue()), "npy", "numpy.ndarray")
    structured = io.BytesIO()
    np.save(structured, np.array([(1, None)], dtype=[("a", "i4"), ("b", "O")]), allow_pickle=True)
    with pytest.raises(UnsafeTransferError, match="holds Python objects"):
        decode(bytearray(structured.getvalue()), "npy", "numpy.ndarray")
    assert not marker.exists()


def test_npy_whose_data_does_not_match_its_header_is_refused() -> None:
    good = io.BytesIO()
    np.save(good, np.arange(10))
    for data in (
        good.getvalue()[:-8],
        good.getvalue() + b"\0" * 8,
        b"\x93NUMPY\x01\x00\xff\xff" + b" " * 100,
    ):
        with pytest.raises(UnsafeTransferError):
            decode(bytearray(data), "npy", "numpy.ndarray")
    header = b"{'descr': '<i8', 'fortran_order': False, 'shape': (1000000000000,), }"
    huge = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header
    with pytest.raises(UnsafeTransferError, match="does not match"):
        decode(bytearray(huge), "npy", "numpy.ndarray")


def _stream(table: pa.Table) -> bytearray:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytearray(sink.getvalue().to_pybytes())


class Trapped(pa.ExtensionType):
    """A registered extension type (any library, or the user, may register one): deserializing it
    runs Python code."""

    marker = ""

    def __init__(self) -> None:
        super().__init__(pa.int64(), "tests.trapped")

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: Any, serialized: bytes) -> Any:
        Path(cls.marker).write_text("deserialized")
        return cls()


def test_arrow_extension_types_are_refused_before_they_are_read(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    Trapped.marker = str(marker)
    storage = pa.array([1, 2], pa.int64())
    table = pa.table({"x": pa.ExtensionArray.from_storage(Trapped(), storage)})
    data = _stream(table)
    pa.register_extension_type(Trapped())
    try:
        with pytest.raises(UnsafeTransferError, match="extension type"):
            decode(data, "arrow", "pandas.DataFrame")
        assert not marker.exists()
    finally:
        pa.unregister_extension_type("tests.trapped")
    legacy = pa.schema(
        [
            pa.field(
                "x",
                pa.binary(),
                metadata={
                    b"ARROW:extension:name": b"arrow.py_extension_type",
                    b"ARROW:extension:metadata": pickle.dumps(Payload(str(marker))),
                },
            )
        ]
    )
    with pytest.raises(UnsafeTransferError, match="extension type"):
        decode(_stream(pa.table({"x": [b"a"]}, schema=legacy)), "arrow", "pandas.DataFrame")
    assert not marker.exists()


def _with_pandas_metadata(edit: Any) -> bytearray:
    table = pa.Table.from_pandas(mixed_frame(10))
    meta = json.loads(table.schema.metadata[b"pandas"])
    edit(meta)
    return _stream(table.replace_schema_metadata({b"pandas": json.dumps(meta).encode()}))


def test_pandas_metadata_naming_a_dtype_or_class_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"

    @pd.api.extensions.register_extension_dtype
    class TrappedDtype(pd.api.extensions.ExtensionDtype):
        name = "trapped"
        type = object

        @classmethod
        def construct_from_string(cls, string: str) -> Any:
            if string == "trapped":
                marker.write_text("constructed")
                return cls()
            raise TypeError(string)

        @classmethod
        def construct_array_type(cls) -> Any:
            raise NotImplementedError

    try:
        edits = [
            lambda m: m["columns"][0].update(numpy_type="trapped"),
            lambda m: m["columns"][0].update(numpy_type="os.system"),
            lambda m: m["column_indexes"][0].update(numpy_type="trapped"),
            lambda m: m["column_indexes"].append(
                dict(m["column_indexes"][0], pandas_type="__import__('os')")
            ),
            lambda m: m["columns"][7].update(metadata={"timezone": "../../../../etc/passwd"}),
            lambda m: m["columns"][0].update(metadata={"module": "os"}),
            lambda m: m.update(
                index_columns=[{"kind": "range", "name": None, "start": 0, "stop": 10**30, "step": 1}]
            ),
            lambda m: m.update(index_columns=["not_a_column"]),
        ]
        for edit in edits:
            with pytest.raises(UnsafeTransferError, match="pandas metadata"):
                decode(_with_pandas_metadata(edit), "arrow", "pandas.DataFrame")
        assert not marker.exists()
    finally:
        from pandas.core.dtypes.base import _registry

        _registry.dtypes.remove(TrappedDtype)


def test_other_files_and_broken_streams_are_refused(tmp_path: Path) -> None:
    parquet = tmp_path / "x.parquet"
    mixed_frame(5).to_parquet(parquet)
    good = _stream(pa.Table.from_pandas(mixed_frame(5)))
    for data in (
        parquet.read_bytes(),
        good[: len(good) // 2],
        b"\xff\xff\xff\xff" + (10**9).to_bytes(4, "little"),
        b"",
    ):
        with pytest.raises(UnsafeTransferError):
            decode(bytearray(data), "arrow", "pandas.DataFrame")
    with pytest.raises(UnsafeTransferError, match="one column"):
        decode(good, "arrow", "pandas.Series")


def test_json_bombs_are_refused() -> None:
    for data in (b"[" * 200_000 + b"]" * 200_000, b"1" * 10_000, b"\xff\xfe", b"{'a': 1}"):
        with pytest.raises(UnsafeTransferError):
            decode(bytearray(data), "json", "json")


@pytest.mark.parametrize(
    "value",
    [
        mixed_frame(0),
        mixed_frame(5),
        mixed_frame(70_000),
        pd.DataFrame({f"c{i}": [i] for i in range(300)}),
        pd.Series(["x" * 50] * 1000, name="s"),
        pl.DataFrame({"a": list(range(100_000)), "b": ["é" * 3] * 100_000}),
        np.zeros((3, 5)),
        {"k": ["é" * 10] * 100},
    ],
    ids=["empty", "one", "70k", "wide", "series", "polars", "array", "json"],
)
def test_the_size_estimate_bounds_what_is_written(value: Any) -> None:
    """The limit is checked on the estimate before writing, so the estimate must not be low."""
    data, encoding = encode(value)
    assert len(data) <= encoding.estimate
