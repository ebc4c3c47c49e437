"""``Checkpoints``: take, compare and restore checkpoints of one workspace's files.

``Workspace.checkpoints`` is this object; ``ws.checkpoint()``, ``ws.changes()``, ``ws.diff()`` and
``ws.restore()`` call it. It follows the workspace's tool activity feed for two things: the
attribution journal (who changed what) and the automatic checkpoints (``CheckpointsConfig.auto``):
the feed announces a call (``started``) on the caller's thread before the tool runs, so a
checkpoint taken there records the files as they were before that call.

>>> cp = ws.checkpoint("before the cleanup")          # doctest: +SKIP
>>> ...                                               # the agent works
>>> for change in ws.changes(since=cp):               # doctest: +SKIP
...     print(change.change, change.path, change.by)
>>> ws.restore(cp, paths=["data/clean.csv"])          # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import logging
import posixpath
import secrets
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..errors import (
    CheckpointError,
    CheckpointNotFoundError,
    InvalidArgumentError,
    WorkspaceError,
)
from ..tools.activity import ToolActivityEvent
from ..tools.tracking import conversation_key
from .attribution import CODE_TOOLS, Attribution, Journal, changing_tools
from .config import CheckpointsConfig
from .diff import file_diff, join_diffs
from .manifest import Excluded, FileRecord, Manifest, State
from .scan import Scanner
from .store import CheckpointStore, StoreUsage, default_store, open_store

__all__ = ["Changes", "Checkpoint", "Checkpoints", "FileChange", "RestoreReport"]

log = logging.getLogger("ws_jupyter.checkpoints")


@dataclass(frozen=True)
class Checkpoint:
    """One recorded state of the workspace's files.

    ``name`` is the label, else ``#seq``; ``files``/``bytes`` what it recorded; ``excluded`` the
    files it left out and why (too large, being written, not a regular file); ``skipped`` folders
    never recorded (virtual environments, ``node_modules``...); ``pruned`` the ids of older
    checkpoints deleted to keep the store within its budget when this one was taken; ``new`` False
    when nothing had changed and the latest checkpoint was returned instead of a new one.
    """

    id: str
    seq: int
    label: str | None
    reason: str
    created_at: datetime
    files: int
    bytes: int
    excluded: tuple[Excluded, ...] = ()
    skipped: tuple[str, ...] = ()
    pruned: tuple[str, ...] = ()
    new: bool = True

    @property
    def name(self) -> str:
        return self.label or f"#{self.seq}"

    def __str__(self) -> str:
        when = self.created_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        return f"checkpoint {self.name} ({self.id}, {when}, {self.reason})"


@dataclass(frozen=True)
class FileChange:
    """One path that differs from a checkpoint: ``change`` is added, modified or deleted;
    ``before``/``after`` the records (None where absent); ``by`` who did it (see attribution);
    ``detail`` what kind of modification (content, mode, type, symlink)."""

    path: str
    change: str
    before: FileRecord | None
    after: FileRecord | None
    by: Attribution
    detail: str = ""

    @property
    def kind(self) -> str:
        """``file``, ``dir`` or ``link`` (of the new version, or of the old one if deleted)."""
        rec = self.after or self.before
        return rec.kind if rec is not None else "file"


@dataclass(frozen=True)
class Changes:
    """What differs between a checkpoint and the workspace now (iterable of :class:`FileChange`)."""

    since: Checkpoint
    items: tuple[FileChange, ...]
    excluded: tuple[Excluded, ...] = ()
    skipped: tuple[str, ...] = ()
    taken_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    def __iter__(self) -> Iterator[FileChange]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    @property
    def paths(self) -> list[str]:
        return [c.path for c in self.items]

    def get(self, path: str) -> FileChange | None:
        return next((c for c in self.items if c.path == path), None)

    def by_call(self, call_id: str) -> list[FileChange]:
        """The changes attributed to one tool call."""
        return [c for c in self.items if c.by.call_id == call_id]

    def text(self) -> str:
        lines = [f"Changes since {self.since.name} ({self.since.id}): {len(self.items)}"]
        for c in self.items:
            detail = f" [{c.detail}]" if c.detail and c.detail != "content" else ""
            lines.append(f"  {c.change:<8} {c.path}{detail}  — {c.by}")
        for e in self.excluded:
            lines.append(f"  excluded {e.path}: {e.reason}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()


@dataclass(frozen=True)
class RestoreReport:
    """What a restore did. ``undo`` is the checkpoint taken first (restore it to undo this
    restore); ``kept`` files created since the checkpoint and left in place (``remove_new=False``);
    ``skipped`` ``(path, why)`` for what could not be restored (symbolic links, a folder in the way)."""

    checkpoint: Checkpoint
    undo: Checkpoint
    restored: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    created: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()

    def text(self) -> str:
        parts = [f"Restored {len(self.restored)} file(s) from {self.checkpoint.name}"]
        if self.removed:
            parts.append(f"removed {len(self.removed)} created since")
        if self.kept:
            parts.append(f"kept {len(self.kept)} created since (remove_new=True removes them)")
        if self.skipped:
            parts.append(f"skipped {len(self.skipped)}")
        return "; ".join(parts) + f". Undo: restore {self.undo.name} ({self.undo.id})."

    def __repr__(self) -> str:
        return self.text()


@dataclass
class _Turn:
    last: float
    marker: Any
    checkpointed: bool = False


class Checkpoints:
    """The checkpoints of one workspace (see the module docstring). Thread-safe."""

    def __init__(self, workspace: Any, config: CheckpointsConfig) -> None:
        fs = workspace.filesystem
        if fs is None:
            raise CheckpointError(
                "Checkpoints need a filesystem given to the Workspace (a resolver's filesystem differs "
                "per request)",
                workspace_id=workspace.id,
            )
        self.workspace_id = workspace.id
        self.fs = fs
        self.config = config
        self._store: CheckpointStore | None = None
        self._lock = threading.RLock()
        self._scanner = Scanner(fs, config)
        #: hashes of files as last seen (changes() reads only what changed since)
        self._hashes: dict[str, FileRecord] = {}
        self._turns: dict[Any, _Turn] = {}
        self._turns_lock = threading.Lock()
        self._rel = _rel_path_of(fs)
        self.journal = Journal(self._rel)
        #: recent notes for people: pruning, automatic checkpoints that failed
        self.notes: list[str] = []
        self._unsubscribe: Any = None

    # --- wiring -----------------------------------------------------------------------------------

    def follow(self, activity: Any) -> None:
        """Follow a tool activity feed (the journal, and automatic checkpoints). Idempotent."""
        if self._unsubscribe is None:
            self._unsubscribe = activity.subscribe(self._on_event)

    def close(self) -> None:
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()

    @property
    def store(self) -> CheckpointStore:
        with self._lock:
            if self._store is None:
                location = self.config.store or default_store(self.fs)
                describe = str(
                    getattr(self.fs, "base_path", None) or getattr(self.fs, "url", "") or self.fs.id
                )
                self._store = open_store(location, self.fs, describe=describe)
            return self._store

    # --- listing ----------------------------------------------------------------------------------

    def list(self) -> list[Checkpoint]:
        """Every checkpoint in the store, oldest first."""
        return [self._value(m) for m in self.store.manifests()]

    def latest(self) -> Checkpoint | None:
        found = self.store.manifests()
        return self._value(found[-1]) if found else None

    def get(self, ref: Checkpoint | str | int | None = None) -> Checkpoint:
        """A checkpoint by value, id, ``#seq``/seq, label (the newest with it) or negative index
        (-1 is the newest); None: the newest."""
        return self._value(self._manifest(ref))

    def _manifest(self, ref: Checkpoint | str | int | None) -> Manifest:
        found = self.store.manifests()
        if not found:
            raise CheckpointNotFoundError(
                "No checkpoint yet: take one with ws.checkpoint() (or `%ws checkpoint`)",
                workspace_id=self.workspace_id,
            )
        if ref is None:
            return found[-1]
        if isinstance(ref, Checkpoint):
            ref = ref.id
        if isinstance(ref, int) and not isinstance(ref, bool):
            if ref < 0 and -ref <= len(found):
                return found[ref]
            ref = str(ref)
        if not isinstance(ref, str) or not ref:
            raise InvalidArgumentError(f"A checkpoint is named by its id, #number or label, not {ref!r}")
        for m in found:
            if m.id == ref:
                return m
        number = ref[1:] if ref.startswith("#") else ref
        if number.isdigit():
            for m in reversed(found):
                if m.seq == int(number):
                    return m
        for m in reversed(found):
            if m.label == ref:
                return m
        names = ", ".join(self._value(m).name for m in found[-5:])
        raise CheckpointNotFoundError(
            f"No checkpoint {ref!r} (the newest: {names})", workspace_id=self.workspace_id
        )

    def _value(self, m: Manifest, *, pruned: Sequence[str] = (), new: bool = True) -> Checkpoint:
        return Checkpoint(
            id=m.id,
            seq=m.seq,
            label=m.label,
            reason=m.reason,
            created_at=datetime.fromtimestamp(m.created, tz=timezone.utc),
            files=m.total_files,
            bytes=m.total_bytes,
            excluded=m.excluded,
            skipped=m.skipped,
            pruned=tuple(pruned),
            new=new,
        )

    def usage(self) -> StoreUsage:
        """The store's size (copies and manifests)."""
        return self.store.usage()

    # --- taking -----------------------------------------------------------------------------------

    def take(self, label: str | None = None, *, reason: str = "manual", force: bool = False) -> Checkpoint:
        """Record the workspace's files now (see ``Workspace.checkpoint``). Without a label and
        without ``force``, an unchanged workspace gives back the latest checkpoint (``new=False``)."""
        if label is not None and (not isinstance(label, str) or not label.strip() or "\n" in label):
            raise InvalidArgumentError("A checkpoint label is a non-empty line of text")
        with self._lock:
            store = self.store
            with store.lock():
                return self._take_locked(store, label, reason, force or label is not None)

    def _take_locked(self, store: CheckpointStore, label: str | None, reason: str, force: bool) -> Checkpoint:
        found = store.manifests()
        latest = found[-1] if found else None
        known = store.state(latest) if latest is not None else {}

        def keep(path: str, read: Any) -> None:
            store.put_blob(read.sha, read.chunks())

        # only the latest checkpoint vouches for files here: its copies are surely stored
        scan = self._scanner.scan(known, keep=keep)
        state = scan.state
        self._hashes.update((p, r) for p, r in state.items() if r.kind == "file")
        if latest is not None and not force and _same_state(known, state):
            return self._value(latest, new=False)
        seq = (max(m.seq for m in found) + 1) if found else 1
        full = latest is None or store.chain_length(latest) >= self.config.full_every
        removed: tuple[str, ...] = ()
        if full:
            files = dict(state)
        else:
            files = {p: r for p, r in state.items() if known.get(p) != r}
            removed = tuple(sorted(p for p in known if p not in state))
        manifest = Manifest(
            id=f"{seq}-{secrets.token_hex(3)}",
            seq=seq,
            created=time.time(),
            reason=reason,
            label=label,
            parent=None if full or latest is None else latest.id,
            full=full,
            files=files,
            removed=removed,
            excluded=tuple(scan.excluded),
            skipped=tuple(scan.skipped),
            workspace=store.describe,
            total_files=sum(1 for r in state.values() if r.kind == "file"),
            total_bytes=sum(r.size for r in state.values() if r.kind == "file"),
        )
        store.save(manifest)
        pruned = store.prune(self.config.budget_bytes, self.config.keep)
        usage = store.usage(refresh=False)
        if pruned:
            names = ", ".join(self._value(m).name for m in pruned)
            self._note(
                f"pruned {len(pruned)} oldest checkpoint(s) ({names}) to keep the store within "
                f"{_size(self.config.budget_bytes)} (now {_size(usage.total)})"
            )
        elif usage.total > self.config.budget_bytes:
            self._note(
                f"the checkpoint store ({_size(usage.total)}) is over its budget "
                f"({_size(self.config.budget_bytes)}) with only the newest {self.config.keep} checkpoint(s) left"
            )
        return self._value(manifest, pruned=[m.id for m in pruned])

    def _note(self, text: str) -> None:
        log.warning("checkpoints: %s", text)
        self.notes.append(text)
        del self.notes[:-50]

    # --- comparing --------------------------------------------------------------------------------

    def changes(self, since: Checkpoint | str | int | None = None) -> Changes:
        """What differs now from the checkpoint ``since`` (default: the newest)."""
        with self._lock:
            base = self._manifest(since)
            before = self.store.state(base)
            scan = self._scanner.scan(before, hashes=self._hashes)
        items: list[FileChange] = []
        now = scan.state
        for path in sorted(set(before) | set(now)):
            old, new = before.get(path), now.get(path)
            if old is not None and new is not None and old.same_content(new) and old.mode == new.mode:
                continue
            if old is not None and new is not None and old.kind == new.kind == "dir":
                continue  # a folder's permission bits only: not a change worth a line
            change = "added" if old is None else "deleted" if new is None else "modified"
            mtime = new.mtime_ns / 1e9 if new is not None and new.mtime_ns else None
            by = self.journal.attribute(path, change, mtime, base.created)
            items.append(FileChange(path, change, old, new, by, _detail(old, new)))
        return Changes(self._value(base), tuple(items), tuple(scan.excluded), tuple(scan.skipped))

    def diff(self, since: Checkpoint | str | int | None = None, path: str | None = None) -> str:
        """A unified diff from the checkpoint to now: of ``path``, or of every changed file."""
        changes = self.changes(since)
        label = f"checkpoint {changes.since.name}"
        if path is not None:
            rel = self._rel(path)
            change = changes.get(rel)
            if change is None:
                return ""
            return self._file_diff(change, label)
        return join_diffs([self._file_diff(c, label) for c in changes])

    def file_diff(self, change: FileChange, since: Checkpoint) -> str:
        """The diff of one :class:`FileChange` (as listed by :meth:`changes`)."""
        return self._file_diff(change, f"checkpoint {since.name}")

    def _file_diff(self, change: FileChange, label: str) -> str:
        before = after = None
        if change.before is not None and change.before.kind == "file" and change.before.sha:
            before = b"".join(self.store.read_blob(change.before.sha))
        if change.after is not None and change.after.kind == "file":
            try:
                after = b"".join(self._scanner.read(change.path, keep_bytes=True).chunks())
            except (WorkspaceError, OSError):
                after = None  # gone, grown past the limit or being written since: shown as absent
        return file_diff(
            change.path,
            before,
            after,
            before_record=change.before,
            after_record=change.after,
            before_label=label,
            after_label="now",
        )

    # --- restoring --------------------------------------------------------------------------------

    def restore(
        self,
        checkpoint: Checkpoint | str | int,
        paths: Sequence[str] | str | None = None,
        *,
        remove_new: bool = False,
    ) -> RestoreReport:
        """Bring back the checkpoint's version of ``paths`` (files or folders; None: everything)."""
        from .restore import restore_state

        if getattr(self.fs, "read_only", False):
            from ..errors import ReadOnlyError

            raise ReadOnlyError("restore")
        with self._lock:
            target = self._manifest(checkpoint)
            wanted = self._selection(paths)
            target_state = self.store.state(target)
            target_value = self._value(target)
            undo = self.take(label=f"before restoring {target_value.name}", reason="restore")
            current = self.store.state(self._manifest(undo.id))
            started = time.time()
            report = restore_state(
                self.fs,
                self.store,
                target_state,
                current,
                wanted,
                remove_new=remove_new,
                lock_timeout=self.config.lock_timeout,
            )
            self.journal.record_restore(target.id, [*report.restored, *report.removed], started)
            self._hashes.clear()
        return RestoreReport(
            checkpoint=target_value,
            undo=undo,
            restored=report.restored,
            removed=report.removed,
            created=report.created,
            kept=report.kept,
            skipped=report.skipped,
        )

    def _selection(self, paths: Sequence[str] | str | None) -> tuple[str, ...] | None:
        if paths is None:
            return None
        items = [paths] if isinstance(paths, str) else list(paths)
        out = []
        for p in items:
            if not isinstance(p, str) or not p.strip():
                raise InvalidArgumentError("paths are workspace paths (strings)")
            rel = self._rel(p)
            out.append("" if rel in ("", ".") else rel)
        return tuple(out)

    # --- automatic checkpoints ----------------------------------------------------------------------

    def _on_event(self, event: ToolActivityEvent) -> None:
        self.journal.on_event(event)
        if event.kind != "started" or self.config.auto == "off":
            return
        tool = event.workspace_tool_name
        rc = event.request_context
        key = conversation_key(rc)
        marker = _turn_marker(rc)
        now = time.monotonic()
        with self._turns_lock:
            turn = self._turns.get(key)
            new_turn = turn is None or now - turn.last > self.config.turn_gap or turn.marker != marker
            if new_turn:
                turn = self._turns[key] = _Turn(now, marker)
            assert turn is not None
            turn.last = now
            if len(self._turns) > 256:
                self._turns.pop(next(iter(self._turns)))
            if tool not in changing_tools():
                return
            mode = self.config.auto
            wanted = mode == "call" or not turn.checkpointed or (mode == "command" and tool in CODE_TOOLS)
            turn.checkpointed = True
        if not wanted:
            return
        reason = {"turn": "auto: agent turn", "call": "auto: tool call", "command": "auto: before a run"}[
            mode
        ]
        try:
            if getattr(self.fs, "read_only", False):
                return
            self.take(reason=f"{reason} ({event.tool_name}, {event.call_id})")
        except (WorkspaceError, OSError) as exc:
            self._note(f"the automatic checkpoint before {event.tool_name} ({event.call_id}) failed: {exc}")


def _turn_marker(rc: Any) -> Any:
    if rc is None:
        return None
    for key in ("turn_id", "run_id", "turn-id", "run-id"):
        with contextlib.suppress(Exception):
            value = rc.get(key)
            if value is not None:
                return str(value)
    return None


def _rel_path_of(fs: Any) -> Any:
    """A function giving the workspace-relative form of a path as the file tools take it."""
    containment = getattr(fs, "containment", None)
    relative = getattr(fs, "relative", None)

    def rel(path: str) -> str:
        if containment is not None:
            return str(containment.resolve(path, follow=False).rel)
        if callable(relative):
            return str(relative(path))
        norm = posixpath.normpath(str(path).replace("\\", "/")).lstrip("/")
        return norm or "."

    return rel


def _same_state(a: State, b: State) -> bool:
    if a.keys() != b.keys():
        return False
    return all(a[p].same_content(b[p]) and a[p].mode == b[p].mode for p in a)


def _detail(old: FileRecord | None, new: FileRecord | None) -> str:
    if old is None or new is None:
        return ""
    if old.kind != new.kind:
        return f"{old.kind} -> {new.kind}"
    if old.kind == "link":
        return "symlink target"
    parts = []
    if old.sha != new.sha:
        parts.append("content")
    if old.mode is not None and new.mode is not None and old.mode != new.mode:
        parts.append(f"mode {old.mode:o} -> {new.mode:o}")
    return ", ".join(parts)


def _size(n: int) -> str:
    from ..notebooks.outputs import format_size

    return format_size(n)
