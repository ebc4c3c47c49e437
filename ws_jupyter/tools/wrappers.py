"""The policy every tool call goes through, in one place.

``ToolRunner`` wraps a :class:`~ws_jupyter.tools.base.ToolSpec` so that no tool can skip:

1. argument parsing and validation (short ``Error: Invalid arguments: ...`` lines);
2. an activity event (``started``), see :mod:`ws_jupyter.tools.activity`;
3. approval — ``run(..., approved=...)`` from the caller, else the config's ``approver``, else an
   interactive approver attached to the activity feed (the notebook widget); a refusal returns
   ``Tool call refused by user.``. Unless the config sets ``require_approval`` for the tool, a
   write to a host-trusted file (``.git/config``, ``.vscode/``, ``.envrc``, a virtual
   environment: see :mod:`ws_jupyter.filesystem.host_trusted`) always asks: programs on the host
   run what those files name, so writing one is running code on the host;
4. the ``before_tool_call`` hook, which may skip the tool with its own output;
5. for writing tools: the path's write lock (held until the write has finished) and, inside it,
   the read-tracking checks (stale file, read-before-write);
6. the tool itself; workspace errors become ``Error: <message>`` (documented messages — stale file,
   read required, write-lock timeout — are returned as they are); nothing raises to the model;
7. the ``after_tool_call`` hook (sees the output or the error; may replace the output);
8. an activity event (``finished``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import (
    FileNotFound,
    FileReadRequiredError,
    StaleFileError,
    ToolArgumentError,
    WorkspaceError,
    WriteLockTimeoutError,
)
from ..filesystem.host_trusted import write_reason
from ..filesystem.oserrors import describe_os_error
from ..filesystem.reading import MAX_FILE_BYTES, file_chunks
from .activity import ToolActivity, ToolActivityEvent
from .base import ToolCall, ToolSpec, iso_time, rel_path
from .config import ResolvedToolConfig, ToolsConfig
from .names import WORKSPACE_TOOLS
from .schema import Param, validate_args
from .tracking import ReadTrackers, cross_process_lock, path_key, write_locks
from .types import (
    CallContext,
    ToolCallContext,
    ToolErrorText,
    ToolHookContext,
    ToolOutput,
    ToolResult,
    is_error_output,
    output_text,
    parse_arguments,
)

if TYPE_CHECKING:
    from ..filesystem.types import WorkspaceFilesystem
    from ..request_context import RequestContext
    from ..workspace import Workspace

__all__ = ["REFUSED", "ToolRunner", "error_output"]

log = logging.getLogger("ws_jupyter.tools")

REFUSED = "Tool call refused by user."
#: Errors whose message is itself the documented tool output (no "Error: " prefix).
_BARE = (FileReadRequiredError, StaleFileError, WriteLockTimeoutError)


def error_output(exc: BaseException) -> ToolErrorText:
    """The text a model sees for a failure: a message, never a traceback."""
    if isinstance(exc, _BARE):
        return ToolErrorText(str(exc))
    if isinstance(exc, WorkspaceError):
        return ToolErrorText(f"Error: {exc}")
    if isinstance(exc, (json.JSONDecodeError,)):
        return ToolErrorText(f"Error: Invalid arguments: not valid JSON ({exc.msg} at position {exc.pos})")
    if isinstance(exc, OSError):  # its filename is a host path: never shown
        return ToolErrorText(f"Error: {describe_os_error(exc)}")
    return ToolErrorText(f"Error: {type(exc).__name__}: {exc}")


def _digest_of(fs: WorkspaceFilesystem, path: str, size: int) -> str | None:
    """SHA-256 of a file's content (None when it cannot be read within the whole-file limit)."""
    if size > MAX_FILE_BYTES:
        return None
    digest = hashlib.sha256()
    try:
        for chunk in file_chunks(fs, path):
            digest.update(chunk)
    except (OSError, WorkspaceError):
        return None
    return digest.hexdigest()


class _Skip(Exception):
    """Internal: a policy step decided the output (refusal, hook short-circuit: ``blocked``)."""

    def __init__(self, output: ToolOutput, blocked: bool = False) -> None:
        super().__init__("skip")
        self.output = output
        self.blocked = blocked


class ToolRunner:
    """Callable behind ``Tool.run``: ``runner(args, context, approved) -> output``."""

    def __init__(
        self,
        spec: ToolSpec,
        resolved: ResolvedToolConfig,
        config: ToolsConfig,
        workspace: Workspace,
        params: list[Param],
        *,
        request_context: RequestContext | None,
        trackers: ReadTrackers,
        activity: ToolActivity,
        names: Mapping[str, str] | None = None,
    ) -> None:
        self.spec = spec
        self.resolved = resolved
        self.config = config
        self.workspace = workspace
        self.params = params
        self.request_context = request_context
        self.trackers = trackers
        self.activity = activity
        self.names = dict(names or {})

    # --- approval -------------------------------------------------------------------------------

    def needs_approval(self, args: Mapping[str, Any], context: CallContext) -> bool:
        """Evaluate ``require_approval`` for one call (a raising function means "ask")."""
        ctx = self._context(context)
        rule = self.resolved.require_approval
        if rule is None:
            if self.host_trusted_reason(args, ctx) is not None:
                return True
            default = self.spec.default_approval
            by_args = self.spec.default_approval_for
            if default is None and by_args is None:
                return False
            try:
                if by_args is not None:
                    return bool(by_args(args, ctx, self.workspace))
                assert default is not None
                return bool(default(ctx, self.workspace))
            except Exception:
                log.warning("default approval rule of %s failed; asking", self.spec.name, exc_info=True)
                return True
        if isinstance(rule, bool):
            return rule
        try:
            return bool(rule(args, ctx))
        except Exception:
            log.warning(
                "require_approval function of %s raised; asking for approval", self.spec.name, exc_info=True
            )
            return True

    def host_trusted_reason(self, args: Mapping[str, Any], ctx: ToolCallContext) -> str | None:
        """Why this call would write a host-trusted file, or None (also for arguments the tool
        itself will reject: it reports those)."""
        if self.spec.write_path is None:
            return None
        try:
            path = self.spec.write_path(dict(args))
            if not isinstance(path, str):
                return None
            return write_reason(self._filesystem(ctx), path)
        except Exception:
            return None

    def _filesystem(self, ctx: ToolCallContext) -> WorkspaceFilesystem:
        return self.workspace.resolve_filesystem(ctx.request_context)

    def _approve(
        self, call_id: str, args: dict[str, Any], ctx: ToolCallContext, approved: bool | None
    ) -> None:
        if approved is True:
            return
        if approved is False:
            raise _Skip(ToolErrorText(REFUSED))
        if not self.needs_approval(args, ctx):
            return
        name = self.resolved.name
        approver = self.config.approver
        if approver is not None:
            try:
                decision = approver(name, args, ctx)
            except Exception as exc:
                log.warning("approver raised for %s; refusing", name, exc_info=True)
                raise _Skip(
                    ToolErrorText(f"{REFUSED} (the approver failed: {type(exc).__name__}: {exc})")
                ) from None
            if not decision:
                raise _Skip(ToolErrorText(REFUSED))
            return
        if self.activity.has_approver:
            ok = self.activity.request_approval(
                call_id,
                name,
                self.spec.name,
                args,
                tool_call_id=ctx.tool_call_id,
                timeout=self.config.approval_timeout,
                abort=ctx.abort,
                details=self._approval_details(args, ctx),
            )
            if not ok:
                raise _Skip(ToolErrorText(REFUSED))
            return
        why = ""
        trusted = self.host_trusted_reason(args, ctx) if self.resolved.require_approval is None else None
        if trusted is not None and self.spec.write_path is not None:
            why = (
                f" ({rel_path(self._filesystem(ctx), self.spec.write_path(args))} is host-trusted: {trusted})"
            )
        elif self.resolved.require_approval is None and self.spec.default_approval is not None:
            why = " because the sandbox runs commands on the host without isolation"
        raise _Skip(
            ToolErrorText(
                f"Error: {name} requires approval{why}, and no approver is configured. "
                'Configure tools={"approver": fn(tool_name, args, ctx) -> bool}, open the ToolActivity '
                f"widget, or set require_approval=False for {self.spec.name}."
            )
        )

    def _approval_details(self, args: Mapping[str, Any], ctx: ToolCallContext) -> str | None:
        """What the approval panel shows beside the arguments (None when the tool says nothing)."""
        describe = self.spec.approval_details
        if describe is None:
            return None
        try:
            return describe(args, ctx, self.workspace)
        except Exception:
            log.warning("approval details of %s failed", self.spec.name, exc_info=True)
            return None

    # --- hooks ------------------------------------------------------------------------------------

    def _before(self, args: dict[str, Any], ctx: ToolCallContext) -> None:
        hooks = self.config.hooks
        if hooks is None or hooks.before_tool_call is None:
            return
        hook_ctx = ToolHookContext(self.resolved.name, self.spec.name, args, ctx)
        try:
            decision = hooks.before_tool_call(hook_ctx)
        except Exception as exc:
            log.warning("before_tool_call hook raised", exc_info=True)
            raise _Skip(
                ToolErrorText(f"Error: before_tool_call hook failed: {type(exc).__name__}: {exc}")
            ) from None
        if decision is None or decision is True:
            return
        if decision is False:
            raise _Skip(ToolErrorText("Tool call skipped by before_tool_call hook."), blocked=True)
        if isinstance(decision, Mapping) and decision.get("proceed", True) is False:
            out = decision.get("output", "Tool call skipped by before_tool_call hook.")
            raise _Skip(out if isinstance(out, (str, ToolResult)) else str(out), blocked=True)

    def _after(
        self, args: dict[str, Any], ctx: ToolCallContext, output: ToolOutput, error: BaseException | None
    ) -> ToolOutput:
        hooks = self.config.hooks
        if hooks is None or hooks.after_tool_call is None:
            return output
        hook_ctx = ToolHookContext(self.resolved.name, self.spec.name, args, ctx, output=output, error=error)
        try:
            replacement = hooks.after_tool_call(hook_ctx)
        except Exception as exc:
            log.warning("after_tool_call hook raised", exc_info=True)
            return ToolErrorText(f"Error: after_tool_call hook failed: {type(exc).__name__}: {exc}")
        if isinstance(replacement, (str, ToolResult)):
            return replacement
        return output

    # --- the run ----------------------------------------------------------------------------------

    def _context(self, context: CallContext) -> ToolCallContext:
        ctx = ToolCallContext.coerce(context, self.request_context)
        return replace(
            ctx, workspace=self.workspace, tool_name=self.resolved.name, workspace_tool_name=self.spec.name
        )

    def __call__(self, raw_args: Mapping[str, Any] | str | None, context: CallContext, approved: bool | None) -> ToolOutput:
        started = time.perf_counter()
        try:
            ctx = self._context(context)
            args = validate_args(self.params, parse_arguments(raw_args))
        except (ToolArgumentError, json.JSONDecodeError, WorkspaceError) as exc:
            failed = error_output(exc)
            self._publish_rejected(raw_args, failed, started)
            return failed
        call_id = self.activity.new_call_id()
        self.activity.publish(
            ToolActivityEvent(
                "started",
                call_id,
                self.resolved.name,
                self.spec.name,
                args,
                tool_call_id=ctx.tool_call_id,
                request_context=ctx.request_context,
            )
        )
        error: BaseException | None = None
        blocked = False
        try:
            try:
                self._approve(call_id, args, ctx, approved)
            finally:
                started = time.perf_counter()  # the wait for approval is not the call's own time
            self._before(args, ctx)
            if ctx.aborted:
                raise _Skip(ToolErrorText("Error: Tool call aborted."))
            output = self._execute(args, ctx)
        except _Skip as skip:
            output, blocked = skip.output, skip.blocked
        except Exception as exc:
            error = exc
            if not isinstance(exc, WorkspaceError):
                log.warning("tool %s failed", self.spec.name, exc_info=True)
            output = error_output(exc)
        except BaseException:
            # KeyboardInterrupt (the notebook's stop button in the calling thread), SystemExit: the
            # call ends here, and the feed says so (a log would otherwise show it running forever).
            interrupted = ToolErrorText("Error: Tool call interrupted.")
            self._publish_finished(call_id, args, ctx, interrupted, started, blocked=False, cancelled=True)
            raise
        output = self._after(args, ctx, output, error)
        self._publish_finished(call_id, args, ctx, output, started, blocked=blocked, cancelled=ctx.aborted)
        return output

    def _publish_finished(
        self,
        call_id: str,
        args: dict[str, Any],
        ctx: ToolCallContext,
        output: ToolOutput,
        started: float,
        *,
        blocked: bool,
        cancelled: bool,
    ) -> None:
        self.activity.publish(
            ToolActivityEvent(
                "finished",
                call_id,
                self.resolved.name,
                self.spec.name,
                args,
                tool_call_id=ctx.tool_call_id,
                output=output_text(output),
                is_error=is_error_output(output),
                duration_ms=(time.perf_counter() - started) * 1000,
                blocked=blocked,
                cancelled=cancelled,
                request_context=ctx.request_context,
            )
        )

    def _publish_rejected(self, raw_args: Mapping[str, Any] | str | None, output: ToolErrorText, started: float) -> None:
        """Calls with bad arguments appear in the activity feed too (started and finished at once)."""
        shown = dict(raw_args) if isinstance(raw_args, Mapping) else {"arguments": str(raw_args)[:500]}
        call_id = self.activity.new_call_id()
        name, spec_name = self.resolved.name, self.spec.name
        self.activity.publish(ToolActivityEvent("started", call_id, name, spec_name, shown))
        self.activity.publish(
            ToolActivityEvent(
                "finished",
                call_id,
                name,
                spec_name,
                shown,
                output=str(output),
                is_error=True,
                duration_ms=(time.perf_counter() - started) * 1000,
            )
        )

    def _execute(self, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutput:
        tracker = self.trackers.for_context(ctx.request_context)
        call = ToolCall(args, ctx, self.workspace, self.resolved, tracker, names=self.names)
        if self.spec.write_path is None:
            return self.spec.run(call)
        fs = call.filesystem()
        path = self.spec.write_path(args)
        key = path_key(fs, path)
        shown = rel_path(fs, path)
        timeout = self.resolved.write_lock_timeout
        with write_locks.hold(key, timeout, shown), cross_process_lock(fs, key, timeout, shown):
            if self.spec.check_reads:
                self._check_reads(call, fs, path, key, shown)
            output = self.spec.run(call)
            if not is_error_output(output) and not call.recorded_write:
                tracker.clear(key, recursive=self.spec.recursive_clear)
            return output

    def _check_reads(self, call: ToolCall, fs: WorkspaceFilesystem, path: str, key: str, shown: str) -> None:
        record = call.tracker.get(key)
        try:
            st = fs.stat(path)
        except FileNotFound:
            st = None
        except WorkspaceError:
            st = None
            if record is None:
                return  # let the tool report the real problem
        rule = self.resolved.require_read_before_write
        if isinstance(rule, bool):
            require = rule
        else:
            try:
                require = bool(rule(call.args, call.context))
            except Exception:
                log.warning("require_read_before_write function raised; requiring a read", exc_info=True)
                require = True
        call.require_read = require
        call.read_record = record
        if record is not None:
            if st is None:
                raise StaleFileError(
                    shown,
                    message=f'File "{shown}" was deleted after it was last read. Read it again before writing.',
                )
            if st.mtime != record.mtime or st.size != record.size:
                raise StaleFileError(
                    shown,
                    record.mtime,
                    st.mtime,
                    message=(
                        f'File "{shown}" was modified since it was last read (read at: {iso_time(record.mtime)}, '
                        f"current: {iso_time(st.mtime)}). Read it again to get the latest contents."
                    ),
                )
            if record.digest is not None and _digest_of(fs, path, st.size) not in (None, record.digest):
                raise StaleFileError(
                    shown,
                    record.mtime,
                    st.mtime,
                    message=(
                        f'File "{shown}" was modified since it was last read (its content changed, '
                        "with the same size and modification time). Read it again to get the latest contents."
                    ),
                )
            call.expected_mtime = record.mtime
        if require and st is not None and st.type == "file":
            if record is None:
                raise FileReadRequiredError(shown)
            if self.spec.whole_file_write and not record.complete:
                raise FileReadRequiredError(
                    shown,
                    f'File "{shown}" was only partly read ({record.describe()}). Read the rest before '
                    f"overwriting it, or change part of it with {call.exposed(WORKSPACE_TOOLS.FILESYSTEM.EDIT_FILE)}.",
                )
