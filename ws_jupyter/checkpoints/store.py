"""Where checkpoints live: content-addressed file copies and signed manifests, with a size budget.

Layout of a store (a directory on this machine, or a prefix of an object store)::

    blobs/ab/cdef...        one copy of each distinct content, named by its SHA-256
    manifests/<id>.json.gz  one signed manifest per checkpoint (see manifest.py)
    workspace.json          which workspace the store belongs to (for people looking at it)
    lock                    held while a checkpoint is taken or pruned (local stores)

**Where, by default** (:func:`default_store`), and why there:

* a workspace on this machine (``LocalFilesystem``): ``$WS_JUPYTER_DATA_DIR/checkpoints/<key>`` or
  ``$XDG_DATA_HOME/ws-jupyter/checkpoints/<key>`` (``~/.local/share/ws-jupyter/...``), the key
  derived from the workspace's real path. *Outside* the workspace on purpose: sandboxed commands see
  only the workspace (bubblewrap and Seatbelt give them no access to the user's data directory), so
  the code whose changes a checkpoint is there to undo cannot delete the checkpoints (``rm -rf``,
  ``git clean -fdx``) or plant its own; agents' file tools cannot reach it either (they are
  contained to the workspace); and a folder copied or cloned from elsewhere brings no checkpoints
  with it. Without isolation (``isolation="none"``) commands run as the user and can reach
  anything the user can: nothing on the machine is out of their reach then.
* a workspace on object storage (``FsspecFilesystem``): the same store, under ``<root>/.ws/checkpoints``
  (the only place the workspace's credentials are known to reach): each changed object is read
  once (to hash it) and its content written under its hash there. Agents' file tools can
  see that prefix (it is inside the root): they cannot forge a checkpoint (manifests are signed,
  copies checked by hash) but could delete one — pass ``store=`` (another prefix, or a local
  directory) to keep them apart.

``store=`` takes a host directory or an fsspec URL for any workspace.

**Integrity**: a manifest is signed with a per-user key (``checkpoint-key`` in the data
directory, mode 0600), and a copy is checked against its SHA-256 each time it is read: a damaged or
forged store makes a restore fail with ``CheckpointDamagedError``, never write other bytes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import posixpath
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import (
    CheckpointDamagedError,
    CheckpointError,
    FileExists,
    FileNotFound,
    FilesystemError,
    WorkspaceConfigError,
)
from ..filesystem.reading import file_chunks
from .manifest import Manifest, State

__all__ = ["CheckpointStore", "StoreUsage", "data_dir", "default_store", "open_store", "signing_key"]

_MANIFESTS = "manifests"
_BLOBS = "blobs"
_SUFFIX = ".json.gz"
_STATES_CACHED = 6


def data_dir() -> str:
    """ws-jupyter's per-user data directory (``$WS_JUPYTER_DATA_DIR``, else the XDG data home)."""
    env = os.environ.get("WS_JUPYTER_DATA_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    xdg = os.environ.get("XDG_DATA_HOME")
    base = os.path.expanduser(xdg) if xdg else os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "ws-jupyter")


def signing_key() -> bytes:
    """The per-user key manifests are signed with (created once, mode 0600, outside every workspace)."""
    directory = data_dir()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    path = os.path.join(directory, "checkpoint-key")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(3):
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            key = secrets.token_bytes(32)
            tmp = f"{path}.{secrets.token_hex(4)}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                os.write(fd, key.hex().encode("ascii"))
            finally:
                os.close(fd)
            try:
                os.link(tmp, path)  # first writer wins; the others read its key
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
            continue
        try:
            text = os.read(fd, 200).decode("ascii", "replace").strip()
        finally:
            os.close(fd)
        try:
            key = bytes.fromhex(text)
        except ValueError:
            key = b""
        if len(key) < 16:
            raise CheckpointError(
                "The checkpoint signing key in the ws-jupyter data directory is unreadable: "
                "remove the file checkpoint-key there (existing checkpoints then become unusable)"
            )
        return key
    raise CheckpointError("Cannot create the checkpoint signing key in the ws-jupyter data directory")


def default_store(fs: Any) -> str:
    """Where the checkpoints of the workspace filesystem ``fs`` live by default (see the module
    docstring): a host directory for a local workspace, a URL below the root for object storage."""
    base = getattr(fs, "base_path", None)
    if base and getattr(fs, "containment", None) is not None:
        real = os.path.realpath(base)
        key = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:24]
        name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in os.path.basename(real))[:40]
        return os.path.join(data_dir(), "checkpoints", f"{name or 'root'}-{key}")
    url = getattr(fs, "url", None)
    if isinstance(url, str) and url:
        return url.rstrip("/") + "/.ws/checkpoints"
    raise WorkspaceConfigError(
        f"Checkpoints need a local or fsspec filesystem (or checkpoints={{'store': ...}}), not {type(fs).__name__}",
        code="INVALID_CONFIG",
    )


def open_store(location: str, workspace_fs: Any, *, describe: str) -> CheckpointStore:
    """A :class:`CheckpointStore` at ``location`` (a host directory, or a URL: fsspec; a URL of
    the workspace's own backend reuses its credentials and connection)."""
    from ..filesystem.fsspec_fs import _protocol_of

    protocol = _protocol_of(location)
    if protocol is None or protocol == "file":
        from ..filesystem.local import LocalFilesystem

        path = location[len("file://") :] if location.startswith("file://") else location
        path = os.path.abspath(os.path.expanduser(path))
        workspace_base = getattr(workspace_fs, "base_path", None)
        if workspace_base and getattr(workspace_fs, "containment", None) is not None:
            real_ws, real_store = os.path.realpath(workspace_base), os.path.realpath(path)
            if real_store == real_ws or real_store.startswith(real_ws.rstrip("/") + "/"):
                raise WorkspaceConfigError(
                    "The checkpoint store cannot be inside the workspace: the commands whose changes it "
                    "records could change it too",
                    code="INVALID_CONFIG",
                )
        os.makedirs(path, mode=0o700, exist_ok=True)
        store_fs: Any = LocalFilesystem(path)
        lock_file: str | None = os.path.join(os.path.realpath(path), "lock")
        identity = "local:" + os.path.realpath(path)
    else:
        from ..filesystem.fsspec_fs import FsspecFilesystem

        own = getattr(workspace_fs, "fs", None)
        own_url = getattr(workspace_fs, "url", "")
        if own is not None and isinstance(own_url, str) and _protocol_of(own_url) == protocol:
            store_fs = FsspecFilesystem(own, root=own._strip_protocol(location))
        else:
            store_fs = FsspecFilesystem(location)
        lock_file = None
        identity = "url:" + location
    return CheckpointStore(store_fs, signing_key(), lock_file=lock_file, identity=identity, describe=describe)


@dataclass(frozen=True)
class StoreUsage:
    """The store's size: distinct file copies and manifests (bytes as stored)."""

    blob_bytes: int
    blobs: int
    manifest_bytes: int
    manifests: int

    @property
    def total(self) -> int:
        return self.blob_bytes + self.manifest_bytes


_locks_guard = threading.Lock()
_locks: dict[str, threading.RLock] = {}


class CheckpointStore:
    """Blobs and manifests of one workspace's checkpoints (see the module docstring).

    Thread-safe; checkpoints of one store are serialised by :meth:`lock` (across processes too
    for a store on this machine).
    """

    def __init__(
        self, fs: Any, key: bytes, *, lock_file: str | None = None, identity: str = "", describe: str = ""
    ) -> None:
        self.fs = fs
        base = getattr(fs, "base_path", None)
        self._root: str | None = (
            os.path.realpath(base) if base and getattr(fs, "containment", None) is not None else None
        )
        self._key = key
        self._lock_file = lock_file
        self._identity = identity or f"store-{id(self)}"
        self.describe = describe
        with _locks_guard:
            self._thread_lock = _locks.setdefault(self._identity, threading.RLock())
        self._manifests: dict[str, Manifest] = {}
        self._states: OrderedDict[str, State] = OrderedDict()
        #: manifests that failed their check: name -> reason (shown, never used)
        self.damaged: dict[str, str] = {}
        self._cache_guard = threading.Lock()
        self._wrote_info = False
        self._listed = False
        #: copies known to be stored (object stores: spares a request per copy)
        self._known: set[str] = set()

    @property
    def location(self) -> str:
        return str(getattr(self.fs, "base_path", None) or getattr(self.fs, "url", ""))

    # --- locking ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, timeout: float = 300.0) -> Iterator[None]:
        """Hold the store (threads of this process, and other processes for a local store)."""
        if not self._thread_lock.acquire(timeout=timeout):
            raise CheckpointError(f"The checkpoint store stayed busy for {timeout:g} s")
        fd = None
        try:
            if self._lock_file is not None:
                fd = os.open(self._lock_file, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
                deadline = time.monotonic() + timeout
                while True:
                    try:
                        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except OSError as exc:
                        if exc.errno not in (errno.EACCES, errno.EAGAIN):
                            raise
                    if time.monotonic() > deadline:
                        raise CheckpointError(
                            f"The checkpoint store stayed busy (another process) for {timeout:g} s"
                        )
                    time.sleep(0.02)
            yield
        finally:
            if fd is not None:
                os.close(fd)  # releases the lock
            self._thread_lock.release()

    # --- blobs --------------------------------------------------------------------------------

    @staticmethod
    def blob_path(sha: str) -> str:
        return f"{_BLOBS}/{sha[:2]}/{sha[2:]}"

    def _host(self, rel: str) -> str | None:
        """The host path of a store file when the store is a local directory (its copies are then
        written and read directly: the store is the user's own directory, not a workspace)."""
        return os.path.join(self._root, rel) if self._root is not None else None

    def has_blob(self, sha: str) -> bool:
        host = self._host(self.blob_path(sha))
        if host is not None:
            return os.path.exists(host)
        return bool(self.fs.exists(self.blob_path(sha)))

    def put_blob(self, sha: str, chunks: Iterable[bytes]) -> bool:
        """Store a copy of content whose SHA-256 is ``sha`` (the caller computed it over exactly
        these chunks) unless the store has it. True when it was written."""
        path = self.blob_path(sha)
        host = self._host(path)
        if host is not None:
            return _put_local(host, chunks)
        if sha in self._known:  # listed by a checkpoint of this store: it is there
            return False
        try:  # a conditional write: no request spent on asking first
            self.fs.write_file(path, b"".join(chunks), overwrite=False)
        except FileExists:
            return False
        finally:
            self._known.add(sha)
        return True

    def read_blob(self, sha: str) -> Iterator[bytes]:
        """The content stored under ``sha``, checked: the last chunk is withheld until the whole
        content matched its hash, so a consumer writing the chunks out fails before it finishes."""
        digest = hashlib.sha256()
        pending: bytes | None = None
        host = self._host(self.blob_path(sha))
        try:
            for chunk in _read_local(host) if host is not None else file_chunks(self.fs, self.blob_path(sha)):
                if pending is not None:
                    yield pending
                digest.update(chunk)
                pending = chunk
        except (FileNotFound, FileNotFoundError):
            raise CheckpointDamagedError(
                f"The checkpoint store has lost the copy {sha[:12]}… (deleted outside ws-jupyter)"
            ) from None
        if digest.hexdigest() != sha:
            raise CheckpointDamagedError(f"The stored copy {sha[:12]}… is damaged (its SHA-256 differs)")
        if pending is not None:
            yield pending

    # --- manifests ------------------------------------------------------------------------------

    def manifests(self, *, refresh: bool = True) -> list[Manifest]:
        """Every usable checkpoint, oldest first (manifests that fail their check are left out
        and listed in ``damaged``). ``refresh=False``: as last listed (plus this object's own
        saves and deletions) — for a series of steps under :meth:`lock`."""
        if not refresh and self._listed:
            with self._cache_guard:
                return sorted(self._manifests.values(), key=lambda m: (m.created, m.seq, m.id))
        try:
            names = [
                e.name for e in self.fs.readdir(_MANIFESTS) if e.type == "file" and e.name.endswith(_SUFFIX)
            ]
        except FilesystemError:
            names = []
        present = {n[: -len(_SUFFIX)] for n in names}
        with self._cache_guard:
            for gone in [i for i in self._manifests if i not in present]:
                del self._manifests[gone]
                self._states.pop(gone, None)
            missing = [i for i in present if i not in self._manifests and i not in self.damaged]
        for ident in missing:
            name = f"{_MANIFESTS}/{ident}{_SUFFIX}"
            try:
                data = self.fs.read_file(name, encoding="binary")
                manifest = Manifest.decode(bytes(data), self._key, name=f"checkpoint {ident}")
                if manifest.id != ident:
                    raise CheckpointDamagedError(f"checkpoint {ident} names itself {manifest.id}")
                manifest.stored_size = len(data)
            except CheckpointDamagedError as exc:
                self.damaged[ident] = str(exc)
                continue
            except FilesystemError:
                continue  # deleted meanwhile
            with self._cache_guard:
                self._manifests[ident] = manifest
                self._known.update(r.sha for r in manifest.files.values() if r.sha is not None)
        with self._cache_guard:
            found = list(self._manifests.values())
        self._listed = True
        return sorted(found, key=lambda m: (m.created, m.seq, m.id))

    def save(self, manifest: Manifest) -> None:
        if not self._wrote_info:
            self._write_info()
        data = manifest.encode(self._key)
        self.fs.write_file(f"{_MANIFESTS}/{manifest.id}{_SUFFIX}", data)
        manifest.stored_size = len(data)
        with self._cache_guard:
            self._manifests[manifest.id] = manifest

    def _write_info(self) -> None:
        info = json.dumps({"workspace": self.describe, "format": 1}, indent=1) + "\n"
        with contextlib.suppress(FilesystemError):
            self.fs.write_file("workspace.json", info)
        self._wrote_info = True

    def delete_manifest(self, ident: str) -> None:
        with contextlib.suppress(FileNotFound):
            self.fs.delete_file(f"{_MANIFESTS}/{ident}{_SUFFIX}")
        with self._cache_guard:
            self._manifests.pop(ident, None)
            self._states.pop(ident, None)

    def state(self, manifest: Manifest) -> State:
        """The complete state a checkpoint recorded (its chain of manifests replayed; cached)."""
        with self._cache_guard:
            hit = self._states.get(manifest.id)
            if hit is not None:
                self._states.move_to_end(manifest.id)
                return hit
        chain = [manifest]
        by_id = {m.id: m for m in self.manifests(refresh=False)}
        while not chain[-1].full:
            with self._cache_guard:
                cached = self._states.get(chain[-1].parent or "")
            if cached is not None:
                break
            parent = by_id.get(chain[-1].parent or "")
            if parent is None:
                raise CheckpointDamagedError(
                    f"Checkpoint {manifest.id} depends on {chain[-1].parent}, which is missing from the store"
                )
            chain.append(parent)
        with self._cache_guard:
            base = self._states.get(chain[-1].parent or "") if not chain[-1].full else None
        state: State = dict(base) if base is not None else {}
        for m in reversed(chain):
            if m.full:
                state = dict(m.files)
            else:
                for path in m.removed:
                    state.pop(path, None)
                state.update(m.files)
        with self._cache_guard:
            self._states[manifest.id] = state
            while len(self._states) > _STATES_CACHED:
                self._states.popitem(last=False)
        return state

    def chain_length(self, manifest: Manifest) -> int:
        """How many manifests a state of ``manifest`` replays (1 for a full one)."""
        by_id = {m.id: m for m in self.manifests(refresh=False)}
        n, m = 1, manifest
        while not m.full and m.parent in by_id:
            m = by_id[m.parent]
            n += 1
        return n

    # --- size and pruning -----------------------------------------------------------------------

    def usage(self, *, refresh: bool = True) -> StoreUsage:
        manifests = self.manifests(refresh=refresh)
        sizes: dict[str, int] = {}
        for m in manifests:
            for rec in m.files.values():
                if rec.sha is not None:
                    sizes[rec.sha] = rec.size
        return StoreUsage(
            blob_bytes=sum(sizes.values()),
            blobs=len(sizes),
            manifest_bytes=sum(m.stored_size for m in manifests),
            manifests=len(manifests),
        )

    def prune(self, budget: int, keep: int) -> list[Manifest]:
        """Delete the oldest checkpoints until the store fits ``budget`` bytes (the newest ``keep``
        always stay); copies no checkpoint needs any more go with them. Returns what was pruned.
        Call with :meth:`lock` held."""
        pruned: list[Manifest] = []
        manifests = self.manifests(refresh=False)
        if self.usage(refresh=False).total <= budget:
            return pruned
        while len(manifests) > keep and self.usage(refresh=False).total > budget:
            oldest = manifests.pop(0)
            for child in [m for m in manifests if m.parent == oldest.id]:
                # the child replays its parent: it becomes complete on its own first
                full = Manifest(
                    id=child.id, seq=child.seq, created=child.created, reason=child.reason, label=child.label,
                    parent=None, full=True, files=dict(self.state(child)), excluded=child.excluded,
                    skipped=child.skipped, workspace=child.workspace, total_files=child.total_files,
                    total_bytes=child.total_bytes,
                )  # fmt: skip
                self.save(full)
            self.delete_manifest(oldest.id)
            pruned.append(oldest)
            manifests = self.manifests(refresh=False)
        if pruned:
            self.collect_garbage()
        return pruned

    def collect_garbage(self) -> int:
        """Delete stored copies no checkpoint lists (left by pruning or an interrupted checkpoint).
        Call with :meth:`lock` held. Returns how many were deleted."""
        wanted = {
            rec.sha for m in self.manifests(refresh=False) for rec in m.files.values() if rec.sha is not None
        }
        deleted = 0
        try:
            entries = self.fs.readdir(_BLOBS, recursive=True, max_depth=2)
        except FilesystemError:
            return 0
        for e in entries:
            if e.type != "file":
                continue
            sha = e.name.replace("/", "")
            if len(sha) == 64 and sha not in wanted:
                with contextlib.suppress(FilesystemError):
                    self.fs.delete_file(posixpath.join(_BLOBS, e.name))
                    self._known.discard(sha)
                    deleted += 1
        return deleted


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _put_local(host: str, chunks: Iterable[bytes]) -> bool:
    """Write one copy into a local store: a private temporary file, then a link to its final
    name (an existing copy is kept: same name, same content)."""
    if os.path.exists(host):
        return False
    folder = os.path.dirname(host)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tmp = os.path.join(folder, f".tmp-{secrets.token_hex(6)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
    try:
        try:
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        try:
            os.link(tmp, host)
        except FileExistsError:
            return False
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _read_local(host: str) -> Iterator[bytes]:
    from ..filesystem.reading import iter_fd

    fd = os.open(host, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    try:
        yield from iter_fd(fd, rel="a stored copy")
    finally:
        os.close(fd)
