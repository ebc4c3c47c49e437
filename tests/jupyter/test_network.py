"""Network allow mode in Jupyter: ``%ws init --allow``, the dashboard's Network tab (NetworkLog),
``%ws run``'s note about denied attempts, ``%ws info``'s network row. Real bubblewrap sandboxes,
with a 127.0.0.1 server in the place of the internet (``fake_internet``)."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter import LocalFilesystem, LocalSandbox, Workspace
from ws_jupyter.sandbox.network.testing import fake_internet

from ..sandbox.conftest import requires_bwrap

pytestmark = [requires_bwrap, pytest.mark.bwrap]


@pytest.fixture(scope="module")
def site() -> Iterator[int]:
    """An HTTP server on 127.0.0.1 that the proxy knows as site.test (and other.test)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"hello from site.test\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with fake_internet({"site.test": "127.0.0.1", "other.test": "127.0.0.1"}):
        yield server.server_address[1]
    server.shutdown()
    server.server_close()


def fetch(host: str, port: int) -> str:
    return (
        'python -c "import urllib.request, sys\n'
        f"try: print(urllib.request.urlopen('http://{host}:{port}/').read().decode().strip())\n"
        "except Exception as e: print('failed:', e)\""
    )


@pytest.fixture
def net_ws(site: int, workdir: Path) -> Iterator[Workspace]:
    ws = Workspace(
        filesystem=LocalFilesystem(str(workdir)),
        sandbox=LocalSandbox(
            working_directory=str(workdir), isolation="bwrap", network=[f"site.test:{site}"]
        ),
        bm25=False,
    )
    ws.init()
    yield ws
    ws.destroy()


def test_the_network_tab_lists_attempts_live_and_escapes_them(net_ws: Workspace, site: int) -> None:
    from ws_jupyter.jupyter.widgets import Dashboard

    sandbox: Any = net_ws.sandbox
    dash = Dashboard(net_ws, interval=0.1)
    try:
        assert dash.tab_names[-1] == "Network" and dash.network is not None
        log = dash.network
        assert log.rows == [] and "No connection attempts yet." in log.table.value
        sandbox.execute_command(fetch("site.test", site) + "; " + fetch("other.test", site))
        deadline = time.monotonic() + 10
        while len(log.rows) < 2 and time.monotonic() < deadline:  # drawn by the widget thread
            time.sleep(0.05)
        assert [(r["allowed"], r["destination"]) for r in log.rows] == [
            (True, f"site.test:{site}"),
            (False, f"other.test:{site}"),
        ]
        meta, html = log.table.value.split("</div>", 1)
        assert f"allow: site.test:{site} · 2 connections logged" in meta
        assert html.index("other.test") < html.index(f"site.test:{site}")  # newest first
        assert "not in the allow-list" in html and "DENIED" in html
        # a hostile TLS server name reaches the table as text only
        sandbox.execute_command(
            'python -c "import socket, ssl\n'
            "s = socket.create_connection(('127.0.0.1', 3128)); "
            f"s.sendall(b'CONNECT site.test:{site} HTTP/1.1\\\\r\\\\n\\\\r\\\\n'); s.recv(100)\n"
            "c = ssl.create_default_context(); c.check_hostname = False; c.verify_mode = ssl.CERT_NONE\n"
            "try: c.wrap_socket(s, server_hostname='x<img src=q onerror=alert(1)>.test')\n"
            'except Exception: pass"'
        )
        log.refresh()
        assert "&lt;img src=q onerror=alert(1)&gt;" in log.table.value
        assert "<img" not in log.table.value
        log.filter.value = True
        assert all(not r["allowed"] for r in log.rows) and len(log.rows) == 2
        html_snapshot, text_snapshot = log.snapshot()
        assert "Network" in html_snapshot and f"other.test:{site}" in text_snapshot
        log.clear()
        assert log.rows == [] and sandbox.egress_log() == []
    finally:
        dash.close()


def test_run_and_info_show_the_network(ip: Any, site: int, workdir: Path) -> None:
    ip.run_line_magic("ws", f"init {workdir} --isolation bwrap --allow site.test:{site} --no-index")
    ws = ip.user_ns["ws"]
    assert ws.sandbox.network.mode == "allow"
    info = ip.run_line_magic("ws", "info")
    assert f"allow: site.test:{site}" in info.text()
    summary = ip.run_line_magic(
        "ws", f"run --quiet python -c \"import urllib.request as u; u.urlopen('http://other.test:{site}/')\""
    )
    assert summary.network_note == f"network: 1 connection to other.test:{site} denied by the allow-list"
    assert summary.text().endswith(summary.network_note)
    assert summary.network_note in summary.html()
    with pytest.raises(Exception, match="needs isolation 'bwrap'"):
        ip.run_line_magic("ws", f"init {workdir} --isolation none --allow site.test")


def test_network_secrets_come_from_the_environment(
    ip: Any, site: int, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WS_TEST_TOKEN", "Bearer from-env-123")
    ip.run_line_magic(
        "ws",
        f"init {workdir} --isolation bwrap --allow site.test:{site} "
        f"--network-secret site.test:Authorization=WS_TEST_TOKEN --no-index",
    )
    config = ip.user_ns["ws"].sandbox.network
    assert [(s.host, s.header, s.value) for s in config.secrets] == [
        ("site.test", "Authorization", "Bearer from-env-123")
    ]
    with pytest.raises(Exception, match="WS_MISSING is not set"):
        ip.run_line_magic(
            "ws", f"init {workdir} --allow site.test --network-secret site.test:X-Key=WS_MISSING --no-index"
        )


def test_the_mcp_command_line_takes_the_network_flags(tmp_path: Path, site: int) -> None:
    import argparse

    from ws_jupyter.cli import _configure_mcp as _configure
    from ws_jupyter.sandbox.network.arguments import network_from_arguments

    parser = argparse.ArgumentParser()
    _configure(parser)
    args = parser.parse_args(
        ["--allow", "pypi.org", "files.pythonhosted.org", "--allow", "*.example.com:8443"]
    )
    config = network_from_arguments(args)
    assert (
        config is not None
        and config.describe() == "allow: pypi.org, files.pythonhosted.org, *.example.com:8443"
    )
    assert network_from_arguments(parser.parse_args([])) is None
    assert network_from_arguments(parser.parse_args(["--network", "full"])).mode == "full"  # type: ignore[union-attr]
    with pytest.raises(Exception, match="need --network allow"):
        network_from_arguments(parser.parse_args(["--network", "none", "--allow", "x.org"]))
    # the real command: a refused allow-list without isolation is one line and exit status 2
    import subprocess
    import sys

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "ws_jupyter",
            "mcp",
            "--dir",
            str(tmp_path),
            "--isolation",
            "none",
            "--allow",
            "x.org",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 2
    assert out.stderr.strip().startswith("ws-jupyter mcp: network='allow' needs isolation 'bwrap'")
    assert len(out.stderr.strip().splitlines()) == 1
