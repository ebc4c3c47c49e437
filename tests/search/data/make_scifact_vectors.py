"""Writes ``scifact_vectors.npz``: the default model's fp32 vectors of every SciFact abstract and
test claim, for the partial-coverage test (computing them takes minutes; the test must not).

    .venv/bin/python tests/search/data/make_scifact_vectors.py --data ../shared/data/scifact

Each vector is what ``DefaultEmbedder(variant="fp32").embed([text])`` gives (the fp32 model's
vectors do not depend on the texts batched beside them), stored as int8 with one float32 scale per
vector (about 2 MB: the reconstructed vectors are within cosine 0.9999 of the originals). Documents
are "title text" as ``bench/search_quality.py`` indexes them; a digest of each text lets the test
check that its copy of SciFact is the one the vectors were made from.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

OUT = Path(__file__).resolve().parent / "scifact_vectors.npz"


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def load(data: Path) -> tuple[dict[str, str], dict[str, str]]:
    docs: dict[str, str] = {}
    with open(data / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            docs[str(d["_id"])] = (d.get("title", "") + " " + d.get("text", "")).strip()
    tested: set[str] = set()
    with open(data / "qrels.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            qid, _did, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                tested.add(qid)
    queries: dict[str, str] = {}
    with open(data / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            if str(q["_id"]) in tested:
                queries[str(q["_id"])] = q["text"]
    return docs, queries


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = np.abs(vectors).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    return np.round(vectors / scale[:, None]).astype(np.int8), scale.astype(np.float32)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "scifact"))
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    from ws_jupyter.search.embedder import DefaultEmbedder

    docs, queries = load(Path(args.data))
    model = DefaultEmbedder(variant="fp32")
    t0 = time.perf_counter()
    dv = model.embed(list(docs.values()))
    qv = model.embed(list(queries.values()))
    print(f"embedded {len(docs)} documents and {len(queries)} queries in {time.perf_counter() - t0:.0f}s")
    dq, ds = quantize(dv)
    qq, qs = quantize(qv)
    np.savez_compressed(
        args.out, model=np.array(model.name), doc_ids=np.array(list(docs)),
        doc_digests=np.array([digest(t) for t in docs.values()]), doc_vectors=dq, doc_scales=ds,
        query_ids=np.array(list(queries)), query_digests=np.array([digest(t) for t in queries.values()]),
        query_vectors=qq, query_scales=qs)
    print(f"wrote {args.out} ({Path(args.out).stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
