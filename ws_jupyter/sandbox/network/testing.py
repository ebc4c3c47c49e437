"""Test-only: servers on 127.0.0.1 in the place of the internet, for the sandbox proxy.

Tests and benchmarks must not touch the real network, yet the proxy refuses loopback addresses
and resolves names with the system resolver. Inside ``fake_internet(...)`` the proxy resolves
names through the given map only (an unknown name does not resolve), counts the ``public``
addresses as public, and trusts ``cafile`` for the TLS it opens to hosts with header secrets.
Nothing in the package uses this module; it changes process-wide state, so one block at a time.

>>> with fake_internet({"pypi.test": "127.0.0.1", "evil.test": "169.254.169.254"}):  # doctest: +SKIP
...     sandbox.execute_command("pip download --index-url http://pypi.test:8080/simple/ x")
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence

from . import resolver, tls

__all__ = ["fake_internet"]

_lock = threading.Lock()


@contextlib.contextmanager
def fake_internet(
    names: Mapping[str, str | Sequence[str]],
    *,
    public: Iterable[str] = ("127.0.0.1",),
    cafile: str | None = None,
) -> Iterator[None]:
    """Within the block: ``names`` is the whole DNS, ``public`` addresses count as public, and
    ``cafile`` is trusted by the proxy's own TLS connections."""
    if not _lock.acquire(blocking=False):
        raise RuntimeError("fake_internet() blocks cannot be nested or run at the same time")
    try:
        resolver._install(names, public)
        tls._extra_upstream_cafile = cafile
        yield
    finally:
        resolver._install(None, ())
        tls._extra_upstream_cafile = None
        _lock.release()
