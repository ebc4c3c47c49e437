"""Notebook read cost (QUALITY.md: "Notebook reads: <= 1.3x the tokens of the cell sources plus
output text"): what ``workspace_read_file`` returns for a notebook, against its raw JSON and
against the text it actually holds.

    .venv/bin/python bench/notebook_tokens.py [--execute]

For each notebook — the repository's ``notebooks/*.ipynb`` as committed (no outputs), generated
ones with images (``tests/notebooks/samples.py``: the five-cell analysis of the issue with a plot,
and one with every output kind) and, with ``--execute``, the repository's notebooks after a run on
the ws-jupyter kernel (nbclient, in a temp dir; real outputs) — it prints the o200k tokens of:

* ``json``: the file as it is (what a plain text read returned);
* ``content``: the cell sources plus the outputs' text (streams, ``text/plain`` results,
  tracebacks without ANSI codes — not HTML, not base64), each counted on its own;
* ``rendered``: the tool's text for the whole notebook (budget off), images attached as media
  parts (not counted: a model sees them as images, as with an image file read);

and the ratios ``rendered/content`` (target <= 1.3) and ``json/rendered``. Token counts use
``ws_jupyter.text.tokens`` (exact o200k_base with bpe-openai, else its approximation; the
first line says which).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.notebooks.samples import analysis_notebook, kitchen_sink, png_bytes, write  # noqa: E402
from tests.notebooks.wild import corpus, fixtures  # noqa: E402
from ws_jupyter.notebooks.document import Notebook, cell_source  # noqa: E402
from ws_jupyter.notebooks.outputs import data_uri_images, merged_streams, output_text  # noqa: E402
from ws_jupyter.notebooks.render import render_notebook  # noqa: E402
from ws_jupyter.text.tokens import count_tokens, tokenizer_name  # noqa: E402
from ws_jupyter.tools.config import DEFAULT_MEDIA_TYPES  # noqa: E402

TARGET = 1.3
P90_TARGET = 1.25


def measure(name: str, text: str) -> dict[str, Any]:
    nb = Notebook.parse(text, name)
    # an inline data-URI image is not text: its label is (as an output image's base64 is not counted)
    sources = sum(count_tokens(data_uri_images(cell_source(c))[0]) for c in nb.cells)
    outputs = sum(count_tokens(output_text(o)) for c in nb.cells for o in merged_streams(c.get("outputs") or []))
    r = render_notebook(nb, label=name, size=len(text.encode()), attach=DEFAULT_MEDIA_TYPES)
    return {
        "name": name,
        "cells": len(nb),
        "json": count_tokens(text),
        "sources": sources,
        "outputs": outputs,
        "rendered": count_tokens(r.text),
        "images": len(r.images),
    }


def executed_copies(tmp: str) -> list[tuple[str, str]]:
    """The repository's notebooks run on the ws-jupyter kernel (each in its own temp dir)."""
    import nbformat
    from nbclient import NotebookClient

    from ws_jupyter.install.kernel import install_kernel

    prefix = os.path.join(tmp, "prefix")
    install_kernel(prefix=prefix)
    os.environ["JUPYTER_PATH"] = os.path.join(prefix, "share", "jupyter")
    out = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        work = Path(tmp) / path.stem
        work.mkdir()
        shutil.copy(path, work / path.name)
        nb = nbformat.read(work / path.name, as_version=4)
        client = NotebookClient(nb, kernel_name="ws-jupyter", timeout=300,
                                resources={"metadata": {"path": str(work)}})
        client.execute()
        out.append((f"{path.name} (executed)", nbformat.writes(nb) + "\n"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--execute", action="store_true", help="also measure the repo's notebooks after a run")
    parser.add_argument("--corpus", type=int, default=40, help="generated corpus notebooks to add (tests/notebooks/wild.py)")
    args = parser.parse_args()
    print(f"tokenizer: {tokenizer_name()}")
    items = [(p.name, p.read_text("utf-8")) for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    plot = png_bytes(480, 320, noise=0.002)  # a plot-sized PNG: its base64 is most of the JSON
    items.append(("analysis.ipynb (generated, 1 plot)", write(analysis_notebook(plot))))
    items.append(("kitchen_sink.ipynb (generated)", write(kitchen_sink())))
    items += [(f"{name} (shared shape)", text) for name, text in fixtures().items()]
    with tempfile.TemporaryDirectory() as tmp:
        if args.execute:
            items += executed_copies(tmp)
        for path in corpus(Path(tmp) / "corpus", args.corpus):
            items.append((f"corpus/{path.name}", path.read_text("utf-8")))
        rows = [measure(n, t) for n, t in items]
    header = f"{'notebook':44} {'cells':>5} {'json':>7} {'sources':>7} {'outputs':>7} {'rendered':>8} {'img':>3} {'r/content':>9} {'json/r':>7}"
    print(header)
    print("-" * len(header))
    worst = 0.0
    for r in rows:
        content = r["sources"] + r["outputs"]
        ratio = r["rendered"] / content if content else 0.0
        worst = max(worst, ratio)
        print(f"{r['name']:44} {r['cells']:>5} {r['json']:>7} {r['sources']:>7} {r['outputs']:>7} "
              f"{r['rendered']:>8} {r['images']:>3} {ratio:>9.3f} {r['json'] / r['rendered']:>7.1f}")
    print()
    for r in rows:
        content = r["sources"] + r["outputs"]
        print(f"notebook read tokens / content, {r['name']}: {r['rendered'] / content:.3f} (target <= {TARGET})")
    print(f"worst notebook read / content: {worst:.3f} (target <= {TARGET})")
    for label, chosen in (
        ("every notebook above", rows),
        ("all but the shared-shape fixtures (each a few cells built for one defect)",
         [r for r in rows if "(shared shape)" not in r["name"]]),
    ):
        ratios = sorted(r["rendered"] / (r["sources"] + r["outputs"]) for r in chosen if r["sources"] + r["outputs"])
        p50 = ratios[len(ratios) // 2]
        p90 = ratios[min(len(ratios) - 1, int(len(ratios) * 0.9))]
        print(f"read / content, {label}: {len(ratios)} notebooks, p50 {p50:.3f}, p90 {p90:.3f}, "
              f"max {ratios[-1]:.3f} (target: p90 < {P90_TARGET})")


if __name__ == "__main__":
    main()
