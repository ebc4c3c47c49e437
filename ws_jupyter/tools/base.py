"""What one tool module provides (``ToolSpec``) and what its ``run`` receives (``ToolCall``).

A tool is a small stateless function of a ``ToolCall``: it finds the filesystem or sandbox for the
request through the call, does one thing, and returns the text the model sees (or raises a
workspace error, which the wrapper turns into ``Error: ...``). Policy — approval, hooks, read
tracking, write locks — lives in :mod:`ws_jupyter.tools.wrappers`, never in a tool.

Everything else the package knows about a tool is a fact on its ``ToolSpec``, written once in the
tool's module: its title and MCP hints (:mod:`.hints` reads them), the config options it accepts
and its default output budget (:mod:`.config`), whether it writes and what it needs from the
workspace (:mod:`.factory` lists it only where those are present; :mod:`.names` groups tools by
them). A spec missing one of them cannot be built.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal, get_args

from ..errors import FileReadRequiredError, InvalidPathError
from ..filesystem.reading import file_chunks, iter_lines
from .facts import DEFAULT_MAX_OUTPUT_TOKENS, TOOL_SETTINGS, ToolHints, ToolSetting
from .schema import Param
from .tracking import ReadRecord, ReadTracker, path_key
from .types import ToolCallContext, ToolOutput

if TYPE_CHECKING:
    from ..filesystem.types import WorkspaceFilesystem
    from ..request_context import RequestContext
    from ..sandbox.types import WorkspaceSandbox
    from ..workspace import Workspace
    from .config import ResolvedToolConfig

__all__ = ["NEEDS", "Need", "ToolCall", "ToolSpec", "file_chunks", "iso_time", "rel_path", "split_lines"]

#: What a tool may need from the workspace. ``writable``: the workspace's filesystem is not
#: read-only; ``static_filesystem``: the filesystem is given up front (not a resolver's, chosen per
#: request); ``local_kernels``: the sandbox's kernels run on this machine (nbclient drives them),
#: not on a gateway; ``open_notebook``: a notebook the user has open is connected
#: (:mod:`ws_jupyter.live`); ``user_data``: the notebook user shares variables with the workspace
#: (:mod:`ws_jupyter.userdata`). With a resolver (a filesystem or sandbox chosen per request) every
#: need of that provider counts as present and a tool that finds it missing says so when it runs.
Need = Literal[
    "filesystem",
    "writable",
    "static_filesystem",
    "sandbox",
    "processes",
    "kernels",
    "local_kernels",
    "search",
    "skills",
    "open_notebook",
    "user_data",
]
NEEDS: frozenset[str] = frozenset(get_args(Need))


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """A tool definition: what it is, what it does, and every fact about it.

    The facts every tool states (no defaults): ``title`` (a short human title: MCP clients and the
    notebook show it); ``hints`` (:class:`~ws_jupyter.tools.facts.ToolHints`: read-only,
    destructive, idempotent, open-world); ``needs`` (a set of :data:`Need`: the tool is listed
    only when the workspace has all of them); ``writes`` (it changes workspace files, so a
    read-only filesystem hides it; ``writable`` must then be among its needs); ``options`` (the
    tool-specific config settings it accepts, see ``TOOL_SETTINGS`` in :mod:`.config`; ``()``
    for none). ``max_output_tokens`` is its default output budget (None: no budget);
    ``off_by_default``: the tool is listed only when its own config enables it.

    ``params`` may be a function of the workspace (e.g. the search modes that exist);
    ``write_path(args)`` names the file a writing tool changes: the wrapper then holds that path's
    write lock around the run, and — when ``check_reads`` — applies the read-tracking checks first;
    ``whole_file_write`` marks tools that replace the whole file (they need a complete read under
    ``require_read_before_write``); ``default_approval(call_context, workspace)`` decides approval
    when the config leaves it unset.
    """

    name: str
    description: str
    params: Sequence[Param] | Callable[[Workspace], Sequence[Param]]
    run: Callable[[ToolCall], ToolOutput]
    title: str
    hints: ToolHints
    needs: AbstractSet[Need]
    writes: bool
    options: tuple[ToolSetting, ...]
    max_output_tokens: int | None = DEFAULT_MAX_OUTPUT_TOKENS
    off_by_default: bool = False
    write_path: Callable[[dict[str, Any]], str] | None = None
    check_reads: bool = False
    whole_file_write: bool = False
    recursive_clear: bool = False
    default_approval: Callable[[ToolCallContext, Workspace], bool] | None = None
    static_default_approval: Callable[[Workspace], bool] | None = None
    default_approval_for: Callable[[Mapping[str, Any], ToolCallContext, Workspace], bool] | None = None
    approval_details: Callable[[Mapping[str, Any], ToolCallContext, Workspace], str | None] | None = None

    def __post_init__(self) -> None:
        problems = []
        if not isinstance(self.title, str) or not self.title.strip():
            problems.append("a title")
        if not isinstance(self.hints, ToolHints):
            problems.append("its hints (a ToolHints)")
        needs = frozenset(self.needs)
        if not needs or not needs <= NEEDS:
            problems.append(f"its needs (a non-empty set of {', '.join(sorted(NEEDS))})")
        if not isinstance(self.writes, bool) or (self.writes and "writable" not in needs):
            problems.append("whether it writes (a tool that writes needs 'writable')")
        if not isinstance(self.options, tuple) or not set(self.options) <= set(TOOL_SETTINGS):
            problems.append(f"the options it accepts (a tuple of {', '.join(TOOL_SETTINGS)})")
        if problems:
            raise TypeError(f"ToolSpec {self.name!r} must state " + "; ".join(problems))
        object.__setattr__(self, "needs", needs)

    def params_for(self, workspace: Workspace) -> Sequence[Param]:
        return self.params(workspace) if callable(self.params) else self.params


@dataclass
class ToolCall:
    """One run of a tool: validated ``args``, the call context, and per-tool settings."""

    args: dict[str, Any]
    context: ToolCallContext
    workspace: Workspace
    config: ResolvedToolConfig
    tracker: ReadTracker
    expected_mtime: float | None = None
    read_record: ReadRecord | None = None
    require_read: bool = False
    #: set by a write tool that recorded what it wrote as read (the wrapper then keeps the record)
    recorded_write: bool = False
    _fs: WorkspaceFilesystem | None = field(default=None, repr=False)
    _sandbox: WorkspaceSandbox | None = field(default=None, repr=False)
    #: exposed names of renamed tools (constant -> name), for messages that name another tool
    names: Mapping[str, str] = field(default_factory=dict, repr=False)

    def exposed(self, tool: str) -> str:
        """The name the model knows a tool by (``tool`` is its constant)."""
        return self.names.get(tool, tool)

    @property
    def request_context(self) -> RequestContext | None:
        return self.context.request_context

    @property
    def max_tokens(self) -> int | None:
        return self.config.max_output_tokens

    def option(self, key: str, default: Any = None) -> Any:
        return self.config.option(key, default)

    def filesystem(self) -> WorkspaceFilesystem:
        """The filesystem for this request (resolver filesystems are resolved per request)."""
        if self._fs is None:
            self._fs = self.workspace.resolve_filesystem(self.request_context)
        return self._fs

    def sandbox(self) -> WorkspaceSandbox:
        """The sandbox for this request (resolver sandboxes are resolved per request); its optional
        members are asked for through :mod:`ws_jupyter.sandbox.capabilities`."""
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


def rel_path(fs: WorkspaceFilesystem, path: str) -> str:
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
