"""MCP over Streamable HTTP (``serve_mcp_http``): the official ``mcp`` client against a real
uvicorn server on 127.0.0.1 — the same tools, prompts and resources as stdio, the token, Host and
Origin checks, hostile traffic, two clients at once (attribution, read records, jobs) and jobs
that outlive a connection. The server runs in this process, as it does in a notebook's kernel
(tests/jupyter/test_mcp_kernel.py starts it there with ``%ws mcp serve``)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import threading
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import mcp_types as types
import psutil
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ws_jupyter import LocalFilesystem, LocalSandbox, Workspace, tool_activity
from ws_jupyter.request_context import client_label

from ..helpers import wait_for

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@pytest.fixture
def served(workdir: Path):
    """A workspace over ``workdir`` served over HTTP: ``(workspace, handle)``."""
    (workdir / "a.txt").write_text("alpha\nbeta\n")
    made: list[Workspace] = []

    def make(**options: Any) -> tuple[Workspace, Any]:
        ws = Workspace(
            filesystem=LocalFilesystem(workdir),
            sandbox=LocalSandbox(working_directory=workdir, isolation=options.pop("isolation", "auto")),
            bm25=False,
            tools=options.pop("tools", None),
        )
        ws.init()
        made.append(ws)
        return ws, ws.serve_mcp_http(**options)

    yield make
    for ws in made:
        ws.destroy()


@contextlib.asynccontextmanager
async def connect(
    handle: Any, name: str = "test-client", mode: str = "legacy", **kw: Any
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {handle.token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        transport = streamable_http_client(handle.url, http_client=http)
        async with Client(
            transport, mode=mode, client_info=types.Implementation(name=name, version="1.0"), **kw
        ) as client:
            yield client


def run(body: Any) -> Any:
    async def main() -> Any:
        with anyio.fail_after(120):
            return await body()

    return anyio.run(main)


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None) is not None)


# --- the same server as stdio ------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_tools_prompts_resources_over_http(served, workdir, mode):
    skills = workdir / "skills" / "greet"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Say hello to $ARGUMENTS\n---\nHello $ARGUMENTS!\n"
    )
    _ws, handle = served()
    assert handle.url.startswith("http://127.0.0.1:") and handle.url.endswith("/mcp")

    async def body() -> Any:
        async with connect(handle, mode=mode) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            read = await c.call_tool("workspace_read_file", {"path": "a.txt"})
            resources = await c.list_resources()
            res = await c.read_resource("workspace://a.txt")
            missing = await c.call_tool("workspace_read_file", {"path": "nope.txt"})
            return tools, read, resources, res, missing

    tools, read, resources, res, missing = run(body)
    assert set(tools) == set(handle.tools) and "workspace_job_status" in tools
    assert tools["workspace_read_file"].annotations.read_only_hint is True
    assert "alpha" in text(read) and not read.is_error
    assert "workspace://a.txt" in [str(r.uri) for r in resources.resources]
    assert res.contents[0].text == "alpha\nbeta\n"
    assert missing.is_error and "not found" in text(missing).lower()


def test_prompts_are_the_skills(served, workdir):
    skills = workdir / "skills" / "greet"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text("---\nname: greet\ndescription: Say hello\n---\nHello $ARGUMENTS!\n")
    ws = Workspace(filesystem=LocalFilesystem(workdir), bm25=False, skills=["skills"])
    ws.init()
    try:
        handle = ws.serve_mcp_http()

        async def body() -> Any:
            async with connect(handle) as c:
                prompts = await c.list_prompts()
                got = await c.get_prompt("greet", {"arguments": "world"})
                return prompts, got

        prompts, got = run(body)
        assert [p.name for p in prompts.prompts] == ["greet"]
        assert "Hello world!" in got.messages[0].content.text
    finally:
        ws.destroy()
    assert not handle.running


def test_calls_are_attributed_in_the_activity_feed(served):
    ws, handle = served()

    async def body() -> None:
        async with connect(handle, name="claude-code") as c:
            await c.call_tool("workspace_read_file", {"path": "a.txt"})

    run(body)
    events = [e for e in tool_activity(ws).recent() if e.tool_name == "workspace_read_file"]
    assert {e.kind for e in events} == {"started", "finished"}
    labels = {client_label(e.request_context) for e in events}
    assert len(labels) == 1
    (label,) = labels
    assert re.fullmatch(r"claude-code \(session [0-9a-f]{8}\)", label), label
    assert handle.clients()[0][0] == "claude-code"


def test_stop_frees_the_port_and_the_thread(served):
    ws, handle = served()
    # a TCP socket asyncio turns Nagle off on (a reply in two writes would wait ~40 ms for an ACK)
    listening = [sock for srv in handle._server.servers for sock in srv.sockets]
    assert listening and all(sock.proto == socket.IPPROTO_TCP for sock in listening)
    port = handle.port
    handle.stop()
    assert not handle.running
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0
    # the port can be served again at once
    again = ws.serve_mcp_http(port=port)
    assert again.port == port
    ws.destroy()
    assert not again.running


def test_allow_gates_the_open_notebook_and_user_data_tools(served):
    from ws_jupyter.adapters.mcp_http import ALLOW_GROUPS, allow_group_tools, allowed_tools
    from ws_jupyter.errors import WorkspaceConfigError

    ws, _handle = served()
    notebook, data = allow_group_tools("open-notebook"), allow_group_tools("user-data")
    assert notebook == ("open_notebook_read", "open_notebook_edit", "open_notebook_run")
    assert data == ("user_variables_list", "user_variable_inspect", "user_variable_request")
    names = [*notebook, *data, "workspace_read_file"]

    class Fake:
        def __init__(self, name: str) -> None:
            self.name = self.workspace_tool_name = name

    fake = [Fake(n) for n in names]
    assert [t.name for t in allowed_tools(fake, frozenset())] == ["workspace_read_file"]
    assert [t.name for t in allowed_tools(fake, frozenset({"open-notebook"}))] == [
        *notebook,
        "workspace_read_file",
    ]
    assert len(allowed_tools(fake, frozenset(ALLOW_GROUPS))) == len(names)
    with pytest.raises(WorkspaceConfigError, match="Unknown allow group"):
        ws.serve_mcp_http(allow="open-notebook,everything")


# --- security -----------------------------------------------------------------------------------

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_token_host_and_origin_are_checked(served):
    _ws, handle = served()
    auth = {"Authorization": f"Bearer {handle.token}"}
    with httpx.Client(timeout=30) as http:
        assert http.post(handle.url, json=INIT, headers=ACCEPT).status_code == 401
        wrong = {"Authorization": "Bearer " + "x" * len(handle.token)}
        r = http.post(handle.url, json=INIT, headers={**ACCEPT, **wrong})
        assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
        assert (
            http.post(handle.url, json=INIT, headers={**ACCEPT, "Authorization": handle.token}).status_code
            == 401
        )
        foreign = http.post(
            handle.url, json=INIT, headers={**ACCEPT, **auth, "Origin": "http://evil.example"}
        )
        assert foreign.status_code == 403
        rebound = http.post(
            handle.url, json=INIT, headers={**ACCEPT, **auth, "Host": f"evil.example:{handle.port}"}
        )
        assert rebound.status_code in (403, 421)
        ok = http.post(
            handle.url, json=INIT, headers={**ACCEPT, **auth, "Origin": f"http://localhost:{handle.port}"}
        )
        assert ok.status_code == 200 and ok.headers.get("mcp-session-id")
        # the token is checked on every path, not only /mcp
        assert http.get(f"http://127.0.0.1:{handle.port}/", headers=ACCEPT).status_code == 401


def _outward_address() -> str | None:
    """An address of this machine that is not loopback (None when it has none)."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
        address = s.getsockname()[0]
        if not address.startswith("127."):
            return str(address)
    for addrs in psutil.net_if_addrs().values():
        for a in addrs:
            if a.family == socket.AF_INET and not a.address.startswith("127."):
                return str(a.address)
    return None


def test_not_reachable_on_other_addresses_unless_configured(served):
    address = _outward_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address to try")
    ws, handle = served()
    with socket.socket() as s:
        s.settimeout(5)
        assert s.connect_ex((address, handle.port)) != 0
    # configured: served there, and only with that Host
    wide = ws.serve_mcp_http(host=address)
    with httpx.Client(timeout=30) as http:
        r = http.post(wide.url, json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {wide.token}"})
        assert r.status_code == 200
    wide.stop()


def _rss() -> int:
    return int(psutil.Process().memory_info().rss)


def test_a_thousand_hostile_requests_get_clean_errors_and_the_server_keeps_serving(served):
    _ws, handle = served(max_body_bytes=256 * 1024)
    auth = {"Authorization": f"Bearer {handle.token}"}
    statuses: dict[int, int] = {}

    def note(r: httpx.Response) -> None:
        statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
        assert r.status_code < 500 or r.status_code == 503, (r.status_code, r.text[:200])
        assert "Traceback" not in r.text and str(Path.cwd()) not in r.text

    with httpx.Client(timeout=60, limits=httpx.Limits(max_connections=8)) as http:
        first = http.post(handle.url, json=INIT, headers={**ACCEPT, **auth})
        other_session = first.headers["mcp-session-id"]
        assert http.delete(
            handle.url, headers={**ACCEPT, **auth, "mcp-session-id": other_session}
        ).status_code in (
            200,
            204,
        )
        base = _rss()
        huge = b"[" + b"1," * (200 * 1024) + b"1]"  # over the 256 KiB limit
        junk = [
            lambda i: http.post(
                handle.url, content=b"{not json" + bytes([i % 256]), headers={**ACCEPT, **auth}
            ),
            lambda i: http.post(
                handle.url, content=json.dumps({"jsonrpc": "2.0", "id": i}), headers={**ACCEPT, **auth}
            ),
            lambda i: http.post(handle.url, content=b"<xml/>", headers={**auth, "Content-Type": "text/xml"}),
            lambda i: http.post(handle.url, json=[INIT] * 3, headers={**ACCEPT, **auth}),
            lambda i: http.post(
                handle.url,
                json={"jsonrpc": "2.0", "id": i, "method": "tools/call"},
                headers={**ACCEPT, **auth, "mcp-session-id": other_session},
            ),  # replayed, ended
            lambda i: http.post(
                handle.url,
                json={"jsonrpc": "2.0", "id": i, "method": "tools/list"},
                headers={**ACCEPT, **auth, "mcp-session-id": os.urandom(16).hex()},
            ),
            lambda i: http.get(
                handle.url,
                headers={**auth, "Accept": "text/event-stream", "mcp-session-id": "../../etc/passwd"},
            ),
            lambda i: http.post(
                handle.url,
                json={"jsonrpc": "2.0", "id": i, "method": "x" * 5000},
                headers={**ACCEPT, **auth, "mcp-protocol-version": "2026-07-28"},
            ),
            lambda i: http.put(handle.url, content=b"x", headers=auth),
            lambda i: (
                http.post(handle.url, content=huge, headers={**ACCEPT, **auth})
                if i % 20 == 9
                else http.post(handle.url, content=b"\xff\xfe\x00", headers={**ACCEPT, **auth})
            ),
        ]
        # eight at a time: each request waits ~40 ms for the client's delayed ACK on this machine
        with ThreadPoolExecutor(8) as pool:
            for response in pool.map(lambda i: junk[i % len(junk)](i), range(1000)):
                note(response)
        grown = _rss() - base
        assert statuses.get(413, 0) >= 10
        assert grown < 100 * 1024 * 1024, f"memory grew by {grown / 1e6:.0f} MB"

    async def body() -> str:
        async with connect(handle) as c:
            return text(await c.call_tool("workspace_read_file", {"path": "a.txt"}))

    assert "alpha" in run(body)  # still serving


# --- two clients --------------------------------------------------------------------------------


def test_two_clients_attribution_read_records_and_jobs(served, workdir):
    ws, handle = served(tools={"require_read_before_write": True})

    async def body() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with connect(handle, name="agent-a") as a, connect(handle, name="agent-b") as b:
            await a.call_tool("workspace_read_file", {"path": "a.txt"})
            # b has not read the file: its overwrite is refused, while a's goes through
            out["b_edit"] = await b.call_tool(
                "workspace_write_file", {"path": "a.txt", "content": "from b\n"}
            )
            out["a_edit"] = await a.call_tool(
                "workspace_write_file", {"path": "a.txt", "content": "from a\n"}
            )
            started = text(
                await a.call_tool("workspace_execute_command", {"command": "sleep 30", "background": True})
            )
            job = re.search(r"job (job-[\w-]+)", started)[1]
            out["job"] = job
            out["b_status"] = text(await b.call_tool("workspace_job_status", {"id": job}))
            out["b_cancel"] = text(await b.call_tool("workspace_job_cancel", {"id": job}))
            out["b_list"] = text(await b.call_tool("workspace_job_status", {}))
            out["a_status"] = text(await a.call_tool("workspace_job_status", {"id": job}))
            shared = text(
                await a.call_tool(
                    "workspace_execute_command",
                    {"command": "echo shared-out", "background": True, "shared": True},
                )
            )
            out["shared"] = re.search(r"job (job-[\w-]+)", shared)[1]
            out["b_shared"] = text(
                await b.call_tool("workspace_job_status", {"id": out["shared"], "wait_s": 20})
            )
            out["a_cancel"] = text(await a.call_tool("workspace_job_cancel", {"id": job}))
        return out

    out = run(body)
    assert out["b_edit"].is_error and "read" in text(out["b_edit"]).lower()
    assert not out["a_edit"].is_error
    assert (workdir / "a.txt").read_text() == "from a\n"
    assert out["b_status"].startswith(f'No job "{out["job"]}" of yours')
    assert out["b_cancel"].startswith("No job")
    assert out["job"] not in out["b_list"]
    assert (
        out["a_status"].startswith(f"Job {out['job']} (command, PID") and ": running after" in out["a_status"]
    )
    assert "shared-out" in out["b_shared"] and ": finished" in out["b_shared"]
    assert out["a_cancel"].startswith(f"Cancelled job {out['job']}")
    callers = {
        (e.tool_name, (client_label(e.request_context) or "").split(" ")[0])
        for e in tool_activity(ws).recent()
        if e.kind == "finished" and e.tool_name == "workspace_write_file"
    }
    assert callers == {("workspace_write_file", "agent-a"), ("workspace_write_file", "agent-b")}


def test_background_processes_belong_to_the_client_that_started_them(served):
    """An outside client sees, reads and kills only its own background processes (and those of
    shared jobs): another client's PID, or the notebook user's, gets the very answer of a PID that
    does not exist. The workspace's own (in-process) tools still see every process."""
    ws, handle = served()
    tools = {t.name: t for t in ws.tools()}
    mine = tools["workspace_execute_command"].run(
        {"command": "echo user-out; sleep 46.25", "background": True}
    )
    user_pid = int(re.search(r"PID: (\d+)", mine)[1])
    missing = 4_194_999  # above the kernel's largest pid: no process has it

    def same(answer: str, pid: int, reference: str) -> bool:
        return answer.replace(str(pid), "N") == reference.replace(str(missing), "N")

    async def body() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with connect(handle, name="agent-a") as a, connect(handle, name="agent-b") as b:
            started = text(
                await a.call_tool(
                    "workspace_execute_command", {"command": "echo a-out; sleep 45.75", "background": True}
                )
            )
            pid = out["pid"] = int(re.search(r"PID: (\d+)", started)[1])
            shared = text(
                await a.call_tool(
                    "workspace_execute_command",
                    {"command": "echo shared-out; sleep 44.5", "background": True, "shared": True},
                )
            )
            out["shared_pid"] = int(re.search(r"PID: (\d+)", shared)[1])
            await wait_for_output(a, pid, "a-out")
            for who, c in (("a", a), ("b", b)):
                out[f"{who}_list"] = text(await c.call_tool("workspace_list_processes", {}))
            for target in ("pid", "user", "missing"):
                number = {"pid": pid, "user": user_pid, "missing": missing}[target]
                out[f"b_output_{target}"] = text(
                    await b.call_tool("workspace_get_process_output", {"pid": number})
                )
                out[f"b_kill_{target}"] = text(await b.call_tool("workspace_kill_process", {"pid": number}))
            out["a_output_user"] = text(await a.call_tool("workspace_get_process_output", {"pid": user_pid}))
            out["a_kill_user"] = text(await a.call_tool("workspace_kill_process", {"pid": user_pid}))
            out["alive_after_b"] = psutil.pid_exists(pid) and psutil.pid_exists(user_pid)
            out["b_output_shared"] = text(
                await b.call_tool("workspace_get_process_output", {"pid": out["shared_pid"]})
            )
            out["a_output"] = text(await a.call_tool("workspace_get_process_output", {"pid": pid}))
            out["inprocess_list"] = tools["workspace_list_processes"].run({})
            out["a_kill"] = text(await a.call_tool("workspace_kill_process", {"pid": pid}))
        return out

    async def wait_for_output(client: Client, pid: int, marker: str) -> None:
        for _ in range(200):
            if marker in text(await client.call_tool("workspace_get_process_output", {"pid": pid})):
                return
            await anyio.sleep(0.1)
        raise AssertionError(f"{marker} never appeared")

    out = run(body)
    pid, shared_pid = out["pid"], out["shared_pid"]
    # b: a's process and the user's are not listed, and answer as a missing pid does
    assert f"\n{pid} " not in out["b_list"] and f"\n{user_pid} " not in out["b_list"]
    assert f"\n{shared_pid} " in out["b_list"]  # a shared job's process is everyone's
    assert out["b_output_missing"] == f"No background process found with PID {missing}."
    assert out["b_kill_missing"] == f"Process {missing} was not found or had already exited."
    for target, number in (("pid", pid), ("user", user_pid)):
        assert same(out[f"b_output_{target}"], number, out["b_output_missing"]), out[f"b_output_{target}"]
        assert same(out[f"b_kill_{target}"], number, out["b_kill_missing"]), out[f"b_kill_{target}"]
    assert same(out["a_output_user"], user_pid, out["b_output_missing"])
    assert same(out["a_kill_user"], user_pid, out["b_kill_missing"])
    assert out["alive_after_b"]  # nobody else's kill reached them
    assert "shared-out" in out["b_output_shared"]
    # a: its own (and the shared one), not the user's; it reads and kills its own
    assert f"\n{pid} " in out["a_list"] and f"\n{user_pid} " not in out["a_list"]
    assert "a-out" in out["a_output"]
    assert out["a_kill"].startswith(f"Process {pid} has been killed.")
    # the workspace's own tools see all three
    for number in (pid, user_pid, shared_pid):
        assert f"\n{number} " in out["inprocess_list"], out["inprocess_list"]
    assert "user-out" in tools["workspace_get_process_output"].run({"pid": user_pid})
    assert (
        tools["workspace_kill_process"]
        .run({"pid": user_pid})
        .startswith(f"Process {user_pid} has been killed.")
    )


# --- jobs ----------------------------------------------------------------------------------------

LONG = "for i in $(seq 1 600); do echo line $i; sleep 0.1; done"  # 60 s


def _pids_running(marker: str) -> list[int]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            if marker in " ".join(p.info["cmdline"] or ()):
                found.append(p.pid)
    return found


def test_a_long_job_is_polled_tailed_cancelled_and_survives_a_reconnect(served):
    _ws, handle = served()

    async def start() -> str:
        async with connect(handle, name="runner", mode="auto") as c:
            return text(await c.call_tool("workspace_execute_command", {"command": LONG, "background": True}))

    started = run(start)
    job = re.search(r"job (job-[\w-]+)", started)[1]
    pid = int(re.search(r"PID: (\d+)", started)[1])
    assert psutil.pid_exists(pid)
    time.sleep(2.5)

    async def poll() -> tuple[str, str]:
        async with connect(handle, name="runner", mode="legacy") as c:  # a new connection, same client
            status = text(await c.call_tool("workspace_job_status", {"id": job, "tail": 3}))
            cancelled = text(await c.call_tool("workspace_job_cancel", {"id": job}))
            return status, cancelled

    status, cancelled = run(poll)
    lines = [ln for ln in status.split("\n\n")[1].splitlines() if ln.startswith("line ")]
    assert len(lines) == 3, status
    numbers = [int(ln.split()[1]) for ln in lines]
    assert numbers == list(range(numbers[0], numbers[0] + 3)) and numbers[0] >= 5, status
    assert "showing last 3" in status
    assert "Cancelled job" in cancelled and ": cancelled after" in cancelled
    wait_for(lambda: not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, 10)


def test_keep_running_turns_a_timed_out_run_into_a_job(served):
    _ws, handle = served()

    async def body() -> tuple[str, str]:
        async with connect(handle) as c:
            kept = text(
                await c.call_tool(
                    "workspace_execute_command",
                    {"command": "sleep 1.5; echo finally", "timeout": 0.5, "keep_running": True},
                )
            )
            job = re.search(r"job (job-[\w-]+)", kept)[1]
            done = text(await c.call_tool("workspace_job_status", {"id": job, "wait_s": 30}))
            return kept, done

    kept, done = run(body)
    assert kept.startswith("Still running after 0.5s")
    assert "finally" in done and "Exit code: 0" in done


def test_destroy_leaves_no_job_process_and_no_server(served):
    ws, handle = served()
    tools = {t.name: t for t in ws.tools()}
    started = tools["workspace_execute_command"].run({"command": "sleep 77.25", "background": True})
    pid = int(re.search(r"PID: (\d+)", started)[1])
    assert _pids_running("sleep 77.25")
    ws.destroy()
    wait_for(lambda: not _pids_running("sleep 77.25"), 15)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert not handle.running
    assert not [t for t in threading.enumerate() if t.name.startswith("ws-jupyter-mcp-http")]


def test_cancelling_a_call_kills_its_command(served):
    _ws, handle = served()

    async def body() -> None:
        async with connect(handle, mode="legacy") as c:
            with anyio.move_on_after(3):
                await c.call_tool("workspace_execute_command", {"command": "sleep 88.5"})
            await anyio.sleep(0.1)

    run(body)
    wait_for(lambda: not _pids_running("sleep 88.5"), 15)


# --- approvals without a notebook, progress, tools that come and go --------------------------------


def test_approval_by_elicitation_or_a_clear_refusal_over_http(served, workdir):
    _ws, handle = served(isolation="none")  # commands on the host: they need approval
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> Any:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async def body() -> tuple[Any, Any]:
        async with connect(handle, elicitation_callback=elicit) as c:
            approved = await c.call_tool("workspace_execute_command", {"command": "echo asked-the-client"})
        async with connect(handle, name="no-elicitation") as c:
            refused = await c.call_tool("workspace_execute_command", {"command": "touch refused"})
        return approved, refused

    approved, refused = run(body)
    assert text(approved) == "asked-the-client" and len(asked) == 1 and "echo asked-the-client" in asked[0]
    assert refused.is_error and "requires approval" in text(refused) and "%ws mcp serve" in text(refused)
    assert "--approve-all" in text(refused) and not (workdir / "refused").exists()


def test_progress_notifications_over_http(served):
    _ws, handle = served()
    seen: list[Any] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        seen.append((p, total, message))

    async def body() -> Any:
        async with connect(handle) as c:
            return await c.call_tool(
                "workspace_execute_command",
                {"command": "sleep 2.5; echo done", "timeout": 60},
                progress_callback=progress,
            )

    assert text(run(body)) == "done"
    assert len(seen) >= 2 and all(total == 60 for _, total, _ in seen)


def test_user_data_tools_follow_sharing_and_the_allow_list(served):
    ws, gated = served()
    allowed = ws.serve_mcp_http(allow="user-data")
    assert "user_variables_list" not in allowed.tools  # nothing shared yet
    ws.share({"region": ["north", "south"]}, name="sales_sample")

    async def body(handle: Any) -> tuple[set[str], str]:
        async with connect(handle) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            listed = await c.call_tool("user_variables_list", {})
            return names, text(listed)

    names, listed = run(lambda: body(allowed))
    assert {"user_variables_list", "user_variable_inspect"} <= names and "sales_sample" in listed
    names, listed = run(lambda: body(gated))
    assert not any(n.startswith("user_variable") for n in names)
    assert "Unknown tool 'user_variables_list'" in listed


def test_a_code_job_holds_its_kernel_and_is_interrupted_by_cancel(served):
    ws, _handle = served()
    tools = {t.name: t for t in ws.tools()}
    code = tools["workspace_execute_code"]
    assert code.run({"code": "kept = 41"}).startswith("(no output)")
    started = code.run(
        {
            "code": "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.1)",
            "background": True,
        }
    )
    job = re.search(r"Started job (job-[\w-]+), a run on kernel \"default\"", started)[1]
    assert "other runs on it wait behind it" in started
    assert wait_for(lambda: "tick 3" in tools["workspace_job_status"].run({"id": job}), 60)
    other = {}
    waiter = threading.Thread(target=lambda: other.setdefault("out", code.run({"code": "kept + 1"})))
    waiter.start()
    time.sleep(1)
    assert "out" not in other  # queued behind the job
    cancelled = tools["workspace_job_cancel"].run({"id": job})
    assert cancelled.startswith(f"Cancelled job {job}") and "cancelled after" in cancelled
    waiter.join(60)
    assert other["out"].startswith("Out[") and "]: 42" in other["out"]  # the kernel kept its state
    assert f"was busy with job {job}: this run waited behind it" in other["out"]
    elsewhere = code.run({"code": "1 + 1", "kernel": "side"})
    assert "]: 2" in elsewhere and "busy" not in elsewhere


def test_running_jobs_are_bounded(served, monkeypatch):
    from ws_jupyter.tools import jobs as jobs_module

    monkeypatch.setattr(jobs_module, "MAX_RUNNING", 3)
    ws, _handle = served()
    run_command = {t.name: t for t in ws.tools()}["workspace_execute_command"]
    started = [run_command.run({"command": "sleep 30", "background": True}) for _ in range(3)]
    assert all(s.startswith("Started background process") for s in started)
    refused = run_command.run({"command": "sleep 30", "background": True})
    assert refused.startswith("Error: Too many jobs running (3, the most at once)")
    assert len(ws.jobs()) == 3
