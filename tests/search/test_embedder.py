"""The default embedder (real all-MiniLM-L6-v2 on onnxruntime) and the user-embedder adapters.

The reference vectors come from a forward pass of the same BERT weights written here in plain
numpy, independently of the ONNX graph: torch and sentence-transformers are not installed on
this machine (the model package is installed with --no-deps precisely to avoid torch), so they
cannot serve as the reference.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

from ws_jupyter.errors import EmbedderError, WorkspaceConfigError
from ws_jupyter.search import embedder as emb_mod
from ws_jupyter.search.embedder import DefaultEmbedder, as_embedder, load_safetensors, packaged_model_dir

SENTENCES = [
    "A man is eating food.",
    "A man is riding a horse.",
    "The new movie is awesome",
    "Cells use ATP as their main energy currency, produced in mitochondria.",
    "x",
    "",
    "Le chat est assis sur le tapis.",
    "def search(query, top_k=10):\n    return engine.search(query, top_k)",
    "word " * 400,  # longer than 256 tokens: truncated like sentence-transformers does
]


def _numpy_reference(texts: list[str]) -> np.ndarray:
    import json

    from tokenizers import Tokenizer

    d = packaged_model_dir()
    cfg = json.loads((d / "config.json").read_text())
    w = load_safetensors(d / "model.safetensors")
    tok = Tokenizer.from_file(str(d / "tokenizer.json"))
    tok.enable_truncation(max_length=256)
    tok.no_padding()  # tokenizer.json pads to a fixed length; pooling here has no mask
    heads, hidden = cfg["num_attention_heads"], cfg["hidden_size"]
    hd = hidden // heads

    def ln(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + cfg["layer_norm_eps"]) * w[p + ".weight"] + w[p + ".bias"]

    def lin(x, p):
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    erf = np.vectorize(math.erf)
    out = []
    for text in texts:
        ids = np.array(tok.encode(text).ids)
        n = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = ln(x.astype(np.float64), "embeddings.LayerNorm")
        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}"
            q, k, v = (lin(x, f"{p}.attention.self.{n_}").reshape(n, heads, hd).transpose(1, 0, 2)
                       for n_ in ("query", "key", "value"))
            a = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(1, 0, 2).reshape(n, hidden)
            x = ln(lin(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            h = lin(x, f"{p}.intermediate.dense")
            h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
            x = ln(lin(h, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        v = x.mean(0)
        out.append(v / np.linalg.norm(v))
    return np.array(out)


@pytest.fixture(scope="module")
def default_embedder():
    if packaged_model_dir() is None and emb_mod.chroma_model_dir() is None:
        pytest.skip("no model files: run ./scripts/setup.sh")
    return DefaultEmbedder(batch_size=4, variant="fp32")  # the reference tests check fp32's exact vectors


def test_vectors_match_independent_reference(default_embedder):
    ours = default_embedder.embed(SENTENCES)
    assert ours.shape == (len(SENTENCES), 384) and ours.dtype == np.float32
    ref = _numpy_reference(SENTENCES)
    cos = (ours * ref).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(ref, axis=1)
    assert cos.min() >= 0.999, cos
    # batching and padding do not change a text's vector
    alone = np.vstack([default_embedder.embed([s]) for s in SENTENCES])
    np.testing.assert_allclose(alone, ours, atol=2e-5)
    # semantics sanity: paraphrase closer than unrelated
    a, b, c = default_embedder.embed(["How do I bake bread?", "Recipe for baking a loaf of bread",
                                      "The stock market fell sharply today."])
    assert a @ b > a @ c + 0.3


def test_same_vectors_as_chromas_stock_function(tmp_path, default_embedder, monkeypatch):
    # Chroma's own ONNX embedding function, pointed at a model directory laid out like its cache
    # (our built graph + the packaged tokenizer), must produce the same vectors: the default
    # embedder is a faster runner of the very model Chroma would use.
    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    # Chroma's cached model.onnx is a plain-operator export: give its function the plain graph
    # of the same weights (the default embedder itself runs the fused-attention graph).
    model, _tok, _ = emb_mod.resolve_model(fused=False)
    pkg = packaged_model_dir()
    onnx_dir = tmp_path / "all-MiniLM-L6-v2" / "onnx"
    onnx_dir.mkdir(parents=True)
    shutil.copy(model, onnx_dir / "model.onnx")
    for f in ("config.json", "special_tokens_map.json", "tokenizer_config.json", "tokenizer.json", "vocab.txt"):
        shutil.copy(pkg / f, onnx_dir / f)
    ef = ONNXMiniLM_L6_V2()
    ef.DOWNLOAD_PATH = tmp_path / "all-MiniLM-L6-v2"
    theirs = np.array(ef(SENTENCES[:8]))
    ours = default_embedder.embed(SENTENCES[:8])
    cos = (ours * theirs).sum(1)
    assert cos.min() >= 0.9999

    # ...and when that cache exists in the user's home, the default embedder uses it.
    home = tmp_path / "home"
    (home / ".cache" / "chroma" / "onnx_models").mkdir(parents=True)
    shutil.copytree(tmp_path / "all-MiniLM-L6-v2", home / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2")
    monkeypatch.setenv("HOME", str(home))
    e2 = DefaultEmbedder(variant="fp32")
    v = e2.embed(["A man is eating food."])
    assert e2.origin == "chroma-cache"
    np.testing.assert_allclose(v[0], ours[0], atol=2e-5)


def test_falls_back_to_the_plain_graph(tmp_path, monkeypatch):
    # An onnxruntime build without the fused Attention operator must still work.
    import onnxruntime as ort

    if packaged_model_dir() is None:
        pytest.skip("packaged weights not installed")
    monkeypatch.setenv("HOME", str(tmp_path))  # no Chroma cache
    real = ort.InferenceSession
    refused = []

    def session(path, *a, **kw):
        if str(path).endswith("/model.onnx"):
            refused.append(path)
            raise RuntimeError("Could not find an implementation for Attention(1) node")
        return real(path, *a, **kw)

    monkeypatch.setattr(ort, "InferenceSession", session)
    e = DefaultEmbedder(variant="fp32")
    v = e.embed(["A man is eating food."])
    assert refused and str(e._model_path).endswith("model-plain.onnx")
    ref = _numpy_reference(["A man is eating food."])
    assert float((v * ref).sum()) >= 0.999


def test_graph_is_built_once_into_the_cache_dir(tmp_path, monkeypatch):
    if packaged_model_dir() is None:
        pytest.skip("packaged weights not installed")
    monkeypatch.setenv("WS_JUPYTER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path))  # no Chroma cache here
    model, _, origin = emb_mod.resolve_model()
    assert origin == "packaged" and model.is_file() and str(model).startswith(str(tmp_path / "cache"))
    mtime = model.stat().st_mtime_ns
    model2, _, _ = emb_mod.resolve_model()
    assert model2 == model and model2.stat().st_mtime_ns == mtime

    # The int8 default needs its graph written next to it. Where that cannot be done (here: a
    # file stands where its directory goes; as root, permissions would not stop the write),
    # the default falls back to fp32 and still embeds; int8 asked for by name is a clear error.
    blocker = emb_mod._quantized_path(model).parent
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("not a directory")
    monkeypatch.delenv("WS_JUPYTER_EMBEDDER_VARIANT", raising=False)
    fallback = DefaultEmbedder()
    assert emb_mod.default_variant() == "fp32" and fallback.variant == "fp32"
    assert fallback.embed(["still searchable"]).shape == (1, 384)
    monkeypatch.setenv("WS_JUPYTER_EMBEDDER_VARIANT", "int8")
    with pytest.raises(EmbedderError, match="cannot write the ONNX model cache"):
        DefaultEmbedder().embed(["x"])
    blocker.unlink()
    monkeypatch.delenv("WS_JUPYTER_EMBEDDER_VARIANT")
    assert emb_mod.default_variant() == "int8"
    assert emb_mod._main(["--prepare"]) == 0


def test_missing_model_files_give_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(emb_mod, "packaged_model_dir", lambda: None)
    with pytest.raises(EmbedderError, match=r"run `ws-jupyter install-model`"):
        DefaultEmbedder().embed(["x"])


def test_user_embedders_are_adapted():
    single = as_embedder(lambda text: [float(len(text)), 1.0])
    assert single.embed(["ab", "abcd"]).tolist() == [[2.0, 1.0], [4.0, 1.0]]

    calls = []

    def batch(texts):
        calls.append(len(texts))
        return [[1.0, 0.0] for _ in texts]

    batch.batch = True
    assert as_embedder(batch).embed(["a", "b", "c"]).shape == (3, 2) and calls == [3]

    from chromadb.api.types import EmbeddingFunction

    class MyEF(EmbeddingFunction):
        def __init__(self):
            pass

        def __call__(self, input):
            return [np.array([0.5, 0.5], dtype=np.float32) for _ in input]

    assert as_embedder(MyEF()).embed(["a"]).shape == (1, 2)
    assert isinstance(as_embedder("default"), DefaultEmbedder)
    assert as_embedder(None) is None
    with pytest.raises(WorkspaceConfigError):
        as_embedder("bert-large")
    with pytest.raises(WorkspaceConfigError):
        as_embedder(42)
    with pytest.raises(EmbedderError, match="one vector per text"):
        as_embedder(lambda t: 1.0).embed(["a", "b"])
    with pytest.raises(EmbedderError, match="NaN"):
        as_embedder(lambda t: [float("nan")]).embed(["a"])

    def broken(t):
        raise RuntimeError("service down")

    with pytest.raises(EmbedderError, match="service down"):
        as_embedder(broken).embed(["a"])


def test_int8_variant_stays_close_to_fp32(default_embedder, scifact_dir):
    # the quantised graph is built here from the fp32 one (nothing downloaded). On real text
    # (SciFact abstracts and claims, sentences, code, French) its vectors stay within cosine
    # 0.985 of fp32's (measured: min 0.989, mean 0.993); degenerate inputs (one letter, one word
    # repeated 400 times) measured 0.974-0.979, so their floor is 0.95. The retrieval quality is
    # measured by bench/search_quality.py --variant int8.
    from .conftest import read_jsonl

    degenerate = ["x", "word " * 400]
    texts = [t for t in SENTENCES if t.strip() and t not in degenerate]
    texts += [(d["title"] + " " + d["text"]).strip() for d in read_jsonl(scifact_dir / "corpus.jsonl", 48)]
    texts += [q["text"] for q in read_jsonl(scifact_dir / "queries.jsonl", 48)]
    int8 = DefaultEmbedder(variant="int8", batch_size=16)
    cos = (default_embedder.embed(texts) * int8.embed(texts)).sum(1)
    assert cos.min() >= 0.985 and cos.mean() >= 0.99, (cos.min(), cos.mean())
    odd = (default_embedder.embed(degenerate) * int8.embed(degenerate)).sum(1)
    assert odd.min() >= 0.95, odd
    assert int8.name != default_embedder.name  # an index notices the switch and re-embeds
    # activations are quantised per batch: a text's vector depends a little on its batch
    # neighbours (measured on SciFact claims: min cosine 0.984 between alone and batched)
    alone = np.vstack([int8.embed([t]) for t in texts])
    drift = (alone * int8.embed(texts)).sum(1)
    assert drift.min() >= 0.975 and drift.mean() >= 0.99, (drift.min(), drift.mean())
    assert "int8" in str(int8._model_path) and int8.variant == "int8"
    assert as_embedder("default:int8") is as_embedder("default:int8")
    assert as_embedder("default:int8").variant == "int8"
    with pytest.raises(WorkspaceConfigError, match="variant"):
        DefaultEmbedder(variant="int4")


def test_prepare_builds_every_variant_once(tmp_path, monkeypatch):
    if packaged_model_dir() is None:
        pytest.skip("packaged weights not installed")
    monkeypatch.setenv("WS_JUPYTER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path))  # no Chroma cache here
    built = emb_mod.prepare()
    assert set(built) == {"fp32", "int8"} and all(p.is_file() for p in built.values())
    assert all(str(p).startswith(str(tmp_path / "cache")) for p in built.values())
    stamps = {v: p.stat().st_mtime_ns for v, p in built.items()}
    again = emb_mod.prepare("int8")
    assert again["int8"] == built["int8"] and again["int8"].stat().st_mtime_ns == stamps["int8"]
    monkeypatch.delenv("WS_JUPYTER_EMBEDDER_VARIANT", raising=False)
    assert DefaultEmbedder().variant == "int8"  # the default, chosen by bench/search_quality.py
    monkeypatch.setenv("WS_JUPYTER_EMBEDDER_VARIANT", "fp32")
    assert DefaultEmbedder().variant == "fp32" and emb_mod.shared_default_embedder().variant == "fp32"
    monkeypatch.setenv("WS_JUPYTER_EMBEDDER_VARIANT", "int3")
    with pytest.raises(WorkspaceConfigError, match="WS_JUPYTER_EMBEDDER_VARIANT"):
        DefaultEmbedder()


def test_windows_cover_every_token_and_the_first_is_the_truncated_vector(default_embedder, scifact_dir):
    from .conftest import read_jsonl

    long = [d["title"] + " " + d["text"] for d in read_jsonl(scifact_dir / "corpus.jsonl", limit=40)]
    long = [t for t in long if len(t) > 2200][:3]  # past 256 tokens
    texts = ["a short claim about cells", *long]
    vectors, owner = default_embedder.embed_windows(texts)
    counts = np.bincount(owner, minlength=len(texts))
    assert counts[0] == 1 and all(c >= 2 for c in counts[1:])
    tokens = [len(default_embedder._windowing.encode(t, add_special_tokens=False).ids) for t in texts]
    assert [int(c) for c in counts] == [max(1, -(-n // 254)) for n in tokens]  # every token, windows of 254
    first = np.array([np.flatnonzero(owner == k)[0] for k in range(len(texts))])
    truncated = default_embedder.embed(texts)
    assert (vectors[first] * truncated).sum(axis=1).min() > 0.9999  # what embed() gives
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert DefaultEmbedder(variant="fp32", windows=True).name.endswith("+windows")


def test_nothing_beyond_the_window_is_run_through_the_model(default_embedder, monkeypatch):
    widths: list[int] = []
    run = default_embedder._run

    def counting(seqs):  # type: ignore[no-untyped-def]
        widths.extend(len(s) for s in seqs)
        return run(seqs)

    monkeypatch.setattr(default_embedder, "_run", counting)
    long = "cells divide and grow " * 200  # ~800 tokens: a full 4,000-character chunk
    a, b, short = default_embedder.embed([long, long + " then a tail about bicycle repair", "cells divide"])
    assert max(widths) == 256 and min(widths) < 10  # the window at most; a short text its own tokens
    assert float(a @ b) > 0.99999  # what lies past the window does not reach the model
    assert float(a @ short) < 0.99
