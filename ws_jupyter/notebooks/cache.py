"""Notebooks' cell texts, kept between searches while their files do not change.

Grep searches a notebook cell by cell, so each search parsed every notebook in scope again: on 300
notebooks (87 MB, mostly images) one grep call took 1-2 s against 0.08 s for ripgrep on the raw
JSON. :class:`CellTextCache` keeps each notebook's :class:`~ws_jupyter.notebooks.text.CellText`
list, keyed by the file's identity and version — (path, size, modification time in nanoseconds,
inode) as the operating system reports them for a local file, (path, size, mtime) elsewhere — so a
changed, replaced or touched file is parsed again and an unchanged one never is. It is bounded by
the characters it holds and by its number of notebooks (least recently used dropped first), and
remembers files that are not readable notebooks too (they are searched as text).
"""

from __future__ import annotations

import bisect
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..errors import FileTooLargeError, NotebookError, WorkspaceError
from .document import Notebook
from .text import CellText, cell_texts

__all__ = ["CellTextCache", "NotebookText", "SearchText", "cell_text_cache"]


@dataclass(frozen=True)
class SearchText:
    """Cell texts as one block to search in one pass: ``blob`` is every cell's lines joined by
    ``\n`` (UTF-8), ``starts[k]`` the block line where ``texts[k]`` begins, ``lines[k]`` its lines
    (a Windows line end's ``\r`` dropped)."""

    texts: tuple[CellText, ...]
    lines: tuple[tuple[str, ...], ...]
    starts: tuple[int, ...]
    blob: bytes

    def locate(self, line: int) -> tuple[int, int]:
        """``(k, n)``: block line ``line`` is line ``n`` (1-based) of ``texts[k]``."""
        k = bisect.bisect_right(self.starts, line) - 1
        return k, line - self.starts[k] + 1


def _search_text(texts: tuple[CellText, ...]) -> SearchText:
    lines = tuple(tuple(ln[:-1] if ln.endswith("\r") else ln for ln in t.text.split("\n")) for t in texts)
    starts, at = [], 0
    for cell_lines in lines:
        starts.append(at)
        at += len(cell_lines)
    blob = "\n".join("\n".join(cell_lines) for cell_lines in lines).encode("utf-8", "surrogatepass")
    return SearchText(texts, lines, tuple(starts), blob)


@dataclass
class NotebookText:
    """One notebook's cell texts (sources and outputs), and each as a block to search."""

    cells: tuple[CellText, ...]
    _blocks: dict[bool, SearchText] = field(default_factory=dict)

    def texts(self, outputs: bool = False) -> list[CellText]:
        return [t for t in self.cells if outputs or t.part == "source"]

    def block(self, outputs: bool = False) -> SearchText:
        """The sources (and outputs, with ``outputs``) as one :class:`SearchText`, built once."""
        found = self._blocks.get(outputs)
        if found is None:
            found = self._blocks[outputs] = _search_text(tuple(self.texts(outputs)))
        return found


class CellTextCache:
    """A bounded cache of cell texts (see the module docstring). Thread-safe."""

    def __init__(self, max_chars: int = 128 << 20, max_notebooks: int = 4096) -> None:
        self.max_chars = max_chars
        self.max_notebooks = max_notebooks
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[Any, ...], tuple[NotebookText | None, int]] = OrderedDict()
        self._chars = 0
        self.hits = self.misses = 0

    def _version(self, fs: Any, path: str) -> tuple[Any, ...]:
        host_path = getattr(fs, "host_path", None)
        if callable(host_path):
            try:
                host = str(host_path(path))
                st = os.stat(host)
                return ("host", host, st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)
            except (WorkspaceError, OSError):
                pass
        st = fs.stat(path)
        return (str(getattr(fs, "id", id(fs))), st.path, st.size, st.mtime)

    def get(self, fs: Any, path: str) -> NotebookText | None:
        """The cell texts of notebook ``path``; None when it is not a readable notebook."""
        key = self._version(fs, path)
        with self._lock:
            entry = self._items.get(key)
            if entry is not None:
                self._items.move_to_end(key)
                self.hits += 1
        if entry is None:
            self.misses += 1
            try:
                nb = Notebook.load(fs, path)
            except (NotebookError, FileTooLargeError):
                found: NotebookText | None = None
            else:
                found = NotebookText(tuple(cell_texts(nb, outputs=True)))
            # the texts, and the blocks built from them on use (bytes: about as large again)
            size = sum(3 * len(t.text) + 64 for t in found.cells) if found else 64
            entry = (found, size)
            with self._lock:
                old = self._items.pop(key, None)
                if old is not None:
                    self._chars -= old[1]
                if size <= self.max_chars:
                    self._items[key] = entry
                    self._chars += size
                while self._items and (self._chars > self.max_chars or len(self._items) > self.max_notebooks):
                    _, (_, dropped) = self._items.popitem(last=False)
                    self._chars -= dropped
        return entry[0]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._chars = 0

    def __len__(self) -> int:
        return len(self._items)


#: The process-wide cache grep uses.
cell_text_cache = CellTextCache()
