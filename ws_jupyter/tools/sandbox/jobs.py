"""``workspace_job_status`` and ``workspace_job_cancel``: follow and stop the long runs that
``workspace_execute_command`` / ``workspace_execute_code`` started as jobs (started by
:mod:`.job_runs`, kept in the registry :mod:`ws_jupyter.tools.jobs`).

A caller sees only its own jobs (an outside MCP client its own, the workspace's agent the
workspace's), unless the job was started ``shared``.
"""

from __future__ import annotations

import time

from ..base import ToolCall, ToolSpec
from ..facts import DEFAULT_MAX_WAIT, LOOKS, WORKSPACE_TOOLS, ToolHints
from ..jobs import Job, JobRegistry, jobs
from ..schema import Param
from .execute_command import format_streams
from .job_runs import owner_of

__all__ = ["CANCEL_SPEC", "STATUS_SPEC", "job_status_text"]

T = WORKSPACE_TOOLS.SANDBOX

_ID = Param("id", "string", "The job id returned when the run was started (job-...).", required=True)


def _age(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


def _one_line(text: str, width: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 3] + "..."


def job_status_text(call: ToolCall, job: Job, tail: int | None) -> str:
    """Status, output so far (bounded like the tool that started it) and how it ended."""
    from ..types import output_text
    from .kernels import format_execution

    what = f"command, PID {job.pid}" if job.kind == "command" else f'code on kernel "{job.kernel}"'
    state = job.status
    head = f"Job {job.id} ({what}): {state} after {_age(job.runtime)} — {_one_line(job.label)}"
    if job.kind == "code" and job.done and job.result is not None:
        body = output_text(format_execution(job.result, max_tokens=call.max_tokens))
    elif job.kind == "code" and job.done and job.error is not None:
        body = f"Error: {job.error}"
    else:
        dropped_out, dropped_err = job.dropped
        unit = "bytes" if job.kind == "command" else "characters"
        body = format_streams(
            job.stdout,
            job.stderr,
            tail=tail,
            max_tokens=call.max_tokens,
            empty="(no output yet)" if not job.done else "(no output)",
            hint="set tail to see more (0 = all)",
            notes=(
                f"[{dropped_out} earlier {unit} were not retained]" if dropped_out else "",
                f"[{dropped_err} earlier {unit} were not retained]" if dropped_err else "",
            ),
        )
    parts = [head, body]
    if job.kind == "command" and job.done and job.exit_code is not None:
        parts.append(f"Exit code: {job.exit_code}" + (" (cancelled)" if job.cancelled else ""))
    elif job.cancelled:
        parts.append("Cancelled: the run was interrupted.")
    return "\n\n".join(p for p in parts if p)


def _registry(call: ToolCall) -> JobRegistry:
    return jobs(call.workspace)


def _not_found(call: ToolCall, job_id: str) -> str:
    return f'No job "{job_id}" of yours. {call.exposed(T.JOB_STATUS)} without an id lists your jobs.'


def job_status(call: ToolCall) -> str:
    owner = owner_of(call)
    job_id = call.args.get("id")
    tail = call.args["tail"]
    if not job_id:
        mine = _registry(call).list(owner)
        if not mine:
            return "You have no jobs. A run becomes a job with background=true (or keep_running=true)."
        return "\n".join(
            f"{j.id}\t{j.status}\t{_age(j.runtime)}\t{j.kind}\t{_one_line(j.label, 60)}" for j in mine
        )
    job = _registry(call).get(job_id, owner)
    if job is None:
        return _not_found(call, job_id)
    wait_s = call.args["wait_s"]
    if wait_s and not job.done:
        limit = min(float(wait_s), float(call.option("max_wait", DEFAULT_MAX_WAIT)))
        job.wait(limit, call.context.abort)
    text = job_status_text(call, job, tail)
    if not job.done and wait_s:
        text += f"\n\n(still running after waiting {min(float(wait_s), float(call.option('max_wait', DEFAULT_MAX_WAIT))):g}s)"
    return text


def job_cancel(call: ToolCall) -> str:
    job_id = call.args["id"]
    job = _registry(call).get(job_id, owner_of(call))
    if job is None:
        return _not_found(call, job_id)
    if not job.cancel():
        return f"Job {job.id} had already ended ({job.status})."
    deadline = time.monotonic() + 10
    while not job.done and time.monotonic() < deadline:
        time.sleep(0.05)
    tail = job_status_text(call, job, 20)
    return f"Cancelled job {job.id}.\n\n{tail}"


STATUS_SPEC = ToolSpec(
    name=T.JOB_STATUS,
    description=(
        "Status of a job (a long run started with background=true or kept running with keep_running=true): "
        "running or how it ended, its output so far (the last `tail` lines, default 50) and the exit code or "
        "result. wait_s waits up to that many seconds for it to end first. Without an id: your jobs."
    ),
    params=(
        Param("id", "string", "The job id (job-...). Omit to list your jobs."),
        Param("wait_s", "number", "Wait up to this many seconds for the job to end.", minimum=0),
        Param("tail", "integer", "Show only the last N lines of each stream (0 = all).", default=50),
    ),
    run=job_status,
    title="Job status",
    hints=LOOKS,
    needs={"sandbox"},
    writes=False,
    options=("max_wait",),
)

CANCEL_SPEC = ToolSpec(
    name=T.JOB_CANCEL,
    description=(
        "Stop a job: a command job's process tree is killed, a code job is interrupted (its kernel keeps its "
        "state). Shows how it ended."
    ),
    params=(_ID,),
    run=job_cancel,
    title="Cancel job",
    hints=ToolHints(destructive=True, idempotent=True),
    needs={"sandbox"},
    writes=False,
    options=(),
)
