"""Starting a run of ``workspace_execute_command`` / ``workspace_execute_code`` as a job, and the
answer that says so: shared by the two run tools (the job tools, :mod:`.jobs`, follow them)."""

from __future__ import annotations

from typing import Any

from ...sandbox.capabilities import sandbox_kernels, sandbox_processes
from ..base import ToolCall
from ..facts import WORKSPACE_TOOLS
from ..jobs import Job, job_owner, jobs

__all__ = ["describe_started", "owner_of", "start_job"]

T = WORKSPACE_TOOLS.SANDBOX


def owner_of(call: ToolCall) -> str | None:
    return job_owner(call.request_context)


def _client_of(call: ToolCall) -> str | None:
    from ...request_context import client_label

    return client_label(call.request_context)


def start_job(call: ToolCall, kind: str, *, timeout: float | None) -> Job:
    """Start the call's command or code as a job owned by the caller."""
    from ...errors import KernelError, SandboxError

    registry = jobs(call.workspace)
    common: dict[str, Any] = {
        "timeout": timeout,
        "owner": owner_of(call),
        "shared": bool(call.args.get("shared")),
        "client": _client_of(call),
        "tool_call_id": call.context.tool_call_id,
    }
    if kind == "command":
        processes = sandbox_processes(call.sandbox())
        if processes is None:
            raise SandboxError("This sandbox cannot run background processes (it has no process manager)")
        callbacks = call.option("background_processes", {}) or {}
        return registry.start_command(
            processes,
            call.args["command"],
            cwd=call.args.get("cwd"),
            on_stdout=callbacks.get("on_stdout"),
            on_stderr=callbacks.get("on_stderr"),
            **common,
        )
    kernels = sandbox_kernels(call.sandbox())
    if kernels is None:
        raise KernelError("This sandbox cannot run kernels", code="KERNELS_UNAVAILABLE")
    return registry.start_code(kernels, call.args["code"], kernel=call.args["kernel"], **common)


def describe_started(call: ToolCall, job: Job, *, after: float | None = None) -> str:
    """The answer of a call that left a job running."""
    status = call.exposed(T.JOB_STATUS)
    cancel = call.exposed(T.JOB_CANCEL)
    if job.kind == "command":
        what = f"background process (PID: {job.pid}) as job {job.id}"
    else:
        what = f'job {job.id}, a run on kernel "{job.kernel}"'
    head = f"Started {what}."
    if after is not None:
        head = f"Still running after {after:g}s: it goes on as a {what}."
    lines = [
        head,
        f'Follow it with {status} {{"id": "{job.id}"}} (wait_s to wait for it); stop it with {cancel}.',
    ]
    if job.kind == "code":
        lines.append(
            f'Kernel "{job.kernel}" stays busy until the job ends: other runs on it wait behind it '
            "(use another kernel name to work meanwhile)."
        )
    return "\n".join(lines)
