"""Hybrid search over workspace files: BM25 (incremental, rank-bm25-exact), vectors (Chroma, with
an offline all-MiniLM-L6-v2 default embedder), fusion, chunking and auto-indexing.

Submodules load lazily (``import ws_jupyter`` must stay fast); the public names are re-exported
from :mod:`ws_jupyter`.
"""

from __future__ import annotations

__all__: list[str] = []
