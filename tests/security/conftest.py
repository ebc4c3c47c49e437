"""Fixtures for the attack-replay tests.

Each module replays one class of attack found by an adversarial review and asserts that it fails.
Sandbox attacks run against a real bubblewrap sandbox (as root, as CI does; ``test_unprivileged``
replays the main ones as an ordinary user too). Attacks on the workspace's own code run in a child
process (``replay``), so that one that still works (a hang, a memory blow-up) fails its test instead
of taking the test run — or the machine — down with it.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import textwrap
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ws_jupyter.sandbox import CommandResult, LocalSandbox

from ..helpers import write
from ..sandbox.conftest import BWRAP, make_sandbox, requires_bwrap

__all__ = [
    "BWRAP",
    "FORK_BOMB",
    "SYSCALLS",
    "Replay",
    "make_sandbox",
    "replay",
    "requires_bwrap",
    "run_python",
]

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

PRELUDE = """
import json, os, sys
from ws_jupyter import Workspace, LocalFilesystem
def tools_of(root, **kw):
    ws = Workspace(filesystem=LocalFilesystem(root), **kw)
    return ws, {t.name: t for t in ws.tools()}
def emit(value):
    print("RESULT " + json.dumps(value), flush=True)
"""


@dataclass
class Replay:
    finished: bool  # False: killed at the timeout (the attack hung the call)
    results: list[Any]
    returncode: int | None
    stderr: str


def replay(script: str, *, timeout: float = 60.0, memory_bytes: int = 3 << 30, **env: str) -> Replay:
    """Run ``script`` (PRELUDE first: ``tools_of``, ``emit``) in a child Python with an address
    space limit; ``emit(value)`` calls come back as ``results``."""

    def limit() -> None:  # pragma: no cover - runs in the child
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    code = PRELUDE + textwrap.dedent(script)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=limit,
            env={**os.environ, **env},
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return Replay(False, _results(out), None, "")
    return Replay(True, _results(proc.stdout), proc.returncode, proc.stderr[-3000:])


def _results(out: str) -> list[Any]:
    return [json.loads(line[7:]) for line in out.splitlines() if line.startswith("RESULT ")]
