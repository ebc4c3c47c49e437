"""``SearchEngine``: BM25, vectors and their fusion over one set of documents, persisted.

The engine owns the documents (a SQLite :class:`~ws_jupyter.search.store.DocStore`), a
:class:`~ws_jupyter.search.bm25.BM25Index` over their terms and, with an embedder, a
:class:`~ws_jupyter.search.vector_store.VectorStore` of their vectors. Interface (used by the
Workspace, the agent tools and — through a separate instance, so skill documents never mix with
file results — the skills search)::

    SearchEngine(bm25=True, embedder=None, vector_store=None, index_name="search", persist_dir=None,
                 background=False)
    .can_bm25 / .can_vector / .can_hybrid / .default_mode
    .index(id, content, metadata=None, start_line_offset=None)   # one document, no chunking
    .index_document(path, content, metadata=None) -> list[str]     # chunks; replaces the old ones
    .remove_source(path) -> int ; .remove(id) -> bool ; .clear() ; .ids() ; len(engine)
    .search(query, top_k=10, mode=None, min_score=None, vector_weight=None, filter=None,
            fusion=None) -> list[SearchResult]
    .batch()  (context manager: one transaction, embeddings deferred)
    .flush() (embed what is pending, persist) ; .persist() ; .wait_for_vectors(timeout) ; .status()
    .close()

Documents have a *kind*: ``"file"`` (a workspace file's chunk, written only by the auto-indexer:
``kind="file"``) or ``"text"`` (given text). Text may not take the id or the source of an indexed
file — a file's entry always comes from the file — and indexing a file replaces any text document
under its ids.

Persistence (``persist_dir``, by default ``<workspace>/.ws/index/<index_name>/``): ``docs.sqlite3``
(documents, change sequence, the auto-indexer's manifest), ``bm25.npz`` (a BM25 snapshot; changes
made after it are replayed from the store on open) and ``chroma/`` (the default vector store). An
unreadable index is moved aside and rebuilt, with a warning, never a crash. Changing the
tokenizer rebuilds BM25 from the stored texts; changing the embedder re-embeds.

Embeddings are computed in batches, so indexing a tree costs one model call per batch, not per
file. Without ``background`` they are computed before a vector search, on ``flush()``, or when many
are pending. With ``background=True`` (the workspace's files) a worker thread computes them after
each batch of changes, so indexing returns once BM25 is ready: the worker holds at most one batch
of texts, stores each batch's vectors as it goes and records which content each vector was made
from, so a restart resumes with exactly the documents left; vector and hybrid searches meanwhile
use the vectors that exist (:meth:`status` tells the coverage), and wait only for a backlog of a
few documents (what one ``index`` call adds).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import logging
import os
import shutil
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import (
    EmbedderError,
    IndexCorruptedError,
    InvalidArgumentError,
    SearchError,
    SearchModeError,
    WorkspaceConfigError,
)
from ..notebooks.document import is_notebook_path
from .bm25 import BM25Index
from .chunking import (
    DEFAULT_CHUNK_CHARS,
    DEFAULT_OVERLAP_LINES,
    best_line_range,
    line_count,
    line_range_in,
    split_into_chunks,
    terms_pattern,
)
from .config import BM25Config, coerce_bm25_config
from .embedder import Embedder, as_embedder
from .filters import chroma_where, matches_filter
from .fusion import DEFAULT_FUSION, Fusion, fuse
from .results import SearchResult
from .status import IndexProgress, IndexStatus
from .store import LEGACY_VECTORS, DocRecord, DocStore
from .tokenizer import Analyzer
from .vector_store import ChromaVectorStore, VectorStore

__all__ = ["FILE", "TEXT", "SearchEngine", "SearchMode", "content_hash"]

log = logging.getLogger("ws_jupyter.search")

SearchMode = str  # "bm25" | "vector" | "hybrid"
_MODES = ("bm25", "vector", "hybrid")
FILE = "file"
TEXT = "text"
_EMBED_BATCH = 64
_AUTO_FLUSH_PENDING = 512  # without a background worker: embed during indexing once this many wait
_MIN_CANDIDATES = 100
#: with a background worker, a vector search waits for a backlog this small (one ``index()``
#: call's worth) rather than answer without it; a larger backlog is never waited for
_SEARCH_WAITS_FOR = 32
_SEARCH_WAIT_SECONDS = 30.0
_CLOSE_WAIT_SECONDS = 30.0  # close() lets the batch being embedded finish, for at most this long


def content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class SearchEngine:
    """Keyword, vector and hybrid search over documents and chunked files (see module docs)."""

    def __init__(
        self,
        bm25: bool | BM25Config | Mapping[str, Any] | None = True,
        embedder: Any = None,
        vector_store: VectorStore | None = None,
        *,
        index_name: str = "search",
        persist_dir: str | os.PathLike[str] | None = None,
        fusion: Fusion = DEFAULT_FUSION,
        chunk_chars: int = DEFAULT_CHUNK_CHARS,
        overlap_lines: int = DEFAULT_OVERLAP_LINES,
        workspace_id: str | None = None,
        background: bool = False,
        notebook_outputs: bool = False,
    ) -> None:
        self.bm25_config = coerce_bm25_config(bm25)
        self.embedder: Embedder | None = as_embedder(embedder)
        if vector_store is not None and self.embedder is None:
            raise WorkspaceConfigError("vector_store requires an embedder", code="INVALID_SEARCH_CONFIG")
        if vector_store is not None and not isinstance(vector_store, VectorStore):
            raise WorkspaceConfigError(
                f"vector_store must implement the VectorStore protocol (e.g. ChromaVectorStore), "
                f"got {type(vector_store).__name__}", code="INVALID_SEARCH_CONFIG")
        if self.embedder is not None and vector_store is None:
            vector_store = ChromaVectorStore()
        if fusion not in ("rrf", "linear"):
            raise WorkspaceConfigError(f"fusion must be 'rrf' or 'linear', got {fusion!r}",
                                       code="INVALID_SEARCH_CONFIG")
        self.vector_store: VectorStore | None = vector_store
        self.index_name = index_name
        self.persist_dir = Path(persist_dir) if persist_dir is not None else None
        self.fusion: Fusion = fusion
        self.chunk_chars = chunk_chars
        self.overlap_lines = overlap_lines
        self.workspace_id = workspace_id
        self.background = bool(background)
        #: index the text outputs of notebook code cells too (their sources always are)
        self.notebook_outputs = bool(notebook_outputs)
        self._analyzer = Analyzer(self.bm25_config or BM25Config())
        self._lock = threading.RLock()
        #: signalled whenever vectors are stored or the embedding worker stops
        self._vectors_changed = threading.Condition(self._lock)
        #: held by an auto-indexing pass (:class:`~ws_jupyter.search.indexer.AutoIndexer`) from its
        #: scan to its flush, so two passes over this engine's file manifest never interleave
        self.indexing_lock = threading.RLock()
        #: files the last pass left out as too large (their text over the indexer's cap)
        self.too_large: tuple[str, ...] = ()
        self._docs: dict[str, DocRecord] = {}
        self._by_source: dict[str, set[str]] = {}
        # documents waiting for a vector -> the version of their latest change (a worker stores a
        # vector only if the document did not change while it was being computed)
        self._pending: dict[str, int] = {}
        self._versions = itertools.count(1)
        self._inflight: set[str] = set()
        self._worker: threading.Thread | None = None
        self._embed_error: BaseException | None = None
        self._stopping = False
        self._passes_stopped = False
        self._passes = 0
        self._pass_progress: IndexProgress | None = None
        self._batch_depth = 0
        self._closed = False
        self._bm25: BM25Index | None = None
        self._snapshot_seq = 0
        self._open()

    @classmethod
    def for_workspace(cls, workspace: Any, purpose: str = "files") -> SearchEngine:
        """The engine of a Workspace, with its search options.

        ``purpose="files"``: persisted under its filesystem (``.ws/index/<index name>``; for a
        read-only filesystem under the user cache instead, so nothing is written into it), with
        background embedding. ``purpose="skills"``: a separate in-memory engine (skills are
        re-read at each refresh), so skill documents never appear among file results.
        """
        if purpose not in ("files", "skills"):
            raise InvalidArgumentError(f"purpose must be 'files' or 'skills', got {purpose!r}")
        name = workspace.search_index_name
        vector_store = getattr(workspace, "_vector_store", None)
        bm25 = getattr(workspace, "_bm25", True)
        embedder = getattr(workspace, "_embedder", None)
        if purpose == "skills":
            return cls(bm25, embedder, None, index_name=f"{name}_skills", persist_dir=None,
                       workspace_id=getattr(workspace, "id", None))
        fs = getattr(workspace, "_fs_static", None) or getattr(workspace, "filesystem", None)
        base = getattr(fs, "base_path", None) if fs is not None else None
        persist: Path | None = None
        if base:
            name = getattr(workspace, "persisted_index_name", name)
            if getattr(fs, "read_only", False):
                from .embedder import cache_dir

                key = hashlib.sha256(os.path.realpath(base).encode()).hexdigest()[:16]
                persist = cache_dir() / "index" / key / name
            else:
                persist = private_dir(Path(base)) / "index" / name
        return cls(bm25, embedder, vector_store, index_name=name, persist_dir=persist,
                   workspace_id=getattr(workspace, "id", None), background=True,
                   notebook_outputs=getattr(workspace, "_index_notebook_outputs", False))

    # ------------------------------------------------------------------ capabilities
    @property
    def can_bm25(self) -> bool:
        return self.bm25_config is not None

    @property
    def can_vector(self) -> bool:
        return self.embedder is not None

    @property
    def can_hybrid(self) -> bool:
        return self.can_bm25 and self.can_vector

    @property
    def default_mode(self) -> str:
        return "hybrid" if self.can_hybrid else "vector" if self.can_vector else "bm25"

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._docs

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._docs)

    def has_source(self, path: str) -> bool:
        return path in self._by_source

    def is_file_source(self, path: str) -> bool:
        """True when ``path``'s entries are all the file's own chunks (written by the indexer)."""
        ids = self._by_source.get(path)
        if not ids:
            return False
        docs = self._docs
        return all(docs[i].kind == FILE for i in ids if i in docs)

    def sources(self) -> list[str]:
        with self._lock:
            return list(self._by_source)

    def __repr__(self) -> str:
        where = str(self.persist_dir) if self.persist_dir else "memory"
        return (f"SearchEngine({self.index_name!r}, mode={self.default_mode}, documents={len(self._docs)}, "
                f"store={where})")

    # ------------------------------------------------------------------ opening / recovery
    def _open(self) -> None:
        db_path: Path | None = None
        if self.persist_dir is not None:
            try:
                self.persist_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise SearchError(f"cannot create the index directory {self.persist_dir}: {exc}") from exc
            db_path = self.persist_dir / "docs.sqlite3"
        try:
            self.store = DocStore(db_path)
        except IndexCorruptedError as exc:
            self._quarantine(str(exc))
            self.store = DocStore(db_path)
        for rec in self.store.records():
            self._docs[rec.id] = rec
            self._by_source.setdefault(rec.source, set()).add(rec.id)
        refresh_lines = self._line_terms_stale()
        if self.bm25_config is not None:
            refresh_lines = self._open_bm25(refresh_lines)
        if refresh_lines:
            self._reanalyse(bm25=None, line_terms=True)
        if self._analyzer.splits_on_lines:
            self.store.set_meta("line_terms", self._analyzer.config.analysis_fingerprint)
        if self.vector_store is not None:
            self._open_vectors()
        self._check_notebook_option()

    def _check_notebook_option(self) -> None:
        """Indexed notebooks are re-read when ``notebook_outputs`` changed since they were indexed,
        or when they were indexed before notebooks were split into cells (as JSON text): their
        manifest entries are dropped, so the next pass reads them again."""
        wanted = "cells:outputs" if self.notebook_outputs else "cells:sources"
        if self.store.get_meta("notebook_text") != wanted:
            for path in [p for p in self.store.files() if is_notebook_path(p)]:
                self.store.delete_file(path)
            self.store.set_meta("notebook_text", wanted)
            self.store.commit()

    def _line_terms_stale(self) -> bool:
        """Whether the stored analysed lines were made by another analysis (or not at all)."""
        if not self._analyzer.splits_on_lines or not self._docs:
            return False
        return self.store.get_meta("line_terms") != self._analyzer.config.analysis_fingerprint

    def _reanalyse(self, bm25: BM25Index | None, line_terms: bool) -> None:
        """Analyses every stored document again: into ``bm25`` and/or its analysed lines."""
        analyzer = self._analyzer
        ids = list(self._docs)
        for i in range(0, len(ids), 500):
            contents = self.store.contents(ids[i:i + 500])
            for doc_id, text in contents.items():
                if line_terms:
                    terms, lines = analyzer.line_terms(text)
                    self.store.set_line_terms(doc_id, lines)
                else:
                    terms = analyzer(text)
                if bm25 is not None:
                    bm25.add(doc_id, terms)
        self.store.commit()

    def _quarantine(self, reason: str) -> None:
        """Moves an unreadable index directory aside (kept for inspection) and starts empty."""
        assert self.persist_dir is not None
        aside = self.persist_dir.with_name(f"{self.persist_dir.name}.corrupt-{int(time.time())}")
        msg = (f"search index at {self.persist_dir} is corrupted ({reason}); it was moved to "
               f"{aside.name} and will be rebuilt")
        warnings.warn(msg, RuntimeWarning, stacklevel=4)
        log.warning(msg)
        try:
            os.replace(self.persist_dir, aside)
        except OSError:
            shutil.rmtree(self.persist_dir, ignore_errors=True)
        self.persist_dir.mkdir(parents=True, exist_ok=True)

    def _open_bm25(self, refresh_lines: bool) -> bool:
        """Loads the BM25 snapshot (replaying later changes) or rebuilds it; returns whether the
        analysed lines still need refreshing (a rebuild refreshes them on the way)."""
        cfg = self.bm25_config
        assert cfg is not None
        fp = cfg.analysis_fingerprint
        snap = self.persist_dir / "bm25.npz" if self.persist_dir else None
        if snap is not None and snap.exists():
            try:
                idx, header = BM25Index.load(snap, cfg.k1, cfg.b, cfg.epsilon)
                seq = int(header.get("seq", -1))
                if header.get("fingerprint") != fp:
                    log.info("tokenizer changed: rebuilding the BM25 index from stored documents")
                elif seq > self.store.seq or seq < 0:
                    raise IndexCorruptedError("BM25 snapshot is newer than the document store")
                else:
                    self._bm25 = idx
                    self._snapshot_seq = seq
                    upserted, removed = self.store.changed_since(seq)
                    for doc_id in removed:
                        idx.remove(doc_id)
                    for doc_id, text in self.store.contents(upserted).items():
                        idx.add(doc_id, self._analyzer(text))
                    for doc_id in [d for d in idx.ids() if d not in self._docs]:
                        idx.remove(doc_id)
                    if len(idx) != len(self._docs):
                        raise IndexCorruptedError("BM25 snapshot does not match the document store")
                    return refresh_lines
            except IndexCorruptedError as exc:
                msg = f"BM25 snapshot unusable ({exc}); rebuilding it from the stored documents"
                warnings.warn(msg, RuntimeWarning, stacklevel=4)
                log.warning(msg)
        idx = BM25Index(cfg.k1, cfg.b, cfg.epsilon)
        self._reanalyse(idx, line_terms=refresh_lines)
        self._bm25 = idx
        self._snapshot_seq = -1  # not persisted yet
        return False

    def _embedder_fingerprint(self) -> str:
        assert self.embedder is not None
        return str(getattr(self.embedder, "name", type(self.embedder).__name__))

    def _owned_chroma_dir(self) -> Path | None:
        """The Chroma directory this engine keeps under its index directory, if that is where
        its vector store lives (only then may it be moved aside and rebuilt)."""
        store = self.vector_store
        chroma_dir = self.persist_dir / "chroma" if self.persist_dir else None
        if (isinstance(store, ChromaVectorStore) and store.kind == "persistent" and chroma_dir is not None
                and store.path == chroma_dir):
            return chroma_dir
        return None

    def _open_vectors(self) -> None:
        store = self.vector_store
        assert store is not None and self.embedder is not None
        try:
            store.open(self.index_name, self.persist_dir)
            self._probe_vectors()
        except SearchError as exc:
            if not self._reset_vectors(exc):
                raise
        recorded = self.store.get_meta("embedder")
        current = self._embedder_fingerprint()
        if recorded is not None and recorded != current and len(self._docs):
            log.info("embedder changed (%s -> %s): re-embedding %d documents", recorded, current, len(self._docs))
            store.clear()
            self.store.clear_embedded()
            self.store.set_meta("embedder", current)
            self.store.set_meta("embedder_dim", "")
            self.store.delete_meta(LEGACY_VECTORS)
        elif self.store.get_meta(LEGACY_VECTORS):
            # an index written before vector states were recorded: what the store holds is current
            have = store.ids()
            self.store.mark_embedded((i, r.hash) for i, r in self._docs.items() if i in have)
            store.delete([i for i in have if i not in self._docs])
            self.store.delete_meta(LEGACY_VECTORS)
        missing = self.store.unembedded()
        if store.count() != len(self._docs) - len(missing):
            # an interrupted run or external edits: drop vectors of unknown documents, embed
            # documents whose recorded vector is not there
            have = store.ids()
            store.delete([i for i in have if i not in self._docs])
            lost = [i for i in self._docs if i not in have and i not in set(missing)]
            self.store.clear_embedded(lost)
            missing += lost
        self.store.commit()
        self._pending = {i: next(self._versions) for i in missing}
        self._kick()

    def _probe_vectors(self) -> None:
        """Reads the vector store once (count, one query) so damage shows now, not mid-search."""
        store = self.vector_store
        assert store is not None
        if store.count():
            dim = self.store.get_meta("embedder_dim")
            if dim:
                probe = np.zeros(int(dim), dtype=np.float32)
                probe[0] = 1.0
                store.query(probe, 1)

    def _reset_vectors(self, exc: BaseException) -> bool:
        """An unreadable vector store under the index directory is moved aside (kept for
        inspection) and started empty; every document is embedded again. False when the store
        is not this engine's to reset (a server, a client or a path given by the user)."""
        chroma_dir = self._owned_chroma_dir()
        store = self.vector_store
        if chroma_dir is None or not chroma_dir.exists() or not isinstance(store, ChromaVectorStore):
            return False
        aside = chroma_dir.with_name(f"chroma.corrupt-{int(time.time() * 1000)}")
        msg = (f"vector index unreadable ({exc}); it was moved to {aside.name} and every document "
               "will be embedded again")
        warnings.warn(msg, RuntimeWarning, stacklevel=5)
        log.warning(msg)
        store.close()
        store.forget_storage()
        try:
            os.replace(chroma_dir, aside)
        except OSError:
            shutil.rmtree(chroma_dir, ignore_errors=True)
        store.open(self.index_name, self.persist_dir)
        self.store.clear_embedded()
        self.store.set_meta("embedder_dim", "")
        self._pending = {i: next(self._versions) for i in self._docs}
        return True

    # ------------------------------------------------------------------ mutation
    def _check_open(self) -> None:
        if self._closed:
            raise SearchError("the search index is closed")

    @contextlib.contextmanager
    def batch(self) -> Iterator[SearchEngine]:
        """Groups many changes into one transaction; embeddings run in large batches."""
        with self._lock:
            self._check_open()
            self._batch_depth += 1
            self.store.begin()
        try:
            yield self
        finally:
            with self._lock:
                self._batch_depth -= 1
                if self._batch_depth == 0 and not self._closed:
                    self.store.commit()
                    self._kick()

    def _commit(self) -> None:
        if self._batch_depth == 0:
            self.store.commit()
            self._kick()

    def _put(self, rec: DocRecord, content: str) -> bool:
        old = self._docs.get(rec.id)
        if (old is not None and old.hash == rec.hash and old.metadata == rec.metadata
                and old.start_line == rec.start_line and old.source == rec.source):
            if old.kind == rec.kind:
                return False  # unchanged: neither re-tokenised nor re-embedded
            self.store.set_kind(rec.id, rec.kind)  # same text, now known as a file's: no re-embedding
            self._docs[rec.id] = rec
            return True
        if old is not None and old.source != rec.source:
            self._unlink_source(old)
        lines: str | None = None
        if self._analyzer.splits_on_lines:
            terms, lines = self._analyzer.line_terms(content)
        else:
            terms = self._analyzer(content) if self._bm25 is not None else []
        self.store.put(rec, content, lines)
        self._docs[rec.id] = rec
        self._by_source.setdefault(rec.source, set()).add(rec.id)
        if self._bm25 is not None:
            self._bm25.add(rec.id, terms)
        if self.vector_store is not None:
            # (re-)embedded at the next flush; a metadata-only change re-upserts too, so the
            # vector store's copy of the metadata (used by filters) stays right
            self._pending[rec.id] = next(self._versions)
        return True

    def _validate_id(self, doc_id: Any) -> str:
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise InvalidArgumentError(f"document id must be a non-empty string, got {doc_id!r}")
        return doc_id

    @staticmethod
    def _validate_kind(kind: str) -> None:
        if kind not in (FILE, TEXT):
            raise InvalidArgumentError(f"kind must be {FILE!r} or {TEXT!r}, got {kind!r}")

    def _check_text_name(self, doc_id: str, source: str) -> None:
        """Given text never takes the place of an indexed file (its id, its chunks' ids or its
        source): a file's entry comes from the file."""
        for name in {doc_id, source, doc_id.split("#chunk-")[0]}:
            rec = self._docs.get(name)
            if self.is_file_source(name) or (rec is not None and rec.kind == FILE):
                raise InvalidArgumentError(
                    f"{name!r} is an indexed workspace file: its search entry comes from the file "
                    "itself and cannot be replaced by given text (re-index the file from disk, or "
                    "index the text under another name)")

    def index(
        self,
        doc_id: str,
        content: str,
        metadata: Mapping[str, Any] | None = None,
        start_line_offset: int | None = None,
        *,
        source: str | None = None,
        kind: str = TEXT,
    ) -> bool:
        """Adds or replaces one document as it is (no chunking). Returns False if unchanged.

        ``start_line_offset`` (1-based) is the file line the content starts at, so line ranges
        of results point into the original file. ``kind="text"`` (the default) refuses the id or
        source of an indexed file.
        """
        self._validate_id(doc_id)
        self._validate_kind(kind)
        if not isinstance(content, str):
            raise InvalidArgumentError(f"content must be a string, got {type(content).__name__}")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidArgumentError("metadata must be a mapping")
        start = 1 if start_line_offset is None else start_line_offset
        if not isinstance(start, int) or isinstance(start, bool) or start < 1:
            raise InvalidArgumentError(f"start_line_offset must be an int >= 1, got {start_line_offset!r}")
        rec = DocRecord(doc_id, source or doc_id, start, start + line_count(content) - 1,
                        dict(metadata or {}), content_hash(content), kind)
        with self._lock:
            self._check_open()
            if kind == TEXT:
                self._check_text_name(doc_id, rec.source)
            changed = self._put(rec, content)
            self._maybe_autoflush()
            self._commit()
        return changed

    def index_document(self, path: str, content: str, metadata: Mapping[str, Any] | None = None, *,
                       kind: str = TEXT) -> list[str]:
        """Indexes a file: split into chunks (ids ``path`` or ``path#chunk-N``), replacing the
        file's previous chunks. Unchanged chunks are kept as they are (not re-embedded).

        A notebook (``*.ipynb`` that nbformat reads) is indexed cell by cell instead: each cell's
        source is a document ``path#cell-N`` (long cells ``path#cell-N-chunk-K``) with its own line
        numbers and ``cell``/``cell_id``/``cell_type`` metadata; outputs only with
        ``notebook_outputs`` (``path#cell-N-outputs``, their text only).
        ``kind="text"`` (the default) refuses the path of an indexed file.
        """
        self._validate_id(path)
        self._validate_kind(kind)
        if not isinstance(content, str):
            raise InvalidArgumentError(f"content must be a string, got {type(content).__name__}")
        base_meta = dict(metadata or {})
        sections: list[tuple[str | None, str, dict[str, Any]]] = [(None, content, base_meta)]
        if is_notebook_path(path):
            from ..notebooks.text import notebook_texts

            cells = notebook_texts(content, outputs=self.notebook_outputs)
            if cells is not None:
                sections = [(c.key, c.text, {**base_meta, **c.metadata()}) for c in cells]
                if not sections:  # no cells: still findable by name
                    sections = [(None, "", base_meta)]
        ids: list[str] = []
        with self._lock:
            self._check_open()
            if kind == TEXT:
                self._check_text_name(path, path)
            for key, text, meta in sections:
                chunks = split_into_chunks(text, self.chunk_chars, self.overlap_lines)
                base_id = path if key is None else f"{path}#{key}"
                for n, chunk in enumerate(chunks):
                    if len(chunks) == 1:
                        doc_id, chunk_meta = base_id, meta
                    else:
                        doc_id = f"{base_id}#chunk-{n}" if key is None else f"{base_id}-chunk-{n}"
                        chunk_meta = {**meta, "chunk": n}
                    self._put(DocRecord(doc_id, path, chunk.start_line, chunk.end_line, chunk_meta,
                                        content_hash(chunk.content), kind), chunk.content)
                    ids.append(doc_id)
            keep = set(ids)
            for old in list(self._by_source.get(path, ())):
                if old not in keep:
                    self._remove(old)
            self._maybe_autoflush()
            self._commit()
        return ids

    def _unlink_source(self, rec: DocRecord) -> None:
        """Drops ``rec`` from its source's ids, and the source once it has none left."""
        ids = self._by_source.get(rec.source)
        if ids is not None:
            ids.discard(rec.id)
            if not ids:
                del self._by_source[rec.source]

    def _remove(self, doc_id: str) -> bool:
        rec = self._docs.pop(doc_id, None)
        if rec is None:
            return False
        self._unlink_source(rec)
        self.store.delete(doc_id)
        if self._bm25 is not None:
            self._bm25.remove(doc_id)
        if self.vector_store is not None:
            self._pending.pop(doc_id, None)
            self.vector_store.delete([doc_id])
        return True

    def remove(self, doc_id: str) -> bool:
        """Removes one document (or chunk) by id; False when it was not indexed."""
        with self._lock:
            self._check_open()
            done = self._remove(doc_id)
            self._commit()
        return done

    def remove_source(self, path: str) -> int:
        """Removes every chunk of a file (and a document indexed under that id); returns the count."""
        with self._lock:
            self._check_open()
            ids = set(self._by_source.get(path, ()))
            if path in self._docs:
                ids.add(path)
            for doc_id in ids:
                self._remove(doc_id)
            self._commit()
        return len(ids)

    def clear(self) -> None:
        """Empties the index (documents, vectors, manifest)."""
        with self._lock:
            self._check_open()
            self.store.clear_docs()
            self._docs.clear()
            self._by_source.clear()
            self._pending.clear()
            if self._bm25 is not None:
                self._bm25.clear()
            if self.vector_store is not None:
                self.vector_store.clear()
            self._commit()

    # ------------------------------------------------------------------ embeddings
    def _maybe_autoflush(self) -> None:
        if not self.background and len(self._pending) >= _AUTO_FLUSH_PENDING:
            self._flush_vectors()

    @property
    def pending_embeddings(self) -> int:
        return len(self._pending)

    def _kick(self) -> None:
        """Starts the background worker when there is something to embed (lock held)."""
        if (not self.background or self._closed or self._stopping or self.vector_store is None
                or not self._pending or self._embed_error is not None or self._batch_depth > 0):
            return
        if self._worker is not None and self._worker.is_alive():
            return
        self._worker = threading.Thread(target=self._embed_loop, name=f"ws-embed-{self.index_name}",
                                        daemon=True)
        self._worker.start()

    def _embed_loop(self) -> None:
        try:
            while self._embed_round():
                pass
        except BaseException as exc:  # kept for status() and wait_for_vectors(); never re-raised here
            with self._lock:
                self._embed_error = exc
            log.warning("background embedding stopped: %s", exc)
        finally:
            with self._lock:
                if self._worker is threading.current_thread():
                    self._worker = None
                self._vectors_changed.notify_all()

    def _embed_round(self, on_progress: Callable[[int], None] | None = None) -> bool:
        """Embeds and stores one batch of waiting documents (the embedding runs without the
        lock); False when nothing is left that another caller is not already embedding."""
        assert self.vector_store is not None and self.embedder is not None
        with self._lock:
            if self._closed or (self._stopping and threading.current_thread() is self._worker):
                return False
            batch = list(itertools.islice((i for i in self._pending if i not in self._inflight), _EMBED_BATCH))
            if not batch:
                return False
            versions = {i: self._pending[i] for i in batch}
            contents = self.store.contents(batch)
            for i in batch:
                if i not in contents:  # an id without stored text has nothing to embed
                    self._pending.pop(i, None)
            ids = [i for i in batch if i in contents]
            self._inflight.update(ids)
        try:
            vectors = self.embedder.embed([contents[i] for i in ids]) if ids else None
            if vectors is not None and vectors.shape[0] != len(ids):
                raise EmbedderError(f"embedder returned {vectors.shape[0]} vectors for {len(ids)} texts")
        except BaseException:
            with self._lock:
                self._inflight.difference_update(ids)
            raise
        with self._lock:
            # still "in flight" until stored: another caller must not embed them meanwhile
            self._inflight.difference_update(ids)
            if vectors is None:
                return True
            if self._closed:
                return False
            if self._dimension_changed(vectors.shape[1]):
                return True  # everything is pending again, at the new dimension
            keep = [k for k, i in enumerate(ids) if i in self._docs and self._pending.get(i) == versions[i]]
            done = [ids[k] for k in keep]
            if done:
                metas = [{**self._docs[i].metadata, "source": self._docs[i].source} for i in done]
                try:
                    self.vector_store.upsert(done, vectors[keep], [contents[i] for i in done], metas)
                except SearchError as exc:
                    if self._reset_vectors(exc):
                        return True
                    raise
                self.store.mark_embedded((i, self._docs[i].hash) for i in done)
                for i in done:
                    self._pending.pop(i, None)
                if self.store.get_meta("embedder") is None:
                    self.store.set_meta("embedder", self._embedder_fingerprint())
                if self._batch_depth == 0:
                    self.store.commit()
            self._vectors_changed.notify_all()
        if on_progress is not None:
            on_progress(len(done))
        return True

    def _flush_vectors(self, on_progress: Callable[[int, int], None] | None = None,
                       timeout: float | None = None) -> bool:
        """Embeds everything waiting, in this thread, alongside a background worker if one runs;
        True when nothing is left (False: ``timeout`` passed)."""
        if self.vector_store is None or self.embedder is None:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            total, done = len(self._pending), 0

        def progress(n: int) -> None:
            nonlocal done
            done += n
            if on_progress is not None:
                on_progress(min(done, total), total)

        # The lock is taken per step, not across the loop: a round embeds without it (status()
        # never waits for a model), and the deadline is checked before each round, so a timeout
        # holds within one batch. (Callers that hold the lock keep it, as it is re-entrant.)
        while True:
            with self._lock:
                if not self._pending or self._closed:
                    return not self._pending
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            if self._embed_round(progress):
                continue
            with self._lock:  # what is left is being embedded by the worker: wait for it
                if self._embed_error is not None and (self._worker is None or not self._worker.is_alive()):
                    raise self._embed_error
                if self._pending and not self._closed:
                    self._vectors_changed.wait(0.5 if remaining is None else min(0.5, remaining))

    def _dimension_changed(self, dim: int) -> bool:
        """Records the vector size; a different size than the stored vectors' means the embedder
        changed under the same name: the store is emptied and every document re-embedded."""
        recorded = self.store.get_meta("embedder_dim")
        if not recorded:
            self.store.set_meta("embedder_dim", str(dim))
            return False
        if int(recorded) == dim:
            return False
        assert self.vector_store is not None
        log.info("embedding size changed (%s -> %d): re-embedding %d documents", recorded, dim, len(self._docs))
        self.vector_store.clear()
        self.store.clear_embedded()
        self.store.set_meta("embedder_dim", str(dim))
        self._pending = {i: next(self._versions) for i in self._docs}
        return True

    def wait_for_vectors(self, timeout: float | None = None) -> bool:
        """Waits until every document has its vector (embedding in this thread too); True when
        done, False when ``timeout`` (seconds) passed first. An earlier embedding failure is
        retried; a new one raises ``EmbedderError``."""
        with self._lock:
            self._check_open()
            self._embed_error = None
        done = self._flush_vectors(timeout=timeout)
        with self._lock:
            if done and not self._closed:
                self.store.commit()
        return done

    def status(self) -> IndexStatus:
        """What the index holds and is doing now (see :class:`~ws_jupyter.search.status.IndexStatus`)."""
        with self._lock:
            progress = self._pass_progress
            vectors = self.vector_store is not None
            err = self._embed_error
            return IndexStatus(
                documents=len(self._docs),
                indexing=self._passes > 0,
                files_done=progress.done if progress and self._passes else 0,
                files_total=progress.total if progress and self._passes else 0,
                vectors=vectors,
                embedded=len(self._docs) - len(self._pending) if vectors else 0,
                embedding=bool(self._pending and self._worker is not None and self._worker.is_alive()),
                error=f"{type(err).__name__}: {err}" if err is not None else None,
                too_large=self.too_large,
            )

    @contextlib.contextmanager
    def indexing_pass(self) -> Iterator[Callable[[IndexProgress], None]]:
        """Marks a pass over files as running (for :meth:`status`); yields the function the
        pass reports its progress to."""
        with self._lock:
            self._passes += 1
            self._pass_progress = None

        def report(update: IndexProgress) -> None:
            self._pass_progress = update

        try:
            yield report
        finally:
            with self._lock:
                self._passes -= 1
                if not self._passes:
                    self._pass_progress = None

    def stop_passes(self) -> None:
        """Asks running indexing passes to stop at their next file (the index is being closed)."""
        self._passes_stopped = True

    @property
    def passes_stopped(self) -> bool:
        return self._passes_stopped

    # ------------------------------------------------------------------ persistence
    def flush(self, on_progress: Callable[[int, int], None] | None = None) -> None:
        """Embeds pending documents and makes everything durable. ``on_progress(done, total)``
        hears about each embedded batch."""
        with self._lock:
            if self._closed:
                return
            self._flush_vectors(on_progress)
            self.store.commit()
            self._maybe_snapshot(force=False)

    def persist(self) -> None:
        """Makes the documents durable (and, with a background worker, lets it embed what waits)
        without waiting for embeddings."""
        with self._lock:
            if self._closed:
                return
            self.store.commit()
            self._maybe_snapshot(force=False)
            self._kick()

    def _maybe_snapshot(self, force: bool) -> None:
        if self._bm25 is None or self.persist_dir is None or self.bm25_config is None:
            return
        behind = self.store.count_changed_since(self._snapshot_seq) if self._snapshot_seq >= 0 else len(self._docs) + 1
        if behind == 0:
            return
        if not force and behind < max(1000, len(self._docs) // 10) and self._snapshot_seq >= 0:
            return  # the store's change log is replayed on open; rewriting the snapshot can wait
        self.store.commit()
        seq = self.store.seq
        self._bm25.save(self.persist_dir / "bm25.npz",
                        meta={"seq": seq, "fingerprint": self.bm25_config.analysis_fingerprint})
        self._snapshot_seq = seq
        self.store.set_meta("bm25_seq", str(seq))
        self.store.prune_removed(seq)

    def close(self) -> None:
        """Flushes and releases files (SQLite, Chroma) so another engine can open the same index.

        With a background worker, the batch being embedded is finished and stored; what is still
        waiting stays recorded and is embedded when the index is next opened.
        """
        with self._lock:
            if self._closed:
                return
            self._stopping = True  # a background worker stops after its current batch
            self._passes_stopped = True  # and an indexing pass at its next file
            worker = self._worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(_CLOSE_WAIT_SECONDS)
        if self.indexing_lock.acquire(timeout=_CLOSE_WAIT_SECONDS):
            self.indexing_lock.release()
        with self._lock:
            if self._closed:
                return
            try:
                if not self.background:
                    try:
                        self._flush_vectors()
                    except EmbedderError as exc:  # pending vectors are re-embedded at next open
                        log.warning("could not embed %d pending documents: %s", len(self._pending), exc)
                self.store.commit()
                self._maybe_snapshot(force=True)
            finally:
                self._closed = True
                self.store.close()
                if self.vector_store is not None:
                    self.vector_store.close()
                self._vectors_changed.notify_all()

    def __enter__(self) -> SearchEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ search
    def _resolve_mode(self, mode: str | None) -> str:
        if mode is None:
            return self.default_mode
        if mode not in _MODES:
            raise InvalidArgumentError(f"unknown search mode {mode!r} (use 'bm25', 'vector' or 'hybrid')")
        if mode == "bm25" and not self.can_bm25:
            raise SearchModeError("BM25 search requires BM25 configuration (bm25=True).",
                                  workspace_id=self.workspace_id, missing=["bm25"])
        if mode == "vector" and not self.can_vector:
            raise SearchModeError("Vector search requires an embedder (embedder='default' or a function).",
                                  workspace_id=self.workspace_id, missing=["embedder"])
        if mode == "hybrid" and not self.can_hybrid:
            missing = [n for n, ok in (("bm25", self.can_bm25), ("embedder", self.can_vector)) if not ok]
            raise SearchModeError(f"Hybrid search requires both BM25 and an embedder; missing: {', '.join(missing)}.",
                                  workspace_id=self.workspace_id, missing=missing)
        return mode

    def _vectors_for_search(self) -> None:
        """Before a vector search (lock held): without a worker, embed everything waiting; with
        one, wait only for a small backlog (never for a pass's worth)."""
        if not self.background:
            self._flush_vectors()
            self._commit()
            return
        if 0 < len(self._pending) <= _SEARCH_WAITS_FOR and self._batch_depth == 0 and self._embed_error is None:
            self._kick()
            deadline = time.monotonic() + _SEARCH_WAIT_SECONDS
            while self._pending and self._embed_error is None and not self._closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._worker is None:
                    break
                self._vectors_changed.wait(min(0.5, remaining))

    def search(
        self,
        query: str,
        top_k: int = 10,
        mode: str | None = None,
        min_score: float | None = None,
        vector_weight: float | None = None,
        filter: Mapping[str, Any] | None = None,
        fusion: Fusion | None = None,
    ) -> list[SearchResult]:
        """The ``top_k`` best documents for ``query`` (see the module docs for modes/fusion).

        ``filter`` uses Chroma's ``where`` syntax over the metadata (plus ``source``), e.g.
        ``{"source": "docs/a.md"}`` or ``{"lang": {"$in": ["py", "md"]}}``.
        """
        if not isinstance(query, str):
            raise InvalidArgumentError(f"query must be a string, got {type(query).__name__}")
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise InvalidArgumentError(f"top_k must be an int >= 1, got {top_k!r}")
        if min_score is not None and not isinstance(min_score, (int, float)):
            raise InvalidArgumentError("min_score must be a number")
        weight = 0.5 if vector_weight is None else vector_weight
        if not isinstance(weight, (int, float)) or not 0.0 <= weight <= 1.0:
            raise InvalidArgumentError(f"vector_weight must be between 0 and 1, got {vector_weight!r}")
        method = fusion or self.fusion
        if method not in ("rrf", "linear"):
            raise InvalidArgumentError(f"fusion must be 'rrf' or 'linear', got {fusion!r}")
        resolved = self._resolve_mode(mode)
        where = None
        if filter:
            where = chroma_where(filter)  # validates
        if not query.strip():
            return []
        terms = self._analyzer(query)
        depth = top_k if resolved != "hybrid" else max(2 * top_k, _MIN_CANDIDATES)
        qvec: np.ndarray | None = None
        if resolved in ("vector", "hybrid"):
            assert self.embedder is not None and self.vector_store is not None
            with self._lock:
                self._check_open()
                self._vectors_for_search()
            if self._docs:
                qvec = self.embedder.embed([query])[0]  # outside the lock: the worker keeps going
        with self._lock:
            self._check_open()
            if not self._docs:
                return []
            accept: Callable[[str], bool] | None = None
            if filter:
                docs = self._docs

                def accept(doc_id: str) -> bool:
                    rec = docs[doc_id]
                    return matches_filter({**rec.metadata, "source": rec.source}, filter)

            bm25_hits: list[tuple[str, float]] = []
            vec_hits: list[tuple[str, float]] = []
            if resolved in ("bm25", "hybrid") and self._bm25 is not None:
                bm25_hits = self._bm25.top_k(terms, depth, dedupe=True, accept=accept)
            if qvec is not None:
                assert self.vector_store is not None
                if self._dimension_changed(len(qvec)) and not self.background:
                    self._flush_vectors()
                try:
                    vec_hits = [(i, s) for i, s in self.vector_store.query(qvec, depth, where=where)
                                if i in self._docs]
                except SearchError as exc:
                    if not self._reset_vectors(exc):
                        raise
                    self._kick()
            ranked: list[tuple[str, float, dict[str, Any]]]
            if resolved == "bm25":
                ranked = [(i, s, {"bm25": {"rank": r, "score": s}}) for r, (i, s) in enumerate(bm25_hits, 1)]
            elif resolved == "vector":
                ranked = [(i, s, {"vector": {"rank": r, "score": s}}) for r, (i, s) in enumerate(vec_hits, 1)]
            else:
                ranked = fuse(bm25_hits, vec_hits, method, weight)
                for _, _, d in ranked:
                    d["fusion"] = method
            if min_score is not None:
                ranked = [r for r in ranked if r[1] >= min_score]
            ranked = ranked[:top_k]
            rows = self.store.hit_rows([i for i, _, _ in ranked])
            span_of = self._span_finder(terms)
            analyzer = self._analyzer
            query_terms = tuple(dict.fromkeys(terms))
            results = []
            for doc_id, score, details in ranked:
                rec = self._docs[doc_id]
                text, lines = rows.get(doc_id, ("", None))
                results.append(SearchResult(
                    doc_id, text, float(score), None, {**rec.metadata, "source": rec.source}, details,
                    rec.start_line, rec.kind or TEXT, query_terms, analyzer,
                    span=functools.partial(span_of, text, lines, rec.start_line, rec.end_line)))
            return results

    def _span_finder(self, terms: Sequence[str]) -> Callable[[str, str | None, int, int], tuple[int, int]]:
        """``(content, analysed lines, first, last) -> line range`` for this query: the query's
        pattern and term weights prepared once, each hit's range computed when it is read."""
        distinct = set(terms)
        bm25 = self._bm25
        fast = self._analyzer.splits_on_lines
        analyzer = self._analyzer
        prepared: list[Any] = []  # [pattern, weights], made when the first range is read

        def span(text: str, lines: str | None, first: int, last: int) -> tuple[int, int]:
            found: tuple[int, int] | None = None
            if distinct:
                if not prepared:
                    prepared[:] = [terms_pattern(distinct),
                                   {t: max(bm25.idf(t) if bm25 is not None else 1.0, 1e-6) for t in distinct}]
                pattern, weight = prepared
                if fast and lines is not None:
                    found = line_range_in(lines, pattern, weight) if lines else None
                else:
                    found = best_line_range(text, list(distinct), analyzer, weight.__getitem__)
            if found is None:
                return first, last
            return found[0] + first - 1, found[1] + first - 1

        return span

    # ------------------------------------------------------------------ introspection
    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "documents": len(self._docs),
                "sources": len(self._by_source),
                "bm25_terms": self._bm25.vocabulary_size if self._bm25 is not None else None,
                "pending_embeddings": len(self._pending),
                "vector_store": repr(self.vector_store) if self.vector_store is not None else None,
                "persist_dir": str(self.persist_dir) if self.persist_dir else None,
                "fusion": self.fusion,
            }


def private_dir(base: Path) -> Path:
    """``<workspace>/.ws``, the workspace's own data directory, with a ``.gitignore`` of ``*`` so
    version control never picks up the index (or anything else kept there)."""
    d = base / ".ws"
    d.mkdir(parents=True, exist_ok=True)
    ignore = d / ".gitignore"
    if not ignore.exists():
        try:
            tmp = d / f".gitignore.tmp{os.getpid()}"
            tmp.write_text("# ws-jupyter's own data (search index, ...): never version it\n*\n")
            os.replace(tmp, ignore)
        except OSError as exc:  # a read-only or odd .ws/: the index still works
            log.info("could not write %s: %s", ignore, exc)
    return d
