"""What one tool module provides (``ToolSpec``) and what its ``run`` receives (``ToolCall``).

A tool is a small stateless function of a ``ToolCall``: it finds the filesystem or sandbox for the
request through the call, does one thing, and returns the text the model sees (or raises a
workspace error, which the wrapper turns into ``Error: ...``). Policy — approval, hooks, read
tracking, write locks — lives in :mod:`ws_jupyter.tools.wrappers`, never in a tool.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..errors import FileReadRequiredError, InvalidPathError
from ..filesystem.reading import file_chunks, iter_lines
from .config import ResolvedToolConfig
from .schema import Param
from .tracking import ReadRecord, ReadTracker, path_key
from .types import ToolCallContext, ToolOutput

if TYPE_CHECKING:
    from ..sandbox.types import WorkspaceSandbox

__all__ = ["ToolCall", "ToolSpec", "file_chunks", "iso_time", "rel_path", "split_lines"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool definition.

    ``params`` may be a function of the workspace (e.g. the search modes that exist);
    ``write_path(args)`` names the file a writing tool changes: the wrapper then holds that path's
    write lock around the run, and — when ``check_reads`` — applies the read-tracking checks first;
    ``whole_file_write`` marks tools that replace the whole file (they need a complete read under
    ``require_read_before_write``); ``default_approval(call_context, workspace)`` decides approval
    when the config leaves it unset.
    """

    name: str
    description: str
    params: Sequence[Param] | Callable[[Any], Sequence[Param]]
    run: Callable[[ToolCall], ToolOutput]
    write_path: Callable[[dict[str, Any]], str] | None = None
    check_reads: bool = False
    whole_file_write: bool = False
    recursive_clear: bool = False
    default_approval: Callable[[ToolCallContext, Any], bool] | None = None
    static_default_approval: Callable[[Any], bool] | None = None

    def params_for(self, workspace: Any) -> Sequence[Param]:
        return self.params(workspace) if callable(self.params) else self.params


@dataclass
class ToolCall:
    """One run of a tool: validated ``args``, the call context, and per-tool settings."""

    args: dict[str, Any]
    context: ToolCallContext
    workspace: Any
    config: ResolvedToolConfig
    tracker: ReadTracker
    expected_mtime: float | None = None
    read_record: ReadRecord | None = None
    require_read: bool = False
    #: set by a write tool that recorded what it wrote as read (the wrapper then keeps the record)
    recorded_write: bool = False
    _fs: Any = field(default=None, repr=False)
    _sandbox: WorkspaceSandbox | None = field(default=None, repr=False)
    #: exposed names of renamed tools (constant -> name), for messages that name another tool
    names: Mapping[str, str] = field(default_factory=dict, repr=False)

    def exposed(self, tool: str) -> str:
        """The name the model knows a tool by (``tool`` is its constant)."""
        return self.names.get(tool, tool)

    @property
    def request_context(self) -> Any:
        return self.context.request_context

    @property
    def max_tokens(self) -> int | None:
        return self.config.max_output_tokens

    def option(self, key: str, default: Any = None) -> Any:
        return self.config.option(key, default)

    def filesystem(self) -> Any:
        """The filesystem for this request (resolver filesystems are resolved per request)."""
        if self._fs is None:
            self._fs = self.workspace.resolve_filesystem(self.request_context)
        return self._fs

    def sandbox(self) -> WorkspaceSandbox:
        """The sandbox for this request (its optional members: ``sandbox.capabilities``)."""
        if self._sandbox is None:
            self._sandbox = self.workspace.resolve_sandbox(self.request_context)
        return self._sandbox

    def key(self, path: str) -> str:
        return path_key(self.filesystem(), path)

    def check_lines_read(self, path: str, start: int, end: int) -> None:
        """Under ``require_read_before_write``: refuse to change lines the model has not seen."""
        rec = self.read_record
        if not self.require_read or rec is None or rec.covers(start, end):
            return
        span = f"Line {start}" if start == end else f"Lines {start}-{end}"
        raise FileReadRequiredError(
            path,
            f'{span} of "{path}" have not been read (read so far: {rec.describe()}). '
            "Read them before editing.",
        )


def rel_path(fs: Any, path: str) -> str:
    """The workspace-relative spelling of ``path`` used in every tool output (``a/b.txt``)."""
    containment = getattr(fs, "containment", None)
    if containment is not None:
        try:
            return str(containment.resolve(path, follow=False).rel)
        except InvalidPathError:
            raise
        except Exception:
            pass
    text = str(path).replace("\\", "/")
    norm = posixpath.normpath(text) if text else "."
    norm = norm.lstrip("/") or "."
    return norm


def iso_time(ts: float | datetime) -> str:
    dt = ts if isinstance(ts, datetime) else datetime.fromtimestamp(ts, tz=timezone.utc)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def split_lines(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Raw lines without their ``\\n`` (a final newline does not start another line); one linear
    pass with bounded memory (:func:`ws_jupyter.filesystem.reading.iter_lines`)."""
    return iter_lines(chunks)
