"""``%ws mcp`` (serve, status, stop, bad input) and the agents' jobs in ``%ws ps``, in IPython's
testing shell (the real-kernel test is test_mcp_kernel.py)."""

from __future__ import annotations

import re
import socket
from typing import Any

import pytest
from IPython.core.error import UsageError

from ..helpers import wait_for


def _port(url: str) -> int:
    return int(re.search(r":(\d+)/mcp", url)[1])


def test_mcp_serve_status_stop(ws_ip: Any) -> None:
    assert ws_ip.run_line_magic("ws", "mcp").text().endswith("not serving. Start with `%ws mcp serve`.")
    view = ws_ip.run_line_magic("ws", "mcp serve --allow open-notebook")
    text = view.text()
    url = re.search(r"url: (\S+)", text)[1]
    token = re.search(r"token: (\S+)", text)[1]
    assert url.startswith("http://127.0.0.1:") and len(token) >= 40
    assert (
        f'claude mcp add --transport http ws-jupyter {url} --header "Authorization: Bearer {token}"' in text
    )
    assert "bearer_token_env_var" in text and '"mcpServers"' in text and '"servers"' in text
    assert "allowed groups: open-notebook" in text and "clear it before sharing" in text
    html = view._repr_mimebundle_()["text/html"]
    assert "<script" not in html and token in html
    status = ws_ip.run_line_magic("ws", "mcp status").text()
    assert url in status and "1 running" in status
    assert ws_ip.run_line_magic("ws", "mcp stop").text() == "Stopped 1 MCP server."
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", _port(url))) != 0
    assert ws_ip.run_line_magic("ws", "mcp stop").text() == "No MCP server was running."


def test_mcp_serve_bad_input_is_one_line(ws_ip: Any) -> None:
    with pytest.raises(UsageError, match="Unknown allow group 'everything'"):
        ws_ip.run_line_magic("ws", "mcp serve --allow everything")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        taken = busy.getsockname()[1]
        with pytest.raises(UsageError, match=f"cannot listen on 127.0.0.1:{taken}"):
            ws_ip.run_line_magic("ws", f"mcp serve --port {taken}")
    with pytest.raises(UsageError):
        ws_ip.run_line_magic("ws", "mcp restart")


def test_unload_stops_the_server(ip: Any, ws_dir: Any) -> None:
    ip.run_line_magic("ws", f"init {ws_dir}")
    url = re.search(r"url: (\S+)", ip.run_line_magic("ws", "mcp serve").text())[1]
    ip.run_line_magic("unload_ext", "ws_jupyter")
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", _port(url))) != 0
    ip.run_line_magic("load_ext", "ws_jupyter")  # the fixture unloads it again


def test_ps_lists_the_agents_jobs(ws_ip: Any) -> None:
    ws = ws_ip.user_ns["ws"]
    tools = {t.name: t for t in ws.tools()}
    started = tools["workspace_execute_command"].run(
        {"command": "sleep 30", "background": True}, approved=True
    )
    job = re.search(r"job (job-[\w-]+)", started)[1]
    view = ws_ip.run_line_magic("ws", "ps")
    text = view.text()
    assert "Jobs:" in text and job in text and "running" in text and "sleep 30" in text
    assert job in view._repr_mimebundle_()["text/html"]
    tools["workspace_job_cancel"].run({"id": job})
    assert wait_for(lambda: "cancelled" in ws_ip.run_line_magic("ws", "ps").text(), 10)
    assert job not in ws_ip.run_line_magic("ws", "ps --running").text()
