"""What one checkpoint records: a manifest of the workspace's files, signed and compact.

A manifest maps workspace-relative paths to :class:`FileRecord` values (kind, size, nanosecond
mtime, inode, permission bits, SHA-256 of the content, ETag on object stores, a symlink's target).
The first checkpoint of a store lists every file (``full``); later ones list only the records that
changed since their ``parent`` and the paths ``removed`` — a workspace of 5,000 files where ten
change costs ten records per checkpoint. Every ``full_every``-th manifest is full again, and
pruning rewrites the child of a pruned manifest as full, so a chain never dangles.

Stored as gzip-compressed JSON with an HMAC-SHA256 signature under a per-user key kept outside
every workspace (:func:`ws_jupyter.checkpoints.store.signing_key`): a manifest written by anyone
else — sandboxed code, an agent's file tools on an object store, a folder copied from elsewhere —
fails :meth:`Manifest.decode` and is never restored from. Paths are checked too (no ``..``, no
absolute paths), so even a signed manifest cannot name anything outside the workspace.
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import posixpath
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import CheckpointDamagedError

__all__ = ["Excluded", "FileRecord", "Kind", "Manifest", "State", "check_rel_path"]

Kind = Literal["file", "dir", "link"]
_FORMAT = 1
_SHA = re.compile(r"^[0-9a-f]{64}$")
#: Largest manifest accepted (compressed and expanded): far above 1 million files.
_MAX_MANIFEST_BYTES = 512 << 20


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One entry of a checkpoint. ``sha`` is the content's SHA-256 (files), ``target`` a symlink's
    target; ``ino``/``mode`` are 0/None where the store has none (object stores); ``racy`` marks a
    file modified so close to the scan that a later change could keep its mtime: it is hashed
    again next time instead of trusted by its metadata."""

    kind: Kind
    size: int = 0
    mtime_ns: int = 0
    ino: int = 0
    mode: int | None = None
    sha: str | None = None
    etag: str | None = None
    target: str | None = None
    racy: bool = False

    def same_content(self, other: FileRecord | None) -> bool:
        """Equal as far as a restore is concerned: kind, bytes, permission bits, link target."""
        return (
            other is not None
            and self.kind == other.kind
            and self.sha == other.sha
            and self.target == other.target
            and (self.mode is None or other.mode is None or self.mode == other.mode)
        )

    def to_json(self) -> list[Any]:
        return [
            self.kind,
            self.size,
            self.mtime_ns,
            self.ino,
            self.mode,
            self.sha,
            self.etag,
            self.target,
            self.racy,
        ]

    @classmethod
    def from_json(cls, raw: Any) -> FileRecord:
        if not isinstance(raw, list) or len(raw) != 9:
            raise ValueError("a record is a list of 9 fields")
        kind, size, mtime_ns, ino, mode, sha, etag, target, racy = raw
        if kind not in ("file", "dir", "link"):
            raise ValueError(f"unknown kind {kind!r}")
        for value in (size, mtime_ns, ino):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError("size, mtime and inode are non-negative integers")
        if mode is not None and (
            isinstance(mode, bool) or not isinstance(mode, int) or not 0 <= mode <= 0o7777
        ):
            raise ValueError("mode is a permission number")
        if kind == "file" and (not isinstance(sha, str) or not _SHA.match(sha)):
            raise ValueError("a file needs its SHA-256")
        if kind != "file" and sha is not None:
            raise ValueError("only files have content")
        if etag is not None and not isinstance(etag, str):
            raise ValueError("etag is text")
        if (kind == "link") != isinstance(target, str):
            raise ValueError("a link (only) has a target")
        return cls(kind, size, mtime_ns, ino, mode, sha, etag, target, bool(racy))


#: The state of a workspace: path -> record.
State = dict[str, FileRecord]


@dataclass(frozen=True)
class Excluded:
    """A file a checkpoint did not record, and why (``too large``, ``not a regular file``...)."""

    path: str
    reason: str
    size: int | None = None


def check_rel_path(path: Any) -> str:
    """``path`` when it is a normalised workspace-relative path, else ``ValueError``."""
    if (
        not isinstance(path, str)
        or not path
        or "\0" in path
        or path.startswith("/")
        or posixpath.normpath(path) != path
        or path == "."
        or path == ".."
        or path.startswith("../")
    ):
        raise ValueError(f"not a workspace path: {path!r}")
    return path


@dataclass
class Manifest:
    """One checkpoint as stored (see the module docstring)."""

    id: str
    seq: int
    created: float
    reason: str
    label: str | None = None
    parent: str | None = None
    full: bool = True
    files: State = field(default_factory=dict)
    removed: tuple[str, ...] = ()
    excluded: tuple[Excluded, ...] = ()
    skipped: tuple[str, ...] = ()
    workspace: str = ""
    #: files recorded in the whole state, and their bytes (for listings without replaying)
    total_files: int = 0
    total_bytes: int = 0
    #: bytes of the stored (compressed) manifest, when known
    stored_size: int = 0

    def payload(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "id": self.id,
            "seq": self.seq,
            "created": self.created,
            "reason": self.reason,
            "label": self.label,
            "parent": self.parent,
            "full": self.full,
            "workspace": self.workspace,
            "files": {p: r.to_json() for p, r in sorted(self.files.items())},
            "removed": sorted(self.removed),
            "excluded": [[e.path, e.reason, e.size] for e in self.excluded],
            "skipped": list(self.skipped),
            "total_files": self.total_files,
            "total_bytes": self.total_bytes,
        }

    def encode(self, key: bytes) -> bytes:
        """Compressed, signed bytes to store."""
        body = json.dumps(self.payload(), separators=(",", ":"), sort_keys=True).encode("utf-8")
        sig = hmac.new(key, body, hashlib.sha256).hexdigest()
        return gzip.compress(sig.encode("ascii") + b"\n" + body, compresslevel=6, mtime=0)

    @classmethod
    def decode(cls, data: bytes, key: bytes, *, name: str = "") -> Manifest:
        """Parse and verify stored bytes; ``CheckpointDamagedError`` for anything not written
        under ``key`` or not well formed."""
        shown = name or "a checkpoint manifest"
        try:
            inflater = zlib.decompressobj(wbits=31)  # gzip framing; bounded: no zip bomb
            raw = inflater.decompress(data, _MAX_MANIFEST_BYTES + 1)
        except zlib.error as exc:
            raise CheckpointDamagedError(f"{shown} is damaged (not gzip data: {exc})") from None
        if len(raw) > _MAX_MANIFEST_BYTES:
            raise CheckpointDamagedError(f"{shown} is too large to be a manifest")
        sig, _, body = raw.partition(b"\n")
        expected = hmac.new(key, body, hashlib.sha256).hexdigest().encode("ascii")
        if not hmac.compare_digest(sig, expected):
            raise CheckpointDamagedError(
                f"{shown} was not written by ws-jupyter for this user (its signature does not match): "
                "it is ignored, nothing is restored from it"
            )
        try:
            obj = json.loads(body.decode("utf-8"))
            return cls._from_payload(obj)
        except (ValueError, TypeError, KeyError, UnicodeDecodeError) as exc:
            raise CheckpointDamagedError(f"{shown} is malformed ({exc})") from None

    @classmethod
    def _from_payload(cls, obj: Any) -> Manifest:
        if not isinstance(obj, dict) or obj.get("format") != _FORMAT:
            raise ValueError("unknown manifest format")
        files_raw = obj["files"]
        if not isinstance(files_raw, Mapping):
            raise ValueError("files is a mapping")
        files = {check_rel_path(p): FileRecord.from_json(r) for p, r in files_raw.items()}
        removed = tuple(check_rel_path(p) for p in obj["removed"])
        excluded = tuple(
            Excluded(check_rel_path(e[0]), str(e[1]), e[2] if isinstance(e[2], int) else None)
            for e in obj["excluded"]
        )
        skipped = tuple(check_rel_path(p) for p in obj["skipped"])
        ident, seq, created = obj["id"], obj["seq"], obj["created"]
        if not isinstance(ident, str) or not re.fullmatch(r"[0-9]+-[0-9a-f]{6}", ident):
            raise ValueError("bad id")
        if isinstance(seq, bool) or not isinstance(seq, int) or not isinstance(created, (int, float)):
            raise ValueError("bad sequence number or time")
        parent, label = obj["parent"], obj["label"]
        if parent is not None and not isinstance(parent, str):
            raise ValueError("bad parent")
        if label is not None and not isinstance(label, str):
            raise ValueError("bad label")
        return cls(
            id=ident,
            seq=seq,
            created=float(created),
            reason=str(obj["reason"]),
            label=label,
            parent=parent,
            full=bool(obj["full"]),
            files=files,
            removed=removed,
            excluded=excluded,
            skipped=skipped,
            workspace=str(obj.get("workspace", "")),
            total_files=_count(obj.get("total_files")),
            total_bytes=_count(obj.get("total_bytes")),
        )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
