"""Fixtures for the attack-replay tests: bubblewrap sandboxes and a way to run Python inside them.

Each module replays one class of attack found by an adversarial review against a real sandbox
and asserts that it fails; they run as root (as CI does), and ``test_unprivileged`` replays the
main ones as an ordinary user too.
"""

from __future__ import annotations

import platform
import sys
import uuid
from pathlib import Path

from ws_jupyter.sandbox import CommandResult, LocalSandbox

from ..helpers import write
from ..sandbox.conftest import BWRAP, make_sandbox, requires_bwrap

__all__ = ["BWRAP", "FORK_BOMB", "SYSCALLS", "make_sandbox", "requires_bwrap", "run_python"]

#: Syscall numbers for the calls that libc does not wrap (x86-64 and arm64).
SYSCALLS: dict[str, int] = {
    "x86_64": {
        "keyctl": 250,
        "add_key": 248,
        "bpf": 321,
        "perf_event_open": 298,
        "kexec_load": 246,
        "io_uring_setup": 425,
        "clone3": 435,
        "setns": 308,
    },
    "aarch64": {
        "keyctl": 219,
        "add_key": 217,
        "bpf": 280,
        "perf_event_open": 241,
        "kexec_load": 104,
        "io_uring_setup": 425,
        "clone3": 435,
        "setns": 268,
    },
}.get(platform.machine(), {})


#: Forks ``argv[1]`` times (children sleep 3 s) and prints how many forks worked and failed.
FORK_BOMB = """
import os, sys, time
made = refused = 0
for _ in range(int(sys.argv[1])):
    try:
        pid = os.fork()
    except OSError:
        refused += 1
        continue
    if pid == 0:
        time.sleep(3)
        os._exit(0)
    made += 1
print(made, refused, flush=True)
"""


def run_python(sb: LocalSandbox, code: str, *args: str, timeout: float = 60) -> CommandResult:
    """Runs ``code`` with the notebook's Python inside the sandbox (a script in its working dir)."""
    name = f"attack_{uuid.uuid4().hex[:8]}.py"
    write(Path(sb.working_directory), name, code)
    quoted = " ".join(f"'{a}'" for a in args)
    return sb.execute_command(f"{sys.executable} {name} {quoted}", timeout=timeout)
