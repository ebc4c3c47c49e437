"""``NetworkConfig``: what a sandbox may reach on the network, and the header secrets it may use.

Three modes:

* ``none`` — no network at all (bubblewrap's private network namespace holds only loopback);
* ``allow`` — only the hosts of the allow-list, through a filtering proxy outside the sandbox
  (``policy.py`` has the rule syntax), every attempt in the egress log;
* ``full`` — the host's network, unfiltered (an explicit opt-in).

Accepted wherever a sandbox takes ``network=``: ``"none"``, ``"full"``, ``"allow"`` (nothing
allowed yet, every attempt logged), a list of host rules (``allow`` mode), a dict
(``{"allow": [...], "secrets": {...}}``) or a ``NetworkConfig``.

Secrets (``allow`` mode only): ``{"api.example.com": {"header": "Authorization", "value":
"Bearer ..."}}`` makes the proxy add that header to the requests it forwards to that host (plain
HTTP, and HTTPS through a sandbox-only CA: ``tls.py``); the value lives in the proxy, outside the
sandbox, and is never shown in a ``repr``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ...errors import WorkspaceConfigError
from .policy import HostRule, NetworkPolicy, parse_destination

__all__ = ["NETWORK_MODES", "HeaderSecret", "NetworkConfig", "NetworkMode", "effective_network"]

NetworkMode = Literal["none", "allow", "full"]
NETWORK_MODES: tuple[NetworkMode, ...] = ("none", "allow", "full")

_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}$")
#: Headers the proxy owns (framing, routing, hop-by-hop): a secret cannot be one of them.
_RESERVED_HEADERS = frozenset(
    {
        "host",
        "connection",
        "content-length",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "keep-alive",
        "proxy-connection",
        "proxy-authorization",
        "proxy-authenticate",
    }
)


@dataclass(frozen=True)
class HeaderSecret:
    """A header the proxy adds to every request it forwards to ``host`` (the value stays outside)."""

    host: str
    header: str
    value: str = field(repr=False)

    def __repr__(self) -> str:
        return f"HeaderSecret(host={self.host!r}, header={self.header!r}, value='***')"


def _secret(host: str, spec: object) -> HeaderSecret:
    if not isinstance(spec, Mapping) or set(spec) != {"header", "value"}:
        raise WorkspaceConfigError(
            f"network secret for {host}: expected {{'header': NAME, 'value': VALUE}}, got keys "
            f"{sorted(map(str, spec)) if isinstance(spec, Mapping) else type(spec).__name__}"
        )
    header, value = spec["header"], spec["value"]
    if not isinstance(header, str) or not _HEADER_NAME.match(header):
        raise WorkspaceConfigError(f"network secret for {host}: invalid header name {header!r}")
    if header.lower() in _RESERVED_HEADERS:
        raise WorkspaceConfigError(f"network secret for {host}: the proxy owns the {header} header")
    if not isinstance(value, str) or not value or re.search(r"[\x00-\x08\x0a-\x1f\x7f]", value):
        raise WorkspaceConfigError(
            f"network secret for {host} ({header}): the value must be a non-empty string without "
            "control characters"
        )
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        raise WorkspaceConfigError(
            f"network secret for {host} ({header}): the value must be Latin-1"
        ) from None
    return HeaderSecret(host, header, value)


def _rules(value: object) -> tuple[HostRule, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, HostRule)):
        value = [value]
    if not isinstance(value, Iterable):
        raise WorkspaceConfigError("network allow must be a list of host rules such as 'pypi.org'")
    out: list[HostRule] = []
    for item in value:
        if isinstance(item, HostRule):
            out.append(item)
            continue
        try:
            out.append(HostRule.parse(item))
        except ValueError as exc:
            raise WorkspaceConfigError(str(exc)) from None
    return tuple(out)


def _secrets(value: object) -> tuple[HeaderSecret, ...]:
    if value is None:
        return ()
    if isinstance(value, Mapping):
        items: list[tuple[object, object]] = list(value.items())
    elif isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        items = [(s.host, s) for s in value if isinstance(s, HeaderSecret)]
        if len(items) != len(list(value)):
            raise WorkspaceConfigError("network secrets must be a dict {host: {'header': ..., 'value': ...}}")
    else:
        raise WorkspaceConfigError("network secrets must be a dict {host: {'header': ..., 'value': ...}}")
    out: list[HeaderSecret] = []
    for host, spec in items:
        if not isinstance(host, str):
            raise WorkspaceConfigError(f"network secrets: a host must be a string, got {host!r}")
        try:
            dest = parse_destination(host, default_port=443)
        except ValueError as exc:
            raise WorkspaceConfigError(f"network secrets: invalid host {host!r}: {exc}") from None
        if dest.address is not None or ":" in host:
            raise WorkspaceConfigError(f"network secrets: {host!r} must be a host name (no address, no port)")
        if isinstance(spec, HeaderSecret):
            out.append(HeaderSecret(dest.host, spec.header, spec.value))
            continue
        specs = spec if isinstance(spec, (list, tuple)) else [spec]
        out += [_secret(dest.host, s) for s in specs]
    seen: set[tuple[str, str]] = set()
    for s in out:
        key = (s.host, s.header.lower())
        if key in seen:
            raise WorkspaceConfigError(f"network secrets: two values for {s.header} on {s.host}")
        seen.add(key)
    return tuple(out)


@dataclass(frozen=True)
class NetworkConfig:
    """A sandbox's network: ``mode`` plus, in ``allow`` mode, the rules and the header secrets.

    >>> cfg = NetworkConfig.coerce(["pypi.org", "files.pythonhosted.org", "*.example.com:8443"])
    >>> cfg.mode, [str(r) for r in cfg.allow]
    ('allow', ['pypi.org', 'files.pythonhosted.org', '*.example.com:8443'])
    >>> NetworkConfig.coerce({"allow": ["api.example.com"],
    ...     "secrets": {"api.example.com": {"header": "Authorization", "value": "Bearer x"}}}).secrets
    (HeaderSecret(host='api.example.com', header='Authorization', value='***'),)
    """

    mode: NetworkMode = "none"
    allow: tuple[HostRule, ...] = ()
    secrets: tuple[HeaderSecret, ...] = ()
    #: connections open at once through the proxy; more are refused (503) until some close
    max_connections: int = 256
    #: entries kept in the egress log (the oldest are dropped first)
    log_entries: int = 5000

    def __post_init__(self) -> None:
        if self.mode not in NETWORK_MODES:
            raise WorkspaceConfigError(
                f"network mode must be one of {', '.join(map(repr, NETWORK_MODES))}, got {self.mode!r}"
            )
        object.__setattr__(self, "allow", _rules(self.allow))
        object.__setattr__(self, "secrets", _secrets(self.secrets))
        for name in ("max_connections", "log_entries"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise WorkspaceConfigError(f"NetworkConfig.{name} must be a positive integer, got {value!r}")
        if self.mode != "allow" and (self.allow or self.secrets):
            raise WorkspaceConfigError(
                f"network allow-lists and secrets need mode 'allow' (the mode is {self.mode!r})"
            )
        policy = self.policy()
        for s in self.secrets:
            if not any(r.kind != "network" and r.covers_name(s.host) for r in policy.rules):
                raise WorkspaceConfigError(
                    f"network secrets: {s.host} is not in the allow-list (add it, e.g. {s.host!r})"
                )

    @classmethod
    def coerce(cls, value: object) -> NetworkConfig:
        """A config from what ``network=`` accepts (see the module docstring)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            if value in NETWORK_MODES:
                return cls(mode=value)
            raise WorkspaceConfigError(
                f"network must be 'none', 'allow', 'full', a list of hosts or a dict, got {value!r}"
            )
        if isinstance(value, Mapping):
            WorkspaceConfigError.check_option_names(
                "network", value, ("mode", "allow", "secrets", "max_connections", "log_entries")
            )
            options: dict[str, Any] = dict(value)
            if "mode" not in options:
                options["mode"] = "allow" if ("allow" in options or "secrets" in options) else "none"
            return cls(**options)
        if isinstance(value, Iterable) and not isinstance(value, bytes):
            return cls(mode="allow", allow=tuple(value))
        raise WorkspaceConfigError(
            f"network must be 'none', 'allow', 'full', a list of hosts or a dict, got {type(value).__name__}"
        )

    def policy(self, public: Any = None) -> NetworkPolicy:
        """The allow-list as a ``NetworkPolicy`` (``public``: which addresses count as public)."""
        return NetworkPolicy(self.allow) if public is None else NetworkPolicy(self.allow, public)

    def secret_for(self, host: str) -> tuple[HeaderSecret, ...]:
        return tuple(s for s in self.secrets if s.host == host)

    def to_dict(self) -> dict[str, Any]:
        """A description without the secret values (for ``get_info()`` and views)."""
        out: dict[str, Any] = {"mode": self.mode}
        if self.mode == "allow":
            out["allow"] = [str(r) for r in self.allow]
            out["secrets"] = {s.host: s.header for s in self.secrets}
        return out

    def describe(self) -> str:
        """One line: ``allow: pypi.org, *.example.com (secret header on api.example.com)``."""
        if self.mode != "allow":
            return self.mode
        hosts = ", ".join(str(r) for r in self.allow) or "nothing allowed"
        if self.secrets:
            hosts += f" (header secrets for {', '.join(sorted({s.host for s in self.secrets}))})"
        return f"allow: {hosts}"


def effective_network(requested: object, *, isolation: str, allow_network: bool) -> NetworkConfig:
    """The network a sandbox really gets, or ``WorkspaceConfigError`` when it cannot be enforced.

    ``requested`` is the ``network=`` argument (None: the default), ``isolation`` the backend in
    use and ``allow_network`` the native sandbox option of the same meaning as ``"full"``.
    Without isolation there is no network namespace: commands use the host's network directly,
    so ``none`` and ``allow`` would be promises nobody keeps; they are refused instead.
    """
    if requested is None:
        return NetworkConfig("full" if allow_network or isolation == "none" else "none")
    config = NetworkConfig.coerce(requested)
    if allow_network and config.mode != "full":
        raise WorkspaceConfigError(
            f"native_sandbox allow_network=True contradicts network={config.mode!r} "
            "(allow_network=True is network='full')"
        )
    if isolation == "none" and config.mode != "full":
        what = "an allow-list" if config.mode == "allow" else "'no network'"
        raise WorkspaceConfigError(
            f"network={config.mode!r} needs isolation 'bwrap': without isolation commands use the "
            f"host's network directly, so {what} cannot be enforced (use isolation='bwrap', or "
            "network='full' to say so)"
        )
    if isolation == "seatbelt" and config.mode == "allow":
        raise WorkspaceConfigError(
            "network='allow' needs isolation 'bwrap' (Linux network namespaces); on macOS use "
            "network='none' or 'full'"
        )
    return config
