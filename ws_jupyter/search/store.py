"""The search index's document store: one SQLite file holding every indexed document (content,
metadata, line span, kind, analysed lines, embedding state), a change sequence, and the
auto-indexer's file manifest.

Why SQLite: a change to one document is one small transaction (WAL mode), so keeping the index
durable costs time proportional to the change, not to the index; the BM25 snapshot only has to
be rewritten now and then, and on open the documents changed since the snapshot (``seq`` greater
than the snapshot's) are replayed. The vector store keeps its own copy of the vectors; ``vec_hash`` records which content
each document's vector was computed from, so embedding can stop at any point (a kernel restart)
and resume with exactly the documents whose vector is missing or stale.

``line_terms`` is a document's analysed text, one line per line of the content (terms separated
by spaces), kept by indexes written before it was made on demand: finding a hit's matching lines
is a regular-expression scan of it. (It is now made when a hit's line range is first read.)

Everything here runs under the engine's lock; the connection is shared across threads.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import IndexCorruptedError

__all__ = ["DocRecord", "DocStore", "FileRecord"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    content TEXT NOT NULL,
    metadata TEXT NOT NULL,
    hash TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT,
    line_terms TEXT,
    vec_hash TEXT,
    vec_n INTEGER,
    vec_skip TEXT
);
CREATE INDEX IF NOT EXISTS docs_source ON docs(source);
CREATE INDEX IF NOT EXISTS docs_seq ON docs(seq);
CREATE TABLE IF NOT EXISTS removed (id TEXT PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL
);
"""
_SCHEMA_VERSION = "3"
# v1 -> v2: kind (file / text), line_terms, vec_hash; v2 -> v3: vec_n (vectors stored for the
# document: one per window of the model), vec_skip (why the document has no vector by rule)
_V2_COLUMNS = (("kind", "TEXT"), ("line_terms", "TEXT"), ("vec_hash", "TEXT"))
_V3_COLUMNS = (("vec_n", "INTEGER"), ("vec_skip", "TEXT"))
#: meta key set while the vector state of a v1 index has not been read from its vector store
LEGACY_VECTORS = "legacy_vectors"


@dataclass(frozen=True)
class DocRecord:
    """An indexed document without its content (kept in memory by the engine).

    ``kind`` is ``"file"`` for a workspace file's chunk (written by the auto-indexer only),
    ``"text"`` for a document indexed from given text, None for an entry of an index written
    before kinds were recorded (treated as not a file, so the next pass re-reads the file).
    """

    id: str
    source: str
    start_line: int
    end_line: int
    metadata: dict[str, Any]
    hash: str
    kind: str | None = "text"


class FileRecord(NamedTuple):
    """What the auto-indexer knew about a file when it last indexed it (a tuple: manifests of
    tens of thousands of files load in milliseconds)."""

    path: str
    size: int
    mtime_ns: int
    hash: str
    etag: str = ""  # the backend's ETag where it has one (object stores), else ""


class DocStore:
    """SQLite-backed documents + manifest. ``path=None`` keeps everything in memory."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(str(path) if path else ":memory:", check_same_thread=False,
                                       isolation_level=None)
            if path is not None:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            check = self._db.execute("PRAGMA quick_check").fetchone()
            if not check or check[0] != "ok":
                raise sqlite3.DatabaseError(f"integrity check failed: {check}")
            version = self._table_version()
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(files)")}
            if "etag" not in columns:  # manifests written before ETags were kept
                self._db.execute("ALTER TABLE files ADD COLUMN etag TEXT NOT NULL DEFAULT ''")
            if version is None:
                self.set_meta("schema", _SCHEMA_VERSION)
            elif version in ("1", "2"):
                self._migrate(version)
            elif version != _SCHEMA_VERSION:
                raise sqlite3.DatabaseError(f"unknown schema version {version}")
            self._db.execute("CREATE INDEX IF NOT EXISTS docs_vec_hash ON docs(vec_hash)")
            seq = self.get_meta("seq")
            self._seq = int(seq) if seq else 0
            # whether the removal log may hold an id (then a put must take it out of the log)
            self._removals = self._db.execute("SELECT 1 FROM removed LIMIT 1").fetchone() is not None
        except sqlite3.DatabaseError as exc:
            try:
                self._db.close()
            except Exception:
                pass
            raise IndexCorruptedError(f"search index database is unreadable: {exc}") from exc
        self._in_tx = False
        self._files: dict[str, FileRecord] | None = None

    def _table_version(self) -> str | None:
        has_meta = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
        return self.get_meta("schema") if has_meta else None

    def _migrate(self, version: str) -> None:
        """Adds the columns of later versions. From v1, the vectors of the existing documents
        are matched against the vector store when it is next opened (:data:`LEGACY_VECTORS`),
        not re-embedded; a v2 document with a vector has one (``vec_n`` NULL means 1)."""
        have = {row[1] for row in self._db.execute("PRAGMA table_info(docs)")}
        self._db.execute("BEGIN")
        for name, typ in _V2_COLUMNS + _V3_COLUMNS:
            if name not in have:
                self._db.execute(f"ALTER TABLE docs ADD COLUMN {name} {typ}")
        if version == "1":
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (LEGACY_VECTORS,))
        self._db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (_SCHEMA_VERSION,))
        self._db.execute("COMMIT")

    # ------------------------------------------------------------------ transactions
    def begin(self) -> None:
        with self._lock:
            if not self._in_tx:
                self._db.execute("BEGIN")
                self._in_tx = True

    def commit(self) -> None:
        with self._lock:
            if self._in_tx:
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('seq', ?)", (str(self._seq),))
                self._db.execute("COMMIT")
                self._in_tx = False

    def close(self) -> None:
        with self._lock:
            try:
                self.commit()
            finally:
                self._db.close()

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def delete_meta(self, key: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM meta WHERE key = ?", (key,))

    @property
    def seq(self) -> int:
        return self._seq

    # ------------------------------------------------------------------ documents
    def put(self, rec: DocRecord, content: str, line_terms: str | None = None) -> None:
        """Adds or replaces a document; its vector state starts empty (it needs embedding)."""
        with self._lock:
            self.begin()
            self._seq += 1
            self._db.execute(
                "INSERT OR REPLACE INTO docs (id, source, start_line, end_line, content, metadata, hash, "
                "seq, kind, line_terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (rec.id, rec.source, rec.start_line, rec.end_line, content,
                 json.dumps(rec.metadata, default=str) if rec.metadata else "{}", rec.hash, self._seq, rec.kind,
                 line_terms),
            )
            if self._removals:
                self._db.execute("DELETE FROM removed WHERE id = ?", (rec.id,))

    def delete(self, doc_id: str) -> None:
        with self._lock:
            self.begin()
            self._seq += 1
            self._db.execute("DELETE FROM docs WHERE id = ?", (doc_id,))
            self._db.execute("INSERT OR REPLACE INTO removed VALUES (?, ?)", (doc_id, self._seq))
            self._removals = True

    def clear_docs(self) -> None:
        with self._lock:
            self.begin()
            self._seq += 1
            self._db.execute("DELETE FROM docs")
            self._db.execute("DELETE FROM removed")
            self._db.execute("DELETE FROM files")
            self._files = {}

    def records(self) -> Iterator[DocRecord]:
        cur = self._db.execute(
            "SELECT id, source, start_line, end_line, metadata, hash, kind FROM docs ORDER BY seq")
        for row in cur:
            yield DocRecord(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], row[6])

    def hit_rows(self, ids: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        """``id -> (content, line_terms)`` for the hits of one search (one query)."""
        if not ids:
            return {}
        q = "SELECT id, content, line_terms FROM docs WHERE id IN ({})".format(",".join("?" * len(ids)))
        with self._lock:
            return {r[0]: (r[1], r[2]) for r in self._db.execute(q, list(ids))}

    def set_kind(self, doc_id: str, kind: str | None) -> None:
        with self._lock:
            self.begin()
            self._db.execute("UPDATE docs SET kind = ? WHERE id = ?", (kind, doc_id))

    def clear_line_terms(self) -> None:
        with self._lock:
            self.begin()
            self._db.execute("UPDATE docs SET line_terms = NULL WHERE line_terms IS NOT NULL")
            self.commit()

    def set_line_terms(self, doc_id: str, line_terms: str | None) -> None:
        with self._lock:
            self.begin()
            self._db.execute("UPDATE docs SET line_terms = ? WHERE id = ?", (line_terms, doc_id))

    # ------------------------------------------------------------------ embedding state
    def unembedded(self) -> list[tuple[str, int]]:
        """``(id, content length)`` of documents whose vector is missing or was computed from
        other content, in indexing order (documents kept without a vector by rule excluded)."""
        with self._lock:
            return [(r[0], r[1]) for r in self._db.execute(
                "SELECT id, LENGTH(content) FROM docs WHERE vec_skip IS NULL "
                "AND (vec_hash IS NULL OR vec_hash != hash) ORDER BY seq")]

    def embedded_ids(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT id FROM docs WHERE vec_hash IS NOT NULL")]

    def vector_counts(self, ids: Iterable[str] | None = None) -> dict[str, int]:
        """``id -> vectors stored`` for documents with a vector (of ``ids``, or all)."""
        with self._lock:
            if ids is None:
                rows = self._db.execute("SELECT id, COALESCE(vec_n, 1) FROM docs WHERE vec_hash IS NOT NULL")
                return {r[0]: int(r[1]) for r in rows}
            out: dict[str, int] = {}
            id_list = list(ids)
            for i in range(0, len(id_list), 500):
                part = id_list[i:i + 500]
                q = ("SELECT id, COALESCE(vec_n, 1) FROM docs WHERE vec_hash IS NOT NULL AND id IN ({})"
                     .format(",".join("?" * len(part))))
                out.update((r[0], int(r[1])) for r in self._db.execute(q, part))
            return out

    def multi_vector_counts(self) -> dict[str, int]:
        """``id -> vectors`` of the documents stored as more than one vector."""
        with self._lock:
            return {r[0]: int(r[1]) for r in self._db.execute("SELECT id, vec_n FROM docs WHERE vec_n > 1")}

    def embedded_with_hash(self, hashes: Iterable[str]) -> dict[str, tuple[str, int]]:
        """``content hash -> (id, vectors)`` of one document holding vectors for that content:
        identical text is embedded once, whichever file it is in."""
        out: dict[str, tuple[str, int]] = {}
        with self._lock:
            for h in set(hashes):
                row = self._db.execute("SELECT id, COALESCE(vec_n, 1) FROM docs WHERE vec_hash = ? "
                                       "AND hash = ? LIMIT 1", (h, h)).fetchone()
                if row:
                    out[h] = (row[0], int(row[1]))
        return out

    def mark_embedded(self, rows: Iterable[tuple[str, str, int]]) -> None:
        """Records ``(id, content hash, vectors)`` of documents whose vectors are now stored."""
        with self._lock:
            self.begin()
            self._db.executemany("UPDATE docs SET vec_hash = ?, vec_n = ? WHERE id = ?",
                                 [(h, n, i) for i, h, n in rows])

    def clear_embedded(self, ids: Iterable[str] | None = None) -> None:
        """Forgets vector state: of ``ids``, or of every document (the vector store was emptied)."""
        with self._lock:
            self.begin()
            if ids is None:
                self._db.execute("UPDATE docs SET vec_hash = NULL, vec_n = NULL")
            else:
                self._db.executemany("UPDATE docs SET vec_hash = NULL, vec_n = NULL WHERE id = ?",
                                     [(i,) for i in ids])

    def set_vector_skip(self, rows: Iterable[tuple[str, str | None]]) -> None:
        """``(id, reason)``: the document is kept without a vector (BM25 only) for ``reason``;
        None: it gets one again."""
        with self._lock:
            self.begin()
            self._db.executemany("UPDATE docs SET vec_skip = ? WHERE id = ?", [(r, i) for i, r in rows])

    def vector_skips(self) -> dict[str, str]:
        """``id -> reason`` of the documents kept without a vector by rule."""
        with self._lock:
            return {r[0]: r[1] for r in self._db.execute("SELECT id, vec_skip FROM docs WHERE vec_skip IS NOT NULL")}

    def contents(self, ids: Iterable[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        id_list = list(ids)
        with self._lock:
            for i in range(0, len(id_list), 500):
                part = id_list[i:i + 500]
                q = "SELECT id, content FROM docs WHERE id IN ({})".format(",".join("?" * len(part)))
                out.update(self._db.execute(q, part).fetchall())
        return out

    def iter_contents(self) -> Iterator[tuple[str, str]]:
        yield from self._db.execute("SELECT id, content FROM docs ORDER BY seq")

    def changed_since(self, seq: int) -> tuple[list[str], list[str]]:
        """Ids upserted and ids removed after ``seq`` (what a BM25 snapshot at ``seq`` misses)."""
        with self._lock:
            up = [r[0] for r in self._db.execute("SELECT id FROM docs WHERE seq > ? ORDER BY seq", (seq,))]
            gone = [r[0] for r in self._db.execute("SELECT id FROM removed WHERE seq > ?", (seq,))]
        return up, gone

    def count_changed_since(self, seq: int) -> int:
        with self._lock:
            a = self._db.execute("SELECT COUNT(*) FROM docs WHERE seq > ?", (seq,)).fetchone()[0]
            b = self._db.execute("SELECT COUNT(*) FROM removed WHERE seq > ?", (seq,)).fetchone()[0]
        return int(a) + int(b)

    def prune_removed(self, upto_seq: int) -> None:
        with self._lock:
            self._db.execute("DELETE FROM removed WHERE seq <= ?", (upto_seq,))

    # ------------------------------------------------------------------ file manifest
    def file(self, path: str) -> FileRecord | None:
        with self._lock:
            row = self._db.execute("SELECT path, size, mtime_ns, hash, etag FROM files WHERE path = ?",
                                   (path,)).fetchone()
        return FileRecord(*row) if row else None

    def files(self) -> dict[str, FileRecord]:
        """The whole manifest (a copy). Kept in memory after the first call and written through,
        so an incremental pass over a large tree does not re-read it from disk."""
        with self._lock:
            if self._files is None:
                make = FileRecord._make
                self._files = {r[0]: make(r) for r in
                               self._db.execute("SELECT path, size, mtime_ns, hash, etag FROM files")}
            return dict(self._files)

    def put_file(self, rec: FileRecord) -> None:
        with self._lock:
            self.begin()
            self._db.execute("INSERT OR REPLACE INTO files (path, size, mtime_ns, hash, etag) VALUES (?, ?, ?, ?, ?)",
                             (rec.path, rec.size, rec.mtime_ns, rec.hash, rec.etag))
            if self._files is not None:
                self._files[rec.path] = rec

    def delete_file(self, path: str) -> None:
        with self._lock:
            self.begin()
            self._db.execute("DELETE FROM files WHERE path = ?", (path,))
            if self._files is not None:
                self._files.pop(path, None)
