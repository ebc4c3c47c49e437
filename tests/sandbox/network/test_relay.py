"""The kernel-side relay on its own: bytes both ways (spliced), end of stream passed on, kill()
from another thread, and no action on a descriptor number after the relay gave it back."""

from __future__ import annotations

import os
import socket
import threading

from ws_jupyter.sandbox.network.relay import Relays


def pair() -> tuple[socket.socket, socket.socket]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    near = socket.create_connection(listener.getsockname())
    far, _ = listener.accept()
    listener.close()
    return near, far


def test_bytes_flow_both_ways_and_end_of_stream_passes() -> None:
    relays = Relays()
    client, client_far = pair()  # client_far / upstream_far are what the proxy holds
    upstream, upstream_far = pair()
    done = threading.Event()
    counted = {"up": 0, "down": 0}
    relays.start(
        client_far.fileno(),
        upstream_far.fileno(),
        up=lambda n: counted.__setitem__("up", counted["up"] + n),
        down=lambda n: counted.__setitem__("down", counted["down"] + n),
        done=done.set,
    )
    payload = os.urandom(5 << 20)
    sender = threading.Thread(target=lambda: (upstream.sendall(payload), upstream.shutdown(socket.SHUT_WR)))
    sender.start()
    client.sendall(b"request")
    client.shutdown(socket.SHUT_WR)
    got = bytearray()
    while chunk := client.recv(1 << 20):
        got += chunk
    sender.join()
    assert bytes(got) == payload
    assert upstream.recv(100) == b"request" and upstream.recv(100) == b""
    assert done.wait(10) and counted == {"up": 7, "down": len(payload)} and len(relays) == 0
    for s in (client, client_far, upstream, upstream_far):
        s.close()


def test_kill_ends_both_directions_and_is_harmless_afterwards() -> None:
    relays = Relays()
    client, client_far = pair()
    upstream, upstream_far = pair()
    done = threading.Event()
    relay = relays.start(
        client_far.fileno(), upstream_far.fileno(), up=None, down=lambda n: None, done=done.set
    )
    numbers = (relay.client, relay.upstream)
    relays.close_all()
    assert done.wait(10)
    assert client.recv(10) == b""  # shut down
    # the relay's descriptor numbers now belong to another socket: a late kill() must not touch it
    other, other_far = pair()
    taken = [os.dup(other_far.fileno()) for _ in range(8)]  # the lowest free numbers first
    reused = [fd for fd in taken if fd in numbers]
    assert reused, (numbers, taken)
    relay.kill()
    other.sendall(b"still here")
    assert os.read(reused[0], 100) == b"still here"
    for fd in taken:
        os.close(fd)
    for s in (client, client_far, upstream, upstream_far, other, other_far):
        s.close()
