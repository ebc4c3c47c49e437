"""Which cells an agent has seen, so an edit by position never lands on a cell it did not see.

A notebook's cells move: a person inserts a cell at the top in JupyterLab, the agent's own insert
shifts every cell below. An edit that names a cell by ``cell_index`` means "the cell I saw there".
The read record of a notebook therefore keeps, per index shown, a :func:`fingerprint` of the cell
(its id, type and source); an edit by index is refused when the cell now at that index is not the
one seen (:func:`index_problem`). After the agent's own write, :func:`carried` moves what was seen
to where those cells are now and adds the cells it wrote, so the next edit needs no new read — while
a change by anyone else still changes the file under the record and is refused as stale.

>>> from ws_jupyter.notebooks.document import Notebook
>>> nb = Notebook.new([("code", "a = 1"), ("code", "b = 2")])
>>> seen = shown(nb, 0, 1)
>>> index_problem(nb, 1, seen) is None
True
>>> _ = nb.insert_cell(0, "# new", "markdown")        # someone else's insert
>>> index_problem(nb, 1, seen)
'cell 1 is not the cell that was read there (it is now code cell ... "a = 1")'
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from .document import Notebook, cell_source

__all__ = ["carried", "fingerprint", "index_problem", "seen_objects", "shown"]


def fingerprint(cell: Any) -> str:
    """A short digest of what identifies a cell to a reader: id, type and source."""
    cid = cell.get("id") if isinstance(cell, dict) else None
    kind = cell.get("cell_type") if isinstance(cell, dict) else None
    text = f"{cid}\0{kind}\0{cell_source(cell)}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def shown(nb: Notebook, first: int, last: int) -> dict[int, str]:
    """The fingerprints of cells ``first``..``last`` (inclusive): what a read showed."""
    return {i: fingerprint(nb.cells[i]) for i in range(max(0, first), min(last, len(nb) - 1) + 1)}


def _describe(nb: Notebook, index: int) -> str:
    cell = nb.cells[index]
    first = next((ln.strip() for ln in cell_source(cell).split("\n") if ln.strip()), "")
    first = first if len(first) <= 50 else first[:49] + "…"
    cid = cell.get("id")
    return f"{cell.get('cell_type', '?')} cell{f' {cid}' if isinstance(cid, str) else ''} \"{first}\""


def index_problem(nb: Notebook, index: int, seen: Mapping[int, str] | None) -> str | None:
    """Why an edit naming cell ``index`` must be refused (None: the cell there is the one seen).
    ``seen`` None means nothing is known of the reads (no check)."""
    if seen is None:
        return None
    expected = seen.get(index)
    if expected is None:
        return f"cell {index} has not been read"
    if index >= len(nb) or fingerprint(nb.cells[index]) != expected:
        now = _describe(nb, index) if index < len(nb) else "past the last cell"
        return f"cell {index} is not the cell that was read there (it is now {now})"
    return None


def seen_objects(nb: Notebook, seen: Mapping[int, str] | None) -> set[int]:
    """``id()`` of the cell objects of ``nb`` that are the cells seen at their index (taken before
    an edit moves them)."""
    if not seen:
        return set()
    return {
        id(nb.cells[i]) for i, fp in seen.items() if 0 <= i < len(nb) and fingerprint(nb.cells[i]) == fp
    }


def carried(nb: Notebook, objects: set[int], written: Iterable[Any] = ()) -> dict[int, str]:
    """What is seen after the agent's own edit: the cells in ``objects`` (from
    :func:`seen_objects`) where they are now, and the cells it ``written``."""
    mine = objects | {id(c) for c in written}
    return {i: fingerprint(c) for i, c in enumerate(nb.cells) if id(c) in mine}
