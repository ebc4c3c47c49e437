"""A sandbox kernel runs in the sandbox's isolation: the workspace as working directory, the
curated environment, and under bubblewrap no writes outside the writable paths and no network.
Under bubblewrap the kernel contract (``KernelConformance``) holds too: time limits, interrupts
(by message, across the pid namespace), restarts and crashes."""

from __future__ import annotations

import ast
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter import LocalSandbox

from .conformance import KernelConformance
from .conftest import kernel_processes, requires_bwrap

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The kernels of one bubblewrap sandbox, shared by the contract tests of this module."""
    base = Path(os.path.realpath(tmp_path_factory.mktemp("bwrap-kernels")))
    sb = LocalSandbox(working_directory=str(base / "wd"), isolation="bwrap")
    yield sb.kernels
    sb.destroy()


@requires_bwrap
class TestBwrapKernels(KernelConformance):
    isolation = "bwrap"


@pytest.mark.parametrize("isolation", ["none", pytest.param("bwrap", marks=requires_bwrap)])
def test_host_secrets_do_not_reach_the_kernel(
    make_sandbox: Any, isolation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WS_KERNEL_TEST_SECRET", "hunter2-secret")
    sb = make_sandbox(isolation)
    r = sb.kernels.execute(
        "import os\n[k for k, v in os.environ.items() if 'hunter2' in v or k == 'WS_KERNEL_TEST_SECRET']"
    )
    assert r.ok and r.text == "[]"
    home = sb.kernels.execute("import os; os.environ['HOME']").text
    assert home == repr(sb.home_directory)


@requires_bwrap
def test_bwrap_kernel_writes_only_where_commands_may(make_sandbox: Any, tmp_path: Path) -> None:
    outside = Path(os.path.realpath(tmp_path)) / "outside"
    outside.mkdir()
    sb = make_sandbox("bwrap")
    r = sb.kernels.execute(
        "import os\nresults = {}\n"
        f"for path in ({str(outside / 'f.txt')!r}, '/usr/ws-kernel-test', '/etc/ws-kernel-test'):\n"
        "    try:\n"
        "        open(path, 'w').write('x')\n"
        "        results[path] = 'written'\n"
        "    except OSError as exc:\n"
        "        results[path] = type(exc).__name__\n"
        "open('inside.txt', 'w').write('ok')\n"
        "results"
    )
    assert r.ok, r
    results = eval(r.text)
    assert all(v != "written" for v in results.values()), results
    assert not (outside / "f.txt").exists()
    assert (Path(sb.working_directory) / "inside.txt").read_text() == "ok"


@requires_bwrap
@pytest.mark.parametrize("allow_network", [False, True])
def test_bwrap_kernel_network_follows_the_sandbox(make_sandbox: Any, allow_network: bool) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    try:
        sb = make_sandbox("bwrap", native_sandbox={"allow_network": allow_network})
        r = sb.kernels.execute(
            "import socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
            "    outcome = 'connected'\n"
            "except OSError as exc:\n"
            "    outcome = type(exc).__name__\n"
            "outcome"
        )
        assert r.ok, r
        if allow_network:
            assert r.text == "'connected'"
            server.accept()[0].close()
        else:
            assert r.text != "'connected'"
            with pytest.raises(TimeoutError):
                server.accept()
    finally:
        server.close()


@requires_bwrap
def test_bwrap_kernel_is_in_its_own_pid_namespace_and_dies_with_destroy(make_sandbox: Any) -> None:
    sb = make_sandbox("bwrap")
    k = sb.kernels.start()
    r = k.execute("import os; os.getcwd(), os.getpid() < 10")
    # the repr as IPython shows it: a long temp path wraps the tuple over two lines
    assert ast.literal_eval(r.text) == (sb.working_directory, True), r.text
    conn = os.path.realpath(k.connection_file)
    assert kernel_processes(conn)
    sb.destroy()
    assert not kernel_processes(conn)


@requires_bwrap
def test_bwrap_kernel_started_from_a_short_lived_thread_outlives_it(make_sandbox: Any) -> None:
    # --die-with-parent fires when the thread that forked bwrap exits: kernels must be forked
    # from a thread that lives on (an arun worker or a widget callback would otherwise kill them).
    import threading
    import time

    sb = make_sandbox("bwrap")
    box: dict[str, Any] = {}
    t = threading.Thread(target=lambda: box.setdefault("r", sb.kernels.execute("alive = 'yes'")))
    t.start()
    t.join(120)
    assert box["r"].ok
    time.sleep(1.0)
    k = sb.kernels["default"]
    assert k.status == "idle", k.status
    assert sb.kernels.execute("alive").text == "'yes'"
