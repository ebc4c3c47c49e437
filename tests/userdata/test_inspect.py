"""What the agent is told about shared values: bounded, type-aware summaries written by the project
for known types, and type + size only for anything else — no code of a user's object ever runs.
Also the sharing rules: private names, IPython's own names, modules, secrets and os.environ are
never listed, whatever pattern the user shares."""

from __future__ import annotations

import datetime as dt
import os
import pathlib
import time
from collections import OrderedDict, deque
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pytest

from ws_jupyter.errors import UnsupportedValueError, VariableNotSharedError
from ws_jupyter.userdata import SharedNamespace, describe, summarize
from ws_jupyter.userdata.secrets import looks_like_environment, looks_secret_name, looks_secret_value

from .hostile import trap_class


@pytest.fixture
def trap(tmp_path: Path) -> Any:
    marker, victim = tmp_path / "ran", tmp_path / "victim.txt"
    victim.write_text("precious")

    class T:
        cls = trap_class(marker, victim)

        @staticmethod
        def arm() -> None:
            """Forgets what building the test's values ran (a dict key is hashed, for one)."""
            marker.unlink(missing_ok=True)
            victim.write_text("precious")

        @staticmethod
        def check() -> None:
            assert not marker.exists(), f"user code ran: {marker.read_text()}"
            assert victim.exists()

    return T


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


# --- hostile user objects -----------------------------------------------------------------------


def test_hostile_object_is_described_by_type_and_size_only(trap: Any) -> None:
    hostile = trap.cls()
    shared = SharedNamespace(
        {"thing": hostile, "things": [hostile, {"k": hostile}], "mapping": {hostile: hostile}}
    )
    trap.arm()
    shared.share("thing*", "mapping")
    listing, seconds = timed(shared.variables)
    assert seconds < 1.0
    assert [v.name for v in listing] == ["mapping", "thing", "things"]
    text, seconds = timed(shared.inspect, "thing")
    assert seconds < 1.0
    assert text.startswith("thing: ") and "Hostile" in text and "none of its code was run" in text
    for name in ("things", "mapping"):
        text, seconds = timed(shared.inspect, name)
        assert seconds < 1.0 and "<Hostile>" in text
    trap.check()


def test_hostile_values_inside_known_containers_and_frames(trap: Any) -> None:
    hostile = trap.cls()
    column = np.empty(3, dtype=object)
    column[:] = [None, "x", None]
    column[0] = hostile
    frame = pd.DataFrame({"n": [1, 2, 3], "o": column})
    values = (frame, column, (hostile,), {hostile}, deque([hostile]), OrderedDict(a=hostile))
    trap.arm()
    for value in values:
        (_summary, text), seconds = timed(lambda v=value: (summarize(v), describe(v, name="v")))
        assert seconds < 1.0
        assert "Hostile" in text
    trap.check()
    assert "holds objects of" in describe(frame, name="f") and "<Hostile>" in describe(frame, name="f")


@pytest.mark.parametrize("base", [list, dict, str, int, pd.DataFrame])
def test_subclasses_of_known_types_are_unknown(tmp_path: Path, base: type) -> None:
    marker, victim = tmp_path / "ran", tmp_path / "victim"
    victim.write_text("x")
    cls = trap_class(marker, victim, base)
    value = cls() if base is not pd.DataFrame else cls({"a": [1]})
    marker.unlink(missing_ok=True)  # building a DataFrame subclass runs its hooks: only what follows counts
    victim.write_text("x")
    text, seconds = timed(describe, value, name="v")
    assert seconds < 1.0
    assert "none of its code was run" in text
    assert not marker.exists() and victim.exists()


def test_frame_with_hostile_attrs_or_index_is_not_read(trap: Any) -> None:
    frame = pd.DataFrame({"a": [1, 2]})
    frame.attrs["meta"] = trap.cls()  # pandas deep-copies attrs into every derived frame
    trap.arm()
    assert summarize(frame).kind == "unknown"
    assert "none of its code was run" in describe(frame, name="f")
    trap.check()


def test_inspection_of_huge_values_is_bounded() -> None:
    big = list(range(2_000_000))
    nested: Any = []
    for _ in range(10_000):
        nested = [nested]
    text, seconds = timed(describe, big, name="big")
    assert seconds < 1.0 and "1,999,990 more" in text
    text, seconds = timed(describe, nested, name="deep")
    assert seconds < 1.0 and "<list of 1 items>" in text
    long_text = "word " * 1_000_000
    text, seconds = timed(describe, long_text, name="s")
    assert seconds < 1.0 and len(text) < 3000 and "5,000,000 chars" in text
    huge_int = 7**100_000  # str() of it would raise (int digit limit)
    assert "bits>" in describe(huge_int, name="n")


# --- known types --------------------------------------------------------------------------------


def _mixed_frame(rows: int = 20) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "i": np.arange(rows),
            "f": np.where(np.arange(rows) % 3 == 0, np.nan, np.arange(rows) / 2),
            "s": [f"name {i}" if i % 4 else None for i in range(rows)],
            "c": pd.Categorical(["lo", "hi"] * (rows // 2), categories=["lo", "hi"], ordered=True),
            "t": pd.date_range("2024-03-30", periods=rows, freq="h", tz="Europe/Paris"),
            "n": pd.array([1, None] * (rows // 2), dtype="Int64"),
            "b": [True, False] * (rows // 2),
        }
    )


def test_pandas_frame_summary() -> None:
    frame = _mixed_frame()
    summary = summarize(frame)
    assert (summary.type_name, summary.shape, summary.kind) == (
        "pandas.DataFrame",
        "20 rows x 7 columns",
        "dataframe",
    )
    text = describe(frame, name="sales", rows=2)
    lines = text.splitlines()
    assert lines[0] == f"sales: {summary.describe()}"
    assert "datetime64[ns, Europe/Paris]" in text or "datetime64[us, Europe/Paris]" in text
    assert "category" in text and "Int64" in text
    assert "rows (first and last 2):" in text and "..." in text
    assert "numeric summary:" in text and "mean" in text
    nulls = {line.split()[0]: line.split()[2] for line in lines[2:9]}
    assert nulls["f"] == "7" and nulls["n"] == "10" and nulls["s"] == "5"
    only = describe(frame, name="sales", columns=["f", "missing"])
    assert "No column named 'missing'" in only and "  i " not in only


def test_polars_and_numpy_summaries() -> None:
    frame = pl.DataFrame({"x": [1, 2, None], "y": ["a", "b", "c"]})
    text = describe(frame, name="p")
    assert text.startswith("p: polars.DataFrame, 3 rows x 2 columns") and "null" in text.lower()
    array = np.linspace(0, 1, 101, dtype=np.float32).reshape(101, 1)
    text = describe(array, name="a")
    assert "float32" in text and "min 0" in text and "max 1" in text and "values:" in text
    assert summarize(np.array(["a", "b"])).type_name == "numpy.ndarray <U1"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3.5, "3.5"),
        ("hello", "'hello'"),
        (b"\x00\x01", "b'\\x00\\x01'"),
        (dt.datetime(2024, 1, 2, 3, 4, tzinfo=dt.timezone.utc), "2024-01-02T03:04:00+00:00"),
        (dt.timedelta(seconds=90), "0:01:30"),
        (pathlib.PurePosixPath("/data/sales.csv"), "/data/sales.csv"),
        ({"a": [1, 2, (3,)], "b": {1, 2}}, "{'a': [1, 2, (3,)], 'b': {1, 2}}"),
        (None, "None"),
    ],
)
def test_plain_values(value: Any, expected: str) -> None:
    assert describe(value, name="v").splitlines()[-1] == expected


def test_secrets_inside_values_are_hidden() -> None:
    config = {"endpoint": "https://api.example.com", "api_key": "abc", "nested": ["ghp_" + "a" * 36]}
    text = describe(config, name="config")
    assert "abc" not in text and "ghp_" not in text and "[hidden" in text
    frame = pd.DataFrame({"user": ["ann"], "password": ["hunter2"]})
    assert "hunter2" not in describe(frame, name="users")


# --- the sharing rules --------------------------------------------------------------------------


def test_patterns_never_share_private_ipython_modules_secrets_or_environ() -> None:
    ns: dict[str, Any] = {
        "sales": [1],
        "sales_api_key": "x",
        "sales_token": "y",
        "sales_note": "sk-proj-" + "Ab3" * 10,
        "_sales": 1,
        "sales_os": os,
        "sales_env": os.environ,
        "sales_env_copy": dict(os.environ),
        "In": [],
        "Out": {},
        "exit": object(),
        "get_ipython": object(),
    }
    shared = SharedNamespace(ns, hidden={"exit": ns["exit"]})
    result = shared.share("*")
    assert shared.names() == ["sales"]
    assert set(result.skipped) >= {
        "sales_api_key",
        "sales_token",
        "sales_note",
        "sales_os",
        "sales_env",
        "sales_env_copy",
    }
    for name in ("OPENAI_API_KEY", "sales_env", "In"):
        with pytest.raises(VariableNotSharedError):
            shared.inspect(name)
    shown = SharedNamespace({"display": print}, hidden={"display": print})
    shown.share("*")
    assert shown.names() == []
    shown.namespace["display"] = "the user's own"  # a user variable reusing a shell name is the user's
    assert shown.names() == ["display"]


def test_explicit_shares_and_unshares() -> None:
    ns: dict[str, Any] = {"a": 1, "b_1": 2, "b_2": 3}
    shared = SharedNamespace(ns)
    assert shared.share("a", "b_*", "later").unmatched == ("later",)
    assert shared.names() == ["a", "b_1", "b_2"]
    assert shared.unshare("b_1") == ["b_1"]
    assert shared.names() == ["a", "b_2"]
    ns["later"] = 4
    ns["b_3"] = 5
    assert shared.names() == ["a", "b_2", "b_3", "later"]
    assert shared.share("api_key").skipped == {"api_key": "the name looks like a secret"}
    shared.share("a", allow_copy=True)
    assert shared.copy_allowed("a") and not shared.copy_allowed("b_2")
    shared.share_object([1, 2], "sample")
    assert "sample" in shared.names()
    with pytest.raises(UnsupportedValueError):
        shared.share_object("ghp_" + "x" * 36, "notes")
    with pytest.raises(UnsupportedValueError):
        shared.share_object(1, "db_password")
    assert shared.unshare_all() == ["a", "b_2", "b_3", "later", "sample"]
    assert shared.names() == []


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("OPENAI_API_KEY", True), ("apiKey", True), ("db_password", True), ("aws_secret_access_key", True),
        ("github_token", True), ("client_secret", True), ("credentials", True), ("private_key", True),
        ("sales", False), ("keyboard", False), ("monkey", False), ("tokenizer", False), ("passage", False),
    ],
)  # fmt: skip
def test_secret_names(name: str, secret: bool) -> None:
    assert looks_secret_name(name) is secret


@pytest.mark.parametrize(
    ("value", "secret"),
    [
        ("sk-ant-api03-" + "aB3dE5fG7h" * 4, True), ("AKIAIOSFODNN7EXAMPLE", True),
        ("xoxb-1234567890-abcdefghij", True), ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.x", True),
        ("postgres://admin:hunter2@db.example.com/sales", True), ("-----BEGIN RSA PRIVATE KEY-----\nMII", True),
        ("Zx8kQ2mP9vR4tL7nB3wY6cF1hJ5", True),
        ("hello world, this is a sentence", False), ("2f1e3c4b5a6978d0e1f2a3b4c5d6e7f8", False),
        ("https://example.com/a/b", False), ("short", False),
    ],
)  # fmt: skip
def test_secret_values(value: str, secret: bool) -> None:
    assert looks_secret_value(value) is secret


def test_environment_detection() -> None:
    assert looks_like_environment(os.environ)
    assert looks_like_environment({"PATH": "/bin", "HOME": "/root", "LANG": "C"})
    assert not looks_like_environment({"path": 1, "home": 2, "x": 3})


def test_sharing_plain_values_imports_no_data_library() -> None:
    """pandas, polars and pyarrow load only when a value of theirs is met."""
    import subprocess
    import sys

    code = (
        "import sys, tempfile\n"
        "from ws_jupyter import Workspace, LocalFilesystem\n"
        "ws = Workspace(filesystem=LocalFilesystem(tempfile.mkdtemp()), bm25=False)\n"
        "ws.share({'a': [1, 2]}, name='x')\n"
        "tools = {t.name: t for t in ws.tools()}\n"
        "assert tools['user_variable_inspect'].run({'name': 'x'}).startswith('x: dict')\n"
        "print(sorted(m for m in ('pandas', 'polars', 'pyarrow', 'IPython') if m in sys.modules))\n"
        "ws.destroy()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
