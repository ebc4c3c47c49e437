"""Network ``allow`` mode end to end: real bubblewrap sandboxes, real tools inside, the test
internet outside (servers on 127.0.0.1 that the proxy resolves test names to).

What a command sees: the allowed hosts over HTTP and HTTPS (curl, Python, pip), a clear refusal
for the rest (and a line about it in its result), no route around the proxy, no secret anywhere;
kernels get the same network; nothing outlives the sandbox.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import LocalFilesystem, LocalSandbox, Workspace
from ws_jupyter.errors import WorkspaceConfigError

from ...tools.conftest import box
from ..conftest import requires_bwrap
from .conftest import PACKAGE, PACKAGE_VALUE, Internet

pytestmark = [requires_bwrap, pytest.mark.bwrap]

SECRET = "Bearer sk-live-" + "Q" * 30
CURL = shutil.which("curl")


@pytest.fixture(scope="module")
def sandbox(internet: Internet, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSandbox]:
    root = Path(os.path.realpath(tmp_path_factory.mktemp("net-sandbox")))
    shutil.copy(internet.ca_file, root / "test-ca.pem")
    sb = LocalSandbox(
        working_directory=str(root),
        isolation="bwrap",
        timeout=60,
        network={
            "allow": [
                f"pypi.test:{internet.http_port}",
                f"pypi.test:{internet.https_port}",
                f"api.test:{internet.https_port}",
                "rebind.test:*",
            ],
            "secrets": {"api.test": {"header": "Authorization", "value": SECRET}},
        },
    )
    sb.start()
    yield sb
    sb.destroy()


def run(sb: LocalSandbox, script: str, **kw: object) -> dict[str, object]:
    """Runs a Python script in the sandbox; it prints one JSON object."""
    (Path(sb.working_directory) / "probe.py").write_text(textwrap.dedent(script))
    result = sb.execute_command("python probe.py", **kw)  # type: ignore[arg-type]
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.skipif(CURL is None, reason="curl is not installed")
def test_curl_reaches_allowed_hosts_over_http_and_https(sandbox: LocalSandbox, internet: Internet) -> None:
    plain = sandbox.execute_command(f"curl -sS {internet.http('pypi.test')}")
    assert plain.exit_code == 0 and plain.stdout == f"host=pypi.test:{internet.http_port} auth=absent\n"
    secure = sandbox.execute_command(f"curl -sS --cacert test-ca.pem {internet.https('pypi.test')}")
    assert secure.exit_code == 0, secure.stderr
    assert secure.stdout == f"host=pypi.test:{internet.https_port} auth=absent\n"
    assert plain.network_note == secure.network_note == ""
    events = sandbox.egress_log()[-2:]
    assert [(e.method, e.host, e.allowed) for e in events] == [
        ("GET", "pypi.test", True),
        ("CONNECT", "pypi.test", True),
    ]


@pytest.mark.skipif(CURL is None, reason="curl is not installed")
def test_a_denied_host_fails_clearly_and_the_result_says_so(
    sandbox: LocalSandbox, internet: Internet
) -> None:
    result = sandbox.execute_command(
        f"curl -sS {internet.http('other.test')}; curl -sS {internet.http('other.test')}; "
        f"curl -sS --cacert test-ca.pem {internet.https('rebind.test')}"
    )
    assert result.stdout.count("refused: not in the allow-list") == 2
    assert "403" in result.stderr  # curl: CONNECT tunnel failed, response 403
    assert result.network_note == (
        f"network: 2 connections to other.test:{internet.http_port} denied by the allow-list; "
        f"1 connection to rebind.test:{internet.https_port} refused (resolves to a non-public "
        "address 169.254.169.254)"
    )
    # the agent reads the same line in the tool's answer
    sb = LocalSandbox(working_directory=sandbox.working_directory, isolation="bwrap", network=["pypi.test"])
    ws = Workspace(filesystem=LocalFilesystem(sandbox.working_directory), sandbox=sb, bm25=False)
    try:
        text = box(ws)[T.SANDBOX.EXECUTE_COMMAND].run({"command": f"curl -sS {internet.http('other.test')}"})
        assert text == (
            f"ws-jupyter sandbox proxy: connection other.test:{internet.http_port} refused: not in the "
            f"allow-list\n\nnetwork: 1 connection to other.test:{internet.http_port} denied by the allow-list"
        )
        tools = box(ws)  # a background process's output says it too
        started = tools[T.SANDBOX.EXECUTE_COMMAND].run(
            {"command": f"curl -sS {internet.http('other.test')}", "background": True}
        )
        found = re.match(r"Started background process \(PID: (\d+)\)", started)
        assert found, started
        pid = int(found.group(1))
        output = tools[T.SANDBOX.GET_PROCESS_OUTPUT].run({"pid": pid, "wait": True})
        assert output.endswith(
            f"network: 1 connection to other.test:{internet.http_port} denied by the allow-list"
        )
    finally:
        ws.destroy()


def test_python_tools_use_the_proxy_and_nothing_goes_around_it(
    sandbox: LocalSandbox, internet: Internet
) -> None:
    since = len(sandbox.egress_log())
    out = run(
        sandbox,
        f"""
        import json, os, socket, ssl, urllib.request, errno
        res = {{}}
        ctx = ssl.create_default_context(cafile="test-ca.pem")
        res["urllib_https"] = urllib.request.urlopen("{internet.https("pypi.test")}", context=ctx).read().decode()

        def attempt(name, fn):
            try:
                fn()
                res[name] = "CONNECTED"
            except Exception as exc:
                res[name] = type(exc).__name__ + ": " + str(exc)[:120]

        # no proxy variables: no name resolution, no route
        for k in [k for k in os.environ if k.lower().endswith("_proxy")]:
            del os.environ[k]
        attempt("no_proxy_urllib", lambda: urllib.request.urlopen("{internet.http("pypi.test")}", timeout=5))
        attempt("dns", lambda: socket.getaddrinfo("pypi.test", 80))
        attempt("dns_public", lambda: socket.getaddrinfo("example.com", 443))
        attempt("ip_literal", lambda: socket.create_connection(("93.184.216.34", 80), timeout=5))
        attempt("host_loopback", lambda: socket.create_connection(("127.0.0.1", {internet.http_port}), timeout=5))
        attempt("ipv6_loopback", lambda: socket.create_connection(("::1", {internet.http_port}), timeout=5))
        attempt("udp_dns", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53)))

        # through the proxy, on purpose: IP literals, loopback, [::1], rebinding
        def via_proxy(target):
            s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
            s.sendall(("CONNECT " + target + " HTTP/1.1\\r\\n\\r\\n").encode())
            return s.recv(200).split(b"\\r\\n")[0].decode()
        for target in ["127.0.0.1:{internet.http_port}", "127.0.0.1:3128", "[::1]:{internet.http_port}",
                       "169.254.169.254:80", "rebind.test:443", "pypi.test"]:
            res["proxy " + target] = via_proxy(target)
        s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
        s.sendall(b"CONNECT pypi.test:{internet.https_port} HTTP/1.1\\r\\nHost: other.test\\r\\n\\r\\n")
        res["host_mismatch"] = s.recv(200).split(b"\\r\\n")[0].decode()
        s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
        s.sendall(b"CONNECT " + b"x" * 70000 + b" HTTP/1.1\\r\\n\\r\\n")
        res["over_long"] = s.recv(200).split(b"\\r\\n")[0].decode()
        # the proxy's socket and bridge cannot be replaced for later commands
        net = [d for d in os.environ.get("SSL_CERT_FILE", "").split("/") if d]
        folder = os.path.dirname(os.environ["SSL_CERT_FILE"])
        attempt("replace_socket", lambda: os.unlink(os.path.join(folder, "proxy.sock")))
        attempt("replace_bridge", lambda: open(os.path.join(folder, "bridge.py"), "a").write("x"))
        print(json.dumps(res))
        """,
    )
    assert out["urllib_https"] == f"host=pypi.test:{internet.https_port} auth=absent\n"
    assert out["no_proxy_urllib"].startswith("URLError")  # the name does not resolve inside
    assert out["dns"].startswith("gaierror") and out["dns_public"].startswith("gaierror")
    for name in ("ip_literal", "udp_dns"):
        assert "Network is unreachable" in out[name], out[name]
    for name in ("host_loopback", "ipv6_loopback"):  # the sandbox's own loopback: nothing there
        assert out[name].startswith(("ConnectionRefusedError", "OSError")), out[name]
    assert (
        out[f"proxy 127.0.0.1:{internet.http_port}"] == "HTTP/1.1 403 Not in the sandbox network allow-list"
    )
    assert out["proxy 127.0.0.1:3128"] == "HTTP/1.1 403 Not in the sandbox network allow-list"
    assert out[f"proxy [::1]:{internet.http_port}"] == "HTTP/1.1 403 Not in the sandbox network allow-list"
    assert out["proxy 169.254.169.254:80"] == "HTTP/1.1 403 Not in the sandbox network allow-list"
    assert out["proxy rebind.test:443"] == "HTTP/1.1 403 Private address refused by the sandbox proxy"
    assert out["proxy pypi.test"] == "HTTP/1.1 400 Bad CONNECT target"
    assert out["host_mismatch"] == "HTTP/1.1 400 Host header differs from the CONNECT target"
    assert out["over_long"] == "HTTP/1.1 400 Bad request to the sandbox proxy"
    assert out["replace_socket"].startswith("OSError") and "Read-only file system" in out["replace_socket"]
    assert out["replace_bridge"].startswith("OSError") and "Read-only file system" in out["replace_bridge"]
    # everything that reached the proxy is in the log, refused
    logged = sandbox.egress_log()[since:]
    assert [e.allowed for e in logged] == [True] + [False] * 8
    assert {e.reason for e in logged[1:]} >= {
        "not in the allow-list",
        "resolves to a non-public address 169.254.169.254",
        "Host header differs from the CONNECT target",
        "malformed CONNECT target: missing port",
    }


def test_the_secret_reaches_the_upstream_and_is_nowhere_inside(
    sandbox: LocalSandbox, internet: Internet
) -> None:
    before = len(internet.seen)
    out = run(
        sandbox,
        f"""
        import json, os, urllib.request
        res = {{}}
        # SSL_CERT_FILE is the sandbox bundle (system CAs + the sandbox CA): no option needed
        res["reply"] = urllib.request.urlopen("{internet.https("api.test")}").read().decode()
        res["bundle"] = os.environ.get("SSL_CERT_FILE", "")
        needle = bytes.fromhex({SECRET[-20:][::-1].encode().hex()!r})[::-1]  # not in this file as such
        found = []
        places = ["/proc", "/tmp", os.environ["HOME"], os.environ["TMPDIR"], os.getcwd(), "/etc",
                  os.path.dirname(os.environ["SSL_CERT_FILE"])]
        if needle in b"\\0".join(k.encode() + b"=" + v.encode() for k, v in os.environ.items()):
            found.append("environment")
        for top in places:
            for root, dirs, files in os.walk(top):
                if root == "/proc":
                    dirs[:] = [d for d in dirs if d.isdigit() or d == "self"]
                for name in files:
                    path = os.path.join(root, name)
                    if root.startswith("/proc/") and name not in ("environ", "cmdline"):
                        continue
                    try:
                        with open(path, "rb") as f:
                            if needle in f.read(4 << 20):
                                found.append(path)
                    except OSError:
                        pass
        res["found"] = found
        print(json.dumps(res))
        """,
    )
    assert out["reply"] == f"host=api.test:{internet.https_port} auth=present\n"
    assert out["bundle"].endswith("/network/ca-bundle.pem")
    assert out["found"] == [], out["found"]
    assert [r["authorization"] for r in internet.seen[before:]] == [SECRET]
    assert sandbox.egress_log()[-1].secret_header == "Authorization"
    instructions = sandbox.get_instructions()  # what the model is told
    assert f"limited to these hosts: pypi.test:{internet.http_port}" in instructions
    assert (
        "no DNS inside" in instructions and "Requests to api.test get their credentials added" in instructions
    )
    assert SECRET not in repr(sandbox.network) and SECRET not in json.dumps(sandbox.get_info().metadata)


def test_pip_installs_from_the_one_allowed_index(internet: Internet, tmp_path: Path) -> None:
    """``pip install`` inside a bwrap command, from an HTTPS index (CONNECT), nothing else allowed."""
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    shutil.copy(internet.ca_file, root / "test-ca.pem")
    with LocalSandbox(
        working_directory=str(root),
        isolation="bwrap",
        timeout=120,
        network=[f"pypi.test:{internet.https_port}"],
    ) as sb:
        result = sb.execute_command(
            "python -m pip install --no-cache-dir --disable-pip-version-check --no-input --quiet "
            f"--target site --cert test-ca.pem --index-url {internet.https('pypi.test', '/simple/')} {PACKAGE} "
            f"&& PYTHONPATH=site python -c 'import {PACKAGE}; print({PACKAGE}.VALUE)'"
        )
        assert result.exit_code == 0, result.stderr
        assert result.stdout.strip().endswith(str(PACKAGE_VALUE))
        assert result.network_note == ""
        hosts = {(e.host, e.port, e.allowed) for e in sb.egress_log()}
        assert hosts == {("pypi.test", internet.https_port, True)}


def test_a_sandbox_kernel_gets_the_same_network(internet: Internet, tmp_path: Path) -> None:
    """workspace_execute_code can pip install from the allowed index and import the package."""
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    sb = LocalSandbox(
        working_directory=str(root),
        isolation="bwrap",
        timeout=120,
        network=[f"pypi.test:{internet.http_port}"],
    )
    ws = Workspace(
        filesystem=LocalFilesystem(str(root)),
        sandbox=sb,
        bm25=False,
        tools={T.SANDBOX.EXECUTE_CODE: {"require_approval": False}},
    )
    try:
        code = textwrap.dedent(
            f"""
            import os, subprocess, sys
            subprocess.run([sys.executable, "-m", "pip", "install", "--no-cache-dir", "--quiet",
                            "--disable-pip-version-check", "--target", "site", "--trusted-host", "pypi.test",
                            "--index-url", "{internet.http("pypi.test", "/simple/")}", "{PACKAGE}"], check=True)
            sys.path.insert(0, "site")
            import {PACKAGE}
            import urllib.request
            try:
                urllib.request.urlopen("{internet.http("other.test")}")
            except Exception as exc:
                print("other:", exc)
            print("value", {PACKAGE}.VALUE, os.environ["HTTP_PROXY"])
            """
        )
        text = box(ws)[T.SANDBOX.EXECUTE_CODE].run({"code": code, "timeout": 120})
        assert f"value {PACKAGE_VALUE} http://127.0.0.1:3128" in text, text
        assert "other: HTTP Error 403: Not in the sandbox network allow-list" in text
        assert text.endswith(
            f"network: 1 connection to other.test:{internet.http_port} denied by the allow-list"
        )
        log = sb.egress_log()
        assert {e.host for e in log if e.allowed} == {"pypi.test"}
        assert [e.host for e in log if not e.allowed] == ["other.test"]
    finally:
        ws.destroy()


def _descendants() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


def test_the_proxy_and_every_bridge_die_with_the_sandbox(internet: Internet, tmp_path: Path) -> None:
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    before_threads = {t.ident for t in threading.enumerate()}
    before = _descendants()
    sb = LocalSandbox(
        working_directory=str(root), isolation="bwrap", network=[f"pypi.test:{internet.http_port}"]
    )
    sb.start()
    # a download that never ends, started in the background (bridge, connection and all)
    handle = sb.processes.spawn(
        f'{sys.executable} -c "import urllib.request, time; r = urllib.request.urlopen('
        f"'{internet.http('pypi.test', '/big/1000000000')}'); r.read(1000); print('reading', flush=True); time.sleep(600)\""
    )
    deadline = time.monotonic() + 30
    while "reading" not in handle.stdout and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "reading" in handle.stdout, handle.stderr
    network_dir = sb._network.directory if sb._network else None
    assert network_dir and os.path.exists(os.path.join(network_dir, "proxy.sock"))
    proxy_threads = [
        t for t in threading.enumerate() if t.ident not in before_threads and t.name.endswith("-proxy")
    ]
    assert len(proxy_threads) == 1
    started = _descendants() - before
    assert len(started) >= 3  # bwrap, its init, the command; the forwarder
    assert sb._network and sb._network.proxy and sb._network.proxy.active_connections == 1
    sb.destroy()
    assert not proxy_threads[0].is_alive()
    assert not os.path.exists(network_dir)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and [p for p in started if psutil.pid_exists(p)]:
        time.sleep(0.05)
    left = [p for p in started if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert left == []
    assert _descendants() - before == set()


def test_stop_and_start_again_restart_the_proxy(internet: Internet, tmp_path: Path) -> None:
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    with LocalSandbox(
        working_directory=str(root), isolation="bwrap", network=[f"pypi.test:{internet.http_port}"]
    ) as sb:
        fetch = f"python -c \"import urllib.request; print(urllib.request.urlopen('{internet.http('pypi.test')}').read().decode())\""
        assert sb.execute_command(fetch).stdout.startswith("host=pypi.test")
        sb.stop()
        assert sb._network is not None and not sb._network.running
        assert sb.execute_command(fetch).stdout.startswith("host=pypi.test")  # auto-start
        assert len(sb.egress_log()) == 2  # the log outlives a restart
        waited = sb.execute_command("sleep 0.2 & wait; echo done")  # the bridge is nobody's child
        assert waited.stdout == "done\n" and waited.execution_time_ms < 20000


def test_modes_that_cannot_be_enforced_are_refused(tmp_path: Path) -> None:
    wd = str(tmp_path)
    with pytest.raises(
        WorkspaceConfigError, match=r"needs isolation 'bwrap'.*an allow-list cannot be enforced"
    ):
        LocalSandbox(working_directory=wd, isolation="none", network=["pypi.org"])
    with pytest.raises(WorkspaceConfigError, match="'no network' cannot be enforced"):
        LocalSandbox(working_directory=wd, isolation="none", network="none")
    with pytest.raises(WorkspaceConfigError, match="contradicts network='allow'"):
        LocalSandbox(
            working_directory=wd,
            isolation="bwrap",
            network=["pypi.org"],
            native_sandbox={"allow_network": True},
        )
    assert LocalSandbox(working_directory=wd, isolation="none").network.mode == "full"
    assert LocalSandbox(working_directory=wd, isolation="none", network="full").network.mode == "full"
    assert LocalSandbox(working_directory=wd, isolation="bwrap").network.mode == "none"
    full = LocalSandbox(working_directory=wd, isolation="bwrap", network="full")
    assert full.network.mode == "full" and full.native_sandbox.allow_network
    assert full.egress_log() == []


def test_exit_codes_signals_and_time_limits_pass_through_the_bridge(sandbox: LocalSandbox) -> None:
    assert sandbox.execute_command("exit 3").exit_code == 3
    assert sandbox.execute_command("kill -TERM $$").exit_code == 128 + 15
    slow = sandbox.execute_command("sleep 30", timeout=0.5)
    assert slow.timed_out and slow.exit_code == 124


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_pip_and_git_reach_the_proxy_through_their_own_settings(
    sandbox: LocalSandbox, internet: Internet
) -> None:
    """Without the *_PROXY variables, PIP_PROXY and git's http.proxy (GIT_CONFIG_*) still lead to
    the proxy: there is no DNS inside, so reaching the server at all proves the way."""
    unset = " ".join(
        f"-u {v}"
        for v in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
    )
    since = len(sandbox.egress_log())
    pip = sandbox.execute_command(
        f"env {unset} python -m pip download --no-deps --disable-pip-version-check --no-cache-dir -q -d dl "
        f"--trusted-host pypi.test --index-url {internet.http('pypi.test', '/simple/')} {PACKAGE}",
        timeout=120,
    )
    assert pip.exit_code == 0, pip.stderr
    assert any(name.startswith(PACKAGE) for name in os.listdir(Path(sandbox.working_directory) / "dl"))
    git = sandbox.execute_command(f"env {unset} git ls-remote {internet.http('pypi.test', '/repo.git')}")
    assert git.exit_code != 0  # the test server is no git server: it answers 404
    assert any(r["path"].startswith("/repo.git/info/refs") for r in internet.seen)
    assert {(e.method, e.host, e.allowed) for e in sandbox.egress_log()[since:]} == {
        ("GET", "pypi.test", True)
    }
