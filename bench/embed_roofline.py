"""The default embedder against this machine's own limit: matrix-multiply throughput with
onnxruntime on the model's shapes (the roofline), the model's achieved GFLOP/s as a fraction of
it, and what the session settings change.

    .venv/bin/python bench/embed_roofline.py --data ../shared/data/scifact
    .venv/bin/python bench/embed_roofline.py --only peak,model      # skip the settings sweep

* ``peak``  — one ``MatMul`` per weight shape of all-MiniLM-L6-v2 (QKV 384x1152, attention output
  384x384, feed-forward 384x1536 and 1536x384) over a batch of 32 texts of 256 tokens
  (8,192 rows), fp32 and int8 (the int8 graph made by the same dynamic quantisation as the
  model's: per-channel int8 weights, activations quantised per batch), with the embedder's
  threads. The best GFLOP/s of each precision is its roofline here.
* ``model`` — the default embedder (both variants) on SciFact abstracts of at least 256 tokens
  (every text fills the model's window: no padding), texts/s and GFLOP/s (6.04 GFLOP per text:
  the matrix products of 6 layers, attention included), as a fraction of the roofline.
* ``sweep`` — texts/s of the settings that can move it: threads, batch size, graph optimisation
  level, spinning worker threads (the embedder's are not), the int8 graph with only its MatMuls
  quantised, and static quantisation (activation ranges calibrated on other abstracts).

Timings are the best of interleaved rounds (the machine is shared); the load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from ws_jupyter.search.embedder import MAX_TOKENS, DefaultEmbedder, quantize_model, resolve_model

HIDDEN, FF, LAYERS = 384, 1536, 6
SHAPES = {"qkv": (HIDDEN, 3 * HIDDEN), "attn-out": (HIDDEN, HIDDEN), "ff1": (HIDDEN, FF), "ff2": (FF, HIDDEN)}
FINAL: list[str] = []


def flops_per_text(tokens: int) -> float:
    """Multiply-adds x 2 of the encoder for one text: the four projections, and the two
    attention products (scores and weighted sum), over every layer."""
    linear = sum(k * n for k, n in SHAPES.values())
    return float(LAYERS * (2 * tokens * linear + 2 * 2 * tokens * tokens * HIDDEN))


def load_avg() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def best_of(fn: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def interleaved_best(embedders: dict[str, DefaultEmbedder], texts: list[str], rounds: int) -> dict[str, float]:
    """Each embedder's best time for ``texts`` over ``rounds`` interleaved rounds (after a warm-up)."""
    for e in embedders.values():
        e.embed(texts[:4])
    best = {k: float("inf") for k in embedders}
    for _ in range(rounds):
        for k, e in embedders.items():
            best[k] = min(best[k], best_of(lambda e=e: e.embed(texts), 1))
    return best


def session(path: Path, threads: int, level: str = "all", spin: bool = False):  # type: ignore[no-untyped-def]
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.graph_optimization_level = {
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[level]
    if not spin:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), sess_options=so, providers=["CPUExecutionProvider"])


def matmul_graph(k: int, n: int, out: Path) -> Path:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array((rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["m", k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", n])], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(out))
    return out


def bench_peak(threads: int, rounds: int, rows: int = 32 * MAX_TOKENS) -> dict[str, float]:
    print(f"\n## Matrix-multiply roofline: onnxruntime MatMul, {rows:,} rows, {threads} threads "
          f"(load {load_avg()})")
    print("| shape | fp32 GFLOP/s | int8 GFLOP/s |")
    print("|---|---|---|")
    peak = {"fp32": 0.0, "int8": 0.0}
    x = np.random.default_rng(1).standard_normal((rows, FF)).astype(np.float32)
    with tempfile.TemporaryDirectory(prefix="roofline-") as tmp:
        for name, (k, n) in SHAPES.items():
            fp = matmul_graph(k, n, Path(tmp) / f"{name}.onnx")
            q = quantize_model(fp, Path(tmp) / f"{name}-int8.onnx")
            feed = {"x": np.ascontiguousarray(x[:, :k])}
            sessions = {"fp32": session(fp, threads), "int8": session(q, threads)}
            for s in sessions.values():
                s.run(None, feed)
            best = {p: float("inf") for p in sessions}
            for _ in range(rounds):  # interleaved
                for p, s in sessions.items():
                    best[p] = min(best[p], best_of(lambda s=s, feed=feed: s.run(None, feed), 1))
            rate = {p: 2 * rows * k * n / t / 1e9 for p, t in best.items()}
            for p in peak:
                peak[p] = max(peak[p], rate[p])
            print(f"| {name} {k}x{n} | {rate['fp32']:.1f} | {rate['int8']:.1f} |", flush=True)
    FINAL.append(f"roofline ({threads} threads): fp32 MatMul {peak['fp32']:.1f} GFLOP/s, "
                 f"int8 (dynamic quantisation) {peak['int8']:.1f} GFLOP/s (load {load_avg()})")
    return peak


def long_texts(data: Path, n: int) -> list[str]:
    """SciFact abstracts that fill the model's window (>= 256 tokens)."""
    from tokenizers import Tokenizer

    _m, tok, _o = resolve_model(prepare=False)
    t = Tokenizer.from_file(str(tok))
    t.no_truncation()
    t.no_padding()
    out = []
    with open(data / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            text = (d.get("title", "") + " " + d.get("text", "")).strip()
            if len(t.encode(text).ids) >= MAX_TOKENS:
                out.append(text)
                if len(out) == n:
                    break
    return out


def bench_model(texts: list[str], threads: int, rounds: int, peak: dict[str, float] | None) -> None:
    print(f"\n## The default embedder on {len(texts)} texts of >= 256 tokens ({threads} threads, "
          f"load {load_avg()})")
    per_text = flops_per_text(MAX_TOKENS)
    embedders = {v: DefaultEmbedder(variant=v, threads=threads) for v in ("fp32", "int8")}
    best = interleaved_best(embedders, texts, rounds)
    print("| variant | texts/s | GFLOP/s | of its MatMul roofline | of the int8 roofline |")
    print("|---|---|---|---|---|")
    for v, t in best.items():
        rate = len(texts) / t
        gflops = rate * per_text / 1e9
        own = f"{gflops / peak[v]:.0%}" if peak else "-"
        int8 = f"{gflops / peak['int8']:.0%}" if peak else "-"
        print(f"| {v} | {rate:.1f} | {gflops:.1f} | {own} | {int8} |")
        FINAL.append(f"model {v}: {rate:.1f} texts/s of 256 tokens = {gflops:.1f} GFLOP/s"
                     + (f" = {gflops / peak[v]:.0%} of the {v} MatMul roofline" if peak else ""))


def bench_sweep(texts: list[str], threads: int, rounds: int, calibration: list[str]) -> None:
    print(f"\n## Settings sweep: texts/s on the same {len(texts)} texts (load {load_avg()})")
    fp32, tok, _o = resolve_model(prepare=False, variant="fp32")
    int8, _tok, _o = resolve_model(prepare=False, variant="int8")
    with tempfile.TemporaryDirectory(prefix="sweep-") as tmp:
        mm_only = Path(tmp) / "int8-matmul-only.onnx"
        _quantize_matmuls_only(fp32, mm_only)
        configs: dict[str, DefaultEmbedder] = {}
        for variant, path in (("fp32", fp32), ("int8", int8)):
            for th in sorted({1, threads}):
                configs[f"{variant} threads={th}"] = DefaultEmbedder(variant=variant, threads=th, model_path=path,
                                                                  tokenizer_path=tok)
            for bs in (8, 16, 64):
                configs[f"{variant} batch={bs}"] = DefaultEmbedder(variant=variant, batch_size=bs, threads=threads,
                                                                   model_path=path, tokenizer_path=tok)
            for level in ("basic", "extended"):
                e = DefaultEmbedder(variant=variant, threads=threads, model_path=path, tokenizer_path=tok)
                e._graph_level = level  # type: ignore[attr-defined]
                configs[f"{variant} opt={level}"] = e
            e = DefaultEmbedder(variant=variant, threads=threads, model_path=path, tokenizer_path=tok)
            e._spin = True  # type: ignore[attr-defined]
            configs[f"{variant} spinning threads"] = e
        configs["int8, MatMul only (Attention fp32)"] = DefaultEmbedder(variant="int8", threads=threads,
                                                                        model_path=mm_only, tokenizer_path=tok)
        static = Path(tmp) / "int8-static.onnx"
        _quantize_static(fp32, static, tok, calibration)
        configs["int8 static (QDQ, MatMul, calibrated)"] = DefaultEmbedder(variant="int8", threads=threads,
                                                                           model_path=static, tokenizer_path=tok)
        for e in configs.values():
            _load_with(e)
        best = interleaved_best(configs, texts, rounds)
        print("| setting | texts/s |")
        print("|---|---|")
        for k, t in best.items():
            print(f"| {k} | {len(texts) / t:.1f} |")


def _load_with(e: DefaultEmbedder) -> None:
    """Loads ``e`` with the sweep's session settings (graph level, spinning)."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    e._load()
    level = getattr(e, "_graph_level", "all")
    spin = getattr(e, "_spin", False)
    if level != "all" or spin:
        assert e._model_path is not None
        e._session = session(e._model_path, e.threads, level, spin)
    assert isinstance(e._tokenizer, Tokenizer) and isinstance(e._session, ort.InferenceSession)


def _quantize_static(src: Path, dst: Path, tokenizer: Path, texts: list[str]) -> None:
    """Static quantisation: activation ranges calibrated once on ``texts`` (QDQ format, int8
    weights per channel), so no range is computed at run time."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer))
    tok.enable_truncation(max_length=MAX_TOKENS)
    tok.no_padding()
    feeds = []
    for a in range(0, len(texts), 8):
        seqs = [e.ids for e in tok.encode_batch(texts[a:a + 8])]
        ids = np.zeros((len(seqs), max(map(len, seqs))), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, seq in enumerate(seqs):
            ids[row, :len(seq)], mask[row, :len(seq)] = seq, 1
        feeds.append({"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter(feeds)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.it, None)

    quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"],
                    extra_options={"ActivationSymmetric": True, "WeightSymmetric": True})


def _quantize_matmuls_only(src: Path, dst: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True,
                     op_types_to_quantize=["MatMul"], extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"))
    parser.add_argument("--only", default="peak,model,sweep")
    parser.add_argument("--texts", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=DefaultEmbedder().threads)
    args = parser.parse_args(argv)
    parts = {p.strip() for p in args.only.split(",")}
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    print(f"# embedding roofline ({os.cpu_count()} CPUs, load {load_avg()}); "
          f"{flops_per_text(MAX_TOKENS) / 1e9:.2f} GFLOP per 256-token text")
    peak = bench_peak(args.threads, args.rounds) if "peak" in parts else None
    texts = long_texts(Path(args.data), args.texts) if parts & {"model", "sweep"} else []
    if "model" in parts:
        bench_model(texts, args.threads, args.rounds, peak)
    if "sweep" in parts:
        calibration = long_texts(Path(args.data), 2 * args.texts)[args.texts:]  # not the timed texts
        bench_sweep(texts, args.threads, args.rounds, calibration)
    print()
    for line in FINAL:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
