"""``workspace_execute_command``: run a shell command in the sandbox, foreground or background.

The model sees what a person at a terminal would need: stdout, stderr (labelled only when both
exist), the exit code when it is not 0, the last lines when the output is long (``tail``, with
how to see more) and a head+tail cut when it is huge — with ANSI colour codes and progress-bar
redraws removed. A trailing ``| tail -N`` that applies to the whole command line
(:mod:`ws_jupyter.tools.shell_tail` decides, conservatively) is taken off the command and
applied to its stdout instead, so the exit code is the command's own, not ``tail``'s; anything
else (``a && b | tail -1`` tails only ``b``) is run as written.

Approval default: on a sandbox that runs commands on the host without isolation
(``LocalSandbox(isolation="none")``), this tool requires approval unless the config says
otherwise; with bwrap/seatbelt isolation it does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import SandboxError
from ...sandbox.capabilities import (
    sandbox_cancels_commands,
    sandbox_processes,
    sandbox_runs_on_host,
    sandbox_timeout,
)
from ...text.ansi import strip_ansi
from ...text.shaping import apply_tail, truncate_head_tail
from ..base import ToolCall, ToolSpec
from ..facts import WORKSPACE_TOOLS, ToolHints
from ..schema import Param
from ..types import ToolCallContext
from .shell_tail import split_tail_pipe

if TYPE_CHECKING:
    from ...sandbox.types import WorkspaceSandbox
    from ...workspace import Workspace

__all__ = ["SPEC", "execute_command", "format_streams"]

DESCRIPTION = (
    "Run a shell command (sh -c) in the workspace sandbox and get its output: stdout, stderr and the "
    "exit code when it is not 0. Long output is cut to its last `tail` lines (default 200; 0 for all). "
    "timeout is in seconds (default: the sandbox's). Set background=true for servers and other "
    "long-running commands: it returns a PID at once; follow it with workspace_get_process_output "
    "and stop it with workspace_kill_process. cwd is relative to the sandbox working directory."
)

PARAMS = (
    Param(
        "command",
        "string",
        "The shell command line, e.g. 'pytest -q tests/'.",
        required=True,
        allow_empty=False,
    ),
    Param("timeout", "number", "Time limit in seconds. Default: the sandbox's limit.", minimum=0.001),
    Param("cwd", "string", "Working directory, relative to the sandbox working directory."),
    Param("tail", "integer", "Show only the last N lines of each stream (0 = all).", default=200),
    Param("background", "boolean", "Start in the background and return its PID at once.", default=False),
)

def _shape(text: str, tail: int | None, budget: int | None, hint: str) -> str:
    text = strip_ansi(text).rstrip("\n")
    if not text:
        return ""
    return truncate_head_tail(apply_tail(text, tail, hint), budget)


def format_streams(
    stdout: str,
    stderr: str,
    *,
    tail: int | None = 200,
    max_tokens: int | None = 2000,
    empty: str = "(no output)",
    notes: tuple[str, str] = ("", ""),
    stdout_tail: int | None = None,
    hint: str = "",
) -> str:
    """stdout alone, ``stderr:\\n...``, or ``stdout:\\n...\\n\\nstderr:\\n...``; ``empty`` when none."""
    both = bool(stdout.strip()) and bool(stderr.strip())
    budget = max(100, max_tokens // 2) if (max_tokens and both) else max_tokens
    out = _shape(stdout, tail if stdout_tail is None else stdout_tail, budget, hint)
    err = _shape(stderr, tail, budget, hint)
    if out and notes[0]:
        out = notes[0] + "\n" + out
    if err and notes[1]:
        err = notes[1] + "\n" + err
    if out and err:
        return f"stdout:\n{out}\n\nstderr:\n{err}"
    if err:
        return f"stderr:\n{err}"
    return out or empty


def execute_command(call: ToolCall) -> str:
    args = call.args
    sandbox = call.sandbox()
    command: str = args["command"]
    tail = args["tail"]
    timeout = args["timeout"]
    if args["background"]:
        return _background(call, sandbox, command, timeout)
    stdout_tail = None
    split = split_tail_pipe(command)
    if split is not None:
        command, stdout_tail = split
    kwargs: dict[str, Any] = {"cwd": args["cwd"], "timeout": timeout}
    if call.context.abort is not None and sandbox_cancels_commands(sandbox):
        kwargs["abort"] = call.context.abort
    result = sandbox.execute_command(command, **kwargs)
    hint = (
        "set tail to see more (0 = all), or redirect the output to a file and read it with "
        f"{call.exposed(WORKSPACE_TOOLS.FILESYSTEM.READ_FILE)}"
    )
    body = format_streams(
        result.stdout, result.stderr, tail=tail, max_tokens=call.max_tokens, stdout_tail=stdout_tail, hint=hint
    )
    if result.exit_code != 0 or getattr(result, "timed_out", False):
        body += f"\n\nExit code: {result.exit_code}"
        if getattr(result, "timed_out", False):
            limit = timeout if timeout is not None else sandbox_timeout(sandbox)
            body += f" (timed out after {limit:g}s)" if limit else " (timed out)"
    note = getattr(result, "network_note", "")  # network allow mode: its denied connections
    if note:
        body += f"\n\n{note}"
    return body


def _background(call: ToolCall, sandbox: WorkspaceSandbox, command: str, timeout: float | None) -> str:
    processes = sandbox_processes(sandbox)
    if processes is None:
        raise SandboxError("This sandbox cannot run background processes (it has no process manager)")
    callbacks = call.option("background_processes", {}) or {}
    handle = processes.spawn(
        command,
        cwd=call.args["cwd"],
        timeout=timeout,
        on_stdout=callbacks.get("on_stdout"),
        on_stderr=callbacks.get("on_stderr"),
        stdin="ignore",
    )
    on_exit = callbacks.get("on_exit")
    if on_exit is not None:

        def notify(kind: str, _text: str) -> None:
            if kind == "exit":
                on_exit(
                    {
                        "pid": handle.pid,
                        "command": handle.command,
                        "exit_code": handle.exit_code,
                        "stdout": handle.stdout,
                        "stderr": handle.stderr,
                        "tool_call_id": call.context.tool_call_id,
                    }
                )

        handle.subscribe(notify)
    return f"Started background process (PID: {handle.pid})"


def _unisolated(sandbox: WorkspaceSandbox) -> bool:
    return sandbox_runs_on_host(sandbox)


def _default_approval(ctx: ToolCallContext, workspace: Workspace) -> bool:
    return _unisolated(workspace.resolve_sandbox(ctx.request_context))


def _static_default_approval(workspace: Workspace) -> bool:
    sandbox = workspace.sandbox
    return True if sandbox is None else _unisolated(sandbox)


SPEC = ToolSpec(
    name=WORKSPACE_TOOLS.SANDBOX.EXECUTE_COMMAND,
    description=DESCRIPTION,
    params=PARAMS,
    run=execute_command,
    title="Run command",
    hints=ToolHints(destructive=True, idempotent=False, runs_code=True),
    needs={"sandbox"},
    writes=False,
    options=("background_processes",),
    default_approval=_default_approval,
    static_default_approval=_static_default_approval,
)
