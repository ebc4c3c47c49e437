"""Background process tools: ``workspace_get_process_output``, ``workspace_kill_process``,
``workspace_list_processes``.

They work on the sandbox's process manager, so processes started by the agent, by ``%ws bg`` in a
notebook, or by Python code are all visible to the workspace's own calls. A caller with an identity
of its own (an outside MCP client; a request context naming a user) sees only the processes it
started (and those of jobs started ``shared``): another's PID gets the same answer as a PID that
does not exist. Exited processes stay listed with their output until the manager's retention limit
(see ``ProcessManager``).
"""

from __future__ import annotations

import time
from typing import Any

from ...errors import SandboxError
from ...sandbox.capabilities import ProcessProvider, sandbox_processes, sandbox_with_network_note
from ...text.ansi import strip_ansi
from ...text.shaping import apply_tail
from ..base import ToolCall, ToolSpec
from ..facts import DEFAULT_MAX_WAIT, LOOKS, WORKSPACE_TOOLS, ToolHints
from ..jobs import jobs
from ..schema import Param
from .execute_command import format_streams
from .job_runs import owner_of

__all__ = ["GET_OUTPUT_SPEC", "KILL_SPEC", "LIST_SPEC"]

_PID = Param(
    "pid",
    "integer",
    "Process ID, as returned when the background command was started.",
    required=True,
    minimum=1,
)


def _manager(call: ToolCall) -> ProcessProvider:
    processes = sandbox_processes(call.sandbox())
    if processes is None:
        raise SandboxError("This sandbox has no process manager (no background processes)")
    return processes


def _visible(call: ToolCall, handle: Any) -> bool:
    """Whether the caller may see ``handle`` (the owner of jobs owns their processes)."""
    return jobs(call.workspace).process_visible_to(handle, owner_of(call))


def _process(call: ToolCall, manager: ProcessProvider, pid: int) -> Any:
    """The handle of ``pid`` when the caller may see it, else None (as for an unknown pid)."""
    handle = manager.get(pid)
    return handle if handle is not None and _visible(call, handle) else None


def _dropped_note(dropped: int) -> str:
    return f"[{dropped} earlier bytes were not retained]" if dropped else ""


def get_process_output(call: ToolCall) -> str:
    pid = call.args["pid"]
    handle = _process(call, _manager(call), pid)
    if handle is None:
        return f"No background process found with PID {pid}."
    waited_out = False
    if call.args["wait"] and handle.exit_code is None:
        limit = float(call.option("max_wait", DEFAULT_MAX_WAIT))
        deadline = time.monotonic() + limit
        while handle.exit_code is None and time.monotonic() < deadline and not call.context.aborted:
            try:
                handle.wait(timeout=min(0.25, max(0.01, deadline - time.monotonic())))
            except TimeoutError:
                continue
        waited_out = handle.exit_code is None
    code = handle.exit_code
    stdout, stderr = handle.stdout, handle.stderr
    if code is None and not stdout.strip() and not stderr.strip():
        return "(no output yet)" + (f"\n\n(still running after waiting {limit:g}s)" if waited_out else "")
    body = format_streams(
        stdout,
        stderr,
        tail=call.args["tail"],
        max_tokens=call.max_tokens,
        hint="set tail to see more (0 = all)",
        notes=(
            _dropped_note(getattr(handle, "stdout_dropped_bytes", 0)),
            _dropped_note(getattr(handle, "stderr_dropped_bytes", 0)),
        ),
    )
    if code is not None:
        body += f"\n\nExit code: {code}"
    elif waited_out:
        body += f"\n\n(still running after waiting {limit:g}s)"
    started_at = getattr(handle, "started_at", None)
    if started_at is not None:  # network allow mode: the connections it had denied
        note = sandbox_with_network_note(call.sandbox(), handle.result(), started_at).network_note
        if note:
            body += f"\n\n{note}"
    return body


def kill_process(call: ToolCall) -> str:
    pid = call.args["pid"]
    manager = _manager(call)
    handle = _process(call, manager, pid)
    if handle is None or handle.exit_code is not None:
        return f"Process {pid} was not found or had already exited."
    if not manager.kill(pid):
        return f"Process {pid} was not found or had already exited."
    out = [f"Process {pid} has been killed."]
    for label, text in (("stdout", handle.stdout), ("stderr", handle.stderr)):
        text = strip_ansi(text).rstrip("\n")
        if text.strip():
            out.append(f"--- {label} (last output) ---\n{apply_tail(text, 50)}")
    return "\n\n".join(out)


def _runtime(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def list_processes(call: ToolCall) -> str:
    manager = _manager(call)
    infos = manager.list()
    if owner_of(call) is not None:
        infos = [p for p in infos if _visible(call, manager.get(p.pid))]
    if not infos:
        return "No background processes."
    rows = [("PID", "STATE", "RUNTIME", "EXIT", "COMMAND")]
    for p in infos:
        if p.running:
            state = "running"
        elif getattr(p, "timed_out", False):
            state = "timed out"
        elif getattr(p, "killed", False):
            state = "killed"
        else:
            state = "exited"
        command = p.command if len(p.command) <= 80 else p.command[:77] + "..."
        exit_code = "-" if p.exit_code is None else str(p.exit_code)
        rows.append((str(p.pid), state, _runtime(getattr(p, "runtime_seconds", None)), exit_code, command))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4] for r in rows]
    return "\n".join(line.rstrip() for line in lines)


GET_OUTPUT_SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.SANDBOX.GET_PROCESS_OUTPUT,
    description=(
        "Get the output of a background process started with workspace_execute_command(background=true): "
        "its last `tail` lines of stdout/stderr (default 200; 0 for all) and its exit code once it has "
        "exited. Set wait=true to wait for it to exit first (at most a few minutes)."
    ),
    params=(
        _PID,
        Param("tail", "integer", "Show only the last N lines of each stream (0 = all).", default=200),
        Param("wait", "boolean", "Wait for the process to exit before returning.", default=False),
    ),
    run=get_process_output,
    title="Background process output",
    hints=LOOKS,
    needs={"sandbox", "processes"},
    writes=False,
    options=("max_wait",),
)

KILL_SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.SANDBOX.KILL_PROCESS,
    description=(
        "Stop a background process (and everything it started) and see its last 50 lines of output."
    ),
    params=(_PID,),
    run=kill_process,
    title="Kill background process",
    hints=ToolHints(destructive=True, idempotent=True),
    needs={"sandbox", "processes"},
    writes=False,
    options=(),
)

LIST_SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.SANDBOX.LIST_PROCESSES,
    description=(
        "List background processes of the sandbox: PID, state (running, exited, killed, timed out), "
        "run time, exit code and command."
    ),
    params=(),
    run=list_processes,
    title="List background processes",
    hints=LOOKS,
    needs={"sandbox", "processes"},
    writes=False,
    options=(),
)
