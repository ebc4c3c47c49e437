"""Kernels on a Jupyter gateway: code runs on a cluster, the workspace drives it from the notebook.

``GatewayKernelManager(url, token)`` starts and drives kernels through a Jupyter Server, Kernel
Gateway or Enterprise Gateway: the REST API (``/api/kernels``: start, interrupt, restart,
shutdown) and each kernel's websocket (``/api/kernels/{id}/channels``, the Jupyter messaging
protocol as JSON, messages built by ``jupyter_client.session.Session``). It is a
:class:`SandboxKernelManager` — the same ``execute()``/``restart()``/``list()`` and the same
:class:`ExecutionResult` and activity feed — so ``workspace_execute_code``, ``%ws kernel`` and the
KernelActivity widget work unchanged once a sandbox is given one::

    LocalSandbox("./work", kernels=GatewayKernelManager("https://gateway.internal", token="..."))

What differs from local kernels, because the kernel runs elsewhere:

* the sandbox's isolation does not apply (the gateway's cluster isolates its kernels), and the
  kernel sees the cluster's files, not the sandbox's (``cwd`` is passed as the server's ``path``);
* a dropped websocket is reconnected with the same session, so the server replays what it
  buffered; a gateway that stays unreachable is a ``KernelError`` with code
  ``GATEWAY_UNAVAILABLE`` within ``reconnect_timeout`` seconds, never a hang;
* a kernel the gateway culled or lost is noticed (404) and replaced by a fresh one, and the next
  result says its state is gone; a kernel that died mid-execution (the server reports
  ``restarting``/``dead``) ends that execution with ``KernelDied``, and the next one waits until
  the restarted kernel answers on both channels (the server re-subscribes to its output on its
  own schedule: code sent before would run with its output lost);
* every wait is bounded: each receive and send has a timeout, and what the gateway loses on the
  way (a reply, the "idle" that ends an execution's output) is found out with a ``kernel_info``
  request as a barrier — the kernel answers requests in order — instead of being awaited forever;
* notebooks (``workspace_run_notebook``) need a local kernel: ``client()``/``exclusive()`` raise.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...errors import KernelError
from .config import KernelsConfig
from .execution import Execution, OutputCollector, utc_now
from .host import KernelHost
from .kernel import Kernel
from .launch import ResolvedSpec
from .manager import SandboxKernelManager
from .messages import MAX_DEPTH, decode, too_deep
from .result import ExecutionError, ExecutionResult

if TYPE_CHECKING:
    from .provider import KernelProvider, SandboxKernel

__all__ = ["GatewayConnection", "GatewayKernel", "GatewayKernelManager"]

log = logging.getLogger(__name__)

_POLL = 0.2  # seconds per websocket receive: how quickly a time limit, abort or wake is seen
_IDLE_GRACE = 1.0  # how long "idle" may lag behind the reply before a barrier asks whether it was lost
_BARRIER_EVERY = 1.0  # seconds between those barriers
_SILENT_AFTER = 3.0  # seconds without a word of our request before a barrier asks whether it was lost
_GIVE_UP_AFTER = 10.0  # the reply in, no "idle" and no barrier's status that long: the output is lost
_READY_EVERY = 0.5  # seconds between kernel_info requests while a (re)started kernel is awaited
_IOPUB_GRACE = 3.0  # a kernel that answers but publishes no status for it: ready after this long
_LIVENESS_EVERY = 5.0  # seconds of silence during an execution before the kernel is looked up
_QUIET_BARRIER_MAX = 30.0  # at most this many seconds between barriers while nothing at all is heard
_PING_AFTER = 5.0  # seconds without a frame from the gateway before the websocket is pinged
_PONG_WITHIN = 10.0  # no frame this long after a ping: the connection is lost (it may be silently cut)
_MAX_REST_BYTES = 4 * 1024 * 1024


def _short(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    text = str(reason if reason is not None else exc) or type(exc).__name__
    return text[:300]


class GatewayConnection:
    """How to reach one gateway: its URLs, auth headers, time limits and the REST calls.

    Shared by a :class:`GatewayKernelManager` and the kernels it starts (a kernel holds its
    host and this connection, not its manager). See ``GatewayKernelManager`` for the options.
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        request_timeout: float = 30.0,
        connect_timeout: float = 10.0,
        reconnect_timeout: float = 30.0,
        kernel_env: Mapping[str, str] | None = None,
    ) -> None:
        url = url if url is not None else os.environ.get("JUPYTER_GATEWAY_URL", "")
        parsed = urllib.parse.urlsplit(url or "")
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise KernelError(
                f"A gateway URL must be http(s)://host[:port][/base], got {url!r}", code="INVALID_ARGUMENT"
            )
        for name, value in (
            ("request_timeout", request_timeout),
            ("connect_timeout", connect_timeout),
            ("reconnect_timeout", reconnect_timeout),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise KernelError(f"{name} must be a positive number, got {value!r}", code="INVALID_ARGUMENT")
        self.url = url.rstrip("/")
        self.ws_url = ("wss" if parsed.scheme == "https" else "ws") + self.url[len(parsed.scheme) :]
        token = token if token is not None else os.environ.get("JUPYTER_GATEWAY_AUTH_TOKEN") or None
        self._headers = dict(headers or {})
        if token:
            self._headers["Authorization"] = f"token {token}"
        self.request_timeout = float(request_timeout)
        self.connect_timeout = float(connect_timeout)
        self.reconnect_timeout = float(reconnect_timeout)
        self.kernel_env = dict(kernel_env or {})

    @property
    def headers(self) -> dict[str, str]:
        return dict(self._headers)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        timeout: float | None = None,
        kernel: str | None = None,
    ) -> Any:
        """One REST call; the decoded JSON answer (None for an empty one, or for 404 on a kernel).

        Unreachable -> ``KernelError`` ``GATEWAY_UNAVAILABLE``; refused token -> ``GATEWAY_AUTH``;
        any other error status -> ``GATEWAY_ERROR`` with the server's message.
        """
        data = json.dumps(body).encode() if body is not None else (b"" if method == "POST" else None)
        headers = {**self._headers, "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.request_timeout) as resp:
                raw = resp.read(_MAX_REST_BYTES + 1)
        except urllib.error.HTTPError as exc:
            message = _server_message(exc)
            if exc.code == 404 and kernel is not None:
                return None
            if exc.code in (401, 403):
                raise KernelError(
                    f"The kernel gateway at {self.url} refused the request ({exc.code}): check the token",
                    code="GATEWAY_AUTH",
                    kernel=kernel,
                ) from None
            raise KernelError(
                f"The kernel gateway at {self.url} answered {method} {path} with {exc.code}: {message}",
                code="GATEWAY_ERROR",
                kernel=kernel,
            ) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise KernelError(
                f"The kernel gateway at {self.url} is unreachable: {_short(exc)}",
                code="GATEWAY_UNAVAILABLE",
                kernel=kernel,
            ) from None
        if len(raw) > _MAX_REST_BYTES:
            raise KernelError(f"The kernel gateway's answer to {path} is too large", code="GATEWAY_ERROR")
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise KernelError(
                f"The kernel gateway at {self.url} answered {path} with something other than JSON",
                code="GATEWAY_ERROR",
            ) from None


class GatewayKernelManager(SandboxKernelManager):
    """The kernels of a Jupyter gateway, driven like a sandbox's own. See the module docstring.

    ``url`` (default ``$JUPYTER_GATEWAY_URL``) is the server's base URL, ``token`` (default
    ``$JUPYTER_GATEWAY_AUTH_TOKEN``) its auth token, sent as ``Authorization: token ...``;
    ``headers`` adds request headers (a proxy's own auth). ``request_timeout`` bounds each REST
    call, ``connect_timeout`` each connection attempt, ``reconnect_timeout`` how long a dropped
    gateway is retried before an operation fails. ``kernel_env`` is sent with each start (Kernel and
    Enterprise Gateway pass ``KERNEL_*`` variables to the kernel).
    """

    remote = True

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        config: KernelsConfig | Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        request_timeout: float = 30.0,
        connect_timeout: float = 10.0,
        reconnect_timeout: float = 30.0,
        kernel_env: Mapping[str, str] | None = None,
    ) -> None:
        self.connection = GatewayConnection(
            url,
            token,
            headers=headers,
            request_timeout=request_timeout,
            connect_timeout=connect_timeout,
            reconnect_timeout=reconnect_timeout,
            kernel_env=kernel_env,
        )
        super().__init__(None, config)

    def attach(self, sandbox: Any) -> GatewayKernelManager:
        """Makes these the kernels of ``sandbox`` (``LocalSandbox(kernels=...)`` calls it)."""
        self.host.sandbox = sandbox
        return self

    def __repr__(self) -> str:
        return f"<GatewayKernelManager {self.url} {len(self)} kernel(s)>"

    # --- the connection ----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return self.connection.url

    @property
    def ws_url(self) -> str:
        return self.connection.ws_url

    @property
    def headers(self) -> dict[str, str]:
        return self.connection.headers

    @property
    def request_timeout(self) -> float:
        return self.connection.request_timeout

    @property
    def connect_timeout(self) -> float:
        return self.connection.connect_timeout

    @property
    def reconnect_timeout(self) -> float:
        return self.connection.reconnect_timeout

    @property
    def kernel_env(self) -> dict[str, str]:
        return self.connection.kernel_env

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        timeout: float | None = None,
        kernel: str | None = None,
    ) -> Any:
        """One REST call (see ``GatewayConnection.request``)."""
        return self.connection.request(method, path, body, timeout=timeout, kernel=kernel)

    def remote_kernels(self) -> list[dict[str, Any]]:
        """What the gateway lists at ``/api/kernels`` (all its kernels, not only this manager's)."""
        out = self.request("GET", "/api/kernels")
        return [k for k in out if isinstance(k, dict)] if isinstance(out, list) else []

    def kernel_specs(self) -> dict[str, Any]:
        """The gateway's kernelspecs (``/api/kernelspecs``): ``{"default": ..., "kernelspecs": {...}}``."""
        out = self.request("GET", "/api/kernelspecs")
        return out if isinstance(out, dict) else {}

    # --- SandboxKernelManager ---------------------------------------------------------------------

    def _check_availability(self) -> tuple[tuple[bool, str], bool]:
        if self.closed:
            return (False, "the sandbox was destroyed"), True
        if importlib_missing("websocket"):
            return (False, "websocket-client is not installed (pip install 'ws-jupyter[gateway]')"), True
        try:
            self.request("GET", "/api", timeout=min(self.request_timeout, 5.0))
        except KernelError as exc:
            return (False, str(exc)), False  # the gateway may come back: ask again next time
        return (True, ""), False

    def _new_kernel(self, name: str, spec: str | None, cwd: str | None) -> Kernel:
        spec_name = spec if spec is not None else self.config.kernel_spec
        return GatewayKernel(self.host, self.connection, name, spec_name, cwd=cwd)

    def runtime_parent(self) -> str | None:
        return None


def importlib_missing(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is None


def _server_message(exc: urllib.error.HTTPError) -> str:
    try:
        raw = exc.read(64 * 1024)
        data = json.loads(raw)
        message = data.get("message") or data.get("reason") or ""
    except Exception:
        message = ""
    return str(message or exc.reason)[:500]


class _Socket:
    """The kernel's websocket (websocket-client), JSON messages in and out.

    No wait on it is unbounded: each send and receive sets the socket's timeout first, and a
    connection that goes silent — a proxy or network that drops it without closing it, so reads
    only ever time out — is pinged after ``_PING_AFTER`` seconds without a frame; nothing back
    within ``_PONG_WITHIN`` seconds makes the next receive raise ``_Dropped`` (the execution
    then reconnects, or fails with ``GATEWAY_UNAVAILABLE``), however quiet the kernel is.
    """

    def __init__(self, connection: GatewayConnection, kernel_id: str, session: Any, max_bytes: int) -> None:
        import websocket

        self._ws_mod = websocket
        url = f"{connection.ws_url}/api/kernels/{urllib.parse.quote(kernel_id)}/channels?session_id={session.session}"
        headers = [f"{k}: {v}" for k, v in connection.headers.items()]
        try:
            self.ws = websocket.create_connection(
                url, header=headers, timeout=connection.connect_timeout, enable_multithread=True
            )
        except websocket.WebSocketBadStatusException as exc:
            status = getattr(exc, "status_code", None)
            if status == 404:
                raise _KernelGone() from None
            if status in (401, 403):
                raise KernelError(
                    f"The kernel gateway at {connection.url} refused the websocket ({status}): check the token",
                    code="GATEWAY_AUTH",
                ) from None
            raise _Dropped(_short(exc)) from None
        except (OSError, websocket.WebSocketException) as exc:
            raise _Dropped(_short(exc)) from None
        self.max_bytes = max_bytes
        self.send_timeout = connection.request_timeout  # see send()
        self.session = session
        self.dropped_big = 0
        self.too_deep = 0
        self.heard_at = time.monotonic()  # the last frame from the gateway (a message, ping or pong)
        self.ping_at: float | None = None  # a ping not answered yet (no frame since)

    def send(self, msg: dict[str, Any], channel: str = "shell") -> None:
        from jupyter_client.jsonutil import json_default

        msg = {**msg, "channel": channel}
        try:
            # the timeout the last receive left (as little as 10 ms) would cut a large request short
            self.ws.settimeout(self.send_timeout)
            self.ws.send(json.dumps(msg, default=json_default))
        except (OSError, self._ws_mod.WebSocketException) as exc:
            raise _Dropped(_short(exc)) from None

    def recv(self, timeout: float) -> dict[str, Any] | None:
        """The next message, or None when none came within ``timeout`` seconds (or the frame was
        a ping, a pong or binary). ``_Dropped`` when the connection broke or went silent."""
        websocket = self._ws_mod
        self._probe()
        try:
            self.ws.settimeout(timeout)  # on the socket itself: every read below is bounded by it
            opcode, data = self.ws.recv_data(control_frame=True)
        except (websocket.WebSocketTimeoutException, TimeoutError):
            return None
        except (OSError, websocket.WebSocketException) as exc:
            raise _Dropped(_short(exc)) from None
        self.heard_at, self.ping_at = time.monotonic(), None
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            raise _Dropped("the websocket closed")
        if opcode != websocket.ABNF.OPCODE_TEXT:
            return None  # ping, pong, or a message with binary buffers (widgets): not needed for results
        if len(data) > self.max_bytes:
            self.dropped_big += 1
            return None
        try:
            msg = decode(data)  # deep parts replaced by a note; a frame too deep to decode is counted
        except ValueError:  # not JSON, or not UTF-8
            return None
        if too_deep(msg):
            self.too_deep += 1
            return None
        return msg if isinstance(msg, dict) else None

    def _probe(self) -> None:
        """Pings a websocket that has been silent for ``_PING_AFTER`` seconds; ``_Dropped`` when
        a ping had no frame after it for ``_PONG_WITHIN`` seconds."""
        now = time.monotonic()
        if self.ping_at is not None:
            if now - self.ping_at >= _PONG_WITHIN:
                raise _Dropped(
                    f"the gateway sent nothing for {now - self.heard_at:.0f} s, not even an answer to a ping"
                )
            return
        if now - self.heard_at < _PING_AFTER:
            return
        self.ping_at = now
        try:
            self.ws.settimeout(self.send_timeout)
            self.ws.ping()
        except (OSError, self._ws_mod.WebSocketException) as exc:
            raise _Dropped(_short(exc)) from None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close(timeout=1)


class _Dropped(Exception):
    """The websocket broke (the gateway died, restarted, or the network cut it)."""


class _KernelGone(Exception):
    """The gateway no longer knows the kernel (culled, shut down there, or lost in a restart)."""


class GatewayKernel(Kernel):
    """One named kernel on the gateway (``manager.start("default")``)."""

    def __init__(
        self, host: KernelHost, connection: GatewayConnection, name: str, spec: str | None, cwd: str | None = None
    ) -> None:
        super().__init__(host, name, ResolvedSpec(spec or "default", (), "python", spec or "default"), cwd)
        self.connection = connection
        self.spec_requested = spec
        self.kernel_id: str | None = None
        self._sock: _Socket | None = None
        self._session: Any = None
        self._restarted_remotely = False  # the gateway restarted it: await it before the next request

    # --- state --------------------------------------------------------------------------------

    @property
    def status(self) -> str:
        return self._status

    @property
    def pid(self) -> int | None:
        return None

    @property
    def connection_file(self) -> str | None:
        return None

    @property
    def isolation(self) -> str:
        return "gateway"

    def _process_alive(self) -> bool:
        return self.kernel_id is not None and self._status in ("idle", "busy")

    def _exit_code(self) -> int | None:
        return None  # the gateway's kernel process is not ours to see

    def _started(self) -> bool:
        return self.kernel_id is not None

    def _running(self) -> bool:
        return self.kernel_id is not None and self._status in ("idle", "busy") and self._sock is not None

    def _gone_note(self) -> str:
        return "the kernel's connection was lost since the last execution; a fresh kernel was started"

    def __repr__(self) -> str:
        return f"<GatewayKernel {self.name!r} {self.status} id={self.kernel_id} at {self.connection.url}>"

    # --- lifecycle ----------------------------------------------------------------------------

    def _start_locked(self) -> None:
        if self._removed:
            raise KernelError(f"Kernel {self.name!r} was shut down; start a new one", kernel=self.name)
        self.host.check_usable()
        from jupyter_client.session import Session

        self._status = "starting"
        body: dict[str, Any] = {}
        if self.spec_requested:
            body["name"] = self.spec_requested
        if self.cwd:
            body["path"] = self.cwd
        if self.connection.kernel_env:
            body["env"] = dict(self.connection.kernel_env)
        try:
            model = self.connection.request("POST", "/api/kernels", body, kernel=self.name)
            if not isinstance(model, dict) or not isinstance(model.get("id"), str):
                raise KernelError(
                    f"The kernel gateway did not start kernel {self.name!r} (answer: {str(model)[:200]})",
                    code="KERNEL_START_FAILED",
                    kernel=self.name,
                )
            self.kernel_id = model["id"]
            if isinstance(model.get("name"), str):
                self.spec = ResolvedSpec(model["name"], (), self.spec.language, model["name"])
            self._session = Session(key=b"", username="ws-jupyter")
            self._sock = self._open_socket()
            self._wait_ready(self.host.config.startup_timeout)
        except BaseException:
            self._stop_locked(now=True)
            raise
        self._cancel = None
        self._status = "idle"
        self.started_at = self.last_activity = utc_now()
        self.execution_count = 0

    def _open_socket(self) -> _Socket:
        assert self.kernel_id is not None
        try:
            return _Socket(self.connection, self.kernel_id, self._session, self.host.config.max_message_bytes)
        except _KernelGone:
            raise KernelError(
                f"The kernel gateway no longer has kernel {self.name!r}", code="KERNEL_GONE", kernel=self.name
            ) from None
        except _Dropped as exc:
            raise KernelError(
                f"The kernel gateway at {self.connection.url} is unreachable: {exc}",
                code="GATEWAY_UNAVAILABLE",
                kernel=self.name,
            ) from None

    def _wait_ready(self, timeout: float) -> None:
        """Sends kernel_info requests until one is answered and one's status comes on IOPub: the
        kernel is up and both its channels reach us. A kernel the gateway restarted answers
        requests sent meanwhile as soon as it is up, while the gateway's subscription to its
        output may still be on its way: code sent then would run with its output lost."""
        sock = self._sock
        assert sock is not None and self._session is not None
        deadline = time.monotonic() + timeout
        sent: set[str] = set()
        replied_at: float | None = None
        published = False  # a status of one of them came on IOPub (before or after its reply)
        while True:
            req = self._session.msg("kernel_info_request", {})
            sent.add(req["header"]["msg_id"])
            wait_until = min(deadline, time.monotonic() + _READY_EVERY)
            try:
                sock.send(req)
                while time.monotonic() < wait_until:
                    msg = sock.recv(max(0.01, wait_until - time.monotonic()))
                    if msg is None or _parent(msg) not in sent:
                        continue
                    kind = msg.get("msg_type")
                    if msg.get("channel") == "shell" and kind == "kernel_info_reply" and replied_at is None:
                        replied_at = time.monotonic()
                        lang = msg.get("content", {}).get("language_info", {}).get("name")
                        if isinstance(lang, str):
                            self.spec = ResolvedSpec(self.spec.name, (), lang, self.spec.display_name)
                    elif msg.get("channel") == "iopub" and kind == "status":
                        published = True
                    if replied_at is not None and published:
                        return
            except _Dropped as exc:
                raise KernelError(
                    f"Kernel {self.name!r} on {self.connection.url} did not start: the connection broke ({exc})",
                    code="KERNEL_START_FAILED",
                    kernel=self.name,
                ) from None
            now = time.monotonic()
            if replied_at is not None and now - replied_at >= _IOPUB_GRACE:
                log.warning("kernel %s answers but publishes no status; its output may be missing", self.name)
                return
            if now >= deadline:
                raise KernelError(
                    f"Kernel {self.name!r} on {self.connection.url} did not answer within {timeout:g} s",
                    code="KERNEL_START_FAILED",
                    kernel=self.name,
                )

    def _stop_locked(self, *, now: bool) -> None:
        sock, kernel_id = self._sock, self.kernel_id
        self._sock = None
        self.kernel_id = None
        self._restarted_remotely = False
        if sock is not None:
            sock.close()
        if kernel_id is not None:
            with contextlib.suppress(KernelError):
                self.connection.request(
                    "DELETE",
                    f"/api/kernels/{urllib.parse.quote(kernel_id)}",
                    timeout=min(self.connection.request_timeout, 10.0),
                    kernel=self.name,
                )
        self._status = "stopped"

    def _wake(self, reason: str) -> None:
        self._cancel = reason  # the execution loop looks every _POLL seconds

    def interrupt(self) -> bool:
        with self._life:
            if self.kernel_id is None:
                return False
            busy = self._status == "busy"
            self._rest_interrupt()
            return busy

    def _rest_interrupt(self) -> None:
        assert self.kernel_id is not None
        self.connection.request(
            "POST", f"/api/kernels/{urllib.parse.quote(self.kernel_id)}/interrupt", kernel=self.name
        )

    def _restart_locked(self) -> None:
        """Restarts the remote kernel in place (same id); a kernel the gateway lost is started anew."""
        if self.kernel_id is None:
            self._start_locked()
            return
        model = self.connection.request(
            "POST",
            f"/api/kernels/{urllib.parse.quote(self.kernel_id)}/restart",
            timeout=max(self.connection.request_timeout, self.host.config.startup_timeout),
            kernel=self.name,
        )
        if model is None:  # 404: gone
            self._stop_locked(now=True)
            self._start_locked()
            return
        if self._sock is not None:
            self._sock.close()
        self._sock = self._open_socket()
        self._wait_ready(self.host.config.startup_timeout)
        self._restarted_remotely = False  # awaited just now
        self._cancel = None
        self._status = "idle"
        self.started_at = self.last_activity = utc_now()
        self.execution_count = 0

    def client(self, context: Any = None) -> Any:
        raise KernelError(
            f"Kernel {self.name!r} runs on a gateway; running a notebook needs a local kernel",
            code="UNSUPPORTED",
            kernel=self.name,
        )

    @contextlib.contextmanager
    def exclusive(self) -> Any:
        raise KernelError(
            f"Kernel {self.name!r} runs on a gateway; running a notebook needs a local kernel",
            code="UNSUPPORTED",
            kernel=self.name,
        )
        yield  # pragma: no cover

    def _ensure_running_locked(self) -> list[str]:
        """The shared flow, once a kernel the gateway restarted is ready (``_await_restarted_locked``)."""
        self._await_restarted_locked()
        return super()._ensure_running_locked()

    def _await_restarted_locked(self) -> None:
        """After the gateway restarted the kernel (it died while code ran), waits until it answers on
        both channels: the gateway subscribes to the new kernel's output on its own schedule, and
        code sent sooner would run with its output lost. One that does not come back is stopped,
        so the shared flow starts a fresh kernel and tells the next result its state is gone."""
        if not self._restarted_remotely or self._removed or not self._running():
            return
        self._restarted_remotely = False
        try:
            self._wait_ready(self.host.config.startup_timeout)
        except KernelError:
            log.warning("gateway kernel %s did not come back after a restart", self.name, exc_info=True)
            self._stop_locked(now=True)
            self.restarts += 1
            self._lost = (
                "the kernel the gateway restarted did not answer; a fresh kernel was started (earlier "
                "variables and imports are gone)"
            )

    # --- execution ----------------------------------------------------------------------------

    def _run(
        self,
        kc: Any,
        code: str,
        limit: float | None,
        abort: threading.Event | None,
        notes: list[str],
        collector: OutputCollector,
    ) -> ExecutionResult:
        return _RemoteExecution(self, code, limit, abort, notes, collector).wait()

    def _reconnect_socket(self, deadline: float) -> None:
        """A new websocket in the same session (the server replays what it buffered meanwhile)."""
        delay = 0.2
        last = "the connection broke"
        while True:
            if self._sock is not None:
                self._sock.close()
                self._sock = None
            assert self.kernel_id is not None
            try:
                self._sock = _Socket(self.connection, self.kernel_id, self._session, self.host.config.max_message_bytes)
                return
            except _KernelGone:
                raise
            except _Dropped as exc:
                last = str(exc)
            if time.monotonic() + delay >= deadline:
                raise KernelError(
                    f"The kernel gateway at {self.connection.url} is unreachable ({last}); gave up after "
                    f"{self.connection.reconnect_timeout:g} s",
                    code="GATEWAY_UNAVAILABLE",
                    kernel=self.name,
                )
            time.sleep(delay)
            delay = min(2.0, delay * 2)

    def _lookup(self) -> bool:
        """True while the gateway still has this kernel (raises GATEWAY_UNAVAILABLE when unreachable)."""
        if self.kernel_id is None:
            return False
        model = self.connection.request(
            "GET",
            f"/api/kernels/{urllib.parse.quote(self.kernel_id)}",
            timeout=min(self.connection.request_timeout, 10.0),
            kernel=self.name,
        )
        return model is not None


class _RemoteExecution(Execution):
    """The wait for one execution's reply and output on the kernel's websocket, and what ends it:
    the time limit or ``abort`` (REST interrupt; restart if the kernel does not stop within
    ``interrupt_timeout``), the server reporting the kernel restarting or dead, the kernel gone
    from the gateway, ``restart()``/``shutdown()``, the gateway unreachable for longer than
    ``reconnect_timeout`` (``KernelError`` ``GATEWAY_UNAVAILABLE``), or a barrier showing that
    the request, its reply or its "idle" was lost on the way.

    A barrier is a ``kernel_info`` request sent after ours: the kernel handles requests one at a
    time, in order, and publishes each one's status on IOPub in that order. Its reply coming
    before ours means ours (or our reply) was lost — asked after a reconnect, when our "idle"
    came but not our reply, and while nothing at all comes: after ``_SILENT_AFTER`` seconds,
    then at doubling intervals (at most ``_QUIET_BARRIER_MAX``) as long as the silence lasts.
    Behind code that still runs they wait their turn and change nothing; they find out a request
    that never arrived, a reply that never came back and a kernel the gateway restarted without
    a word. Once our reply is in, a barrier's status coming before our "idle" means that "idle"
    was lost. The missing end is asked for once it is ``_IDLE_GRACE`` seconds late and given up
    on ``_GIVE_UP_AFTER`` seconds after the other end came.
    """

    def __init__(
        self,
        kernel: GatewayKernel,
        code: str,
        limit: float | None,
        abort: threading.Event | None,
        notes: list[str],
        collector: OutputCollector,
    ) -> None:
        super().__init__(kernel, code, limit, abort, notes, collector, kernel.host.config.interrupt_timeout)
        self.kernel = kernel
        self.dead: str | None = None
        self.last_message = self.started  # a message came, or the gateway was asked for the kernel
        self.message_at = self.started  # a message came
        self.reconnected = False
        self.asked: dict[str, bool] = {}  # kernel_info requests sent: msg_id -> after our reply
        self.barrier_at = 0.0
        self.heard = False  # a message about our request came (its status, input, output or reply)
        self.idle_at: float | None = None
        self.lost = False
        session = kernel._session
        msg = session.msg(
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": False,
            },
        )
        self.msg_id = msg["header"]["msg_id"]
        self._send(msg)

    def _send(self, msg: dict[str, Any]) -> None:
        try:
            assert self.kernel._sock is not None
            self.kernel._sock.send(msg)
        except _Dropped:
            self._reconnect(barrier=False)  # ours is not sent yet: a barrier now would overtake it
            assert self.kernel._sock is not None
            self.kernel._sock.send(msg)

    def _reconnect(self, barrier: bool = True) -> None:
        """A new websocket after a drop; the server replays what it buffered meanwhile. What it
        could not buffer (sent before it saw the drop) is lost: a barrier follows."""
        self.kernel._reconnect_socket(time.monotonic() + self.kernel.connection.reconnect_timeout)
        self.reconnected = True
        if barrier:
            self._send_barrier()

    def _send_barrier(self) -> None:
        """Sends a kernel_info request as a barrier (see the class doc)."""
        msg = self.kernel._session.msg("kernel_info_request", {})
        self.asked[msg["header"]["msg_id"]] = self.reply is not None
        self.barrier_at = time.monotonic()
        if self.kernel._sock is not None:
            with contextlib.suppress(_Dropped):  # the next receive notices the drop
                self.kernel._sock.send(msg)

    def _ask(self, now: float) -> bool:
        """Barriers for what the gateway may have lost; True when the wait must end: one end of the
        execution (its reply, its "idle") came and the other did not, even ``_GIVE_UP_AFTER``
        seconds later (the channel that should bring it passes nothing on)."""
        if self.idle != (self.reply is not None):
            since = self.reply_at if self.reply_at is not None else self.idle_at
            assert since is not None
            if now - since >= _GIVE_UP_AFTER:
                if self.reply is None:
                    self._lost_reply()
                else:
                    self.notes.append("some output was lost on the way (its end never came from the gateway)")
                return True
            if now - since >= _IDLE_GRACE and now - self.barrier_at >= _BARRIER_EVERY:
                self._send_barrier()
        elif self.reply is None and now - max(self.message_at, self.barrier_at) >= self._quiet_gap():
            self._send_barrier()
        return False

    def _quiet_gap(self) -> float:
        """Seconds of silence before the next barrier: ``_SILENT_AFTER``, doubled for each one
        already waiting behind our request (at most ``_QUIET_BARRIER_MAX``)."""
        waiting = sum(1 for after in self.asked.values() if not after)
        return min(_QUIET_BARRIER_MAX, _SILENT_AFTER * 2 ** min(waiting, 8))

    def _handle(self, msg: dict[str, Any]) -> None:
        parent = _parent(msg)
        channel = msg.get("channel")
        kind = msg.get("msg_type") or msg.get("header", {}).get("msg_type")
        if parent is not None and parent == self.msg_id:
            self.heard = True
        if channel == "iopub":
            if parent == self.msg_id:
                if self.collector.handle(msg) and not self.idle:
                    self.idle, self.idle_at = True, time.monotonic()
            elif kind == "status" and not parent:
                state = msg.get("content", {}).get("execution_state")
                if state in ("restarting", "dead"):
                    self._died(state)
            elif (
                kind == "status" and self.asked.get(parent or "") and self.reply is not None and not self.idle
            ):
                self.idle = True  # a later request's status came first: our "idle" was lost
                self.notes.append("some output was lost on the way (the gateway did not pass it all on)")
        elif channel == "shell" and parent == self.msg_id:
            self.reply, self.reply_at = msg, time.monotonic()
        elif channel == "shell" and parent is not None and parent in self.asked and self.reply is None:
            self.lost = True  # a later request was answered first: our request or reply was lost

    def _died(self, state: str) -> None:
        self.status = "error"
        self.error = ExecutionError(
            "KernelDied",
            "the kernel died while running this code"
            + ("; the gateway restarted it, so its state is lost" if state == "restarting" else ""),
        )
        self.notes.append(
            "the kernel died" + (" and was restarted (its state is lost)" if state == "restarting" else "")
        )
        self.restarted = True
        if state == "restarting":
            self.kernel.restarts += 1
            self.kernel._restarted_remotely = True
        self.dead = state

    def restart_kernel(self) -> None:
        self.kernel._restart_inline()

    def watch(self, now: float) -> bool:
        """Barriers for what the gateway may have lost (``_ask``); after ``_LIVENESS_EVERY`` seconds
        without a message, asks the gateway for the kernel."""
        if self._ask(now):
            return True
        if now - self.last_message >= _LIVENESS_EVERY:
            self.last_message = now
            if not self.kernel._lookup():
                raise _KernelGone()
        return False

    def wait(self) -> ExecutionResult:
        try:
            while not (self.idle and self.reply is not None):
                sock = self.kernel._sock
                if sock is None:
                    self._reconnect()
                    continue
                try:
                    msg = sock.recv(_POLL)
                except _Dropped:
                    self._reconnect()
                    continue
                except KeyboardInterrupt:
                    with contextlib.suppress(Exception):
                        self.kernel._rest_interrupt()
                    raise
                if msg is not None:
                    self.last_message = self.message_at = time.monotonic()
                    self._handle(msg)
                    if self.dead is not None:
                        break
                if self.idle and self.reply is not None:
                    break
                now = time.monotonic()
                if self.lost:
                    self._lost_reply()
                    break
                if self.reconnected and self.reply_at is not None and now - self.reply_at >= _IDLE_GRACE:
                    self.notes.append(
                        "the connection to the gateway broke while this code ran; some of its output was lost"
                    )
                    break
                if self.check(now):  # watch() sends the barriers
                    break
        except _KernelGone:
            self.status = "error"
            self.error = ExecutionError(
                "KernelDied",
                "the kernel is gone from the gateway (it died or was shut down there); its state is lost",
            )
            self.notes.append("the kernel is gone from the gateway; the next execution starts a fresh one")
            self.restarted = True
            with contextlib.suppress(Exception):
                self.kernel._stop_locked(now=True)
            self.kernel._status = "busy"  # execute() sets idle; the next call sees no kernel and starts one
        if self.dead == "dead":
            with contextlib.suppress(Exception):
                self.kernel._stop_locked(now=True)
            self.kernel._status = "busy"
        sock = self.kernel._sock
        if sock is not None and sock.dropped_big:
            self.notes.append(
                f"{sock.dropped_big} message(s) over max_message_bytes were dropped (some output is missing)"
            )
            sock.dropped_big = 0
        if sock is not None and sock.too_deep:
            self.notes.append(
                f"{sock.too_deep} message(s) nested deeper than {MAX_DEPTH} levels were dropped (some output "
                "is missing)"
            )
            sock.too_deep = 0
        return self.result()

    def _lost_reply(self) -> None:
        if self.reconnected:
            self.notes.append(
                "the connection to the gateway broke while this code ran; some of its output and its reply were lost"
            )
        else:
            self.notes.append(
                "the kernel answered a later request first: this one's reply was lost on the way"
            )
        if self.collector.error is not None:
            return
        if self.idle:
            what = "the code ran to its end, but its reply was lost"
        elif self.heard:
            what = (
                "the code started, but the kernel answered a later request before it: its reply was lost, or "
                "the kernel was restarted while it ran"
            )
        else:
            what = "the request or its reply was lost on the way through the gateway"
        if self.reconnected:
            what += " (the connection to the gateway broke meanwhile)"
        self.status = "error"
        self.error = ExecutionError("ConnectionLost", what + "; whether it succeeded is unknown")


def _parent(msg: dict[str, Any]) -> str | None:
    """The msg_id a message answers (None for one that answers none, or a malformed header)."""
    header = msg.get("parent_header")
    parent = header.get("msg_id") if isinstance(header, dict) else None
    return parent if isinstance(parent, str) else None


if TYPE_CHECKING:  # mypy proves a gateway's manager and kernels meet the provider contract

    def _provider(manager: GatewayKernelManager, kernel: GatewayKernel) -> tuple[KernelProvider, SandboxKernel]:
        return manager, kernel
