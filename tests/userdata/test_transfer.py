"""Copies between the notebook and a real sandbox kernel under bubblewrap: exact round trips of
mixed data, the private transfer folder, size limits checked before a byte is written, and a
hostile sandbox — one that rewrites the copy and lies about it — that gets nothing past the
notebook's checks: no pickle runs, no link is followed, nothing oversized is read, and the
notebook's namespace is unchanged."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from ws_jupyter import LocalSandbox
from ws_jupyter.errors import TransferTooLargeError, UnsafeTransferError, UserDataError
from ws_jupyter.jupyter.user_data import fetch_into
from ws_jupyter.userdata import copy_into_kernel, fetch_from_kernel
from ws_jupyter.userdata.sandbox_code import MARKER

from ..sandbox.conftest import requires_bwrap
from .test_codecs import Trapped, mixed_frame

pytestmark = [requires_bwrap, pytest.mark.bwrap]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSandbox]:
    base = Path(os.path.realpath(tmp_path_factory.mktemp("transfer")))
    sb = LocalSandbox(working_directory=str(base / "wd"), isolation="bwrap")
    sb.kernels.start()
    yield sb
    sb.destroy()


def kernel_dir(sandbox: LocalSandbox) -> Path:
    kernel = sandbox.kernels.get("default")
    assert kernel is not None and kernel.connection_file
    return Path(kernel.connection_file).parent


def run(sandbox: LocalSandbox, code: str) -> Any:
    result = sandbox.kernels.execute(code)
    assert result.ok, (result.ename, result.evalue)
    return result


def copy_and_back(sandbox: LocalSandbox, value: Any) -> Any:
    copy_into_kernel(value, kernels=sandbox.kernels, as_name="value")
    return fetch_from_kernel("value", kernels=sandbox.kernels).value


# --- round trips ----------------------------------------------------------------------------------


def test_frames_round_trip_through_the_sandbox(sandbox: LocalSandbox) -> None:
    frame = mixed_frame(100)
    pd.testing.assert_frame_equal(copy_and_back(sandbox, frame), frame)
    # the sandbox got a real DataFrame it can work on, with the same dtypes
    out = run(
        sandbox,
        "print(type(value).__name__, value['paris'].dt.tz, value['cat'].cat.ordered, value['float'].isna().sum())",
    )
    assert out.stdout.split() == ["DataFrame", "Europe/Paris", "True", "20"]
    series = frame["nullable"]
    pd.testing.assert_series_equal(copy_and_back(sandbox, series), series)
    polars = pl.from_pandas(frame.reset_index().drop(columns=["obj", "delta"]))
    assert copy_and_back(sandbox, polars).equals(polars)
    assert copy_and_back(sandbox, polars["text"]).equals(polars["text"])


@pytest.mark.parametrize(
    "value",
    [
        np.arange(12, dtype=np.int16).reshape(3, 4),
        np.array([np.nan, 1e300, -0.0]),
        np.array(["2024-01-01", "NaT"], dtype="datetime64[s]"),
        np.array([1 + 1j], dtype=np.complex64),
        np.float64(2.5),
        {"metrics": {"auc": 0.91, "n": 1000}, "labels": ["a", "b"], "ok": True, "none": None},
        "a note",
    ],
    ids=["int16", "float", "datetime", "complex", "scalar", "dict", "str"],
)
def test_arrays_and_plain_data_round_trip(sandbox: LocalSandbox, value: Any) -> None:
    back = copy_and_back(sandbox, value)
    assert type(back) is type(value)
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and back.tobytes() == value.tobytes()
    else:
        assert back == value


def test_the_transfer_folder_is_private_and_removed(sandbox: LocalSandbox) -> None:
    private = kernel_dir(sandbox)
    before = set(os.listdir(private))
    copy_into_kernel(mixed_frame(10), kernels=sandbox.kernels, as_name="seen")
    fetch_from_kernel("seen", kernels=sandbox.kernels)
    assert set(os.listdir(private)) == before  # each copy's folder is gone
    assert not any(p.name.startswith("transfer-") for p in Path(sandbox.working_directory).rglob("*"))
    # the kernel's private folder is bound into that kernel only: commands do not see it
    listing = sandbox.execute_command(f"ls {private}")
    assert listing.exit_code != 0


def test_over_the_limit_nothing_is_written_and_no_kernel_starts(sandbox: LocalSandbox) -> None:
    private = kernel_dir(sandbox)
    before = set(os.listdir(private))
    big = pd.DataFrame({"x": np.zeros(300_000)})
    with pytest.raises(TransferTooLargeError):
        copy_into_kernel(big, kernels=sandbox.kernels, as_name="big", max_bytes=1 << 20)
    with pytest.raises(TransferTooLargeError):
        copy_into_kernel(
            big, kernels=sandbox.kernels, as_name="big", kernel_name="unstarted", max_bytes=1 << 20
        )
    assert set(os.listdir(private)) == before
    assert sandbox.kernels.get("unstarted") is None
    run(sandbox, "import numpy as np\nhuge = np.zeros(300_000)")
    with pytest.raises(UserDataError, match=r"over the 1\.0 MB copy limit"):
        fetch_from_kernel("huge", kernels=sandbox.kernels, max_bytes=1 << 20)


def test_fetch_errors_are_clear(sandbox: LocalSandbox) -> None:
    with pytest.raises(UserDataError, match="has no variable nothing_here"):
        fetch_from_kernel("nothing_here", kernels=sandbox.kernels)
    run(sandbox, "class Model: pass\nmodel = Model()")
    with pytest.raises(UserDataError, match=r"Model, which has no safe format\. What can be copied"):
        fetch_from_kernel("model", kernels=sandbox.kernels)
    with pytest.raises(UserDataError, match="not running"):
        fetch_from_kernel("x", kernels=sandbox.kernels, kernel_name="other")
    with pytest.raises(UserDataError, match="identifier"):
        fetch_from_kernel("os.system('x')", kernels=sandbox.kernels)


# --- a hostile sandbox ----------------------------------------------------------------------------

#: Installed in the sandbox kernel: when the copy code reports, the file it wrote is replaced by
#: ACTION(path) and the report says FORMAT/KIND — a sandbox that controls everything it can.
HOSTILE = r"""
import builtins, json, os, pickle
if not hasattr(builtins, "_ws_originals"):
    builtins._ws_originals = (builtins.print, os.path.join)
(_real_print, _real_join), _seen = builtins._ws_originals, {}
def _join(a, *parts):
    out = _real_join(a, *parts)
    if parts and parts[-1] == "value":
        _seen["path"] = out
    return out
class Payload:
    def __reduce__(self):
        return (os.system, ("touch " + HOST_MARKER,))
def _print(*args, **kw):
    if args and isinstance(args[0], str) and args[0].startswith(MARKER):
        path = _seen["path"]
        if os.path.lexists(path):
            os.remove(path)
        ACTION
        args = (MARKER + json.dumps({"ok": True, "format": FORMAT, "kind": KIND, "meta": {}}),)
    _real_print(*args, **kw)
os.path.join, builtins.print = _join, _print
"""
RESTORE = (
    "import builtins, os\nbuiltins.print, os.path.join = builtins._ws_originals\ndel builtins._ws_originals"
)


@pytest.fixture
def hostile(sandbox: LocalSandbox, tmp_path: Path) -> Iterator[Any]:
    """``install(action, fmt, kind)`` makes the sandbox kernel hostile; the notebook's side is a
    namespace with one variable, checked unchanged after each refused fetch."""
    host_marker = tmp_path / "code-ran-on-the-host"
    shell = SimpleNamespace(user_ns={"result": "the user's own"}, user_ns_hidden={})

    class Workspace:  # what %ws fetch uses of the session workspace
        def resolve_sandbox(self, _ctx: Any) -> LocalSandbox:
            return sandbox

    workspace = Workspace()

    def install(action: str, fmt: str = "json", kind: str = "json") -> None:
        code = (
            HOSTILE.replace("ACTION", action.replace("\n", "\n        "))
            .replace("HOST_MARKER", repr(str(host_marker)))
            .replace("MARKER", repr(MARKER))
            .replace("FORMAT", repr(fmt))
            .replace("KIND", repr(kind))
        )
        run(sandbox, code + "\nresult = [1, 2, 3]")

    def fetch() -> Exception:
        with pytest.raises((UnsafeTransferError, UserDataError)) as info:
            fetch_into(
                shell, workspace, "result", as_name="result", kernel="default", force=True, max_bytes=1 << 20
            )
        assert shell.user_ns == {"result": "the user's own"}
        assert not host_marker.exists()
        return info.value

    yield SimpleNamespace(install=install, fetch=fetch, tmp=tmp_path)
    run(sandbox, RESTORE)


def test_hostile_pickle_is_refused(hostile: Any) -> None:
    for fmt, kind in (("json", "json"), ("npy", "numpy.ndarray"), ("arrow", "pandas.DataFrame")):
        hostile.install("open(path, 'wb').write(pickle.dumps(Payload()))", fmt, kind)
        assert "Refused" in str(hostile.fetch())


def test_hostile_npy_with_objects_is_refused(hostile: Any) -> None:
    hostile.install(
        "import numpy as np\nf = open(path, 'wb')\nnp.save(f, np.array([Payload()], dtype=object), allow_pickle=True)\nf.close()",
        "npy",
        "numpy.ndarray",
    )
    assert "holds Python objects" in str(hostile.fetch())


def test_hostile_arrow_schemas_are_refused(hostile: Any) -> None:
    marker = hostile.tmp / "extension-deserialized"
    Trapped.marker = str(marker)
    pa.register_extension_type(Trapped())  # as a library or the user may have done in the notebook
    try:
        hostile.install(
            "import pyarrow as pa, pyarrow.ipc\n"
            "field = pa.field('x', pa.int64(), metadata={b'ARROW:extension:name': b'tests.trapped', b'ARROW:extension:metadata': b''})\n"
            "table = pa.table({'x': [1]}, schema=pa.schema([field]))\n"
            "w = pa.ipc.new_stream(path, table.schema); w.write_table(table); w.close()",
            "arrow",
            "pandas.DataFrame",
        )
        assert "extension type" in str(hostile.fetch())
        assert not marker.exists()
    finally:
        pa.unregister_extension_type("tests.trapped")
    hostile.install(
        "import pyarrow as pa, pyarrow.ipc, pandas as pd\n"
        "table = pa.Table.from_pandas(pd.DataFrame({'x': [1]}))\n"
        "meta = json.loads(table.schema.metadata[b'pandas'])\n"
        "meta['columns'][0]['numpy_type'] = 'subprocess.Popen'\n"
        "table = table.replace_schema_metadata({b'pandas': json.dumps(meta).encode()})\n"
        "w = pa.ipc.new_stream(path, table.schema); w.write_table(table); w.close()",
        "arrow",
        "pandas.DataFrame",
    )
    assert "pandas metadata" in str(hostile.fetch())


def test_hostile_sparse_file_is_refused_before_reading(hostile: Any) -> None:
    hostile.install("f = open(path, 'wb'); f.truncate(10 << 30); f.close()", "npy", "numpy.ndarray")
    error = hostile.fetch()
    assert (
        isinstance(error, TransferTooLargeError)
        and "10.0 GB" in str(error)
        and "nothing was read" in str(error)
    )


def test_hostile_symlink_to_a_host_file_is_not_followed(hostile: Any) -> None:
    host_file = hostile.tmp / "host-secret.json"
    host_file.write_text(json.dumps({"secret": "host data"}))  # valid JSON: a follower would return it
    hostile.install(f"os.symlink({str(host_file)!r}, path)")
    assert "symbolic link" in str(hostile.fetch())


def test_hostile_special_files_are_refused(hostile: Any) -> None:
    hostile.install("os.mkfifo(path)")  # opening a FIFO for reading would block the notebook
    assert "not a regular file" in str(hostile.fetch())
    hostile.install("other = path + '-other'\nopen(other, 'w').write('[1]')\nos.link(other, path)")
    assert "other links" in str(hostile.fetch())
    hostile.install("pass")  # nothing written at all
    assert "did not write" in str(hostile.fetch())


def test_messages_never_show_the_host_path_of_the_private_folder(sandbox: LocalSandbox) -> None:
    run(
        sandbox,
        "import pyarrow as pa\n_real_osfile = pa.OSFile\ndef _fail(path, *a):\n    raise FileNotFoundError(path)\npa.OSFile = _fail",
    )
    try:
        with pytest.raises(UserDataError) as info:
            copy_into_kernel(pd.DataFrame({"a": [1]}), kernels=sandbox.kernels, as_name="x")
        message = str(info.value)
        assert "FileNotFoundError" in message and "<transfer folder>" in message
        assert str(kernel_dir(sandbox)) not in message
    finally:
        run(sandbox, "pa.OSFile = _real_osfile")
