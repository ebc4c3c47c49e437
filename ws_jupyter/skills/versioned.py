"""Published skill versions served from a content-addressed blob store on disk.

Publishing a skill folder stores each file once under its SHA-256 (``blobs/ab/cdef...``), then
a manifest (file paths -> blob digests, sizes, executable bits) as one more blob; the
manifest's digest *is* the version id. So the same content always gets the same id, an
unchanged file is never stored twice (across versions and across skills), and a version can
never change after it is published. A per-skill history (``refs/<name>.json``) records when
each version became current.

``VersionedSkillSource`` is a ``SkillSource``: it serves each published skill at ``<name>/``
in its current version (the last published or rolled-back one), or in the version pinned with
``versions={"name": "<id or unique prefix>"}`` / ``pinned(...)``. Give a workspace
``skills=["."]`` and ``skill_source=VersionedSkillSource(path)`` to serve them to agents.

Writes are atomic (temporary file in the same directory + ``os.replace``) and history updates
hold an exclusive file lock, so concurrent publishers (threads or processes) never tear a file.

>>> store = VersionedSkillSource("/tmp/skill-store")         # doctest: +SKIP
>>> v1 = store.publish("skills/data-cleaning")               # doctest: +SKIP
>>> store.publish("skills/data-cleaning") == v1              # same content, same id  # doctest: +SKIP
True
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import posixpath
import re
import shutil
import stat as stat_module
import tempfile
import threading
import time
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import (
    DirectoryNotFound,
    FileExists,
    FileNotFound,
    IsADirectory,
    NotADirectory,
    SkillError,
    SkillNotFoundError,
    SkillPathError,
    SkillValidationError,
    WorkspaceError,
)
from ..filesystem.reading import MAX_CONFIG_BYTES, read_host_file
from ..filesystem.types import FileEntry, FileStat
from .loader import MAX_SKILL_FILES, is_skill_content
from .parsing import parse_skill_md, validate_name

__all__ = ["BlobStore", "SkillVersion", "SkillVersionFile", "VersionedSkillSource"]

MANIFEST_FORMAT = 1
#: One file of a skill above this size is refused at publish time.
MAX_PUBLISHED_FILE_BYTES = 64 << 20
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX = re.compile(r"^[0-9a-f]+$")


def _atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the new one, never a torn one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _check_manifest_path(path: object) -> str:
    """A manifest file path must be what publishing writes: relative, normalised, made of skill
    content names (no ``..``, no absolute path, no hidden part) — a forged manifest can then
    neither write outside an export's folder nor show a file outside the skill."""
    if not isinstance(path, str) or not path:
        raise ValueError(f"file path {path!r} is not a non-empty string")
    if len(path) > 4096 or "\x00" in path or "\\" in path:
        raise ValueError(f"file path {path[:80]!r} is malformed")
    parts = path.split("/")
    if path.startswith("/") or posixpath.normpath(path) != path:
        raise ValueError(f"file path {path[:80]!r} is not a normalised relative path")
    for part in parts:
        if (
            part in ("", ".", "..")
            or not is_skill_content(part)
            or len(part.encode("utf-8", "surrogatepass")) > 255
        ):
            raise ValueError(f"file path {path[:80]!r} has an invalid part {part[:80]!r}")
    return path


def _parse_manifest(version_id: str, raw: bytes) -> SkillVersion:
    """A manifest blob, every field checked (raises ValueError/KeyError/TypeError)."""
    data = json.loads(raw)
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise ValueError("unknown manifest format")
    name = data["name"]
    if validate_name(name):
        raise ValueError(f"invalid skill name {name!r}")
    entries = data["files"]
    if not isinstance(entries, list) or len(entries) > MAX_SKILL_FILES:
        raise ValueError(f"the file list is not a list of at most {MAX_SKILL_FILES} entries")
    files: list[SkillVersionFile] = []
    seen: set[str] = set()
    for f in entries:
        path = _check_manifest_path(f["path"])
        blob, size, executable = f["blob"], f["size"], f.get("executable", False)
        if not isinstance(blob, str) or not _HEX64.match(blob):
            raise ValueError(f"blob id {blob!r} of {path} is not a SHA-256 digest")
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_PUBLISHED_FILE_BYTES:
            raise ValueError(f"size {size!r} of {path} is out of range")
        if not isinstance(executable, bool):
            raise ValueError(f"executable flag of {path} is not a boolean")
        if path in seen:
            raise ValueError(f"file path {path} is listed twice")
        seen.add(path)
        files.append(SkillVersionFile(path, blob, size, executable))
    for path in seen:  # a file cannot also be a folder ("a" and "a/b")
        head = path.rpartition("/")[0]
        while head:
            if head in seen:
                raise ValueError(f"{head} is both a file and a folder")
            head = head.rpartition("/")[0]
    return SkillVersion(version_id, name, tuple(files))


class BlobStore:
    """Immutable blobs addressed by their SHA-256 hex digest, stored once each."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().absolute()

    def __repr__(self) -> str:
        return f"BlobStore({str(self.root)!r})"

    def path_for(self, digest: str) -> Path:
        if not _HEX64.match(digest):
            raise SkillError(f"Not a blob digest: {digest!r}", code="INVALID_BLOB_ID")
        return self.root / digest[:2] / digest[2:]

    def put(self, data: bytes) -> str:
        """Store ``data`` (no-op when already present) and return its digest."""
        digest = hashlib.sha256(data).hexdigest()
        path = self.path_for(digest)
        if not path.exists():
            _atomic_write(path, data, 0o444)
        return digest

    def has(self, digest: str) -> bool:
        try:
            return self.path_for(digest).is_file()
        except SkillError:
            return False

    def get(self, digest: str) -> bytes:
        """The blob's bytes, verified against the digest (a damaged blob raises, never misleads)."""
        path = self.path_for(digest)
        try:
            # a blob is a regular file no larger than a published file: never a symlink or FIFO
            data = read_host_file(path, MAX_PUBLISHED_FILE_BYTES, follow_symlinks=False)
        except FileNotFoundError:
            raise SkillError(
                f"Blob {digest[:12]} is missing from the store at {self.root}", code="BLOB_MISSING"
            ) from None
        except (OSError, WorkspaceError) as exc:
            raise SkillError(
                f"Blob {digest[:12]} is unreadable in {self.root}: {exc}", code="BLOB_CORRUPTED"
            ) from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise SkillError(
                f"Blob {digest[:12]} is corrupted (content does not match its digest) in {self.root}",
                code="BLOB_CORRUPTED",
            )
        return data

    def digests(self) -> Iterator[str]:
        """Every stored digest (for inspection and tests)."""
        if not self.root.is_dir():
            return
        for prefix in sorted(self.root.iterdir()):
            if prefix.is_dir() and len(prefix.name) == 2:
                for blob in sorted(prefix.iterdir()):
                    if not blob.name.startswith("."):
                        yield prefix.name + blob.name


@dataclass(frozen=True)
class SkillVersionFile:
    path: str
    blob: str
    size: int
    executable: bool = False


@dataclass(frozen=True)
class SkillVersion:
    """One published version: its id (the manifest digest), skill name and files.

    ``published_at`` is when it last became current (None if it never was)."""

    id: str
    name: str
    files: tuple[SkillVersionFile, ...]
    published_at: float | None = None
    message: str | None = None

    @property
    def short_id(self) -> str:
        return self.id[:12]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    def file(self, path: str) -> SkillVersionFile | None:
        for entry in self.files:
            if entry.path == path:
                return entry
        return None


@dataclass(frozen=True)
class _Tree:
    """A version laid out for serving: files by path, and the set of directories."""

    version: SkillVersion
    files: Mapping[str, SkillVersionFile]
    dirs: frozenset[str]


class VersionedSkillSource:
    """A ``SkillSource`` over skill versions published into a blob store at ``root``.

    ``versions`` pins skills to given versions (full id or unique prefix); unpinned skills are
    served in their current version.
    """

    def __init__(self, root: str | os.PathLike[str], *, versions: Mapping[str, str] | None = None) -> None:
        self.root = Path(root).expanduser().absolute()
        self.blobs = BlobStore(self.root / "blobs")
        self._refs_dir = self.root / "refs"
        self._lock = threading.RLock()
        self._history_cache: dict[str, tuple[Hashable, list[dict[str, Any]]]] = {}
        self._manifests: dict[str, SkillVersion] = {}
        self._trees: dict[str, _Tree] = {}
        self._pins: dict[str, str] = {}
        for name, ref in (versions or {}).items():
            self._pins[name] = self.resolve_version(name, ref)

    def __repr__(self) -> str:
        pins = f", versions={ {k: v[:12] for k, v in self._pins.items()} }" if self._pins else ""
        return f"VersionedSkillSource({str(self.root)!r}{pins})"

    # -- history -------------------------------------------------------------------------------------

    def _refs_path(self, name: str) -> Path:
        if validate_name(name):
            raise SkillNotFoundError(f"Not a valid skill name: {name!r}")
        return self._refs_dir / f"{name}.json"

    def _history(self, name: str) -> list[dict[str, Any]]:
        path = self._refs_path(name)
        try:
            st = path.stat()
        except FileNotFoundError:
            return []
        token = (st.st_mtime_ns, st.st_size, st.st_ino)
        with self._lock:
            cached = self._history_cache.get(name)
            if cached is not None and cached[0] == token:
                return cached[1]
        try:
            data = json.loads(read_host_file(path, MAX_CONFIG_BYTES, follow_symlinks=False).decode("utf-8"))
            history = [dict(e) for e in data["history"]]
            for e in history:
                if not isinstance(e.get("version"), str) or not _HEX64.match(e["version"]):
                    raise ValueError(f"version {e.get('version')!r} is not a version id")
                if not isinstance(e.get("published_at"), (int, float)) or isinstance(e["published_at"], bool):
                    raise ValueError("published_at is not a timestamp")
        except (OSError, ValueError, KeyError, TypeError, WorkspaceError) as exc:
            raise SkillError(
                f"The version history of skill {name!r} is unreadable: {exc}", code="BLOB_CORRUPTED"
            )
        with self._lock:
            self._history_cache[name] = (token, history)
        return history

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.root / ".lock", "a+b") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _append_history(self, name: str, version_id: str, message: str | None, *, force: bool) -> None:
        with self._exclusive():
            history = list(self._history(name))
            if not force and history and history[-1]["version"] == version_id:
                return
            history.append({"version": version_id, "published_at": time.time(), "message": message})
            payload = json.dumps({"name": name, "history": history}, indent=1, sort_keys=True).encode()
            _atomic_write(self._refs_path(name), payload)

    def names(self) -> list[str]:
        """Names of the skills published in this store (pinned or not)."""
        if not self._refs_dir.is_dir():
            return []
        return sorted(
            p.stem for p in self._refs_dir.iterdir() if p.suffix == ".json" and not p.name.startswith(".")
        )

    def history(self, name: str) -> list[SkillVersion]:
        """Every time a version of ``name`` became current, oldest first."""
        out = []
        for entry in self._history(name):
            manifest = self.manifest(entry["version"])
            out.append(
                SkillVersion(
                    manifest.id, manifest.name, manifest.files, entry["published_at"], entry.get("message")
                )
            )
        return out

    def versions(self, name: str) -> list[SkillVersion]:
        """Distinct versions of ``name``, oldest first (each with when it last became current)."""
        latest: dict[str, SkillVersion] = {}
        for version in self.history(name):
            latest.pop(version.id, None)
            latest[version.id] = version
        return sorted(latest.values(), key=lambda v: v.published_at or 0.0)

    def latest_version(self, name: str) -> str | None:
        """The id of the current version of ``name`` in the store (ignoring pins)."""
        history = self._history(name)
        return history[-1]["version"] if history else None

    def current_version(self, name: str) -> str | None:
        """The version this source serves for ``name`` (its pin, else the latest)."""
        return self._pins.get(name) or self.latest_version(name)

    def resolve_version(self, name: str, ref: str) -> str:
        """Full version id of ``name`` from an id or a unique prefix (at least 4 hex digits)."""
        ref = ref.strip().lower()
        candidates = {e["version"] for e in self._history(name)}
        if not candidates:
            raise SkillNotFoundError(f'No published versions of skill "{name}" in {self.root}')
        if _HEX64.match(ref) and ref in candidates:
            return ref
        if len(ref) < 4 or not _HEX.match(ref):
            raise SkillNotFoundError(f'"{ref}" is not a version id (give at least 4 hex digits)')
        matches = sorted(v for v in candidates if v.startswith(ref))
        if not matches:
            raise SkillNotFoundError(f'Skill "{name}" has no version {ref}')
        if len(matches) > 1:
            raise SkillNotFoundError(
                f'Version prefix {ref} of skill "{name}" is ambiguous: {", ".join(m[:12] for m in matches)}'
            )
        return matches[0]

    def manifest(self, version_id: str) -> SkillVersion:
        """The files of one version (immutable, so cached)."""
        with self._lock:
            cached = self._manifests.get(version_id)
        if cached is not None:
            return cached
        raw = self.blobs.get(version_id)
        try:
            version = _parse_manifest(version_id, raw)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SkillError(
                f"Version {version_id[:12]} is not a valid skill manifest: {exc}", code="BLOB_CORRUPTED"
            ) from None
        with self._lock:
            self._manifests[version_id] = version
        return version

    # -- publishing ------------------------------------------------------------------------------------

    @staticmethod
    def _collect(folder: Path) -> list[tuple[str, Path]]:
        files: list[tuple[str, Path]] = []
        real_root = folder.resolve()
        for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
            here = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if is_skill_content(d) and not (here / d).is_symlink())
            for name in sorted(filenames):
                if not is_skill_content(name):
                    continue
                path = here / name
                rel = path.relative_to(folder).as_posix()
                if path.is_symlink():
                    target = path.resolve()
                    if not (target == real_root or real_root in target.parents):
                        raise SkillPathError(
                            f"Cannot publish {rel}: it is a symlink to {target}, outside the skill folder",
                            path=rel,
                        )
                    if not target.is_file():
                        continue
                files.append((rel, path))
                if len(files) > MAX_SKILL_FILES:
                    raise SkillError(f"A skill may hold at most {MAX_SKILL_FILES} files; {folder} has more")
        return files

    def publish(self, folder: str | os.PathLike[str], *, message: str | None = None) -> str:
        """Publish a skill folder as a new version (made current); returns the version id.

        The folder must hold a valid SKILL.md whose name equals the folder name. Publishing
        content identical to the current version changes nothing and returns the same id.
        """
        folder = Path(folder).expanduser().absolute()
        skill_md = folder / "SKILL.md"
        if not skill_md.is_file():
            raise SkillValidationError(f"Cannot publish {folder}: it has no SKILL.md", path=str(folder))
        definition = parse_skill_md(skill_md.read_bytes(), path=str(skill_md), folder_name=folder.name)
        entries = []
        for rel, path in self._collect(folder):
            data = path.read_bytes()
            if len(data) > MAX_PUBLISHED_FILE_BYTES:
                raise SkillError(
                    f"Cannot publish {rel}: {len(data)} bytes is over the {MAX_PUBLISHED_FILE_BYTES}-byte limit"
                )
            mode = path.stat().st_mode
            entries.append(
                {
                    "path": rel,
                    "blob": self.blobs.put(data),
                    "size": len(data),
                    "executable": bool(
                        mode & (stat_module.S_IXUSR | stat_module.S_IXGRP | stat_module.S_IXOTH)
                    ),
                }
            )
        manifest = {"format": MANIFEST_FORMAT, "name": definition.name, "files": entries}
        raw = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
        version_id = self.blobs.put(raw)
        self._append_history(definition.name, version_id, message, force=False)
        return version_id

    def set_current(self, name: str, version: str, *, message: str | None = None) -> str:
        """Make an earlier version current again (a rollback); returns its full id."""
        version_id = self.resolve_version(name, version)
        if self.latest_version(name) != version_id:
            self._append_history(name, version_id, message or f"set current to {version_id[:12]}", force=True)
        return version_id

    def pinned(self, **versions: str) -> VersionedSkillSource:
        """A source over the same store that serves the given versions (``name=id``; use
        ``pinned(**{"data-cleaning": id})`` for hyphenated names)."""
        return VersionedSkillSource(self.root, versions={**self._pins, **versions})

    def read_version_file(self, version_id: str, path: str) -> bytes:
        """One file of any version, by its path inside the skill."""
        entry = self.manifest(version_id).file(path)
        if entry is None:
            raise FileNotFound(path, f"Version {version_id[:12]} has no file {path}")
        return self._blob_of(entry)

    def _blob_of(self, entry: SkillVersionFile) -> bytes:
        """A file's bytes, which must have the size its manifest says."""
        data = self.blobs.get(entry.blob)
        if len(data) != entry.size:
            raise SkillError(
                f"Blob {entry.blob[:12]} of {entry.path} has {len(data)} bytes, its manifest says {entry.size}",
                code="BLOB_CORRUPTED",
            )
        return data

    def export(self, name: str, dest: str | os.PathLike[str], *, version: str | None = None) -> Path:
        """Write a version (default: the served one) into ``dest/<name>`` as a plain folder, e.g.
        so a sandbox can run its scripts. ``dest/<name>`` must not exist yet."""
        version_id = self.resolve_version(name, version) if version else self.current_version(name)
        if version_id is None:
            raise SkillNotFoundError(f'No published versions of skill "{name}" in {self.root}')
        target = Path(dest).expanduser().absolute() / name
        if target.exists():
            raise FileExists(str(target))
        target.parent.mkdir(parents=True, exist_ok=True)
        manifest = self.manifest(version_id)
        if manifest.name != name:
            raise SkillError(
                f"Version {version_id[:12]} is a version of {manifest.name!r}, not of {name!r}",
                code="BLOB_CORRUPTED",
            )
        staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
        try:
            for entry in manifest.files:
                out = staging / entry.path  # a checked relative path: stays inside staging
                out.parent.mkdir(parents=True, exist_ok=True)
                data = self._blob_of(entry)
                fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                out.chmod(0o755 if entry.executable else 0o644)
            staging.chmod(0o755)
            os.replace(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return target

    # -- serving (SkillSource) ------------------------------------------------------------------------

    @staticmethod
    def _split(path: str) -> tuple[str, str] | None:
        """``"name/references/x.md"`` -> ``("name", "references/x.md")``; ``("", "")`` is the root."""
        if "\x00" in path:
            return None
        norm = posixpath.normpath("/" + path.strip()).lstrip("/")
        if norm in ("", "."):
            return "", ""
        name, _, rest = norm.partition("/")
        return name, rest

    def _tree(self, name: str) -> _Tree | None:
        if validate_name(name):
            return None
        version_id = self.current_version(name)
        if version_id is None:
            return None
        with self._lock:
            tree = self._trees.get(version_id)
        if tree is None:
            manifest = self.manifest(version_id)
            if manifest.name != name:
                raise SkillError(
                    f"Version {version_id[:12]} is a version of {manifest.name!r}, not of {name!r}",
                    code="BLOB_CORRUPTED",
                )
            dirs = {""}
            for entry in manifest.files:
                parts = entry.path.split("/")[:-1]
                for i in range(1, len(parts) + 1):
                    dirs.add("/".join(parts[:i]))
            tree = _Tree(manifest, {f.path: f for f in manifest.files}, frozenset(dirs))
            with self._lock:
                self._trees[version_id] = tree
        return tree

    def _times(self, name: str, version_id: str) -> tuple[float, float]:
        history = self._history(name)
        stamps = [e["published_at"] for e in history if e["version"] == version_id] or [0.0]
        return stamps[0], stamps[-1]

    def exists(self, path: str) -> bool:
        try:
            self.stat(path)
        except (OSError, SkillError):
            return False
        return True

    def stat(self, path: str) -> FileStat:
        split = self._split(path)
        if split is None:
            raise FileNotFound(path)
        name, rest = split
        if not name:
            mtime = self._refs_dir.stat().st_mtime if self._refs_dir.is_dir() else 0.0
            when = datetime.fromtimestamp(mtime, tz=timezone.utc)
            return FileStat(name="", path="", type="directory", size=0, created_at=when, modified_at=when)
        tree = self._tree(name)
        if tree is None:
            raise FileNotFound(path)
        created, modified = self._times(name, tree.version.id)
        c_dt = datetime.fromtimestamp(created, tz=timezone.utc)
        m_dt = datetime.fromtimestamp(modified, tz=timezone.utc)
        rel_path = f"{name}/{rest}" if rest else name
        entry = tree.files.get(rest)
        if entry is not None:
            return FileStat(posixpath.basename(rest), rel_path, "file", entry.size, c_dt, m_dt)
        if rest in tree.dirs:
            return FileStat(posixpath.basename(rest) or name, rel_path, "directory", 0, c_dt, m_dt)
        raise FileNotFound(path)

    def fingerprint(self, path: str) -> Hashable | None:
        """The served version id plus the path: changes exactly when a new version is served."""
        split = self._split(path)
        if split is None:
            return None
        name, rest = split
        if not name:
            return tuple((n, self.current_version(n)) for n in self.names())
        tree = self._tree(name)
        if tree is None:
            return None
        entry = tree.files.get(rest)
        if entry is not None:
            return (tree.version.id, rest, entry.blob)
        return (tree.version.id, rest) if rest in tree.dirs else None

    def read_file(self, path: str) -> bytes:
        split = self._split(path)
        if split is None:
            raise FileNotFound(path)
        name, rest = split
        tree = self._tree(name) if name else None
        if tree is None:
            raise FileNotFound(path)
        entry = tree.files.get(rest)
        if entry is None:
            if rest in tree.dirs:
                raise IsADirectory(path)
            raise FileNotFound(path)
        return self._blob_of(entry)

    def readdir(self, path: str) -> list[FileEntry]:
        split = self._split(path)
        if split is None:
            raise DirectoryNotFound(path)
        name, rest = split
        if not name:
            return [
                FileEntry(n, "directory")
                for n in self.names()
                if not validate_name(n) and self.current_version(n) is not None
            ]
        tree = self._tree(name)
        if tree is None:
            raise DirectoryNotFound(path)
        if rest in tree.files:
            raise NotADirectory(path)
        if rest not in tree.dirs:
            raise DirectoryNotFound(path)
        prefix = f"{rest}/" if rest else ""
        children: dict[str, FileEntry] = {}
        for file_path, entry in tree.files.items():
            if not file_path.startswith(prefix):
                continue
            head, _, tail = file_path[len(prefix) :].partition("/")
            if tail:
                children.setdefault(head, FileEntry(head, "directory"))
            else:
                children[head] = FileEntry(head, "file", size=entry.size)
        return [children[k] for k in sorted(children)]

    def realpath(self, path: str) -> str:
        """``<name>@<version id>/<path>``: two pins of one skill are two different skills."""
        split = self._split(path)
        if split is None:
            return path
        name, rest = split
        if not name:
            return "."
        version_id = self.current_version(name) if not validate_name(name) else None
        base = f"{name}@{version_id}" if version_id else name
        return f"{base}/{rest}" if rest else base
