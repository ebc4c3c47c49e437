"""How much of a notebook file a one-cell edit changes.

    .venv/bin/python bench/notebook_edit_diff.py

For each generated shape (``tests/notebooks/wild.py``: Colab's 2-space layout, Jupyter's, images,
a long cell...) one small cell is replaced through ``Notebook`` and the unified diff of the file
is counted (changed lines, ``+`` and ``-``), against writing the same edited notebook whole with
``nbformat.writes`` (what a write that ignores the file's layout produces). The edited cell's own
lines are given for scale.
"""

from __future__ import annotations

import difflib
import json
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from tests.notebooks.wild import fixtures  # noqa: E402
from ws_jupyter.notebooks.document import Notebook, cell_source  # noqa: E402
from ws_jupyter.notebooks.layout import scan  # noqa: E402


def changed(a: str, b: str) -> int:
    return sum(1 for ln in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0)
               if ln[:1] in "+-" and not ln.startswith(("+++", "---")))


def main() -> None:
    print(f"{'notebook':22} {'lines':>6} {'cell lines':>10} {'diff (kept layout)':>18} {'diff (whole rewrite)':>20}")
    for name, text in fixtures().items():
        cells = json.loads(text)["cells"]
        index = next((i for i, c in enumerate(cells) if c["cell_type"] == "code" and not c.get("outputs")
                      and len(cell_source(c)) < 200), 1)
        nb = Notebook.parse(text, name)
        nb.replace_cell(index, "edited = 1")
        kept = nb.dumps()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            whole = nbformat.writes(nbformat.from_dict(nb.node))
        layout = scan(text)
        assert layout is not None
        start, end = layout.cells[index]
        print(f"{name:22} {text.count(chr(10)):>6} {text[start:end].count(chr(10)) + 1:>10} "
              f"{changed(text, kept):>18} {changed(text, whole):>20}")


if __name__ == "__main__":
    main()
