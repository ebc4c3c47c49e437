"""Remote kernels: a real Jupyter Kernel Gateway on 127.0.0.1 (started and stopped by the tests)
driven by GatewayKernelManager — the kernel contract (``KernelConformance``: execute, time limits,
interrupt, restart, crashes), then what is the gateway's own: token auth, the workspace tool, a
dropped connection (reconnected), a kernel lost on the gateway (replaced), a gateway killed
mid-execution (a clear error, no hang), messages the gateway loses (found out, no hang) — and no
kernel process left behind."""

from __future__ import annotations

import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any

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

from ws_jupyter.sandbox.kernels import gateway as gateway_module
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


# --- messages the gateway loses ----------------------------------------------------------------
# A gateway passes on only part of a kernel's messages when its subscription to a restarted kernel's
# output is not made yet, or when it drops them under load. A real gateway cannot be made to lose a
# chosen message, so these tests lose it between the (real) gateway and the client, at the
# client's websocket: everything else is real. Before the barriers, each of them waited forever.


def _losing(monkeypatch: pytest.MonkeyPatch, lost: Callable[[dict[str, Any]], bool]) -> None:
    """Messages from the gateway for which ``lost(msg)`` is true never arrive."""
    recv = gateway_module._Socket.recv

    def lossy(self: Any, timeout: float) -> dict[str, Any] | None:
        msg = recv(self, timeout)
        return None if msg is not None and lost(msg) else msg

    monkeypatch.setattr(gateway_module._Socket, "recv", lossy)


def _of_code(msg: dict[str, Any], msg_type: str) -> bool:
    """``msg`` is a ``msg_type`` message about an execute_request (not a kernel_info barrier)."""
    return (
        msg.get("msg_type") == msg_type and msg.get("parent_header", {}).get("msg_type") == "execute_request"
    )


def _within(seconds: float, fn: Callable[[], Any]) -> Any:
    box: dict[str, Any] = {}
    t = threading.Thread(target=lambda: box.update(r=fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still waiting after {seconds} s"
    return box["r"]


@pytest.fixture
def fresh(gateway):
    """A manager of its own (the losses below must not reach the shared kernel), started."""
    manager = GatewayKernelManager(gateway.url, token=gateway.token)
    manager.execute("1")
    yield manager
    manager.close()


def test_an_idle_the_gateway_loses_ends_the_execution_with_its_output_and_a_note(fresh, monkeypatch) -> None:
    _losing(monkeypatch, lambda m: _of_code(m, "status") and m["content"].get("execution_state") == "idle")
    r = _within(30, lambda: fresh.execute("print('shown')\n6 * 7"))
    assert r.ok and r.text == "42" and r.stdout == "shown\n", r
    assert any("output was lost on the way" in n for n in r.notes), r.notes
    monkeypatch.undo()
    assert fresh.execute("7 * 6").text == "42"


def test_a_reply_the_gateway_loses_is_a_clear_error(fresh, monkeypatch) -> None:
    _losing(monkeypatch, lambda m: _of_code(m, "execute_reply"))
    r = _within(30, lambda: fresh.execute("print('ran')"))
    assert (r.status, r.ename) == ("error", "ConnectionLost") and r.stdout == "ran\n", r
    assert "ran to its end, but its reply was lost" in r.error.evalue
    monkeypatch.undo()
    assert fresh.execute("2 + 2").text == "4"


def test_a_request_the_gateway_loses_is_a_clear_error(fresh, monkeypatch) -> None:
    send = gateway_module._Socket.send
    dropped: list[str] = []

    def losing_send(self: Any, msg: dict[str, Any], channel: str = "shell") -> None:
        if msg["header"]["msg_type"] == "execute_request" and not dropped:
            dropped.append(msg["header"]["msg_id"])  # never reaches the gateway
            return
        send(self, msg, channel)

    monkeypatch.setattr(gateway_module._Socket, "send", losing_send)
    started = time.monotonic()
    r = _within(30, lambda: fresh.execute("lost_request = 1"))
    assert dropped and (r.status, r.ename) == ("error", "ConnectionLost"), r
    assert "the request or its reply was lost" in r.error.evalue and time.monotonic() - started < 20
    assert fresh.execute("'lost_request' in dir()").text == "False"  # it never ran


# --- a connection that goes silent ----------------------------------------------------------------
# A proxy or NAT that forgets a websocket keeps it open and passes nothing: every read only times
# out, and the gateway's REST API (new connections) still answers that the kernel exists.


def test_a_websocket_cut_without_a_close_is_found_out_and_replaced(gateway) -> None:
    proxy = CuttableProxy(gateway.port)
    manager = GatewayKernelManager(proxy.url, token=gateway.token, reconnect_timeout=20)
    try:
        manager.execute("1")
        proxy.freeze()  # the request below goes into the forgotten connection and is lost there
        started = time.monotonic()
        r = _within(90, lambda: manager.execute("frozen_request = 1"))
        took = time.monotonic() - started
        assert (r.status, r.ename) == ("error", "ConnectionLost"), r
        assert "the request or its reply was lost" in r.error.evalue and "broke meanwhile" in r.error.evalue
        assert took < 60, took  # a ping unanswered for 10 s after 5 s of silence, then a reconnect
        after = _within(60, lambda: manager.execute("print('back')\n'frozen_request' in dir()"))
        assert after.text == "False" and after.stdout == "back\n", after  # it never ran; output flows
    finally:
        manager.close()
        proxy.cut()


def test_code_that_runs_long_without_a_word_is_not_taken_for_a_lost_connection(fresh) -> None:
    # silent for 12 s: barriers (3 s, 9 s) wait behind it and the websocket is pinged meanwhile
    r = _within(90, lambda: fresh.execute("import time\ntime.sleep(12)\n6 * 7"))
    assert r.ok and r.text == "42" and not r.notes, r
    assert fresh.execute("print('next')").stdout == "next\n"  # the barriers' late replies are ignored
