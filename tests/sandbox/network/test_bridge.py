"""The in-sandbox bridge on its own (run on the host here, against a Unix socket echo server):
it relays bytes both ways, runs the command as its child, passes signals on and ends with the
command's status — also while connections are open."""

from __future__ import annotations

import os
import signal
import socket
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
    """A Unix socket server that echoes each connection upper-cased until end of stream."""
    folder = tempfile.mkdtemp(prefix="wsb-")
    path = os.path.join(folder, "echo.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(16)

    def serve(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data.upper())

    def loop() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    yield path
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
