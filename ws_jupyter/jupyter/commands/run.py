"""Run a command in the workspace's sandbox; its output streams into the cell as it arrives.

The command line is passed to the shell exactly as typed (pipes, redirections, quotes), after the
notebook's `$name`/`{expr}` expansion (see `%ws --help`). The cell ends with the exit code and the
duration. The kernel's interrupt (the stop button) kills the whole process tree. The time limit is
--timeout, else the sandbox's default (`%config WsMagics.timeout` for `%ws init` workspaces).

As a cell magic the body is the script; with an interpreter after the options, the body is fed to
its stdin instead (`%%ws run python3`).

The value of the cell keeps the outcome: `r = _` then `r.exit_code`, `r.stdout`, `r.stderr`.

Examples:
  %ws run ls -la | head
  %ws run --timeout 60 --env DEBUG=1 pytest -q
  %ws run --check make build        # raise (stop "Run All") if the command fails

  %%ws run
  set -e
  python -m venv .venv && .venv/bin/pip install -q requests

  %%ws run python3
  print(sum(range(10)))
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

from IPython.core.error import UsageError

from ...sandbox.capabilities import sandbox_processes, sandbox_timeout, sandbox_with_network_note
from ..parsing import WsArgumentParser
from ..views.processes import TAIL_LINES, RunSummary
from ._common import require_sandbox
from ._process_args import add_launch_options, env_from_args
from ._stream import CellStream
from .base import Invocation, Subcommand

__all__ = ["COMMAND", "run_streaming"]

_POLL = 0.1


def configure(parser: WsArgumentParser) -> None:
    add_launch_options(parser)
    parser.add_argument("--check", action="store_true", help="raise an error when the command fails")
    parser.add_argument(
        "--quiet", "-q", action="store_true", help="do not stream; show the output with the result instead"
    )
    parser.add_argument(
        "command", nargs="*", metavar="CMD", help="the command line (everything after the options)"
    )


def run_streaming(
    sandbox: Any,
    command: str,
    *,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    stdin_text: str | None = None,
    quiet: bool = False,
    max_chars: int = 0,
    head_lines: int = 0,
    tail_lines: int = TAIL_LINES,
    live: bool = False,
    max_output_bytes: int | None = None,
) -> RunSummary:
    """Runs ``command`` to completion, streaming its output to this cell; interrupt kills it.

    The cell shows the first ``head_lines`` lines / ``max_chars`` characters (0: no limit), then
    "… N lines not shown …" and the newest ``tail_lines`` (updated in place when ``live``). The
    result keeps the output (each stream's newest ``max_output_bytes``; None: the sandbox's default).
    """
    streamer = CellStream(quiet, max_chars, head_lines=head_lines, tail_lines=tail_lines, live=live)
    limit = timeout if timeout is not None else sandbox_timeout(sandbox)
    manager = sandbox_processes(sandbox)
    started = time.perf_counter()
    interrupted = False
    if manager is None:
        result = _run_without_manager(sandbox, command, cwd, env, limit, streamer, stdin_text)
    else:
        retention: dict[str, Any] = {} if max_output_bytes is None else {"max_retained_bytes": max_output_bytes}
        handle = manager.spawn(
            command,
            cwd=cwd,
            env=env,
            timeout=limit,
            on_stdout=streamer.on_stdout,
            on_stderr=streamer.on_stderr,
            stdin="pipe" if stdin_text is not None else "ignore",
            **retention,
        )
        try:
            if stdin_text is not None:
                with contextlib.suppress(OSError):
                    handle.send_stdin(stdin_text)
                handle.close_stdin()
            while handle.exit_code is None:
                streamer.pump(_POLL)
        except KeyboardInterrupt:
            interrupted = True
            handle.kill(grace=0.2)
        finally:
            with contextlib.suppress(Exception):
                manager.release(handle.pid)
        result = handle.result()
        started_at = getattr(handle, "started_at", None)
        if started_at is not None:  # network allow mode: the connections it had denied
            result = sandbox_with_network_note(sandbox, result, started_at)
    summary = RunSummary.of(
        result,
        command=command,
        duration=time.perf_counter() - started,
        streamed=not quiet,
        interrupted=interrupted,
    )
    streamer.finish(truncated=summary.truncated)
    return summary


def _run_without_manager(
    sandbox: Any,
    command: str,
    cwd: str | None,
    env: dict[str, str] | None,
    limit: float | None,
    streamer: CellStream,
    stdin_text: str | None,
) -> Any:
    # A sandbox without a process manager: run it on a worker thread so output still streams.
    if stdin_text is not None:
        raise UsageError("%%ws run INTERPRETER needs a sandbox with background processes")
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = sandbox.execute_command(
                command,
                cwd=cwd,
                env=env,
                timeout=limit,
                on_stdout=streamer.on_stdout,
                on_stderr=streamer.on_stderr,
            )
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=work, name="ws-run", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            streamer.pump(_POLL)
    except KeyboardInterrupt:
        raise UsageError(
            "interrupted: this sandbox cannot kill commands, which may still be running"
        ) from None
    if "error" in box:
        raise box["error"]
    return box["result"]


def run(inv: Invocation) -> RunSummary:
    args = inv.args
    sandbox = require_sandbox(inv.workspace, "run")
    tail = args.command.strip()
    stdin_text = None
    if inv.cell is not None:
        if tail:
            command, stdin_text = tail, inv.cell if inv.cell.endswith("\n") else inv.cell + "\n"
        else:
            command = inv.cell
    else:
        command = tail
    if not command.strip():
        raise inv.usage_error(
            "nothing to run (usage: %ws run CMD, or %%ws run with a script as the cell body)"
        )
    summary = run_streaming(
        sandbox,
        command,
        cwd=args.cwd,
        env=env_from_args(args),
        timeout=args.timeout,
        stdin_text=stdin_text,
        quiet=args.quiet,
        max_chars=inv.magics.max_stream_chars,
        head_lines=inv.magics.stream_head_lines,
        tail_lines=inv.magics.stream_tail_lines,
        live=inv.in_kernel,
        max_output_bytes=inv.magics.max_output_bytes or None,
    )
    if args.check and not summary.success:
        raise inv.usage_error(f"command failed: {summary.status()}")
    return summary


COMMAND = Subcommand(
    name="run",
    summary="run a command, output streamed live; interrupt kills it: `%ws run CMD`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
    cell="optional",
    tail=True,
)
