"""Remote kernels: a real Jupyter Kernel Gateway on 127.0.0.1 (started and stopped by the tests)
driven by GatewayKernelManager — the kernel contract (``KernelConformance``: execute, time limits,
interrupt, restart, crashes), then what is the gateway's own: token auth, the workspace tool, a
dropped connection (reconnected), a kernel lost on the gateway (replaced), a gateway killed
mid-execution (a clear error, no hang) — and no kernel process left behind."""

from __future__ import annotations

import threading
import time
import urllib.request

import psutil
import pytest

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import LocalFilesystem, LocalSandbox, Workspace
from ws_jupyter.errors import KernelError

from ..helpers import wait_for
from ..servers import CuttableProxy, KernelGateway
from .conformance import KernelConformance

pytest.importorskip("kernel_gateway", reason="jupyter-kernel-gateway is not installed (the dev extra has it)")
pytest.importorskip(
    "websocket", reason="websocket-client is not installed (pip install 'ws-jupyter[gateway]')"
)

from ws_jupyter.sandbox.kernels.gateway import GatewayKernelManager

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def gateway():
    gw = KernelGateway()
    yield gw
    gw.stop()


@pytest.fixture(scope="module")
def kernels(gateway):
    """One manager whose "default" kernel serves the behaviour tests (own variable names)."""
    manager = GatewayKernelManager(gateway.url, token=gateway.token, reconnect_timeout=10)
    yield manager
    manager.close()


class TestGatewayKernels(KernelConformance):
    isolation = "gateway"  # the module's ``kernels`` fixture: one manager on one gateway


def remote_ids(gw: KernelGateway) -> set[str]:
    m = GatewayKernelManager(gw.url, token=gw.token)
    return {k["id"] for k in m.remote_kernels()}


def test_a_kernel_removed_on_the_gateway_is_replaced_with_a_note(gateway, kernels) -> None:
    kernels.execute("gw_lost = 1")
    kernel_id = kernels["default"].kernel_id
    req = urllib.request.Request(
        f"{gateway.url}/api/kernels/{kernel_id}",
        method="DELETE",
        headers={"Authorization": f"token {gateway.token}"},
    )
    urllib.request.urlopen(req, timeout=30).close()  # culled by the gateway, say
    r = kernels.execute("gw_lost", timeout=60)
    # Either the websocket closing told us during the call, or the next start says the state is gone.
    if r.ename == "KernelDied":
        r = kernels.execute("gw_lost", timeout=60)
    assert r.ename == "NameError", r
    assert kernels["default"].kernel_id != kernel_id
    assert kernels.execute("2 + 2").text == "4"


def test_the_workspace_tool_runs_code_on_the_gateway(gateway, tmp_path) -> None:
    manager = GatewayKernelManager(gateway.url, token=gateway.token)
    ws = Workspace(
        filesystem=LocalFilesystem(str(tmp_path)),
        sandbox=LocalSandbox(working_directory=str(tmp_path), kernels=manager),
        bm25=False,
        tools={
            T.SANDBOX.EXECUTE_CODE: {"require_approval": False},
            T.SANDBOX.RUN_NOTEBOOK: {"require_approval": False},
        },
    )
    ws.init()
    try:
        from ..tools.conftest import box

        tools = box(ws)
        assert (
            tools.run(T.SANDBOX.EXECUTE_CODE, code="import os\nremote_pid = os.getpid()\nprint('up')") == "up"
        )
        out = tools.run(T.SANDBOX.EXECUTE_CODE, code="remote_pid > 0")
        assert out.endswith("]: True"), out
        kernel_id = manager["default"].kernel_id
        assert kernel_id in remote_ids(gateway)
        assert f"runs on the Jupyter gateway {gateway.url}" in ws.sandbox.get_instructions()
        # nbclient needs a local kernel: the notebook runner is not offered on a gateway
        assert T.SANDBOX.EXECUTE_CODE in tools and T.SANDBOX.RUN_NOTEBOOK not in tools
    finally:
        ws.destroy()
    assert kernel_id not in remote_ids(gateway)  # destroying the workspace shut the remote kernel down


def test_a_wrong_token_is_a_clear_error(gateway) -> None:
    manager = GatewayKernelManager(gateway.url, token="not-the-token")
    ok, why = manager.availability()
    assert not ok and "401" in why
    with pytest.raises(KernelError) as info:
        manager.execute("1")
    assert info.value.code == "GATEWAY_AUTH"
    manager.close()


def test_bad_urls_are_refused() -> None:
    for url in ("ftp://host", "host:8888", "", "http://"):
        with pytest.raises(KernelError) as info:
            GatewayKernelManager(url)
        assert info.value.code == "INVALID_ARGUMENT"


def test_an_unreachable_gateway_fails_fast() -> None:
    from ..servers import free_port

    manager = GatewayKernelManager(f"http://127.0.0.1:{free_port()}", request_timeout=5)
    ok, why = manager.availability()
    assert not ok and "unreachable" in why
    started = time.monotonic()
    with pytest.raises(KernelError) as info:
        manager.execute("1")
    assert info.value.code == "GATEWAY_UNAVAILABLE"
    assert time.monotonic() - started < 30
    manager.close()


def test_a_dropped_connection_is_reconnected_and_the_result_arrives(gateway) -> None:
    proxy = CuttableProxy(gateway.port)
    manager = GatewayKernelManager(proxy.url, token=gateway.token, reconnect_timeout=20)
    try:
        manager.execute("gw_proxy_state = 5")
        box: dict[str, object] = {}
        code = "import time\ntime.sleep(2)\nprint('after the blip')\ngw_proxy_state * 2"
        t = threading.Thread(target=lambda: box.update(r=manager.execute(code, timeout=60)))
        t.start()
        assert wait_for(lambda: manager["default"].status == "busy", timeout=30)
        time.sleep(0.5)
        proxy.drop()  # the websocket breaks while the code runs; the server keeps the kernel
        t.join(60)
        assert not t.is_alive()
        r = box["r"]
        assert r.ok and r.text == "10" and "after the blip" in r.stdout, r  # type: ignore[union-attr]
    finally:
        manager.close()
        proxy.cut()


def test_a_gateway_killed_mid_execution_is_a_clear_error_not_a_hang() -> None:
    gw = KernelGateway()
    manager = GatewayKernelManager(gw.url, token=gw.token, reconnect_timeout=3, request_timeout=5)
    try:
        manager.execute("x = 1")
        box: dict[str, object] = {}

        def run() -> None:
            try:
                box["r"] = manager.execute("import time; time.sleep(120)")
            except KernelError as exc:
                box["e"] = exc

        t = threading.Thread(target=run)
        t.start()
        assert wait_for(lambda: manager["default"].status == "busy", timeout=30)
        kernels_before = [p for p in psutil.Process(gw.proc.pid).children(recursive=True) if _is_kernel(p)]
        assert kernels_before  # the gateway's kernel process, ended with it below
        started = time.monotonic()
        gw.kill()
        t.join(60)
        assert not t.is_alive(), "the execution hung after the gateway died"
        assert time.monotonic() - started < 45
        err = box.get("e")
        assert isinstance(err, KernelError) and err.code == "GATEWAY_UNAVAILABLE", box
        assert "unreachable" in str(err)
        with pytest.raises(KernelError) as again:
            manager.execute("1")
        assert again.value.code == "GATEWAY_UNAVAILABLE"
    finally:
        manager.close()
        gw.stop()
    assert wait_for(lambda: not any(_alive(p) for p in kernels_before))


def _is_kernel(proc: psutil.Process) -> bool:
    try:
        return "ipykernel_launcher" in " ".join(proc.cmdline())
    except psutil.Error:
        return False


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


