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
from .bm25 import BM25Index, write_snapshot
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
from .embed_policy import EmbedPolicy, coerce_embed_policy
from .embedder import Embedder, as_embedder
from .filters import chroma_where, matches_filter
from .fusion import DEFAULT_FUSION, Fusion, fuse
from .results import SearchResult
from .status import EmbedRate, IndexProgress, IndexStatus
from .store import LEGACY_VECTORS, DocRecord, DocStore
from .tokenizer import Analyzer
from .vector_store import ChromaVectorStore, VectorStore

__all__ = ["FILE", "TEXT", "SearchEngine", "SearchMode", "content_hash", "document_of", "vector_ids"]

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


#: the error code of a vector side that cannot run here (a module missing): nothing to repair
VECTORS_UNAVAILABLE = "VECTORS_UNAVAILABLE"
#: separates a document id from the number of its window in the vector store's ids
WINDOW_SEP = "\x1f"


def content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def vector_ids(doc_id: str, n: int) -> list[str]:
    """The vector store's ids of a document stored as ``n`` vectors (one per window of the
    model): the document id for the first (so a one-vector document is stored under its id),
    ``id<US>k`` for the others."""
    return [doc_id] + [f"{doc_id}{WINDOW_SEP}{k}" for k in range(1, n)]


def document_of(vector_id: str) -> str:
    """The document id of a vector store id (see :func:`vector_ids`)."""
    return vector_id.split(WINDOW_SEP, 1)[0]


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
        embed_policy: EmbedPolicy | Mapping[str, Any] | bool | None = None,
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
        #: which workspace files get vectors (the others are searched by BM25 only)
        self.embed_policy = coerce_embed_policy(embed_policy)
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
        self._pending_chars: dict[str, int] = {}  # their lengths: what is left to embed, for the ETA
        self._versions = itertools.count(1)
        #: documents kept without a vector by the embed policy -> why
        self._no_vector: dict[str, str] = {}
        #: documents stored as several vectors (one per window of the model) -> how many
        self._vec_n: dict[str, int] = {}
        # The vector store opens lazily: on the background worker for a workspace's files (the
        # Chroma import alone takes seconds, and BM25 needs nothing from it), in __init__
        # otherwise. Until it is open, deletions wait here.
        self._vec_open = False
        self._connect_lock = threading.Lock()
        self._deferred_deletes: dict[str, int] = {}
        self._deferred_clear = False
        self._rate = EmbedRate()
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
        self._snapshot_writer: threading.Thread | None = None
        self._snapshot_done: int | None = None
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
                   notebook_outputs=getattr(workspace, "_index_notebook_outputs", False),
                   embed_policy=getattr(workspace, "_embed_policy", None))

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
        if self._line_terms_stale():
            self.store.clear_line_terms()  # made by another analysis: made again when read
        if self.bm25_config is not None:
            self._open_bm25()
        if self._analyzer.splits_on_lines:
            self.store.set_meta("line_terms", self._analyzer.config.analysis_fingerprint)
        if self.vector_store is not None:
            self._prepare_vectors()
            if not self.background:
                self._ensure_vectors()
            # with a background worker, the store opens when the worker first runs: after the
            # first indexing pass, or at the first change or vector search (_kick)
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

    def _reanalyse(self, bm25: BM25Index) -> None:
        """Analyses every stored document again, into ``bm25``."""
        analyzer = self._analyzer
        ids = list(self._docs)
        for i in range(0, len(ids), 500):
            for doc_id, text in self.store.contents(ids[i:i + 500]).items():
                bm25.add(doc_id, analyzer(text))

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

    def _open_bm25(self) -> None:
        """Loads the BM25 snapshot (replaying later changes) or rebuilds it from the stored texts."""
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
                    return
            except IndexCorruptedError as exc:
                msg = f"BM25 snapshot unusable ({exc}); rebuilding it from the stored documents"
                warnings.warn(msg, RuntimeWarning, stacklevel=4)
                log.warning(msg)
        idx = BM25Index(cfg.k1, cfg.b, cfg.epsilon)
        self._reanalyse(idx)
        self._bm25 = idx
        self._snapshot_seq = -1  # not persisted yet

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

    def _prepare_vectors(self) -> None:
        """The vector state as the document store records it, without the vector store: which
        documents wait for a vector, which have several, which have none by rule. An embedder
        change forgets every vector (the store itself is emptied when it opens)."""
        recorded = self.store.get_meta("embedder")
        current = self._embedder_fingerprint()
        if recorded is not None and recorded != current and self._docs:
            log.info("embedder changed (%s -> %s): re-embedding %d documents", recorded, current, len(self._docs))
            self.store.clear_embedded()
            self.store.set_meta("embedder", current)
            self.store.set_meta("embedder_dim", "")
            self.store.delete_meta(LEGACY_VECTORS)
            self._deferred_clear = True
        self._check_embed_policy()
        self._no_vector = self.store.vector_skips()
        self._vec_n = self.store.multi_vector_counts()
        self._load_pending()
        self.store.commit()

    def _load_pending(self) -> None:
        """Every document whose vector is missing or stale, as the document store says."""
        rows = self.store.unembedded()
        self._pending = {i: next(self._versions) for i, _ in rows}
        self._pending_chars = dict(rows)

    def _pend(self, doc_id: str, chars: int) -> None:
        self._pending[doc_id] = next(self._versions)
        self._pending_chars[doc_id] = chars

    def _unpend(self, doc_id: str) -> None:
        self._pending.pop(doc_id, None)
        self._pending_chars.pop(doc_id, None)

    def _check_embed_policy(self) -> None:
        """Files are decided again when the embed policy changed since they were indexed: their
        manifest entries are dropped, so the next pass reads them (unchanged text is not
        re-analysed; only whether it gets a vector is decided again)."""
        wanted = self.embed_policy.fingerprint
        recorded = self.store.get_meta("embed_policy")
        if recorded != wanted:
            if recorded is not None:
                for path in self.store.files():
                    self.store.delete_file(path)
            self.store.set_meta("embed_policy", wanted)

    def _ensure_vectors(self) -> None:
        """Opens the vector store (once) and reconciles it with the document store. Called
        without the engine lock where it can be: importing chromadb alone takes seconds."""
        if self._vec_open:
            return
        store = self.vector_store
        assert store is not None
        with self._connect_lock:
            if self._vec_open or self._closed:
                return
            with self._lock:
                dim = self.store.get_meta("embedder_dim")
            damaged: SearchError | None = None
            try:
                store.open(self.index_name, self.persist_dir)
                self._probe_vectors(dim)
            except SearchError as exc:
                if exc.code == VECTORS_UNAVAILABLE:
                    raise
                damaged = exc
            with self._lock:
                if self._closed:  # closed meanwhile: release what was just opened
                    store.close()
                    return
                if damaged is not None and not self._reset_vectors(damaged):
                    raise damaged
                self._reconcile_vectors()
                self._vec_open = True
                self._vectors_changed.notify_all()

    def _reconcile_vectors(self) -> None:
        """(Lock held, store open.) Applies what waited for the store (an emptying, deletions),
        adopts the vectors of an index written before vector states were recorded, and makes
        the store and the recorded states agree after an interrupted run or external edits."""
        store = self.vector_store
        assert store is not None
        if self._deferred_clear:
            store.clear()
            self._deferred_clear = False
            self._deferred_deletes.clear()
        elif self.store.get_meta(LEGACY_VECTORS):
            have = store.ids()
            self.store.mark_embedded((i, r.hash, 1) for i, r in self._docs.items() if i in have)
            store.delete([i for i in have if i not in self._docs])
            self.store.delete_meta(LEGACY_VECTORS)
            self._load_pending()
        if self._deferred_deletes:
            store.delete([v for doc_id, n in self._deferred_deletes.items() for v in vector_ids(doc_id, n)])
            self._deferred_deletes.clear()
        counts = self.store.vector_counts()
        if store.count() != sum(counts.values()):
            # drop vectors of unknown (or stale) ids, embed documents whose vectors are not all there
            have = store.ids()
            valid = {v for doc_id, n in counts.items() for v in vector_ids(doc_id, n)}
            store.delete([v for v in have if v not in valid])
            lost = [doc_id for doc_id, n in counts.items()
                    if doc_id in self._docs and not all(v in have for v in vector_ids(doc_id, n))]
            if lost:
                self.store.clear_embedded(lost)
                self._load_pending()
        self.store.commit()

    def _probe_vectors(self, dim: str | None) -> None:
        """Reads the vector store once (count, one query) so damage shows now, not mid-search."""
        store = self.vector_store
        assert store is not None
        if store.count() and dim:
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
        self._vec_n.clear()
        self._load_pending()
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
                    self._flush_deletes()
                    self._kick()

    def _commit(self) -> None:
        if self._batch_depth == 0:
            self.store.commit()
            self._flush_deletes()
            self._kick()

    def _put(self, rec: DocRecord, content: str, no_vector: str | None = None) -> bool:
        """Stores one document; ``no_vector`` is why it gets no vector (the embed policy)."""
        old = self._docs.get(rec.id)
        if (old is not None and old.hash == rec.hash and old.metadata == rec.metadata
                and old.start_line == rec.start_line and old.source == rec.source):
            self._set_no_vector(rec.id, no_vector, len(content))  # the rules may have changed
            if old.kind == rec.kind:
                return False  # unchanged: neither re-tokenised nor re-embedded
            self.store.set_kind(rec.id, rec.kind)  # same text, now known as a file's: no re-embedding
            self._docs[rec.id] = rec
            return True
        if old is not None and old.source != rec.source:
            self._unlink_source(old)
        # (a hit's analysed lines are made when its line range is first read: most never are)
        terms = self._analyzer(content) if self._bm25 is not None else []
        self.store.put(rec, content)
        self._docs[rec.id] = rec
        self._by_source.setdefault(rec.source, set()).add(rec.id)
        if self._bm25 is not None:
            self._bm25.add(rec.id, terms)
        if self.vector_store is not None:
            # (re-)embedded at the next flush; a metadata-only change re-upserts too, so the
            # vector store's copy of the metadata (used by filters) stays right
            if no_vector is None:
                self._no_vector.pop(rec.id, None)
                self._pend(rec.id, len(content))
            else:
                self._no_vector.pop(rec.id, None)  # (the put cleared the stored reason)
                self._set_no_vector(rec.id, no_vector, len(content))
        return True

    def _set_no_vector(self, doc_id: str, reason: str | None, chars: int) -> None:
        """Records whether a document gets a vector: one that must not have one loses its
        vectors and leaves the queue; one that may again is queued."""
        if self.vector_store is None or self._no_vector.get(doc_id) == reason:
            return
        self.store.set_vector_skip([(doc_id, reason)])
        if reason is None:
            del self._no_vector[doc_id]
            self._pend(doc_id, chars)
            return
        self._no_vector[doc_id] = reason
        self._unpend(doc_id)
        self.store.clear_embedded([doc_id])
        self._drop_vectors(doc_id)

    def _drop_vectors(self, doc_id: str) -> None:
        """Queues the deletion of a document's vectors: applied in bulk at the next commit (or
        when the vector store opens), before any new vector of that id is stored."""
        n = self._vec_n.pop(doc_id, 1)
        self._deferred_deletes[doc_id] = max(n, self._deferred_deletes.get(doc_id, 1))

    def _flush_deletes(self) -> None:
        """(Lock held.) Deletes the queued vectors, when the vector store is open."""
        if self._deferred_deletes and self._vec_open:
            assert self.vector_store is not None
            ids = [v for doc_id, n in self._deferred_deletes.items() for v in vector_ids(doc_id, n)]
            self._deferred_deletes.clear()
            self.vector_store.delete(ids)

    def _validate_id(self, doc_id: Any) -> str:
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise InvalidArgumentError(f"document id must be a non-empty string, got {doc_id!r}")
        if WINDOW_SEP in doc_id:
            raise InvalidArgumentError(f"document id {doc_id!r} contains the control character U+001F")
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
        # a workspace file the embed policy keeps without vectors (lock files, data dumps, ...)
        no_vector = (self.embed_policy.reason(path, content)
                     if kind == FILE and self.vector_store is not None else None)
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
                                        content_hash(chunk.content), kind), chunk.content, no_vector)
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
            self._unpend(doc_id)
            self._no_vector.pop(doc_id, None)
            self._drop_vectors(doc_id)
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
            self._pending_chars.clear()
            self._no_vector.clear()
            self._vec_n.clear()
            if self._bm25 is not None:
                self._bm25.clear()
            if self.vector_store is not None:
                if self._vec_open:
                    self.vector_store.clear()
                else:
                    self._deferred_clear = True
                    self._deferred_deletes.clear()
            self._commit()

    # ------------------------------------------------------------------ embeddings
    def _maybe_autoflush(self) -> None:
        if not self.background and len(self._pending) >= _AUTO_FLUSH_PENDING:
            self._flush_vectors()

    @property
    def pending_embeddings(self) -> int:
        return len(self._pending)

    def _kick(self) -> None:
        """Starts the background worker (lock held) when the vector store is still to be opened
        or something waits for a vector — never during a batch: an indexing pass has the
        machine to itself until BM25 holds its files."""
        if (not self.background or self._closed or self._stopping or self.vector_store is None
                or self._embed_error is not None or self._batch_depth > 0):
            return
        if self._vec_open and not self._pending:
            return
        if self._worker is not None and self._worker.is_alive():
            return
        self._worker = threading.Thread(target=self._embed_loop, name=f"ws-embed-{self.index_name}",
                                        daemon=True)
        self._worker.start()

    def start_vectors(self) -> None:
        """With a background worker: opens the vector store and loads the model now, in the
        background (so the first hybrid search does not wait for them), and embeds what waits."""
        with self._lock:
            self._kick()

    def _embed_loop(self) -> None:
        try:
            try:
                self._ensure_vectors()
            except SearchError as exc:
                if exc.code != VECTORS_UNAVAILABLE:
                    raise
                raise self._missing_pieces(exc) from exc
            self._warm_embedder()
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

    def _missing_pieces(self, store_error: SearchError) -> SearchError:
        """The vector store cannot run here: whether the embedder can is worth telling too."""
        try:
            self._warm_embedder()
        except SearchError as exc:
            if exc.code == VECTORS_UNAVAILABLE:
                return SearchError(f"{store_error}; {exc}", code=VECTORS_UNAVAILABLE, workspace_id=self.workspace_id)
        except Exception:  # the embedder's own failure shows once the store can open
            pass
        return store_error

    def _warm_embedder(self) -> None:
        """Loads the model ahead of the first query (embedders that say how: ``warm()``)."""
        warm = getattr(self.embedder, "warm", None)
        if callable(warm) and not self._stopping:
            warm()

    def _embed_texts(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The vectors of each text: one per window of the model for embedders that cut long
        texts into windows (``windows = True`` and ``embed_windows``), one per text otherwise."""
        assert self.embedder is not None
        if not texts:
            return []
        windows = getattr(self.embedder, "embed_windows", None)
        if getattr(self.embedder, "windows", False) is True and callable(windows):
            vectors, owner = windows(list(texts))
            owner = np.asarray(owner)
            if vectors.ndim != 2 or len(owner) != vectors.shape[0] or set(owner.tolist()) != set(range(len(texts))):
                raise EmbedderError(f"embedder returned {vectors.shape[0]} vectors that do not cover {len(texts)} texts")
            order = np.argsort(owner, kind="stable")
            counts = np.bincount(owner, minlength=len(texts))
            return np.split(vectors[order], np.cumsum(counts)[:-1])
        vectors = self.embedder.embed(list(texts))
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise EmbedderError(f"embedder returned {vectors.shape[0]} vectors for {len(texts)} texts")
        return [vectors[k:k + 1] for k in range(len(texts))]

    def _known_vectors(self, hashes: Mapping[str, str]) -> dict[str, np.ndarray]:
        """(Lock held.) ``content hash -> vectors`` already stored for another document with
        that text (identical chunks are embedded once, across files), read back from the
        vector store (stores with ``embeddings(ids)``)."""
        fetch = getattr(self.vector_store, "embeddings", None)
        if not callable(fetch) or not hashes:
            return {}
        found = self.store.embedded_with_hash(hashes.values())
        if not found:
            return {}
        want = {h: vector_ids(doc_id, n) for h, (doc_id, n) in found.items()}
        got = fetch([v for ids in want.values() for v in ids])
        return {h: np.stack([got[v] for v in ids]) for h, ids in want.items() if all(v in got for v in ids)}

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
                    self._unpend(i)
            ids = [i for i in batch if i in contents]
            hashes = {i: self._docs[i].hash for i in ids}
            known = self._known_vectors({i: h for i, h in hashes.items()})
            self._inflight.update(ids)
        try:
            texts: dict[str, str] = {}  # content hash -> text: identical texts embedded once
            for i in ids:
                if hashes[i] not in known:
                    texts.setdefault(hashes[i], contents[i])
            t0 = time.perf_counter()
            made = dict(zip(texts, self._embed_texts(list(texts.values()))))
            if texts:
                self._rate.record(sum(map(len, texts.values())), time.perf_counter() - t0)
        except BaseException:
            with self._lock:
                self._inflight.difference_update(ids)
            raise
        with self._lock:
            # still "in flight" until stored: another caller must not embed them meanwhile
            self._inflight.difference_update(ids)
            if not ids:
                return True
            if self._closed:
                return False
            vectors_of = {**known, **made}
            if self._dimension_changed(next(iter(vectors_of.values())).shape[1]):
                return True  # everything is pending again, at the new dimension
            done = [i for i in ids if i in self._docs and self._pending.get(i) == versions[i]]
            if done:
                self._flush_deletes()  # before any vector of a re-added id is stored
                self._store_vectors(done, hashes, vectors_of, contents)
            self._vectors_changed.notify_all()
        if on_progress is not None:
            on_progress(len(done))
        return True

    def _store_vectors(self, done: list[str], hashes: Mapping[str, str], vectors_of: Mapping[str, np.ndarray],
                       contents: Mapping[str, str]) -> None:
        """(Lock held.) Upserts the vectors of ``done`` documents and records them as embedded."""
        assert self.vector_store is not None
        vids: list[str] = []
        rows: list[np.ndarray] = []
        texts: list[str] = []
        metas: list[dict[str, Any]] = []
        stale: list[str] = []
        counts: dict[str, int] = {}
        for i in done:
            vecs = vectors_of[hashes[i]]
            n = counts[i] = len(vecs)
            rec = self._docs[i]
            meta = {**rec.metadata, "source": rec.source}
            vids += vector_ids(i, n)
            rows.append(vecs)
            texts += [contents[i]] + [""] * (n - 1)  # the text once; later windows point to it
            metas += [meta] * n
            old = self._vec_n.get(i, 1)
            if old > n:
                stale += vector_ids(i, old)[n:]
        try:
            self.vector_store.upsert(vids, np.concatenate(rows), texts, metas)
            if stale:
                self.vector_store.delete(stale)
        except SearchError as exc:
            if self._reset_vectors(exc):
                return
            raise
        self.store.mark_embedded((i, hashes[i], counts[i]) for i in done)
        for i in done:
            self._unpend(i)
            if counts[i] > 1:
                self._vec_n[i] = counts[i]
            else:
                self._vec_n.pop(i, None)
        if self.store.get_meta("embedder") is None:
            self.store.set_meta("embedder", self._embedder_fingerprint())
        if self._batch_depth == 0:
            self.store.commit()

    def _flush_vectors(self, on_progress: Callable[[int, int], None] | None = None,
                       timeout: float | None = None) -> bool:
        """Embeds everything waiting, in this thread, alongside a background worker if one runs;
        True when nothing is left (False: ``timeout`` passed)."""
        if self.vector_store is None or self.embedder is None:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        self._ensure_vectors()
        with self._lock:
            total, done = len(self._pending), 0

        def progress(n: int) -> None:
            nonlocal done
            done += n
            if on_progress is not None:
                on_progress(min(done, total), total)

        with self._lock:
            self._flush_deletes()
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
        self._deferred_deletes.clear()
        self._vec_n.clear()
        self.store.clear_embedded()
        self.store.set_meta("embedder_dim", str(dim))
        self._load_pending()
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
            working = bool(self._pending and self._worker is not None and self._worker.is_alive())
            left = sum(self._pending_chars.values()) if working else 0
            return IndexStatus(
                documents=len(self._docs),
                indexing=self._passes > 0,
                files_done=progress.done if progress and self._passes else 0,
                files_total=progress.total if progress and self._passes else 0,
                vectors=vectors,
                embedded=len(self._docs) - len(self._pending) - len(self._no_vector) if vectors else 0,
                embedding=working,
                error=f"{type(err).__name__}: {err}" if err is not None else None,
                without_vectors=len(self._no_vector) if vectors else 0,
                skipped=self._skipped_summary() if vectors else (),
                eta_seconds=self._rate.eta(left) if working else None,
                too_large=self.too_large,
            )

    def _skipped_summary(self) -> tuple[tuple[str, int], ...]:
        """``(reason, files)`` of the files kept without vectors, most files first."""
        files: dict[str, set[str]] = {}
        docs = self._docs
        for doc_id, reason in self._no_vector.items():
            rec = docs.get(doc_id)
            files.setdefault(reason, set()).add(rec.source if rec is not None else doc_id)
        return tuple(sorted(((r, len(f)) for r, f in files.items()), key=lambda x: (-x[1], x[0])))

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
            self._maybe_snapshot(force=False, later=self.background)
            self._kick()

    def _maybe_snapshot(self, force: bool, later: bool = False) -> None:
        """Rewrites the BM25 snapshot when it is far behind the document store (always when
        ``force``). ``later``: its file is written on a thread (the caller, an indexing pass,
        returns at once; the snapshot only speeds up the next opening)."""
        if self._bm25 is None or self.persist_dir is None or self.bm25_config is None:
            return
        writer = self._snapshot_writer
        if writer is not None and writer.is_alive():
            if later:
                return  # one is being written; the next pass or close() writes a newer one
            writer.join()  # (the writer never takes the engine lock)
        if self._snapshot_done is not None:
            self._snapshot_written(self._snapshot_done)
            self._snapshot_done = None
        behind = self.store.count_changed_since(self._snapshot_seq) if self._snapshot_seq >= 0 else len(self._docs) + 1
        if behind == 0:
            return
        if not force and behind < max(1000, len(self._docs) // 10) and self._snapshot_seq >= 0:
            return  # the store's change log is replayed on open; rewriting the snapshot can wait
        self.store.commit()
        seq = self.store.seq
        arrays = self._bm25.snapshot(meta={"seq": seq, "fingerprint": self.bm25_config.analysis_fingerprint})
        path = self.persist_dir / "bm25.npz"
        if not later:
            write_snapshot(path, arrays)
            self._snapshot_written(seq)
            return

        def write() -> None:
            try:
                write_snapshot(path, arrays)
            except OSError as exc:  # the next pass or close() tries again
                log.warning("could not write the BM25 snapshot: %s", exc)
                return
            self._snapshot_done = seq  # recorded in the store by the next snapshot or close()

        self._snapshot_writer = threading.Thread(target=write, name=f"ws-bm25-snapshot-{self.index_name}",
                                                 daemon=True)
        self._snapshot_writer.start()

    def _snapshot_written(self, seq: int) -> None:
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
                try:
                    self._flush_deletes()
                except SearchError as exc:  # the next open finds and drops them
                    log.warning("could not delete %d documents' vectors: %s", len(self._deferred_deletes), exc)
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

    def _embedded_count(self) -> int:
        return len(self._docs) - len(self._pending) - len(self._no_vector)

    def _vectors_for_search(self, mode: str) -> bool:
        """Before a vector or hybrid search: whether it can use vectors. Without a worker,
        everything waiting is embedded first. With one, the search waits for the vector store to
        open only when some document has a vector (else there is nothing to gain: hybrid answers
        by BM25 at once), and for a backlog of a few documents (never for a pass's worth). When
        vector search cannot run here, hybrid answers by BM25 and vector search raises."""
        if not self.background:
            with self._lock:
                self._check_open()
                self._flush_vectors()
                self._commit()
            return True
        with self._lock:
            self._check_open()
            self._kick()
            deadline = time.monotonic() + _SEARCH_WAIT_SECONDS
            small = 0 < len(self._pending) <= _SEARCH_WAITS_FOR and self._batch_depth == 0
            while not self._vec_open and not self._closed:
                err = self._embed_error
                if err is not None:
                    if mode == "vector":
                        raise self._unavailable(err)
                    return False
                remaining = deadline - time.monotonic()
                if (self._embedded_count() == 0 and not small) or remaining <= 0 or self._worker is None:
                    return False
                self._vectors_changed.wait(min(0.5, remaining))
            if small and self._embed_error is None:
                self._kick()
                while self._pending and self._embed_error is None and not self._closed:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or self._worker is None:
                        break
                    self._vectors_changed.wait(min(0.5, remaining))
            return self._vec_open

    def _unavailable(self, err: BaseException) -> SearchError:
        if isinstance(err, SearchError) and err.code == VECTORS_UNAVAILABLE:
            return err
        return SearchError(f"vector search is not available: {type(err).__name__}: {err}",
                           code=VECTORS_UNAVAILABLE, workspace_id=self.workspace_id)

    def _query_vector(self, query: str, mode: str) -> np.ndarray | None:
        """The query's vector (outside the lock: the worker keeps going); for a hybrid search,
        None when the embedder fails (the failure is kept for :meth:`status`: BM25 answers)."""
        assert self.embedder is not None
        try:
            return np.asarray(self.embedder.embed([query])[0])
        except Exception as exc:
            if mode == "vector":
                if isinstance(exc, SearchError):
                    raise
                raise EmbedderError(f"embedding the query failed: {type(exc).__name__}: {exc}") from exc
            with self._lock:
                if self._embed_error is None:
                    self._embed_error = exc
            log.warning("hybrid search answered by BM25 alone: embedding the query failed: %s", exc)
            return None

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
            if self._vectors_for_search(resolved) and self._docs:
                qvec = self._query_vector(query, resolved)
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
            if qvec is not None and self._vec_open:
                assert self.vector_store is not None
                if self._dimension_changed(len(qvec)) and not self.background:
                    self._flush_vectors()
                try:
                    vec_hits = self._vector_hits(qvec, depth, where)
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
                ranked = fuse(bm25_hits, vec_hits, method, weight, has_vector=self._has_vector(qvec, vec_hits))
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

    def _has_vector(self, qvec: np.ndarray | None,
                    vec_hits: list[tuple[str, float]]) -> Callable[[str], bool] | None:
        """(Lock held.) For the fusion: which documents have a vector score (None: all do)."""
        if qvec is None or not self._vec_open:
            return lambda _doc_id: False
        pending, no_vector = self._pending, self._no_vector
        if not pending and not no_vector:
            return None
        found = {i for i, _ in vec_hits}
        return lambda doc_id: doc_id in found or (doc_id not in pending and doc_id not in no_vector)

    def _vector_hits(self, qvec: np.ndarray, depth: int, where: Mapping[str, Any] | None) -> list[tuple[str, float]]:
        """(Lock held.) The ``depth`` nearest documents: a document stored as several windows
        scores as its best window."""
        assert self.vector_store is not None
        ask = depth * 2 if self._vec_n else depth
        out: dict[str, float] = {}
        docs = self._docs
        for vid, score in self.vector_store.query(qvec, ask, where=where):
            doc_id = document_of(vid)
            if doc_id in docs and doc_id not in out:
                out[doc_id] = score
                if len(out) == depth:
                    break
        return list(out.items())

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
                if fast:
                    if lines is None:
                        lines = analyzer.line_terms(text)[1]
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
