"""Name resolution for the sandbox proxy: done by the proxy on the host, never by the sandbox.

The sandbox has no DNS (no route out of its network namespace); the proxy resolves the names it
allowed, checks every address it got (``NetworkPolicy.address_allowed``) and connects to an
address it checked, so a DNS answer that changes between check and use changes nothing.

Tests and benchmarks replace the internet with servers on 127.0.0.1: ``network.testing`` installs
a name map here (and which addresses count as public) for the duration of a ``with`` block.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable, Mapping, Sequence

from .policy import IPAddress, is_public

__all__ = ["ResolveError", "counts_as_public", "resolve"]


class ResolveError(Exception):
    """The name has no usable address (the message is safe to show to the sandbox)."""


#: Installed by ``network.testing.fake_internet`` only: name -> addresses, and stand-ins for public
#: addresses. None: the system resolver.
_override: dict[str, tuple[IPAddress, ...]] | None = None
_stand_ins: frozenset[IPAddress] = frozenset()


def _install(names: Mapping[str, str | Sequence[str]] | None, public: Iterable[str]) -> None:
    global _override, _stand_ins
    if names is None:
        _override, _stand_ins = None, frozenset()
        return
    table: dict[str, tuple[IPAddress, ...]] = {}
    for name, value in names.items():
        values = [value] if isinstance(value, str) else list(value)
        table[name.lower().rstrip(".")] = tuple(ipaddress.ip_address(v) for v in values)
    _override, _stand_ins = table, frozenset(ipaddress.ip_address(a) for a in public)


def counts_as_public(ip: IPAddress) -> bool:
    """``is_public``, plus the addresses a test declared to stand in for the internet."""
    return ip in _stand_ins or is_public(ip)


async def resolve(host: str, port: int, timeout: float) -> list[IPAddress]:
    """The addresses of ``host`` (IPv4 first, duplicates dropped), or ``ResolveError``."""
    table = _override
    if table is not None:
        found = table.get(host)
        if not found:
            raise ResolveError(f"cannot resolve {host}")
        return list(found)
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(
            loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP), timeout
        )
    except (socket.gaierror, UnicodeError):
        raise ResolveError(f"cannot resolve {host}") from None
    except asyncio.TimeoutError:
        raise ResolveError(f"resolving {host} timed out") from None
    out: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        try:
            ip = ipaddress.ip_address(sockaddr[0])
        except ValueError:
            continue
        if ip not in out:
            out.append(ip)
    if not out:
        raise ResolveError(f"cannot resolve {host}")
    return sorted(out, key=lambda a: a.version)
