"""Writing a checkpoint's files back: through the workspace filesystem, one file at a time.

Every write goes through the filesystem provider's own atomic write (a temporary file in the same
folder, then a rename; one whole-object PUT on object stores), so the same containment rules apply
as to any other write — a path is resolved below the root without following symlinks, and a
symlink planted where a folder was is refused, never written through — and a file is either the
old version or the restored one, never a mix. The content comes from the store checked against its
SHA-256 before the rename (a damaged copy leaves the file untouched), with the permission bits it
had (never setuid or setgid).

Each file is written holding its write lock (:mod:`ws_jupyter.tools.tracking`: the lock the agent
file tools hold while they write, in this process and — on a local workspace — across processes),
so a restore waits for an agent's write in progress instead of interleaving with it; it waits at
most ``lock_timeout`` seconds per file, then reports the file as skipped.

Order: new files are removed first (with ``remove_new``), then folders are created, then files
written — so a file that replaced a folder (or the reverse) can be turned back.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import (
    CheckpointDamagedError,
    DirectoryNotEmpty,
    FileNotFound,
    PathEscapeError,
    WorkspaceError,
    WriteLockTimeoutError,
)
from ..tools.tracking import cross_process_lock, path_key, write_locks
from .manifest import FileRecord, State
from .store import CheckpointStore

__all__ = ["RestoreOutcome", "restore_state"]


@dataclass
class RestoreOutcome:
    restored: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    created: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()


def _under(path: str, top: str) -> bool:
    return top == "" or path == top or path.startswith(top + "/")


def restore_state(
    fs: Any,
    store: CheckpointStore,
    target: State,
    current: State,
    wanted: tuple[str, ...] | None,
    *,
    remove_new: bool,
    lock_timeout: float,
) -> RestoreOutcome:
    """Make the selected paths of the workspace match ``target`` (see the module docstring)."""

    def selected(path: str) -> bool:
        return wanted is None or any(_under(path, w) for w in wanted)

    restored: list[str] = []
    removed: list[str] = []
    created: list[str] = []
    kept: list[str] = []
    skipped: list[tuple[str, str]] = []
    if wanted is not None:
        for w in wanted:
            if w and not any(_under(p, w) for p in (*target, *current)):
                skipped.append((w, "not in the checkpoint and not in the workspace"))

    # 1. what exists now but not in the checkpoint (or with another type)
    in_the_way = [
        p for p, rec in current.items()
        if selected(p) and (p not in target or target[p].kind != rec.kind)
    ]  # fmt: skip
    blocked: set[str] = set()
    for path in sorted(in_the_way, key=lambda p: p.count("/"), reverse=True):
        rec = current[path]
        replaced = path in target
        if not remove_new:
            if replaced:
                blocked.add(path)
                skipped.append((path, f"a {_what(rec)} is there now (remove_new=True replaces it)"))
            elif rec.kind != "dir":
                kept.append(path)
            continue
        try:
            if rec.kind == "dir":
                fs.rmdir(path)
            else:
                _locked(fs, path, lock_timeout, lambda p=path: fs.delete_file(p, force=True))
            removed.append(path)
        except DirectoryNotEmpty:
            blocked.add(path)
            skipped.append((path, "a folder created since that holds files checkpoints do not record"))
        except WriteLockTimeoutError:
            blocked.add(path)
            skipped.append((path, f"a writer held it for {lock_timeout:g} s"))
        except (FileNotFound, WorkspaceError, OSError) as exc:
            if not isinstance(exc, FileNotFound):
                blocked.add(path)
                skipped.append((path, _reason(exc)))

    def is_blocked(path: str) -> bool:
        return any(_under(path, b) for b in blocked)

    # 2. folders, shallow first
    for path in sorted(
        (p for p, r in target.items() if r.kind == "dir" and selected(p)), key=lambda p: p.count("/")
    ):
        have = current.get(path)
        if is_blocked(path) or (have is not None and have.kind == "dir" and path not in removed):
            continue
        try:
            fs.mkdir(path)
            created.append(path)
        except (WorkspaceError, OSError) as exc:
            blocked.add(path)
            skipped.append((path, _reason(exc)))

    # 3. files
    for path in sorted(p for p in target if selected(p)):
        rec = target[path]
        if rec.kind == "link":
            if not rec.same_content(current.get(path)):
                skipped.append((path, f"a symbolic link (-> {rec.target}): links are not restored"))
            continue
        if rec.kind != "file" or is_blocked(path):
            continue
        have = current.get(path)
        if have is not None and path not in removed and have.same_content(rec) and have.mode == rec.mode:
            continue
        assert rec.sha is not None
        try:
            _locked(fs, path, lock_timeout, lambda p=path, r=rec: _write(fs, store, p, r))
            restored.append(path)
        except WriteLockTimeoutError:
            skipped.append((path, f"a writer held it for {lock_timeout:g} s"))
        except CheckpointDamagedError:
            raise
        except (WorkspaceError, OSError) as exc:
            skipped.append((path, _reason(exc)))
    return RestoreOutcome(tuple(restored), tuple(removed), tuple(created), tuple(kept), tuple(skipped))


def _what(rec: FileRecord) -> str:
    return {"dir": "folder", "link": "symbolic link"}.get(rec.kind, "file")


def _reason(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, WorkspaceError) else type(exc).__name__


def _locked(fs: Any, path: str, timeout: float, action: Any) -> None:
    """Run ``action`` holding ``path``'s write lock (see the module docstring). A symlink leading
    out of the workspace (being removed) is locked under its own name."""
    try:
        key = path_key(fs, path)
    except PathEscapeError:
        key = "host:" + str(fs.host_path(path, follow=False))
    with write_locks.hold(key, timeout, path), cross_process_lock(fs, key, timeout, path):
        action()


def _write(fs: Any, store: CheckpointStore, path: str, rec: FileRecord) -> None:
    assert rec.sha is not None
    chunks: Iterable[bytes] = store.read_blob(rec.sha)
    writer = getattr(fs, "write_stream", None)
    if writer is not None:
        writer(path, chunks, mode=rec.mode)
    else:
        fs.write_file(path, b"".join(chunks))
