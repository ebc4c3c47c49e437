"""``%ws mcp serve`` in a real ws-jupyter kernel, and the official ``mcp`` client over Streamable
HTTP from outside it: the notebook's workspace is what the client gets, its calls show in the
kernel's ToolActivity widget with the client's name, an approval is answered in the notebook
(the widget's Approve button), a cancelled call kills its command, and the server goes with
``%ws mcp stop``, ``%unload_ext`` and the kernel."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import psutil
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ..helpers import wait_for
from .test_kernel import execute, streamed

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

SETUP = """
from ws_jupyter import Workspace, LocalFilesystem, LocalSandbox
from ws_jupyter.jupyter.widgets import ToolActivity
import json
ws = Workspace(
    filesystem=LocalFilesystem({d!r}),
    sandbox=LocalSandbox(working_directory={d!r}),
    bm25=False,
    tools={{"workspace_execute_command": {{"require_approval": True}}}},
)
ws.init()
%ws use ws
activity = ToolActivity(ws)
"""


def _result_text(messages: list[dict[str, Any]]) -> str:
    return "".join(
        m["content"]["data"].get("text/plain", "")
        for m in messages
        if m["msg_type"] in ("execute_result", "display_data")
    )


def _ok(kc: Any, code: str, timeout: float = 120) -> list[dict[str, Any]]:
    reply, messages = execute(kc, code, timeout=timeout)
    assert reply["content"]["status"] == "ok", (code, reply["content"], streamed(messages, "stderr"))
    return messages


def _serve(kc: Any) -> tuple[str, str]:
    shown = _result_text(_ok(kc, "%ws mcp serve"))
    url = re.search(r"url: (http://127\.0\.0\.1:\d+/mcp)", shown)
    token = re.search(r"token: (\S+)", shown)
    assert url and token, shown
    assert "claude mcp add --transport http ws-jupyter" in shown and '"mcpServers"' in shown
    return url[1], token[1]


def _call(url: str, token: str, body: Any, name: str = "outside-agent") -> Any:
    async def main() -> Any:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http,
            Client(
                streamable_http_client(url, http_client=http),
                mode="legacy",
                client_info=types.Implementation(name=name, version="0.1"),
            ) as client,
        ):
            with anyio.fail_after(120):
                return await body(client)

    return anyio.run(main)


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None) is not None)


def _port_closed(url: str) -> bool:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def _running(marker: str) -> bool:
    for p in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            if marker in " ".join(p.info["cmdline"] or ()) and p.status() != psutil.STATUS_ZOMBIE:
                return True
    return False


def _approve_in_notebook(kc: Any) -> str:
    """A cell that waits for the call to be pending, then clicks the widget's Approve button."""
    code = """
import time
deadline = time.monotonic() + 60
while not activity.feed.pending() and time.monotonic() < deadline:
    time.sleep(0.05)
cid = activity.feed.pending()[0].call_id
activity.refresh()
row = activity._pending_rows[cid]
print(json.dumps([c for c in activity.calls if c["call_id"] == cid][0]["client"]))
[b for b in row.children if getattr(b, "description", "") == "Approve"][0].click()
"""
    return streamed(_ok(kc, "import json\n" + code))


def test_mcp_serve_in_a_kernel(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    km, kc = kernel
    d = tmp_path / "project"
    d.mkdir()
    (d / "notes.txt").write_text("written in the notebook's folder\n")
    _ok(kc, SETUP.format(d=str(d)))
    url, token = _serve(kc)

    async def look(c: Client) -> tuple[Any, ...]:
        tools = await c.list_tools()
        prompts = await c.list_prompts()
        resources = await c.list_resources()
        read = await c.call_tool("workspace_read_file", {"path": "notes.txt"})
        return tools, prompts, resources, read

    tools, prompts, resources, read = _call(url, token, look)
    names = {t.name for t in tools.tools}
    assert {"workspace_read_file", "workspace_execute_command", "workspace_job_status"} <= names
    assert not names & {"open_notebook_read", "user_variables_list"}  # not allowed by default
    assert prompts.prompts == []
    assert "workspace://notes.txt" in {str(r.uri) for r in resources.resources}
    assert "written in the notebook's folder" in _text(read)

    # the call is in the kernel's activity widget, with the client's name and session
    shown = streamed(
        _ok(kc, "activity.refresh()\nprint(json.dumps([[c['tool'], c['client']] for c in activity.calls]))")
    )
    rows = json.loads(shown)
    assert rows and rows[-1][0] == "workspace_read_file"
    assert re.fullmatch(r"outside-agent \(session [0-9a-f]{8}\)", rows[-1][1]), rows

    # an approval asked in the notebook, answered with the widget's Approve button
    box: dict[str, Any] = {}

    def approved_call() -> None:
        box["result"] = _call(
            url, token, lambda c: c.call_tool("workspace_execute_command", {"command": "echo approved-run"})
        )

    t = threading.Thread(target=approved_call)
    t.start()
    client_shown = _approve_in_notebook(kc)
    t.join(120)
    assert "outside-agent (session" in client_shown
    assert _text(box["result"]).strip() == "approved-run"

    # a cancelled call kills its command
    seen = threading.Event()

    def cancelled_call() -> None:
        async def body(c: Client) -> None:
            async def call() -> None:
                box["cancelled"] = await c.call_tool("workspace_execute_command", {"command": "sleep 93.25"})

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await anyio.to_thread.run_sync(seen.wait, 60)
                tg.cancel_scope.cancel()  # the client gives up on the call

        _call(url, token, body)

    t = threading.Thread(target=cancelled_call)
    t.start()
    _approve_in_notebook(kc)
    assert wait_for(lambda: _running("sleep 93.25"), 30)
    seen.set()
    t.join(120)
    assert "cancelled" not in box
    assert wait_for(lambda: not _running("sleep 93.25"), 30)

    # %ws mcp stop frees the port; %unload_ext stops a second server and leaves no thread
    assert "Stopped 1 MCP server" in _result_text(_ok(kc, "%ws mcp stop"))
    assert _port_closed(url)
    url2, _ = _serve(kc)
    threads = streamed(
        _ok(
            kc,
            "%unload_ext ws_jupyter\nimport threading\n"
            "print([t.name for t in threading.enumerate() if t.name.startswith('ws-jupyter-mcp')])",
        )
    )
    assert threads.strip() == "[]"
    assert _port_closed(url2)

    # and a server goes with its kernel
    _ok(kc, "%load_ext ws_jupyter\n%ws use ws")
    url3, _ = _serve(kc)
    km.shutdown_kernel(now=False)
    assert wait_for(lambda: _port_closed(url3), 30)
