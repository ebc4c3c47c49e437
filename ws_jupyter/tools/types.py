"""The values of the agent tool layer: ``Tool``, its results, and the contexts hooks receive.

A tool run never raises to the model: it returns a string (``ToolErrorText`` when the call failed,
so adapters can flag it) or a :class:`ToolResult` when there is more than text (an image or a PDF
read by ``workspace_read_file``).

>>> from ws_jupyter import Workspace, LocalFilesystem
>>> ws = Workspace(filesystem=LocalFilesystem("./demo"))            # doctest: +SKIP
>>> read = next(t for t in ws.tools() if t.name == "workspace_read_file")   # doctest: +SKIP
>>> read.run({"path": "notes.md"})                                   # doctest: +SKIP
'notes.md (12 bytes)\\n     1→hello world'
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from ..request_context import RequestContext

if TYPE_CHECKING:
    from ..workspace import Workspace

__all__ = [
    "CallContext",
    "MediaPart",
    "Tool",
    "ToolCallContext",
    "ToolErrorText",
    "ToolHookContext",
    "ToolOutput",
    "ToolResult",
    "is_error_output",
    "output_text",
]


class ToolErrorText(str):
    """A tool output string that reports a failure (an ``Error: ...`` line, a refusal, a stale write).

    It *is* a ``str`` (the model sees exactly the text); the type lets adapters mark the result
    as an error (MCP ``isError``, Anthropic ``is_error``) without parsing the text.
    """

    __slots__ = ()

    @property
    def is_error(self) -> bool:
        return True


@dataclass(frozen=True)
class MediaPart:
    """Binary content a multimodal model can look at: ``data`` is base64, ``mime_type`` e.g. image/png."""

    mime_type: str
    data: str

    @classmethod
    def from_bytes(cls, mime_type: str, raw: bytes) -> MediaPart:
        return cls(mime_type, base64.b64encode(raw).decode("ascii"))

    def to_bytes(self) -> bytes:
        return base64.b64decode(self.data)

    def __repr__(self) -> str:
        return f"MediaPart({self.mime_type!r}, {len(self.data) * 3 // 4} bytes)"


@dataclass(frozen=True)
class ToolResult:
    """A tool output with media parts (and/or an error flag). ``str(result)`` is the text part."""

    text: str
    media: tuple[MediaPart, ...] = ()
    is_error: bool = False

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "media": [{"mime_type": m.mime_type, "data": m.data} for m in self.media],
            "is_error": self.is_error,
        }


#: What ``Tool.run`` returns.
ToolOutput = str | ToolResult


def is_error_output(output: object) -> bool:
    """True when a tool output reports a failure."""
    return isinstance(output, ToolErrorText) or (isinstance(output, ToolResult) and output.is_error)


def output_text(output: object) -> str:
    """The text of a tool output (``str`` or ``ToolResult``)."""
    return output.text if isinstance(output, ToolResult) else str(output)


@dataclass(frozen=True)
class ToolCallContext:
    """Who is calling and for which request.

    ``request_context`` selects per-request providers (resolver filesystems and sandboxes);
    ``abort`` (a ``threading.Event``) cancels waits and kills foreground commands when set;
    ``tool_call_id`` is the id the model gave the call (echoed in activity events).
    ``tool_name``/``workspace_tool_name`` are filled in by the tool being called.
    """

    request_context: RequestContext | None = None
    workspace: Workspace | None = None
    tool_call_id: str | None = None
    abort: threading.Event | None = None
    tool_name: str | None = None
    workspace_tool_name: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def coerce(cls, value: object, default_request_context: RequestContext | None = None) -> ToolCallContext:
        """Accept None, a ``ToolCallContext``, a ``RequestContext`` or a plain mapping."""
        if value is None:
            return cls(request_context=default_request_context)
        if isinstance(value, ToolCallContext):
            if value.request_context is None and default_request_context is not None:
                return replace(value, request_context=default_request_context)
            return value
        if isinstance(value, RequestContext):
            return cls(request_context=value)
        if isinstance(value, Mapping):
            return cls(request_context=RequestContext(value))
        from ..errors import ToolArgumentError

        raise ToolArgumentError(
            f"context must be a ToolCallContext, a RequestContext or a mapping, not {type(value).__name__}"
        )

    @property
    def aborted(self) -> bool:
        return self.abort is not None and self.abort.is_set()


#: What a caller may give as a tool call's context: a ``ToolCallContext``, a ``RequestContext``,
#: a plain mapping (a request context's values) or nothing.
CallContext = ToolCallContext | RequestContext | Mapping[str, Any] | None


@dataclass(frozen=True)
class ToolHookContext:
    """What ``before_tool_call`` and ``after_tool_call`` hooks receive.

    ``tool_name`` is the exposed name, ``workspace_tool_name`` the constant; ``input`` the validated
    arguments. For ``after_tool_call``: ``output`` is what the model will see, and ``error`` the
    exception when the tool failed (``output`` is then the error text).
    """

    tool_name: str
    workspace_tool_name: str
    input: Mapping[str, Any]
    context: ToolCallContext
    output: ToolOutput | None = None
    error: BaseException | None = None


class Tool:
    """One agent tool: a name, a description and a JSON Schema for a model, and ``run``.

    Built by ``Workspace.tools()`` (all policy — approval, hooks, read tracking, write locks,
    output budgets — is applied there); users only call ``run``/``arun`` or hand the tool to an
    adapter (``to_openai``, ``to_anthropic``, the MCP server).
    """

    __slots__ = (
        "_needs_approval",
        "_runner",
        "description",
        "input_schema",
        "name",
        "non_strict_schema",
        "require_approval",
        "workspace_tool_name",
    )

    def __init__(
        self,
        *,
        name: str,
        workspace_tool_name: str,
        description: str,
        input_schema: dict[str, Any],
        runner: Callable[[Mapping[str, Any] | str | None, CallContext, bool | None], ToolOutput],
        require_approval: bool = False,
        needs_approval: Callable[[Mapping[str, Any], CallContext], bool] | None = None,
        non_strict_schema: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.workspace_tool_name = workspace_tool_name
        self.description = description
        self.input_schema = input_schema
        #: The schema for consumers without strict mode: optional fields optional, with defaults.
        self.non_strict_schema = non_strict_schema if non_strict_schema is not None else input_schema
        self.require_approval = require_approval
        self._runner = runner
        self._needs_approval = needs_approval

    def run(
        self,
        args: Mapping[str, Any] | str | None = None,
        context: CallContext = None,
        *,
        approved: bool | None = None,
    ) -> ToolOutput:
        """Run the tool. ``args`` is a dict (or the JSON text a model produced).

        ``approved=True`` tells the tool that the caller already obtained the user's approval
        (an agent loop with its own approval UI); ``False`` refuses the call.
        Never raises for tool failures: they come back as ``ToolErrorText``.
        """
        return self._runner(args, context, approved)

    async def arun(
        self,
        args: Mapping[str, Any] | str | None = None,
        context: CallContext = None,
        *,
        approved: bool | None = None,
    ) -> ToolOutput:
        """``run`` in the tools' own bounded thread pool (:mod:`ws_jupyter.tools.executor`), so
        the event loop's default executor stays free; cancelling the awaiting task aborts the
        call (a foreground command is killed) and waits briefly for it to end."""
        from .executor import run_abortable

        abort = threading.Event()
        if isinstance(context, ToolCallContext):
            if context.abort is not None:
                abort = context.abort
            call_ctx: CallContext = replace(context, abort=abort)
        elif context is None or isinstance(context, (RequestContext, Mapping)):
            base = ToolCallContext.coerce(context)
            call_ctx = replace(base, abort=abort)
        else:
            call_ctx = context
        return await run_abortable(partial(self._runner, args, call_ctx, approved), abort)

    def needs_approval(
        self,
        args: Mapping[str, Any] | None = None,
        context: CallContext = None,
    ) -> bool:
        """Whether a call with these arguments waits for approval (dynamic rules evaluated now)."""
        if self._needs_approval is None:
            return self.require_approval
        return bool(self._needs_approval(args or {}, context))

    def schema(self, *, strict: bool = True) -> dict[str, Any]:
        """``input_schema`` (strict) or ``non_strict_schema``."""
        return self.input_schema if strict else self.non_strict_schema

    def to_dict(self) -> dict[str, Any]:
        """Provider-neutral description: name, description, input_schema."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def __repr__(self) -> str:
        extra = (
            f", workspace_tool_name={self.workspace_tool_name!r}"
            if self.name != self.workspace_tool_name
            else ""
        )
        approval = ", require_approval=True" if self.require_approval else ""
        return f"Tool({self.name!r}{extra}{approval})"


def parse_arguments(args: object) -> Any:
    """Turn JSON text into a dict (models hand over arguments as JSON strings)."""
    if isinstance(args, (str, bytes, bytearray)):
        text = args.decode() if isinstance(args, (bytes, bytearray)) else args
        if not text.strip():
            return {}
        return json.loads(text)
    return args
