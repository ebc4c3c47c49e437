"""Who changed a file: which agent tool call, which command or kernel run — or "outside".

:class:`Journal` follows the workspace's tool activity feed (``ws_jupyter.tools.activity``) and
keeps, per call, the tool, its input and when it started and finished; restores add their own
entries. :meth:`Journal.attribute` then names the most likely author of one change:

1. a file tool (write, edit, notebook edit, delete, mkdir) that named the path (or a folder above
   it) and succeeded after the checkpoint — certain;
2. for an added or modified file, a command, kernel run or notebook run that was running when the
   file got its modification time — certain when only one was; the latest started otherwise;
3. for a deleted file (which has no time), a command or kernel run since the checkpoint whose
   text names the file or a folder above it — probable; else the only one since the checkpoint —
   probable;
4. a restore that wrote or removed the path;
5. otherwise ``outside``: nothing the agent tools did explains it (the user, an editor, a command
   run from the notebook, another program).

The journal lives in memory (the last 5,000 calls): changes made before this process started
are "outside" or "unknown".
"""

from __future__ import annotations

import functools
import posixpath
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..tools import names
from ..tools.activity import ToolActivityEvent
from ..tools.names import WORKSPACE_TOOLS

__all__ = ["CHANGING_TOOLS", "CODE_TOOLS", "Attribution", "Journal", "JournalEntry", "changing_tools"]

T = WORKSPACE_TOOLS
#: Tools that run code which may change any file.
CODE_TOOLS = frozenset(
    {T.SANDBOX.EXECUTE_COMMAND, T.SANDBOX.EXECUTE_CODE, T.SANDBOX.RUN_NOTEBOOK, T.OPEN_NOTEBOOK.RUN}
)


@functools.cache
def changing_tools() -> frozenset[str]:
    """Every tool that may change the workspace's files: an automatic checkpoint goes before it (a
    proposal to the open notebook changes its file once the user accepts and saves it). Computed
    on first use: the file-writing tools follow from the tools' specs, which are loaded then."""
    return frozenset({*names.WRITE_TOOLS, *CODE_TOOLS, T.OPEN_NOTEBOOK.EDIT})


if TYPE_CHECKING:
    CHANGING_TOOLS: frozenset[str]


def __getattr__(name: str) -> object:
    if name == "CHANGING_TOOLS":  # the same set, by its constant's name
        return changing_tools()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_MAX_ENTRIES = 5000
#: Slack around a call's window for file times (clock steps, filesystem time granularity).
_SLACK = 1.0
#: The file clock's own lag behind the system clock (coarse kernel timestamps).
_TIGHT = 0.02

ActorKind = Literal["tool", "command", "kernel", "notebook", "restore", "outside", "unknown"]


@dataclass(frozen=True)
class Attribution:
    """The author of one change. ``certain`` is False for a best guess (see the module docstring)."""

    kind: ActorKind
    call_id: str | None = None
    tool: str | None = None
    summary: str = ""
    certain: bool = True

    def __str__(self) -> str:
        if self.kind == "outside":
            return "outside (not an agent tool call)"
        if self.kind == "unknown":
            return "unknown"
        guess = "" if self.certain else "probably "
        who = self.summary or self.tool or self.kind
        return f"{guess}{who}" + (f" ({self.call_id})" if self.call_id else "")


@dataclass
class JournalEntry:
    call_id: str
    tool: str
    exposed: str
    input: Mapping[str, Any]
    started: float
    finished: float | None = None
    failed: bool = False
    background: bool = False
    paths: tuple[str, ...] = ()

    @property
    def kind(self) -> ActorKind:
        if self.tool == T.SANDBOX.EXECUTE_COMMAND:
            return "command"
        if self.tool == T.SANDBOX.EXECUTE_CODE:
            return "kernel"
        if self.tool in (T.SANDBOX.RUN_NOTEBOOK, T.OPEN_NOTEBOOK.RUN):
            return "notebook"
        if self.tool == "restore":
            return "restore"
        return "tool"

    def summary(self) -> str:
        if self.tool == T.SANDBOX.EXECUTE_COMMAND:
            return f"command `{_one_line(self.input.get('command'))}`"
        if self.tool == T.SANDBOX.EXECUTE_CODE:
            return f"kernel code `{_one_line(self.input.get('code'))}`"
        if self.tool == T.SANDBOX.RUN_NOTEBOOK:
            return f"notebook run {self.input.get('path')}"
        if self.tool == T.OPEN_NOTEBOOK.RUN:
            return f"open notebook cells {_one_line(self.input.get('cell_ids'))}"
        if self.tool == "restore":
            return f"restore of checkpoint {self.input.get('checkpoint')}"
        return f"{self.exposed} {self.input.get('path', '')}".strip()

    def window_contains(self, when: float, slack: float = _SLACK) -> bool:
        end = time.time() if self.finished is None or self.background else self.finished
        return self.started - slack <= when <= end + slack

    def text(self) -> str:
        return " ".join(str(v) for v in self.input.values() if isinstance(v, str))


def _one_line(value: Any, width: int = 60) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _norm(path: Any) -> str | None:
    if not isinstance(path, str) or not path:
        return None
    norm = posixpath.normpath(path.replace("\\", "/")).lstrip("/")
    return None if norm in ("", ".") or norm.startswith("..") else norm


class Journal:
    """The calls that may have changed files (see the module docstring). Thread-safe."""

    def __init__(self, rel_path: Callable[[str], str] | None = None) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, JournalEntry] = OrderedDict()
        self._rel = rel_path

    # --- recording ------------------------------------------------------------------------------

    def on_event(self, event: ToolActivityEvent) -> None:
        """A tool activity event (subscribe this to the workspace's feed)."""
        if event.workspace_tool_name not in changing_tools():
            return
        with self._lock:
            entry = self._entries.get(event.call_id)
            if event.kind == "started" and entry is None:
                self._add(
                    JournalEntry(
                        event.call_id,
                        event.workspace_tool_name,
                        event.tool_name,
                        dict(event.input),
                        event.timestamp.timestamp(),
                        background=bool(event.input.get("background")),
                        paths=self._paths(event),
                    )
                )
            elif event.kind == "finished" and entry is not None:
                entry.finished = event.timestamp.timestamp()
                entry.failed = bool(event.is_error) or event.blocked
            elif event.kind == "approval_resolved" and entry is not None and not event.approved:
                entry.finished, entry.failed = event.timestamp.timestamp(), True

    def _paths(self, event: ToolActivityEvent) -> tuple[str, ...]:
        if event.workspace_tool_name not in names.WRITE_TOOLS:
            return ()
        raw = event.input.get("path")
        if not isinstance(raw, str):
            return ()
        if self._rel is not None:
            try:
                raw = self._rel(raw)
            except Exception:  # a path the tool will refuse: it changes nothing
                return ()
        norm = _norm(raw)
        return (norm,) if norm else ()

    def record_restore(self, checkpoint: str, paths: list[str], started: float) -> None:
        with self._lock:
            ident = f"restore-{checkpoint}-{started:.6f}"
            self._add(
                JournalEntry(ident, "restore", "restore", {"checkpoint": checkpoint}, started, time.time(),
                             paths=tuple(paths))
            )  # fmt: skip

    def _add(self, entry: JournalEntry) -> None:
        self._entries[entry.call_id] = entry
        while len(self._entries) > _MAX_ENTRIES:
            self._entries.popitem(last=False)

    def entries(self, since: float = 0.0) -> list[JournalEntry]:
        with self._lock:
            return [e for e in self._entries.values() if e.started >= since - _SLACK]

    def entry(self, call_id: str) -> JournalEntry | None:
        with self._lock:
            return self._entries.get(call_id)

    # --- attributing ----------------------------------------------------------------------------

    def attribute(self, path: str, change: str, mtime: float | None, since: float) -> Attribution:
        """The most likely author of ``change`` ("added", "modified", "deleted") to ``path``
        since the checkpoint taken at ``since`` (``mtime``: the file's time, when it exists)."""
        entries = [e for e in self.entries(since) if not e.failed]
        named = [
            e for e in entries if e.kind in ("tool", "restore") and any(_covers(p, path) for p in e.paths)
        ]
        if mtime is not None:
            named = [e for e in named if e.window_contains(mtime)] or named
        if named:
            best = named[-1]
            return Attribution(best.kind, best.call_id, best.tool, best.summary(), True)
        runners = [e for e in entries if e.kind in ("command", "kernel", "notebook")]
        if mtime is not None:
            # running when the file got its time (file clocks lag a few ms), else close to it
            during = [e for e in runners if e.window_contains(mtime, 0.0)]
            during = during or [e for e in runners if e.window_contains(mtime, _TIGHT)]
            during = during or [e for e in runners if e.window_contains(mtime)]
            if during:
                best = during[-1]
                return Attribution(best.kind, best.call_id, best.tool, best.summary(), len(during) == 1)
            return Attribution("outside")
        mentioned = [e for e in runners if _mentions(e.text(), path)]
        if mentioned:
            best = mentioned[-1]
            return Attribution(best.kind, best.call_id, best.tool, best.summary(), False)
        if len(runners) == 1:
            only = runners[0]
            return Attribution(only.kind, only.call_id, only.tool, only.summary(), False)
        if runners:
            return Attribution(
                "unknown", summary=f"one of {len(runners)} commands or kernel runs", certain=False
            )
        return Attribution("outside")


def _covers(named: str, path: str) -> bool:
    return path == named or path.startswith(named.rstrip("/") + "/")


def _mentions(text: str, path: str) -> bool:
    """Whether command text names ``path`` or a folder above it (as a word)."""
    parts = path.split("/")
    for i in range(len(parts), 0, -1):
        candidate = "/".join(parts[:i])
        at = text.find(candidate)
        while at >= 0:
            before = text[at - 1] if at > 0 else " "
            after_at = at + len(candidate)
            after = text[after_at] if after_at < len(text) else " "
            if not (before.isalnum() or before in "_-.") and not (after.isalnum() or after in "_-."):
                return True
            at = text.find(candidate, at + 1)
    return False
