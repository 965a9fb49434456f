"""Decision equivalence of the embedding backends: ONNX Runtime against eager PyTorch (fp32),
on the same weights, at the near-duplicate threshold.

    python -m ops.bench.embedding_equivalence [--threshold 0.92] [--corpus 640]

Two pair sets: the labelled pairs of ``ops.bench.pairs`` (typos, spelling variants,
paraphrases, changed numbers, negations, other subjects, unrelated facts), and every pair
of the benchmark corpus (``ops.bench.corpus``, ``--corpus`` items, paraphrases and repeats
included). For each pair: cosine similarity under each backend and the decision
``similarity > threshold``. The gate (issue 17): the decisions agree on at least 99.5 % of
pairs and every disagreement lies within 0.005 of the threshold. Also the speed of each
backend over the corpus (batches of ``IBEX_STAGE_BATCH_MAX``, one thread, as a pool
process runs it). Prints one JSON document; exits 1 when the gate fails.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import numpy as np

from ops.bench.corpus import generate as corpus
from ops.bench.pairs import generate as labelled_pairs

AGREEMENT_MIN, MARGIN = 0.995, 0.005


def _embedder(backend: str, threads: int) -> Any:
    from ibex_worker.config import Settings
    from ibex_worker.runtime import load_embedder

    return load_embedder(Settings(environment="test", embedding_backend=backend, embedding_threads=threads))


def _compare(sim_a: np.ndarray, sim_b: np.ndarray, threshold: float) -> dict[str, Any]:
    da, db = sim_a > threshold, sim_b > threshold
    disagree = np.flatnonzero(da != db)
    worst = float(max(abs(sim_a[i] - threshold) for i in disagree)) if len(disagree) else None
    return {"pairs": int(len(sim_a)), "agreement": float(1 - len(disagree) / len(sim_a)),
            "disagreements": int(len(disagree)), "furthest_disagreement_from_threshold": worst,
            "max_abs_similarity_difference": float(np.max(np.abs(sim_a - sim_b))),
            "near_duplicates": {"reference": int(da.sum()), "candidate": int(db.sum())}}


def _speed(embedder: Any, texts: list[str], batch: int, repeats: int) -> float:
    embedder.embed_many(texts[:batch])
    rates = []
    for _ in range(repeats):
        started = time.perf_counter()
        for i in range(0, len(texts), batch):
            embedder.embed_many(texts[i:i + batch])
        rates.append(len(texts) / (time.perf_counter() - started))
    return round(statistics.median(rates), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threshold", type=float, default=0.92)
    parser.add_argument("--corpus", type=int, default=640)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    pairs = labelled_pairs()
    texts = [it.content for it in corpus(args.corpus, args.seed)]
    reference, candidate = _embedder("torch", 1), _embedder("onnx", 1)
    result: dict[str, Any] = {"threshold": args.threshold, "reference": "torch (sentence-transformers, fp32)",
                              "candidate": "onnx (onnxruntime, fp32)"}

    sims = {}
    for name, embedder in (("torch", reference), ("onnx", candidate)):
        a = np.asarray(embedder.embed_many([p.a for p in pairs]))
        b = np.asarray(embedder.embed_many([p.b for p in pairs]))
        vectors = np.asarray(embedder.embed_many(texts))
        upper = np.triu_indices(len(texts), 1)
        sims[name] = {"labelled": np.sum(a * b, axis=1), "corpus": (vectors @ vectors.T)[upper]}
    result["labelled_pairs"] = _compare(sims["torch"]["labelled"], sims["onnx"]["labelled"], args.threshold)
    result["corpus_pairs"] = _compare(sims["torch"]["corpus"], sims["onnx"]["corpus"], args.threshold)
    kinds: dict[str, dict[str, Any]] = {}
    for pair, s_t, s_o in zip(pairs, sims["torch"]["labelled"], sims["onnx"]["labelled"]):
        k = kinds.setdefault(pair.kind, {"pairs": 0, "labelled_near": pair.near_duplicate, "torch_near": 0,
                                         "onnx_near": 0})
        k["pairs"] += 1
        k["torch_near"] += int(s_t > args.threshold)
        k["onnx_near"] += int(s_o > args.threshold)
    result["by_kind"] = kinds
    result["texts_per_s"] = {"torch": _speed(reference, texts, args.batch, args.repeats),
                             "onnx": _speed(candidate, texts, args.batch, args.repeats)}
    result["speedup"] = round(result["texts_per_s"]["onnx"] / result["texts_per_s"]["torch"], 2)
    gate = all(r["agreement"] >= AGREEMENT_MIN and (r["furthest_disagreement_from_threshold"] or 0) <= MARGIN
               for r in (result["labelled_pairs"], result["corpus_pairs"]))
    result["gate"] = {"agreement_min": AGREEMENT_MIN, "margin": MARGIN, "passed": gate}
    json.dump(result, sys.stdout, indent=2)
    print()
    sys.exit(0 if gate else 1)


if __name__ == "__main__":
    main()
