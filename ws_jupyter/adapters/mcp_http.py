"""Serving a workspace over MCP Streamable HTTP, so an agent outside the notebook works in *it*.

    handle = ws.serve_mcp_http()          # from the notebook's kernel (or %ws mcp serve)
    handle.url, handle.token              # give both to the MCP client
    handle.stop()

The server is the stdio server of :mod:`ws_jupyter.adapters.mcp_server` (the same tools, prompts,
resources, hints, progress, cancellation and approvals — built in one place) behind the official
SDK's Streamable HTTP transport, run by uvicorn on a thread of the calling process: the calls of
an outside agent run in the same workspace object as the notebook's own agent, so they appear in
its tool activity feed, its approvals are asked in its widgets, and its kernels and processes are
the notebook's.

Why each check exists:

* **loopback by default** (``127.0.0.1``): another machine cannot reach it unless ``host`` says so;
* **a bearer token on every request**, random per server, compared in constant time
  (``hmac.compare_digest``) — other local users and other local programs cannot call the tools;
* **Host and Origin** are checked before anything else (DNS rebinding: a web page whose name
  resolves to 127.0.0.1 sends a foreign ``Host``, 421; a browser page sends its own ``Origin``, 403);
* **bounded requests**: bodies over ``max_body_bytes`` are refused (413) before parsing, sessions
  are capped (``max_sessions``; further ones get 503) and idle ones end after
  ``session_idle_timeout`` seconds.

Each client session gets its own request context (:func:`~ws_jupyter.request_context.client_context`): its reads are recorded
apart from other clients' (``require_read_before_write`` holds per client), its background jobs and
their processes are its own, and the activity feed names it (``client`` from MCP ``initialize``, ``session``).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import socket
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..request_context import RequestContext, client_context

__all__ = [
    "ALLOW_GROUPS",
    "McpHttpServer",
    "serve_mcp_http",
]

log = logging.getLogger("ws_jupyter.mcp")

#: The path the MCP endpoint is served at.
MCP_PATH = "/mcp"
#: Request bodies larger than this are refused (413) before they are parsed.
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
#: Concurrent client sessions at most (a new one beyond gets 503).
DEFAULT_MAX_SESSIONS = 64
#: Seconds a session may stay idle before it is closed (the client then starts another).
DEFAULT_SESSION_IDLE_TIMEOUT = 30 * 60.0
_LOOPBACK = ("127.0.0.1", "localhost", "::1")

#: Tool groups an outside client gets only when the user allows them (``allow=``, ``--allow``):
#: they reach what the user sees and holds — the open notebook, the user's variables —, not just
#: the workspace's files. A new group is a new entry here.
ALLOW_GROUPS: dict[str, str] = {
    "open-notebook": "OPEN_NOTEBOOK_TOOLS",
    "user-data": "USER_DATA_TOOLS",
}


def allow_group_tools(group: str) -> tuple[str, ...]:
    """The tool names of an allow group (from the tools' specs: :mod:`ws_jupyter.tools.names`)."""
    from ..tools import names

    return tuple(getattr(names, ALLOW_GROUPS[group]))


def _gated_group(tool_name: str) -> str | None:
    """The allow group a tool belongs to, or None when every client may have it."""
    return next((group for group in ALLOW_GROUPS if tool_name in allow_group_tools(group)), None)


def _check_allow(allow: Iterable[str] | str | None) -> frozenset[str]:
    from ..errors import WorkspaceConfigError

    if allow is None:
        return frozenset()
    items = [a.strip() for a in (allow.split(",") if isinstance(allow, str) else allow)]
    items = [a for a in items if a]
    unknown = [a for a in items if a not in ALLOW_GROUPS]
    if unknown:
        raise WorkspaceConfigError(
            f"Unknown allow group{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}: choose from {', '.join(ALLOW_GROUPS)}"
        )
    return frozenset(items)


def allowed_tools(tools: list[Any], allow: frozenset[str]) -> list[Any]:
    """The tools an outside client is offered: gated groups only when allowed."""
    out = []
    for t in tools:
        group = _gated_group(getattr(t, "workspace_tool_name", t.name))
        if group is None or group in allow:
            out.append(t)
    return out


# --- who is calling ---------------------------------------------------------------------------------


class _Clients:
    """One request context per (client name, session), the most recent 256 kept."""

    def __init__(self, limit: int = 256) -> None:
        self._lock = threading.Lock()
        self._contexts: OrderedDict[tuple[str, str], RequestContext] = OrderedDict()
        self._limit = limit

    def get(self, name: str, session: str) -> RequestContext:
        key = (name, session)
        with self._lock:
            ctx = self._contexts.pop(key, None)
            if ctx is None:
                ctx = client_context(name, session)
            self._contexts[key] = ctx
            while len(self._contexts) > self._limit:
                self._contexts.popitem(last=False)
            return ctx

    def seen(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self._contexts)


def _client_of(ctx: Any) -> tuple[str, str]:
    """(client name from ``initialize`` or the request envelope, HTTP session id or "")."""
    name = "mcp-client"
    session = ""
    try:
        params = ctx.session.client_params
        info = getattr(params, "client_info", None)
        if info is not None and getattr(info, "name", None):
            name = str(info.name)[:80]
    except Exception:
        pass
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    if headers is not None:
        session = str(headers.get("mcp-session-id") or "")[:80]
    return name, session


# --- the checks in front of the transport ------------------------------------------------------------


class _Guard:
    """ASGI middleware: Host (421), Origin (403), then the bearer token (401), on every request."""

    def __init__(self, app: Any, token: str, hosts: frozenset[str], origins: frozenset[str]) -> None:
        self.app = app
        self._token = ("Bearer " + token).encode()
        self.hosts = hosts
        self.origins = origins

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, bytes] = {}
        for k, v in scope.get("headers", ()):
            headers.setdefault(k.lower(), v)
        host = headers.get(b"host", b"").decode("latin-1").lower()
        if host not in self.hosts:
            await _plain(send, 421, "Misdirected request: this Host is not served here")
            return
        origin = headers.get(b"origin")
        if origin is not None and origin.decode("latin-1").lower() not in self.origins:
            await _plain(send, 403, "Forbidden: cross-origin requests are refused")
            return
        given = headers.get(b"authorization", b"")
        if not hmac.compare_digest(given, self._token):
            await _plain(
                send,
                401,
                "Unauthorized: send the server's token as 'Authorization: Bearer <token>'",
                extra=[(b"www-authenticate", b'Bearer realm="ws-jupyter"')],
            )
            return
        await self.app(scope, receive, send)


async def _plain(send: Any, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *(extra or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _host_names(host: str, port: int, extra: Iterable[str]) -> frozenset[str]:
    names = {host}
    if host in _LOOPBACK or host in ("0.0.0.0", "::"):
        names.update(("127.0.0.1", "localhost", "[::1]"))
    if ":" in host and not host.startswith("["):
        names.add(f"[{host}]")
    out = {f"{n}:{port}" for n in names} | {h.lower() for h in extra}
    return frozenset(n.lower() for n in out)


def _origins(hosts: frozenset[str], extra: Iterable[str]) -> frozenset[str]:
    return frozenset({f"http://{h}" for h in hosts} | {o.lower().rstrip("/") for o in extra})


# --- the server ------------------------------------------------------------------------------------


@dataclass
class McpHttpServer:
    """A running MCP server over Streamable HTTP: its ``url`` and ``token``; ``stop()`` ends it
    (the thread and the port are gone when it returns)."""

    url: str
    token: str
    host: str
    port: int
    allow: frozenset[str]
    _offered: Callable[[], list[Any]] = field(repr=False)
    _server: Any = field(repr=False)
    _thread: threading.Thread = field(repr=False)
    _clients: _Clients = field(repr=False)
    _on_stop: list[Callable[[], None]] = field(default_factory=list, repr=False)

    @property
    def tools(self) -> tuple[str, ...]:
        """The names of the tools outside clients are offered now (they follow the workspace: the
        open notebook connects, variables are shared)."""
        return tuple(t.name for t in self._offered())

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def clients(self) -> list[tuple[str, str]]:
        """(client name, session id) of the client sessions that called, most recent last."""
        return self._clients.seen()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving: open streams are closed, running calls are cancelled, the port is freed."""
        server = self._server
        server.should_exit = True
        self._thread.join(timeout / 2)
        if self._thread.is_alive():
            server.force_exit = True
            self._thread.join(timeout / 2)
        for fn in self._on_stop:
            try:
                fn()
            except Exception:
                log.debug("MCP server stop callback failed", exc_info=True)
        self._on_stop.clear()

    def client_configs(self, name: str = "ws-jupyter") -> dict[str, str]:
        """Ready-to-paste configurations: Claude Code, Codex, Cursor / VS Code."""
        return client_configs(self.url, self.token, name)

    def __enter__(self) -> McpHttpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def client_configs(url: str, token: str, name: str = "ws-jupyter") -> dict[str, str]:
    """How to attach the common MCP clients to ``url`` with ``token``."""
    import json

    header = f"Authorization: Bearer {token}"
    cursor = json.dumps(
        {"mcpServers": {name: {"url": url, "headers": {"Authorization": f"Bearer {token}"}}}}, indent=2
    )
    vscode = json.dumps(
        {"servers": {name: {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}}},
        indent=2,
    )
    env = "WS_JUPYTER_MCP_TOKEN"
    codex = (
        f"# in the shell that starts codex:\nexport {env}={token}\n"
        f"# in ~/.codex/config.toml:\n[mcp_servers.{name}]\n"
        f'url = "{url}"\nbearer_token_env_var = "{env}"'
    )
    return {
        "Claude Code": f'claude mcp add --transport http {name} {url} --header "{header}"',
        "Codex": codex,
        "Cursor (.cursor/mcp.json)": cursor,
        "VS Code (.vscode/mcp.json)": vscode,
    }


_servers_lock = threading.Lock()
_servers: weakref.WeakKeyDictionary[Any, list[McpHttpServer]] = weakref.WeakKeyDictionary()


def servers_of(workspace: Any) -> list[McpHttpServer]:
    """The HTTP servers running for ``workspace``."""
    with _servers_lock:
        return [s for s in _servers.get(workspace, []) if s.running]


def serve_mcp_http(
    workspace: Any,
    *,
    port: int | None = None,
    host: str = "127.0.0.1",
    token: str | None = None,
    allow: Iterable[str] | str | None = None,
    name: str = "ws-jupyter",
    approve_all: bool = False,
    elicit: bool = True,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    session_idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
    start_timeout: float = 30.0,
) -> McpHttpServer:
    """Start serving ``workspace`` over MCP Streamable HTTP on a background thread.

    ``port`` None picks a free one. ``allow`` names the gated tool groups outside clients may have
    (:data:`ALLOW_GROUPS`). ``allowed_hosts`` / ``allowed_origins`` add ``Host`` values (``name:port``)
    and browser origins beyond the address served (needed when ``host`` is not loopback and clients
    use a name). Returns once the server answers; raises :class:`~ws_jupyter.errors.WorkspaceConfigError`
    when it cannot start.
    """
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from ..errors import WorkspaceConfigError
    from .mcp_server import build_mcp_server

    allowed = _check_allow(allow)
    if port is not None and not (0 <= int(port) <= 65535):
        raise WorkspaceConfigError(f"port must be 0-65535, got {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose proto says
    # TCP, and with Nagle on, a response sent in two writes waits ~40 ms for the client's ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, int(port or 0)))
    except OSError as exc:
        sock.close()
        raise WorkspaceConfigError(f"cannot listen on {host}:{port or 0}: {exc.strerror or exc}") from None
    sock.listen(128)
    sock.setblocking(False)
    bound_port = sock.getsockname()[1]
    url_host = f"[{host}]" if ":" in host else host
    url = f"http://{url_host}:{bound_port}{MCP_PATH}"
    secret = token or secrets.token_urlsafe(32)
    hosts = _host_names(host, bound_port, allowed_hosts)
    origins = _origins(hosts, allowed_origins)

    clients = _Clients()

    def context_for(ctx: Any) -> RequestContext:
        client, session = _client_of(ctx)
        return clients.get(client, session)

    def offered() -> list[Any]:
        return allowed_tools(workspace.tools(), allowed)

    mcp_server = build_mcp_server(
        workspace,
        name=name,
        tools=offered,
        approve_all=approve_all,
        elicit=elicit,
        context_for=context_for,
        refusal_hint="A server started in a notebook (%ws mcp serve) asks there while its tool activity "
        "widget is shown (%ws ui).",
    )
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=sorted(hosts), allowed_origins=sorted(origins)
    )
    mcp_app = mcp_server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=security,
        host=host,
        max_request_body_size=max_body_bytes,
        max_sessions=max_sessions,
        session_idle_timeout=session_idle_timeout,
    )
    guarded = _Guard(mcp_app, secret, hosts, origins)
    config = uvicorn.Config(
        guarded,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
        timeout_keep_alive=30,
        h11_max_incomplete_event_size=64 * 1024,
        limit_concurrency=256,
        server_header=False,
    )
    server = uvicorn.Server(config)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(server.serve(sockets=[sock]))
        except BaseException as exc:  # reported to the caller, who waits for start-up
            failure.append(exc)
        finally:
            sock.close()

    thread = threading.Thread(target=run, name=f"ws-jupyter-mcp-http-{bound_port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    if not server.started:
        server.should_exit = True
        thread.join(5)
        why = f": {failure[0]}" if failure else ""
        raise WorkspaceConfigError(f"the MCP server on {host}:{bound_port} did not start{why}")
    handle = McpHttpServer(
        url=url,
        token=secret,
        host=host,
        port=bound_port,
        allow=allowed,
        _offered=offered,
        _server=server,
        _thread=thread,
        _clients=clients,
    )
    with _servers_lock:
        _servers.setdefault(workspace, []).append(handle)

    def forget() -> None:
        with _servers_lock:
            live = _servers.get(workspace)
            if live is not None and handle in live:
                live.remove(handle)

    handle._on_stop.append(forget)
    log.info("serving MCP over HTTP at %s", url)
    return handle


def stop_all(workspace: Any) -> int:
    """Stop every HTTP server of ``workspace``; returns how many were running."""
    with _servers_lock:
        running = list(_servers.get(workspace, []))
    for s in running:
        s.stop()
    return len(running)


def run_mcp_http(workspace: Any, **kwargs: Any) -> None:
    """Serve until interrupted (Ctrl-C): the ``ws-jupyter mcp --http`` command."""
    import sys

    handle = serve_mcp_http(workspace, **kwargs)
    print(f"ws-jupyter MCP server: {handle.url}", file=sys.stderr)
    print(f"token: {handle.token}", file=sys.stderr)
    for label, text in handle.client_configs(kwargs.get("name", "ws-jupyter")).items():
        print(f"\n{label}:\n{text}", file=sys.stderr)
    try:
        while handle.running:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        handle.stop()
