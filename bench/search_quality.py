"""Search quality: nDCG@10 and Recall@100 per mode, through the workspace's public API.

    .venv/bin/python bench/search_quality.py --data ../shared/data/scifact
    .venv/bin/python bench/search_quality.py --data ../shared/data/scifact --collections scifact,pydoc
    .venv/bin/python bench/search_quality.py --variant fp32,int8     # both model variants
    .venv/bin/python bench/search_quality.py --coverage               # hybrid while vectors fill in

Collections
* ``scifact`` — BEIR SciFact test split (5,183 abstracts, 300 claims): one document per abstract
  (title + text), as QUALITY.md prescribes.
* ``pydoc`` — built offline from this Python's standard library, with no tuning: each public
  function/class/method whose docstring has a summary paragraph and a body becomes one document
  (its qualified name + the body, *without* the summary); the summary is the query and that
  document its only relevant answer. It checks that nothing is tuned to SciFact.

Each collection is indexed once per model variant (``--variant``: fp32, int8) into a fresh
Workspace (BM25 + the default all-MiniLM-L6-v2 embedder of that variant) with ``Workspace.index``; every query runs in ``bm25``, ``vector`` and both hybrid
fusions (``rrf``, ``linear``), and the default mode. nDCG@10 uses linear gains (as
pytrec_eval/BEIR); Recall@100 comes from a separate ``top_k=100`` query.

``--coverage`` measures hybrid search while the vectors are being computed: the embedder (the real
default model) is held back and let through batch by batch, so vectors exist for 0, 5, 10, 20, 30,
50, 70, 90 and 100% of the documents (in indexing order, as the background worker makes them); at
each step nDCG@10 of BM25, of hybrid as it ranks now (a document without a vector keeps its BM25
place) and of the plain fusion (documents without a vector fused with no vector score, as before).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import math
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.search.fusion import DEFAULT_FUSION

Collection = tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]]  # docs, queries, qrels


# ------------------------------------------------------------------ collections
def load_scifact(data: Path) -> Collection:
    docs: dict[str, str] = {}
    with open(data / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            docs[str(d["_id"])] = (d.get("title", "") + " " + d.get("text", "")).strip()
    queries: dict[str, str] = {}
    with open(data / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            queries[str(q["_id"])] = q["text"]
    qrels: dict[str, dict[str, int]] = {}
    with open(data / "qrels.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            qid, did, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, {})[did] = int(score)
    queries = {q: t for q, t in queries.items() if q in qrels}
    return docs, queries, qrels


_PYDOC_MODULES = (
    "abc argparse array ast asyncio base64 bisect bz2 calendar cmath codecs collections colorsys "
    "concurrent.futures configparser contextlib copy csv dataclasses datetime decimal difflib dis "
    "doctest email enum filecmp fileinput fnmatch fractions functools getpass gettext glob graphlib "
    "gzip hashlib heapq hmac html html.parser http.client http.server imaplib importlib inspect io "
    "ipaddress itertools json locale logging lzma mailbox mimetypes mmap multiprocessing netrc numbers "
    "operator optparse os pathlib pdb pickle pkgutil platform plistlib poplib pprint pstats queue "
    "random re sched secrets selectors shelve shlex shutil signal smtplib socket sqlite3 ssl "
    "statistics string struct subprocess sysconfig tarfile tempfile textwrap threading timeit "
    "tokenize traceback tracemalloc types typing unittest urllib.parse urllib.request uuid warnings "
    "wave weakref xml.dom.minidom xml.etree.ElementTree zipfile zlib"
).split()


def load_pydoc(max_queries: int = 400) -> Collection:
    """Known-item retrieval over standard-library docstrings (deterministic, offline)."""
    docs: dict[str, str] = {}
    queries: dict[str, str] = {}
    seen_bodies: set[str] = set()

    def add(qualname: str, obj: object) -> None:
        doc = inspect.getdoc(obj)
        if not doc:
            return
        paras = [p.strip() for p in doc.split("\n\n") if p.strip()]
        if len(paras) < 2:
            return
        summary, body = " ".join(paras[0].split()), "\n\n".join(paras[1:])
        if len(summary.split()) < 4 or len(body) < 40 or body in seen_bodies:
            return
        seen_bodies.add(body)
        docs[qualname] = f"{qualname}\n{body}"
        queries[qualname] = summary

    for modname in _PYDOC_MODULES:
        try:
            mod = importlib.import_module(modname)
        except Exception:
            continue
        for name, obj in sorted(vars(mod).items()):
            if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if inspect.isclass(obj):
                add(f"{modname}.{name}", obj)
                for mname, meth in sorted(vars(obj).items()):
                    if not mname.startswith("_") and callable(meth):
                        add(f"{modname}.{name}.{mname}", meth)
            elif callable(obj):
                add(f"{modname}.{name}", obj)
    ids = sorted(queries)
    step = max(1, len(ids) // max_queries)
    keep = ids[::step][:max_queries]
    return docs, {q: queries[q] for q in keep}, {q: {q: 1} for q in keep}


# ------------------------------------------------------------------ metrics
def ndcg_at(ranked: list[str], rel: dict[str, int], k: int = 10) -> float:
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], rel: dict[str, int], k: int = 100) -> float:
    return len(set(ranked[:k]) & set(rel)) / len(rel) if rel else 0.0


# ------------------------------------------------------------------ run
def evaluate(name: str, coll: Collection, modes: list[tuple[str, dict]],
             variant: str = "fp32") -> dict[str, tuple[float, float, float]]:
    docs, queries, qrels = coll
    out: dict[str, tuple[float, float, float]] = {}
    name = f"{name}/{variant}"
    with tempfile.TemporaryDirectory(prefix=f"wsq-{name.replace('/', '-')}-") as tmp:
        ws = Workspace(id=f"quality_{name.replace('/', '_')}", filesystem=LocalFilesystem(tmp),
                       embedder=f"default:{variant}", auto_index_paths=())
        ws.init()
        t0 = time.perf_counter()
        for doc_id, text in docs.items():
            ws.index(doc_id, text)
        ws._engine().flush()  # embed what is still pending so indexing time is complete
        t_index = time.perf_counter() - t0
        print(f"[{name}] indexed {len(docs)} documents in {t_index:.1f}s; {len(queries)} queries", flush=True)
        for label, kwargs in modes:
            t0 = time.perf_counter()
            nd, rc = [], []
            # Workspace.search takes no fusion argument: the fusion variants ask its engine directly.
            search: Callable = ws._engine().search if "fusion" in kwargs else ws.search
            for qid, text in queries.items():
                top10 = [r.id for r in search(text, top_k=10, **kwargs)]
                top100 = [r.id for r in search(text, top_k=100, **kwargs)]
                nd.append(ndcg_at(top10, qrels[qid]))
                rc.append(recall_at(top100, qrels[qid]))
            ms = (time.perf_counter() - t0) * 1000 / (2 * len(queries))
            out[label] = (sum(nd) / len(nd), sum(rc) / len(rc), ms)
            print(f"[{name}] {label:<14} nDCG@10 {out[label][0]:.4f}  Recall@100 {out[label][1]:.4f}  "
                  f"({ms:.1f} ms/query)", flush=True)
        ws.destroy()
    return out


class _Paused:
    """The real embedder, with documents held back until ``allow``-ed (queries pass)."""

    def __init__(self, model: object, docs: set[str]) -> None:
        self.model, self.docs = model, docs
        self.name = str(getattr(model, "name", "model"))
        self.allowed = self.served = 0
        self._cond = threading.Condition()

    def allow(self, n: int) -> None:
        with self._cond:
            self.allowed = n
            self._cond.notify_all()

    def embed(self, texts: list[str]):  # type: ignore[no-untyped-def]
        if not all(t in self.docs for t in texts):
            return self.model.embed(texts)  # type: ignore[attr-defined]
        with self._cond:
            while self.served + len(texts) > self.allowed:
                self._cond.wait(0.5)
            self.served += len(texts)
        return self.model.embed(texts)  # type: ignore[attr-defined]


COVERAGE_STEPS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0)


class StoredVectors:
    """SciFact's fp32 vectors as the tests ship them (``tests/search/data/scifact_vectors.npz``,
    made by the default model): an embedder that looks texts up, so a coverage curve takes seconds
    instead of the minutes the model needs for 5,183 abstracts."""

    name = "scifact-stored/all-MiniLM-L6-v2-fp32"
    PATH = Path(__file__).resolve().parents[1] / "tests" / "search" / "data" / "scifact_vectors.npz"

    def __init__(self, coll: Collection) -> None:
        import numpy as np

        z = np.load(self.PATH)
        docs, queries, _qrels = coll

        def unit(q: np.ndarray, scale: np.ndarray) -> np.ndarray:
            v = q.astype(np.float32) * scale[:, None]
            return v / np.linalg.norm(v, axis=1, keepdims=True)

        dv, qv = unit(z["doc_vectors"], z["doc_scales"]), unit(z["query_vectors"], z["query_scales"])
        self.vectors = {docs[str(i)]: dv[k] for k, i in enumerate(z["doc_ids"]) if str(i) in docs}
        self.vectors.update({queries[str(q)]: qv[k] for k, q in enumerate(z["query_ids"]) if str(q) in queries})
        if len(self.vectors) < len(docs) + len(queries):
            raise SystemExit("the stored vectors do not match this SciFact copy (tests/search/data/make_scifact_vectors.py)")

    def embed(self, texts: list[str]):  # type: ignore[no-untyped-def]
        import numpy as np

        return np.stack([self.vectors[t] for t in texts])


def coverage_curve(name: str, coll: Collection, variant: str,
                   model: object = None) -> list[tuple[float, float, float, float]]:
    """``(coverage, bm25, hybrid, plain fusion)`` nDCG@10 at each step of COVERAGE_STEPS, with the
    default model of ``variant`` (or ``model``, any embedder) making the vectors."""
    from ws_jupyter.search.embedder import DefaultEmbedder

    docs, queries, qrels = coll
    paused = _Paused(model or DefaultEmbedder(variant=variant), set(docs.values()))
    out: list[tuple[float, float, float, float]] = []
    with tempfile.TemporaryDirectory(prefix=f"wsc-{name}-") as tmp:
        ws = Workspace(id=f"coverage_{name}_{variant}", filesystem=LocalFilesystem(tmp), embedder=paused,
                       auto_index_paths=())
        ws.init()
        engine = ws._engine()
        with engine.batch():
            for doc_id, text in docs.items():
                engine.index(doc_id, text)

        def ndcg(search: Callable) -> float:
            return sum(ndcg_at([r.id for r in search(t)], qrels[q]) for q, t in queries.items()) / len(queries)

        bm25 = ndcg(lambda t: engine.search(t, top_k=10, mode="bm25"))
        t0 = time.perf_counter()
        for share in COVERAGE_STEPS:
            want = len(docs) if share == 1.0 else int(share * len(docs)) // 64 * 64
            paused.allow(want)
            while engine.status().embedded < want:
                time.sleep(0.1)
            hybrid = ndcg(lambda t: engine.search(t, top_k=10, mode="hybrid"))
            keep = engine._has_vector
            engine._has_vector = lambda *_a: None  # type: ignore[method-assign]  # the plain fusion
            try:
                plain = ndcg(lambda t: engine.search(t, top_k=10, mode="hybrid"))
            finally:
                engine._has_vector = keep  # type: ignore[method-assign]
            cov = engine.status().coverage
            out.append((cov, bm25, hybrid, plain))
            print(f"[{name}/{variant}] coverage {cov:5.1%}: bm25 {bm25:.4f}  hybrid {hybrid:.4f} ({hybrid - bm25:+.4f})  "
                  f"plain fusion {plain:.4f} ({plain - bm25:+.4f})   [{time.perf_counter() - t0:.0f}s]", flush=True)
        paused.allow(10**9)
        ws.destroy()
    return out


MODES: list[tuple[str, dict]] = [
    ("bm25", {"mode": "bm25"}),
    ("vector", {"mode": "vector"}),
    ("hybrid-rrf", {"mode": "hybrid", "fusion": "rrf"}),
    ("hybrid-linear", {"mode": "hybrid", "fusion": "linear"}),
    ("hybrid", {}),  # the default mode and fusion, as a user gets them
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"),
                        help="SciFact directory (corpus.jsonl, queries.jsonl, qrels.tsv)")
    parser.add_argument("--collections", default="scifact,pydoc", help="comma-separated: scifact,pydoc")
    parser.add_argument("--variant", default="fp32,int8", help="comma-separated model variants: fp32,int8")
    parser.add_argument("--coverage", action="store_true",
                        help="the hybrid quality while vectors fill in (default variant unless --variant is given)")
    args = parser.parse_args(argv)
    if args.coverage:
        return _coverage_main(args, parser)
    variants = [v.strip() for v in args.variant.split(",") if v.strip()]
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    results: dict[str, dict[str, tuple[float, float, float]]] = {}
    for name in [c.strip() for c in args.collections.split(",") if c.strip()]:
        if name == "scifact":
            coll = load_scifact(Path(args.data))
        elif name == "pydoc":
            coll = load_pydoc()
        else:
            parser.error(f"unknown collection {name!r}")
        for variant in variants:
            results[f"{name}/{variant}"] = evaluate(name, coll, MODES, variant)

    print()
    print(f"| collection/variant | mode | nDCG@10 | Recall@100 | ms/query |   (default fusion: {DEFAULT_FUSION})")
    print("|---|---|---|---|---|")
    for key, rows in results.items():
        for label, (nd, rc, ms) in rows.items():
            print(f"| {key} | {label} | {nd:.4f} | {rc:.4f} | {ms:.1f} |")
    print()
    for variant in variants:
        key = f"scifact/{variant}"
        if key in results:
            r = results[key]
            best_single = max(r["bm25"][0], r["vector"][0])
            print(f"[{variant}] bm25 nDCG@10: {r['bm25'][0]:.4f} (target >= 0.69)")
            print(f"[{variant}] vector nDCG@10: {r['vector'][0]:.4f} (target >= 0.64)")
            print(f"[{variant}] hybrid nDCG@10: {r['hybrid'][0]:.4f} (target >= 0.72 and > {best_single:.4f}, "
                  "the best single mode)")
    for key, r in results.items():
        if not key.startswith("scifact/"):
            best = max(r["bm25"][0], r["vector"][0])
            print(f"{key} hybrid nDCG@10: {r['hybrid'][0]:.4f} (best single mode {best:.4f})")
    for name in {k.split("/")[0] for k in results}:
        fp, i8 = results.get(f"{name}/fp32"), results.get(f"{name}/int8")
        if fp and i8:
            dv = i8["vector"][0] - fp["vector"][0]
            dh = i8["hybrid"][0] - fp["hybrid"][0]
            print(f"{name} int8 - fp32: vector nDCG@10 {dv:+.4f} (int8 may be the default if >= -0.01), "
                  f"hybrid {dh:+.4f} (>= -0.005)")
    return 0


def _coverage_main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ws_jupyter.search.embedder import default_variant

    variants = [v.strip() for v in args.variant.split(",") if v.strip()] if "--variant" in sys.argv else [default_variant()]
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    worst: list[str] = []
    table: list[str] = []
    for name in [c.strip() for c in args.collections.split(",") if c.strip()]:
        coll = load_scifact(Path(args.data)) if name == "scifact" else load_pydoc() if name == "pydoc" else None
        if coll is None:
            parser.error(f"unknown collection {name!r}")
        for variant in variants:
            curve = coverage_curve(name, coll, variant)
            for cov, bm, hy, plain in curve:
                table.append(f"| {name}/{variant} | {cov:.0%} | {bm:.4f} | {hy:.4f} ({hy - bm:+.4f}) | {plain:.4f} ({plain - bm:+.4f}) |")
            low = min(curve, key=lambda r: r[2] - r[1])
            worst.append(f"{name}/{variant}: hybrid - bm25 at its lowest {low[2] - low[1]:+.4f} (at {low[0]:.0%} coverage; "
                         f"target >= -0.005); plain fusion at its lowest "
                         f"{min(r[3] - r[1] for r in curve):+.4f}; full coverage hybrid {curve[-1][2]:.4f}")
    print()
    print("| collection/variant | vector coverage | bm25 nDCG@10 | hybrid | plain fusion (before) |")
    print("|---|---|---|---|---|")
    print("\n".join(table))
    print()
    print("\n".join(worst))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
