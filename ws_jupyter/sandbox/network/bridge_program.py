"""The sandbox side of ``allow`` mode: 127.0.0.1:PORT inside, the proxy's Unix socket outside.

Run in front of every sandboxed command and kernel as ``python3 -I -S bridge.py PORT SOCKET ARGV...``
(a copy of this file, read-only inside the sandbox). It listens on the loopback of the command's
own network namespace, leaves a forwarder behind — a grandchild, re-parented to the sandbox's
init, so a shell's ``wait`` never waits for it — and replaces itself with ARGV. The forwarder
copies each TCP connection to a new connection on the proxy's socket, byte for byte: it knows
nothing of HTTP, holds no secret and decides nothing (the proxy does). It dies with the sandbox's
pid namespace when the command ends.

Only what runs before the command starts is on its critical path: the interpreter, a socket, a
double fork. Imports that cost (``socket``, ``threading``) happen in the forwarder. Standard library
only, for any Python 3 a sandbox may have; not imported by the package.
"""

import _socket
import os
import sys

if False:  # for type checkers only (a real import would cost start-up time)
    import socket
    import threading

_BUFFER = 256 * 1024
_MAX_CONNECTIONS = 512


def _pump(src: "socket.socket", dst: "socket.socket") -> None:
    import socket

    buf = bytearray(_BUFFER)
    view = memoryview(buf)
    try:
        while True:
            n = src.recv_into(buf)
            if not n:
                break
            dst.sendall(view[:n])
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _connection(conn: "socket.socket", path: str, slots: "threading.BoundedSemaphore") -> None:
    import socket
    import threading

    try:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.settimeout(10)
            upstream.connect(path)
            upstream.settimeout(None)
        except OSError:
            upstream.close()
            return
        back = threading.Thread(target=_pump, args=(upstream, conn), daemon=True)
        back.start()
        _pump(conn, upstream)
        back.join()
        upstream.close()
    finally:
        conn.close()
        slots.release()


def _forward(fd: int, path: str) -> None:
    import socket
    import threading

    listener = socket.socket(fileno=fd)
    slots = threading.BoundedSemaphore(_MAX_CONNECTIONS)
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            continue
        if not slots.acquire(blocking=False):
            conn.close()
            continue
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=_connection, args=(conn, path, slots), daemon=True).start()
        except Exception:
            conn.close()
            slots.release()


def main(argv: "list[str]") -> None:
    port, path, command = int(argv[1]), argv[2], argv[3:]
    listener = None
    try:
        listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
    except OSError as exc:
        sys.stderr.write(
            f"ws-jupyter: the sandbox network bridge cannot listen on 127.0.0.1:{port} ({exc.strerror or exc}): "
            "no network for this command\n"
        )
        listener = None
    if listener is not None:
        child = os.fork()
        if child == 0:
            code = 0
            try:
                if os.fork() == 0:
                    os.setsid()
                    null = os.open(os.devnull, os.O_RDWR)
                    for fd in (0, 1, 2):
                        os.dup2(null, fd)
                    _forward(listener.detach(), path)
            except BaseException:
                code = 1
            os._exit(code)
        os.waitpid(child, 0)
        listener.close()
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"ws-jupyter: cannot run {command[0]}: {exc.strerror or exc}\n")
        sys.exit(127)


if __name__ == "__main__":
    main(sys.argv)
