"""``SandboxNetwork``: the network of one sandbox in ``allow`` mode, from start to destroy.

What a launch gets from it (commands, background processes and kernels alike):

* ``wrap(argv)``: the bridge (``bridge_program.py``) in front of the program, so 127.0.0.1:3128
  inside the launch's own network namespace leads to the proxy;
* ``binds()``: the sandbox's network folder — the proxy's socket, the bridge, the CA bundle —
  bound read-only (a command can neither replace the socket nor the bridge of later commands);
* ``environment()``: ``HTTP(S)_PROXY`` and the settings pip, git, npm and curl read, and, when
  there are HTTPS header secrets, the CA bundle for OpenSSL, requests, pip, curl, git and node.

On the host side it owns the ``ProxyServer`` and the ``EgressLog`` (which outlives restarts).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from datetime import datetime
from typing import Any

from ..isolation.config import Mount
from .config import NetworkConfig
from .egress import EgressEvent, EgressLog, denied_summary
from .proxy import ProxyServer, Timeouts
from .resolver import counts_as_public

__all__ = ["BRIDGE_PORT", "SandboxNetwork"]

#: Where the proxy is, inside every sandboxed launch (each has its own network namespace).
BRIDGE_PORT = 3128
_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bridge_program.py")


class SandboxNetwork:
    """The proxy, egress log and launch settings of one sandbox in ``allow`` mode."""

    def __init__(
        self, config: NetworkConfig, *, name: str = "sandbox", timeouts: Timeouts | None = None
    ) -> None:
        if config.mode != "allow":
            raise ValueError("SandboxNetwork is for network mode 'allow'")
        self.config = config
        self.name = name
        self.log = EgressLog(config.log_entries)
        self._timeouts = timeouts
        self._proxy: ProxyServer | None = None
        self._dir: str | None = None
        self._python: str | None = None
        self._ca_pem: bytes | None = None

    @property
    def running(self) -> bool:
        return self._proxy is not None and self._proxy.running

    @property
    def directory(self) -> str | None:
        """The folder bound into the sandbox (socket, bridge, CA bundle), while running."""
        return self._dir

    @property
    def proxy(self) -> ProxyServer | None:
        return self._proxy

    def start(self, state_dir: str, python: str) -> None:
        """Writes the network folder under ``state_dir`` and starts the proxy (idempotent).

        ``python`` runs the bridge inside the sandbox (it must be visible there).
        """
        if self.running:
            return
        folder = os.path.join(state_dir, "network")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        shutil.copyfile(_PROGRAM, os.path.join(folder, "bridge.py"))
        ca = None
        secrets: dict[str, list[Any]] = {}
        for secret in self.config.secrets:
            secrets.setdefault(secret.host, []).append(secret)
        if secrets:
            from .tls import WorkspaceCA, system_ca_bundle

            ca = WorkspaceCA(secrets, label=self.name)
            self._ca_pem = ca.cert_pem
            with open(os.path.join(folder, "ca.pem"), "wb") as f:
                f.write(ca.cert_pem)
            with open(os.path.join(folder, "ca-bundle.pem"), "wb") as f:
                bundle = system_ca_bundle()
                f.write(bundle + (b"" if not bundle or bundle.endswith(b"\n") else b"\n") + ca.cert_pem)
        proxy = ProxyServer(
            os.path.join(folder, "proxy.sock"),
            self.config.policy(counts_as_public),
            self.log,
            secrets=secrets,
            ca=ca,
            max_connections=self.config.max_connections,
            timeouts=self._timeouts,
            name=f"ws-{self.name}-proxy",
        )
        proxy.start()
        self._proxy, self._dir, self._python = proxy, folder, python

    def stop(self) -> None:
        """Stops the proxy (every open connection ends) and removes the network folder."""
        proxy, folder = self._proxy, self._dir
        self._proxy = self._dir = None
        if proxy is not None:
            proxy.stop()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    # --- what a launch gets ------------------------------------------------------------------------

    def _require(self) -> tuple[str, str]:
        if self._dir is None or self._python is None:
            from ...errors import SandboxStateError

            raise SandboxStateError("The sandbox's network proxy is not running")
        return self._dir, self._python

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` behind the bridge: run it with 127.0.0.1:BRIDGE_PORT leading to the proxy."""
        folder, python = self._require()
        return [
            python,
            "-I",
            "-S",
            os.path.join(folder, "bridge.py"),
            str(BRIDGE_PORT),
            os.path.join(folder, "proxy.sock"),
            *argv,
        ]

    def binds(self) -> tuple[Mount, ...]:
        folder, _ = self._require()
        return (Mount(folder, read_only=True),)

    def environment(self) -> dict[str, str]:
        """Variables that send ordinary tools through the proxy (a later ``env=`` layer wins)."""
        folder, _ = self._require()
        url = f"http://127.0.0.1:{BRIDGE_PORT}"
        env = {
            "HTTP_PROXY": url,
            "HTTPS_PROXY": url,
            "ALL_PROXY": url,
            "http_proxy": url,
            "https_proxy": url,
            "all_proxy": url,
            # the sandbox's own loopback stays direct (a server a command started, for one)
            "NO_PROXY": "localhost,127.0.0.1,::1",
            "no_proxy": "localhost,127.0.0.1,::1",
            "PIP_PROXY": url,
            "npm_config_proxy": url,
            "npm_config_https_proxy": url,
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "http.proxy",
            "GIT_CONFIG_VALUE_0": url,
        }
        if self._ca_pem is not None:
            bundle = os.path.join(folder, "ca-bundle.pem")
            env.update(
                {
                    "SSL_CERT_FILE": bundle,
                    "REQUESTS_CA_BUNDLE": bundle,
                    "CURL_CA_BUNDLE": bundle,
                    "PIP_CERT": bundle,
                    "GIT_SSL_CAINFO": bundle,
                    "NODE_EXTRA_CA_CERTS": os.path.join(folder, "ca.pem"),
                }
            )
        return env

    # --- what happened ---------------------------------------------------------------------------------

    def events(self, **kwargs: Any) -> list[EgressEvent]:
        return self.log.events(**kwargs)

    def denied_note(self, pid: int | None, since: datetime) -> str:
        """The line a command's result gets for its denied attempts ("" when none)."""
        if pid is None:
            return ""
        return denied_summary(self.log.denied_from(pid, since))

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            if self._proxy is not None:
                self._proxy.stop(timeout=0.5)
