"""Where the proxy's connections come from: descriptors a bridge sends, and who sent them.

A bridge inside the sandbox hands each TCP connection it accepted to the proxy as a descriptor
over the proxy's Unix socket (``SCM_RIGHTS``). The sandbox can send any descriptor it holds that
way, so only a connected TCP stream socket is kept (``client_socket``). Who sent it is read
from the kernel (``SO_PEERCRED`` of the Unix connection, then /proc): the chain of host pids
that lets a command's result name its own denied attempts.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct

__all__ = ["client_socket", "peer_lineage", "received_fds"]


def peer_lineage(sock: socket.socket | None) -> tuple[int, ...]:
    """The connecting process and its ancestors (host pids), from ``SO_PEERCRED`` and /proc."""
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return ()
    try:
        pid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
    except OSError:
        return ()
    chain: list[int] = []
    while pid > 1 and len(chain) < 12:
        chain.append(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
            pid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return tuple(chain)


def received_fds(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    """The descriptors of an SCM_RIGHTS message (all of them: the receiver owns them now)."""
    fds: list[int] = []
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(data) - len(data) % 4
            fds += list(struct.unpack(f"{usable // 4}i", data[:usable]))
    return fds


def client_socket(fd: int) -> socket.socket | None:
    """``fd`` as a client connection when it is a connected TCP stream socket; else closed, None."""
    try:
        client = socket.socket(fileno=fd)
    except OSError:  # not a socket at all (a file, a pipe...)
        with contextlib.suppress(OSError):
            os.close(fd)
        return None
    try:
        if client.family not in (socket.AF_INET, socket.AF_INET6) or client.type != socket.SOCK_STREAM:
            raise OSError("not a TCP stream socket")
        client.getpeername()  # connected: a listening or fresh socket raises ENOTCONN
    except OSError:
        client.close()
        return None
    client.setblocking(False)
    return client
