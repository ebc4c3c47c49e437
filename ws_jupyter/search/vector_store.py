"""Vector storage: the ``VectorStore`` protocol and its Chroma implementation.

The search engine computes embeddings itself (batched, with the workspace's embedder) and hands
the store finished vectors, so any store that can upsert/delete/query by vector fits. Chroma is
the default because it runs embedded (a directory under the workspace), in memory, or as a shared
server, behind one client API.

>>> store = ChromaVectorStore(ephemeral=True)          # doctest: +SKIP
>>> store = ChromaVectorStore(path="./index/chroma")   # doctest: +SKIP
>>> store = ChromaVectorStore(host="127.0.0.1", port=8000)   # doctest: +SKIP
"""

from __future__ import annotations

import functools
import re
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from ..errors import SearchError, WorkspaceConfigError

__all__ = ["ChromaVectorStore", "VectorStore", "chroma_collection_name"]


@runtime_checkable
class VectorStore(Protocol):
    """What the search engine needs from a vector database.

    ``open`` binds the store to one index (collection) before any other call; ``persist_dir``
    is where the workspace keeps its index, for stores that default to living there.
    ``query`` returns ``(id, similarity)`` best first, higher is more similar.

    Optional: ``embeddings(ids) -> {id: vector}`` (the stored vectors of those ids) lets the
    engine embed identical text once across documents; without it each copy is embedded.
    A long document may be stored as several vectors (one per window of the model) under the ids
    ``doc``, ``doc\x1f1``, ``doc\x1f2``...
    """

    def open(self, index_name: str, persist_dir: Path | None = None) -> None: ...

    def upsert(self, ids: Sequence[str], embeddings: np.ndarray, documents: Sequence[str],
               metadatas: Sequence[Mapping[str, Any]]) -> None: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def query(self, embedding: np.ndarray, top_k: int,
              where: Mapping[str, Any] | None = None) -> list[tuple[str, float]]: ...

    def ids(self) -> set[str]: ...

    def count(self) -> int: ...

    def clear(self) -> None: ...

    def close(self) -> None: ...


def chroma_collection_name(index_name: str) -> str:
    """Maps a workspace index name (``^[A-Za-z_][A-Za-z0-9_]*$``) to a valid Chroma collection
    name (3-512 chars of ``[a-zA-Z0-9._-]``, starting and ending alphanumeric)."""
    core = re.sub(r"[^A-Za-z0-9._-]", "_", index_name).strip("._-")
    if len(core) < 3:
        core = f"ws_{core}_index" if core else "ws_index"
    return core[:512]


_SCALAR = (str, int, float, bool)


def _chroma_metadata(meta: Mapping[str, Any]) -> dict[str, Any]:
    # Chroma accepts only scalar values (no None, no nested objects); the full metadata lives in
    # the engine's document store, this copy only serves `where` filters.
    out = {str(k): v for k, v in meta.items() if isinstance(v, _SCALAR)}
    return out or {"_": True}


def _forget_failed_system(persist_directory: str) -> None:
    """Drops chromadb's cached system for a directory whose opening failed.

    chromadb caches one "system" per persistent path and registers it *before* starting it; when
    starting fails (e.g. a damaged chroma.sqlite3) the broken system stays cached with no client
    referring to it, and every later client for that path gets it back. Forgetting it lets the
    engine rebuild the directory and open it again in the same process.
    """
    try:
        from chromadb.api.shared_system_client import SharedSystemClient

        systems = SharedSystemClient._identifier_to_system
        refcounts = SharedSystemClient._identifier_to_refcount
        for key, system in list(systems.items()):
            same = key == persist_directory or getattr(system.settings, "persist_directory", None) == persist_directory
            if same and refcounts.get(key, 0) <= 0:
                systems.pop(key, None)
    except Exception:  # pragma: no cover - chromadb internals moved: nothing to clean up
        pass


_F = TypeVar("_F", bound=Callable[..., Any])


def _chroma_errors(method: _F) -> _F:
    """Chroma's own exceptions (a damaged segment file raises ``InternalError`` on the first
    read) become ``SearchError``, which the engine answers by rebuilding the store it owns."""

    @functools.wraps(method)
    def wrapper(self: ChromaVectorStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (SearchError, WorkspaceConfigError):
            raise
        except Exception as exc:
            raise SearchError(f"Chroma {method.__name__} failed ({self!r}): {type(exc).__name__}: {exc}") from exc

    return wrapper  # type: ignore[return-value]


class ChromaVectorStore:
    """A Chroma collection as the workspace's vector index.

    Exactly one way to reach Chroma: ``client=`` (any chromadb client you made), ``host``/``port``
    (a Chroma server, via ``chromadb.HttpClient``), ``path=`` (embedded, persistent),
    ``ephemeral=True`` (in memory) — or nothing, which means embedded and persistent under the
    workspace (``.ws/index/chroma``), or in memory when the engine has no persist directory.
    Collections use cosine distance; similarity is reported as ``1 - distance``.

    The document texts live in the search index's own store; Chroma gets the vectors and the
    metadata its ``where`` filters need. ``store_documents=True`` hands it the texts too (for
    other programs reading the collection), which makes each upsert several times slower (Chroma
    indexes them for its own full-text search).

    Chroma's in-memory clients share one database per process, so an in-memory store without an
    explicit ``collection_name`` uses a collection of its own (the index name plus a random
    suffix), dropped on ``close()``: two in-memory engines never see or delete each other's vectors.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        client: Any = None,
        host: str | None = None,
        port: int | None = None,
        ssl: bool = False,
        headers: Mapping[str, str] | None = None,
        ephemeral: bool = False,
        collection_name: str | None = None,
        store_documents: bool = False,
    ) -> None:
        given = [x for x in (path is not None, client is not None, host is not None or port is not None, ephemeral) if x]
        if len(given) > 1:
            raise WorkspaceConfigError(
                "ChromaVectorStore: give only one of path=, client=, host=/port= or ephemeral=True",
                code="INVALID_SEARCH_CONFIG",
            )
        self.path = Path(path).expanduser() if path is not None else None
        self.host = host
        self.port = port
        self.ssl = ssl
        self.headers = dict(headers or {})
        self.ephemeral = ephemeral
        self.collection_name = collection_name
        self.store_documents = bool(store_documents)
        self._client = client
        self._owns_client = client is None
        self._collection: Any = None
        self._private = False  # an in-memory collection of this store alone, dropped on close
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        if self.host is not None or self.port is not None:
            where = f"server {self.host or 'localhost'}:{self.port or 8000}"
        elif self.path is not None:
            where = f"path={str(self.path)!r}"
        elif self.ephemeral:
            where = "ephemeral"
        elif self._client is not None and not self._owns_client:
            where = "client"
        else:
            where = "workspace default"
        name = f", collection={self.collection_name!r}" if self.collection_name else ""
        return f"ChromaVectorStore({where}{name})"

    @property
    def kind(self) -> str:
        if self.host is not None or self.port is not None:
            return "http"
        if not self._owns_client:
            return "client"
        return "ephemeral" if self.ephemeral or self.path is None else "persistent"

    # ------------------------------------------------------------------ lifecycle
    def open(self, index_name: str, persist_dir: Path | None = None) -> None:
        with self._lock:
            if self._collection is not None:
                return
            try:
                import chromadb
                from chromadb.config import Settings
            except ImportError as exc:  # nothing to repair: say what is missing
                raise SearchError(f"vector search needs the chromadb package, which cannot be imported here "
                                  f"({type(exc).__name__}: {exc}); BM25 search works without it",
                                  code="VECTORS_UNAVAILABLE") from exc

            settings = Settings(anonymized_telemetry=False, allow_reset=True)
            try:
                if self._client is None:
                    if self.host is not None or self.port is not None:
                        self._client = chromadb.HttpClient(
                            host=self.host or "localhost", port=self.port or 8000, ssl=self.ssl,
                            headers=self.headers or None, settings=settings)
                    elif self.ephemeral or (self.path is None and persist_dir is None):
                        self.ephemeral = True
                        self._client = chromadb.EphemeralClient(settings=settings)
                        self._private = self._private or self.collection_name is None
                    else:
                        if self.path is None:
                            assert persist_dir is not None
                            self.path = persist_dir / "chroma"
                        self.path.mkdir(parents=True, exist_ok=True)
                        self._client = chromadb.PersistentClient(path=str(self.path), settings=settings)
                name = self.collection_name
                if name is None:
                    name = chroma_collection_name(index_name)
                    if self._private:
                        name = f"{name[:499]}-{uuid.uuid4().hex[:12]}"
                self.collection_name = name
                self._collection = self._client.get_or_create_collection(
                    name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}})
            except WorkspaceConfigError:
                raise
            except Exception as exc:
                if self._owns_client:
                    self._client = None
                    if self.path is not None:
                        _forget_failed_system(str(self.path))
                raise SearchError(f"cannot open Chroma collection for index {index_name!r} ({self!r}): "
                                  f"{type(exc).__name__}: {exc}") from exc

    def _col(self) -> Any:
        if self._collection is None:
            raise SearchError("ChromaVectorStore is not open (the search engine opens it)")
        return self._collection

    def forget_storage(self) -> None:
        """After :meth:`close`: drops chromadb's cached state for this store's directory, so the
        directory can be replaced (moved aside after damage) and opened afresh in this process."""
        if self.path is not None and self._owns_client:
            _forget_failed_system(str(self.path))

    def close(self) -> None:
        """Releases the collection and, for clients this store created, Chroma's file handles."""
        with self._lock:
            if self._private and self._collection is not None:
                try:
                    self._client.delete_collection(self._collection.name)
                except Exception:
                    pass
            self._collection = None
            client, self._client = self._client, None
            if client is not None and self._owns_client and hasattr(client, "close"):
                # chromadb's HTTP API objects (the client's and its admin client's) keep httpx
                # sessions that client.close() does not close; their sockets would linger until
                # exit, so close them when present.
                sessions = [getattr(getattr(c, "_server", None), "_session", None)
                            for c in (client, getattr(client, "_admin_client", None))]
                try:
                    client.close()
                except Exception:
                    pass
                if self.kind == "http":
                    for session in sessions:
                        try:
                            if session is not None:
                                session.close()
                        except Exception:
                            pass
            if not self._owns_client:
                self._client = client

    # ------------------------------------------------------------------ data
    @_chroma_errors
    def upsert(self, ids: Sequence[str], embeddings: np.ndarray, documents: Sequence[str],
               metadatas: Sequence[Mapping[str, Any]]) -> None:
        if not len(ids):
            return
        col = self._col()
        emb = np.asarray(embeddings, dtype=np.float32)
        step = 1000  # stay far below Chroma's max batch size
        with self._lock:
            for i in range(0, len(ids), step):
                col.upsert(ids=list(ids[i:i + step]), embeddings=emb[i:i + step],
                           documents=list(documents[i:i + step]) if self.store_documents else None,
                           metadatas=[_chroma_metadata(m) for m in metadatas[i:i + step]])

    @_chroma_errors
    def delete(self, ids: Sequence[str]) -> None:
        if not len(ids):
            return
        col = self._col()
        with self._lock:
            for i in range(0, len(ids), 1000):
                col.delete(ids=list(ids[i:i + 1000]))

    @_chroma_errors
    def query(self, embedding: np.ndarray, top_k: int,
              where: Mapping[str, Any] | None = None) -> list[tuple[str, float]]:
        col = self._col()
        if top_k <= 0:
            return []
        with self._lock:
            # Chroma (>= 1.0) returns what it has when asked for more, an empty list when empty:
            # no count() round trip per query
            res = col.query(query_embeddings=[np.asarray(embedding, dtype=np.float32)],
                            n_results=top_k, where=dict(where) if where else None,
                            include=["distances"])
        ids = res["ids"][0]
        dists = res["distances"][0]
        return [(i, 1.0 - float(d)) for i, d in zip(ids, dists)]

    @_chroma_errors
    def embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``ids`` (those that exist): the engine copies them to another
        document with the same text instead of embedding it again."""
        col = self._col()
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(ids), 1000):
                res = col.get(ids=list(ids[i:i + 1000]), include=["embeddings"])
                out.update(zip(res["ids"], (np.asarray(e, dtype=np.float32) for e in res["embeddings"])))
        return out

    @_chroma_errors
    def ids(self) -> set[str]:
        col = self._col()
        out: set[str] = set()
        with self._lock:
            n = col.count()
            for offset in range(0, n, 5000):
                out.update(col.get(include=[], limit=5000, offset=offset)["ids"])
        return out

    @_chroma_errors
    def count(self) -> int:
        with self._lock:
            return int(self._col().count())

    @_chroma_errors
    def clear(self) -> None:
        with self._lock:
            col = self._col()
            name = col.name
            self._client.delete_collection(name)
            self._collection = self._client.get_or_create_collection(
                name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}})
