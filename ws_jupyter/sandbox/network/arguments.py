"""The network options of command lines (``ws-jupyter mcp``, ``%ws init``, ``ws-jupyter doctor``).

    --network {none,allow,full}   the mode (default: none under isolation, as before)
    --allow HOST [HOST ...]       allow-list entries (pypi.org, *.example.com, host:port); implies allow
    --network-secret HOST:HEADER=ENV
                                  the proxy adds HEADER to requests for HOST, with the value of the
                                  environment variable ENV (read here, never put in the sandbox)

A secret's value is taken from the environment so that it never appears on a command line (``ps``)
or in a notebook cell.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

from ...errors import WorkspaceConfigError
from .config import NETWORK_MODES, NetworkConfig

__all__ = ["add_network_arguments", "network_from_arguments"]


def add_network_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds ``--network``, ``--allow`` and ``--network-secret`` to ``parser``."""
    parser.add_argument(
        "--network",
        choices=NETWORK_MODES,
        help="what sandboxed commands may reach: none (the default with isolation), allow (only the "
        "--allow hosts, through a filtering proxy, every attempt logged) or full (the host's network)",
    )
    parser.add_argument(
        "--allow",
        action="extend",
        nargs="+",
        metavar="HOST",
        help="allow HOST in network allow mode (pypi.org, *.example.com, host:8443, host:*, 10.0.0.0/8); "
        "without a port: 80 and 443",
    )
    parser.add_argument(
        "--network-secret",
        action="append",
        metavar="HOST:HEADER=ENV",
        help="the proxy adds header HEADER, valued from environment variable ENV, to requests for HOST "
        "(the value never enters the sandbox)",
    )


def network_from_arguments(args: Any, environ: Mapping[str, str] | None = None) -> NetworkConfig | None:
    """The ``network=`` value the arguments ask for (None: the sandbox's default)."""
    mode = getattr(args, "network", None)
    hosts = list(getattr(args, "allow", None) or [])
    secrets_given = list(getattr(args, "network_secret", None) or [])
    if mode is None and not hosts and not secrets_given:
        return None
    if mode is None:
        mode = "allow"
    if mode != "allow" and (hosts or secrets_given):
        raise WorkspaceConfigError(f"--allow and --network-secret need --network allow (not {mode})")
    if mode != "allow":
        return NetworkConfig.coerce(mode)
    env = os.environ if environ is None else environ
    secrets: dict[str, list[dict[str, str]]] = {}
    for spec in secrets_given:
        host, sep, rest = spec.partition(":")
        header, sep2, variable = rest.partition("=")
        if not (sep and sep2 and host and header and variable):
            raise WorkspaceConfigError(f"--network-secret expects HOST:HEADER=ENV, got {spec!r}")
        value = env.get(variable)
        if not value:
            raise WorkspaceConfigError(
                f"--network-secret {host}:{header}: the environment variable {variable} is not set"
            )
        secrets.setdefault(host, []).append({"header": header, "value": value})
    return NetworkConfig.coerce({"mode": "allow", "allow": hosts, "secrets": secrets})
