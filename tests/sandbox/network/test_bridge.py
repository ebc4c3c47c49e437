"""The in-sandbox bridge on its own (run on the host here, against a stand-in proxy that echoes):
it hands connections over (bytes then flow both ways without it), runs the command as its child,
passes signals on and ends with the command's status — also while connections are open."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator

import pytest

from ws_jupyter.sandbox.network.runtime import _PROGRAM

from .conftest import free_port


@pytest.fixture
def echo() -> Iterator[str]:
    """A stand-in proxy on a Unix socket: it takes the connections bridges hand over (as
    descriptors) and echoes each upper-cased until end of stream. Every thread it starts ends
    with the test (a thread left blocked on a closed socket could act on a reused descriptor)."""
    folder = tempfile.mkdtemp(prefix="wsb-")
    path = os.path.join(folder, "echo.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(16)
    server.settimeout(0.1)
    stop = threading.Event()
    threads: list[threading.Thread] = []

    def start(target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        threads.append(thread)
        thread.start()

    def serve(conn: socket.socket) -> None:
        with conn:
            while not stop.is_set():
                try:
                    data = conn.recv(65536)
                except TimeoutError:
                    continue
                if not data:
                    return
                conn.sendall(data.upper())

    def channel(bridge: socket.socket) -> None:
        with bridge:
            while not stop.is_set():
                try:
                    data, ancillary, _, _ = bridge.recvmsg(16, socket.CMSG_SPACE(4))
                except TimeoutError:
                    continue
                for _level, _kind, fds in ancillary:
                    conn = socket.socket(fileno=struct.unpack("i", fds[:4])[0])
                    conn.settimeout(0.1)
                    start(serve, conn)
                if not data:
                    return

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            conn.settimeout(0.1)
            start(channel, conn)

    start(loop)
    yield path
    stop.set()
    for thread in threads:
        thread.join(5)
    server.close()
    os.unlink(path)
    os.rmdir(folder)


def bridge(port: int, path: str, *command: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-I", "-S", _PROGRAM, str(port), path, *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def connect(port: int) -> socket.socket:
    deadline = time.monotonic() + 20
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=10)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def test_bytes_flow_both_ways_and_the_bridge_ends_with_the_command(echo: str) -> None:
    port = free_port()
    proc = bridge(port, echo, "/bin/sh", "-c", "read line; exit 5")  # runs until we write a line
    with connect(port) as s:
        payload = os.urandom(3 << 20).hex().encode()  # 6 MiB, both directions at once
        sender = threading.Thread(target=lambda: (s.sendall(payload), s.shutdown(socket.SHUT_WR)))
        sender.start()
        got = bytearray()
        while chunk := s.recv(1 << 20):
            got += chunk
        sender.join()
    assert bytes(got) == payload.upper()
    held = connect(port)  # a connection still open when the command ends
    held.sendall(b"x")
    assert held.recv(1) == b"X"
    assert len(_children(proc.pid)) == 1  # the command, nothing else
    proc.communicate(b"go\n", timeout=20)
    assert proc.returncode == 5
    held.close()


def _children(pid: int) -> list[int]:
    import psutil

    try:
        return [c.pid for c in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def test_signals_pass_on_and_the_status_is_the_commands(echo: str) -> None:
    port = free_port()
    proc = bridge(port, echo, "/bin/sh", "-c", "trap 'exit 7' TERM; echo ready; while :; do sleep 0.05; done")
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(signal.SIGTERM)  # to the bridge only: the command gets it
    assert proc.wait(timeout=20) == 7
    killed = bridge(port, echo, "/bin/sh", "-c", "kill -KILL $$")
    assert killed.wait(timeout=20) == -signal.SIGKILL  # died by the same signal


def test_without_its_port_the_command_still_runs_and_says_why(echo: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = bridge(port, echo, "/bin/sh", "-c", "echo ran")
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and out == b"ran\n"
    assert b"cannot listen on 127.0.0.1:" in err and b"no network for this command" in err
