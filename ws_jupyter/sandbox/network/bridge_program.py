"""The sandbox side of ``allow`` mode: 127.0.0.1:PORT inside, the proxy's Unix socket outside.

Run in front of every sandboxed command and kernel as ``python3 -I -S bridge.py PORT SOCKET ARGV...``
(a copy of this file, read-only inside the sandbox). It listens on the loopback of the command's
own network namespace, spawns ARGV as its only child, and hands each TCP connection it accepts
to the proxy through the proxy's Unix socket — the connected socket itself, as a descriptor
(``SCM_RIGHTS``) — so the proxy reads and writes the sandbox's connection directly and no byte
passes through this process. It knows nothing of HTTP, holds no secret and decides nothing. It
passes signals on to the command and exits as the command exits, with its status (or signal).

Only what runs before the command starts is on its critical path: the interpreter, a socket and
``posix_spawn`` (no copy of this interpreter). Imports that cost (``socket``, ``threading``)
happen after. Standard library only, for any Python 3.6+ a sandbox may have; not imported by the
package.
"""

import _socket
import os
import sys

if False:  # for type checkers only (a real import would cost start-up time)
    import socket


def _send(channel: "socket.socket", conn: "socket.socket") -> None:
    import array
    import socket

    fds = array.array("i", [conn.fileno()])
    channel.sendmsg([b"c"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())])


def _forward(fd: int, path: str) -> None:
    """Accepts connections and hands each to the proxy, as it is (the socket itself, SCM_RIGHTS):
    from then on the proxy reads and writes it directly, and this process holds nothing."""
    import socket
    import time

    listener = socket.socket(fileno=fd)
    channel = None
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:  # out of descriptors, for one: let some connections end first
            time.sleep(0.05)
            continue
        try:
            for _attempt in range(2):
                try:
                    if channel is None:
                        channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                        channel.settimeout(10)
                        channel.connect(path)
                    _send(channel, conn)
                    break
                except OSError:  # the proxy restarted (sandbox stop/start): connect again once
                    if channel is not None:
                        channel.close()
                    channel = None
        finally:
            conn.close()


def _spawn(command: "list[str]") -> int:
    spawn = getattr(os, "posix_spawnp", None)
    if spawn is not None:
        return int(spawn(command[0], command, os.environ))
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    return pid


_child = [0]  # the command's pid once spawned
_pending: "list[int]" = []  # signals that came before it


def _relay_signal(signum: int, frame: object) -> None:
    if not _child[0]:
        _pending.append(signum)
        return
    try:
        os.kill(_child[0], signum)
    except OSError:
        pass


def _forward_signals() -> None:
    """Signals to this process go to the command (installed before it starts: none is lost)."""
    import signal

    for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH", "SIGALRM"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _relay_signal)


def _exit_like(status: int) -> None:
    """Ends this process the way the command ended: its exit code, or its signal."""
    if os.WIFSIGNALED(status):
        import signal

        signum = os.WTERMSIG(status)
        try:
            signal.signal(signum, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL, SIGSTOP: already the default
            pass
        try:
            os.kill(os.getpid(), signum)
        except OSError:
            pass
        os._exit(128 + signum)  # a signal whose default is to be ignored
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


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
            f"ws-jupyter: the sandbox network bridge cannot listen on 127.0.0.1:{port} "
            f"({exc.strerror or exc}): no network for this command\n"
        )
        listener = None
    if listener is None:
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            sys.stderr.write(f"ws-jupyter: cannot run {command[0]}: {exc.strerror or exc}\n")
            sys.exit(127)
    # The command runs as this process's child (spawned: no copy of this interpreter), already
    # able to connect: the socket listens, and connections wait in its backlog until the
    # forwarder thread accepts them. This process relays signals, and ends as the command ends.
    _forward_signals()
    try:
        child = _spawn(command)
    except OSError as exc:
        sys.stderr.write(f"ws-jupyter: cannot run {command[0]}: {exc.strerror or exc}\n")
        sys.exit(127)
    _child[0] = child
    for signum in _pending:
        _relay_signal(signum, None)
    import threading

    threading.Thread(target=_forward, args=(listener.detach(), path), daemon=True).start()
    while True:
        try:
            pid, status = os.waitpid(child, 0)
        except ChildProcessError:
            os._exit(1)
        if pid == child:
            _exit_like(status)


if __name__ == "__main__":
    main(sys.argv)
