"""Which destinations a sandbox in ``allow`` mode may reach: host rules, ports and addresses.

A rule is written the way people write hosts::

    pypi.org                 the host itself, ports 80 and 443
    pypi.org:8443            one port            pypi.org:*     any port
    *.example.com            any subdomain (a.example.com, a.b.example.com), not example.com
    *                        any host name (still public addresses only)
    10.0.0.5   [::1]:8080    an IP address       10.0.0.0/8     a network

Names are compared after normalisation (lower case, one trailing dot dropped). A *host* is never
an IP address in disguise: a name whose last label is numeric (``127.1``, ``0x7f.1``,
``2130706433``) is refused, because the system resolver would read it as an address.

Addresses are checked apart from names: a destination, whether written as an address or
resolved from an allowed name, must be a public address (``is_public``) unless an address rule
covers it. So ``pypi.internal`` that resolves to 10.1.2.3 needs ``10.0.0.0/8`` (or the address)
listed as well, and an allowed name that an attacker's DNS points at 127.0.0.1 or the cloud
metadata address is refused (DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DEFAULT_PORTS",
    "Destination",
    "HostRule",
    "IPAddress",
    "NetworkPolicy",
    "is_public",
    "parse_destination",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: The ports a rule without a port allows: plain HTTP and HTTPS.
DEFAULT_PORTS: frozenset[int] = frozenset({80, 443})

_LABEL = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$")
_NUMERIC_LABEL = re.compile(r"^(?:[0-9]+|0x[0-9a-f]*)$")
_PORT = re.compile(r"^[0-9]{1,5}$")

#: Networks whose addresses are never public even though ``ipaddress`` may call them global.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _normalize_name(text: str) -> str:
    """A host name in canonical form, or ValueError (with the reason) when it is not one."""
    name = text.strip().lower()
    if name.endswith("."):
        name = name[:-1]
    if not name or len(name) > 253:
        raise ValueError("not a host name")
    if not name.isascii():
        raise ValueError("not an ASCII host name (write it in its xn-- form)")
    labels = name.split(".")
    if not all(_LABEL.match(label) for label in labels):
        raise ValueError("not a host name")
    if _NUMERIC_LABEL.match(labels[-1]):
        raise ValueError("a numeric host name is an IP address in disguise")
    return name


def _parse_address(text: str) -> IPAddress | None:
    """An IP address written canonically (``10.0.0.1``, ``::1``), else None; never a scope id."""
    if "%" in text:
        return None
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, Teredo, NAT64), if any."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public(ip: IPAddress) -> bool:
    """True for an address on the public internet: not private, loopback, link-local (the cloud
    metadata service), shared, multicast, reserved or unspecified — nor an IPv6 address that
    embeds such an IPv4 address (``::ffff:127.0.0.1``)."""
    inner = _embedded_ipv4(ip)
    if inner is not None and not is_public(inner):
        return False
    return bool(ip.is_global) and not ip.is_multicast and not ip.is_reserved and not ip.is_unspecified


@dataclass(frozen=True)
class Destination:
    """A requested destination: a host name or an IP address (``address`` set), and a port."""

    host: str
    port: int
    address: IPAddress | None = None

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def _parse_port(text: str) -> int:
    if not _PORT.match(text) or not 0 < int(text) < 65536:
        raise ValueError(f"invalid port {text!r}")
    return int(text)


def _split_port(text: str) -> tuple[str, str | None, bool]:
    """``(host, port text or None, whether the host was in brackets)`` of ``host:port``/``[v6]:port``.

    Without brackets only one colon marks a port (a bare IPv6 address has several).
    """
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise ValueError("unclosed '['")
        host, rest = text[1:end], text[end + 1 :]
        if rest and not rest.startswith(":"):
            raise ValueError("junk after ']'")
        return host, (rest[1:] if rest else None), True
    if text.count(":") == 1:
        host, port = text.split(":")
        return host, port, False
    return text, None, False


def parse_destination(authority: str, default_port: int | None = None) -> Destination:
    """``host:port``, ``[v6]:port`` or, with ``default_port``, a bare host, as a ``Destination``.

    Raises ValueError with a short reason (shown to the sandbox) for anything else.
    """
    text = authority.strip()
    if not text or len(text) > 300:
        raise ValueError("empty or over-long host")
    host, port_text, bracketed = _split_port(text)
    address = _parse_address(host)
    if bracketed and not isinstance(address, ipaddress.IPv6Address):
        raise ValueError("brackets hold an IPv6 address")
    if not bracketed and ":" in host:
        raise ValueError("an IPv6 address must be written in brackets")
    if address is None:
        host = _normalize_name(host)
    if port_text is None:
        if default_port is None:
            raise ValueError("missing port")
        port = default_port
    else:
        port = _parse_port(port_text)
    if address is not None:
        return Destination(str(address), port, address)
    return Destination(host, port)


@dataclass(frozen=True)
class HostRule:
    """One allow-list entry (see the module docstring for the syntax).

    >>> HostRule.parse("*.example.com").allows(parse_destination("a.example.com:443"))
    True
    >>> HostRule.parse("pypi.org").allows(parse_destination("pypi.org:8080"))
    False
    """

    kind: Literal["name", "wildcard", "any", "network"]
    pattern: str
    ports: frozenset[int] | None = DEFAULT_PORTS  # None: any port
    network: IPNetwork | None = None

    @classmethod
    def parse(cls, text: object) -> HostRule:
        """Parses one rule; ValueError (naming the rule and why) when it is not one."""
        if not isinstance(text, str):
            raise ValueError(f"a host rule must be a string, got {type(text).__name__}")
        raw = text.strip()
        try:
            return cls._parse(raw.lower())
        except ValueError as exc:
            raise ValueError(f"invalid host rule {raw!r}: {exc}") from None

    @classmethod
    def _parse(cls, text: str) -> HostRule:
        if not text:
            raise ValueError("empty")
        host, port_text, _bracketed = _split_port(text)  # a bare IPv6 network has no port
        ports: frozenset[int] | None = DEFAULT_PORTS
        if port_text is not None:
            ports = None if port_text == "*" else frozenset({_parse_port(port_text)})
        if host == "*":
            return cls("any", "*", ports)
        if any(c in host for c in "/:") or _parse_address(host) is not None:
            try:
                network = ipaddress.ip_network(host, strict=False)
            except ValueError:
                raise ValueError("not an IP address or network") from None
            return cls("network", str(network), ports, network)
        if host.startswith("*."):
            return cls("wildcard", "*." + _normalize_name(host[2:]), ports)
        if "*" in host:
            raise ValueError("'*' is allowed only as the whole host or as a leading '*.'")
        return cls("name", _normalize_name(host), ports)

    def allows_port(self, port: int) -> bool:
        return self.ports is None or port in self.ports

    def covers_name(self, host: str) -> bool:
        if self.kind == "any":
            return True
        if self.kind == "name":
            return host == self.pattern
        if self.kind == "wildcard":
            return host.endswith(self.pattern[1:])
        return False

    def covers_address(self, ip: IPAddress) -> bool:
        return self.network is not None and ip.version == self.network.version and ip in self.network

    def allows(self, dest: Destination) -> bool:
        """Whether this rule lets a connection to ``dest`` through (before address checks)."""
        if not self.allows_port(dest.port):
            return False
        if dest.address is not None:
            return self.covers_address(dest.address)
        return self.covers_name(dest.host)

    def __str__(self) -> str:
        host = f"[{self.pattern}]" if self.kind == "network" and ":" in self.pattern else self.pattern
        if self.ports == DEFAULT_PORTS:
            return host
        if self.ports is None:
            return f"{host}:*"
        return f"{host}:{next(iter(self.ports))}"


class NetworkPolicy:
    """An allow-list: ``rule_for(dest)`` and ``address_allowed(ip)`` answer the two questions.

    ``public`` decides which addresses count as public (``is_public``; tests put their
    127.0.0.1 servers in the place of the internet through ``network.testing``).
    """

    def __init__(self, rules: Iterable[HostRule], public: Callable[[IPAddress], bool] = is_public) -> None:
        self.rules = tuple(rules)
        self._networks = tuple(r for r in self.rules if r.kind == "network")
        self._public = public

    def rule_for(self, dest: Destination) -> HostRule | None:
        """The first rule that allows ``dest`` (its name, or its address when it is one)."""
        return next((r for r in self.rules if r.allows(dest)), None)

    def address_allowed(self, ip: IPAddress) -> bool:
        """Whether a connection may go to ``ip``: public, or covered by an address rule."""
        return self._public(ip) or any(r.covers_address(ip) for r in self._networks)
