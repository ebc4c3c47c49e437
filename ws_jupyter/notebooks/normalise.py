"""Notebooks that Jupyter and Colab open but nbformat rejects, made valid as Jupyter does on save.

Google Colab (and older Jupyter front ends) save cell ids under nbformat 4.0-4.4, which has no
``id`` field, and an ``execution_count`` on Markdown cells, which only code cells have. JupyterLab
opens such a file, and when it saves it the file becomes valid nbformat 4.5: the version is
upgraded, the ids the cells have are kept (the missing ones filled in) and keys the schema does not
allow for a cell of that type are dropped. :func:`normalise` does the same to a notebook in memory
and says what it changed, so the read shows the truth and the next edit writes a valid file.
Nothing the schema allows is ever dropped.

>>> node = {"nbformat": 4, "nbformat_minor": 0, "metadata": {}, "cells": [
...     {"cell_type": "markdown", "id": "a1", "execution_count": None, "metadata": {}, "source": "# T"}]}
>>> normalise(node)
('nbformat 4.0 -> 4.5 (its cells have ids, which need 4.5)', 'execution_count dropped from 1 markdown cell')
>>> node["nbformat_minor"], node["cells"][0]
(5, {'cell_type': 'markdown', 'id': 'a1', 'metadata': {}, 'source': '# T'})
"""

from __future__ import annotations

from typing import Any

__all__ = ["ALLOWED_CELL_KEYS", "normalise"]

#: The keys nbformat 4.5's schema allows on each kind of cell.
ALLOWED_CELL_KEYS: dict[str, frozenset[str]] = {
    "code": frozenset({"id", "cell_type", "metadata", "execution_count", "source", "outputs"}),
    "markdown": frozenset({"id", "cell_type", "metadata", "attachments", "source"}),
    "raw": frozenset({"id", "cell_type", "metadata", "attachments", "source"}),
}


def normalise(node: Any) -> tuple[str, ...]:
    """Make an nbformat 4 notebook (a dict, changed in place) what Jupyter saves for it; returns
    one line per kind of change (empty: nothing changed)."""
    notes: list[str] = []
    cells = node.get("cells") if isinstance(node, dict) else None
    if not isinstance(cells, list) or node.get("nbformat") != 4:
        return ()
    minor = node.get("nbformat_minor")
    if isinstance(minor, int) and minor < 5 and any(isinstance(c, dict) and "id" in c for c in cells):
        node["nbformat_minor"] = 5
        notes.append(f"nbformat 4.{minor} -> 4.5 (its cells have ids, which need 4.5)")
    dropped: dict[tuple[str, str], int] = {}
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        allowed = ALLOWED_CELL_KEYS.get(str(cell.get("cell_type")))
        if allowed is None:
            continue
        for key in [k for k in cell if k not in allowed]:
            if key == "id" and node.get("nbformat_minor", 0) < 5:
                continue  # ids under 4.0-4.4 without the upgrade above: not reached
            del cell[key]
            dropped[(key, str(cell["cell_type"]))] = dropped.get((key, str(cell["cell_type"])), 0) + 1
    for (key, kind), n in dropped.items():
        shown = key if len(key) <= 40 else key[:39] + "…"  # a key is the file's text: bounded
        notes.append(f"{shown} dropped from {n} {kind} {'cell' if n == 1 else 'cells'}")
    return tuple(notes)
