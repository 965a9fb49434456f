"""Build the embedding buckets' centroids (``ibex_worker.adapters.centroids``) for the configured model.

    python -m ops.embedding.train_centroids --write       # train, report, write the file
    python -m ops.embedding.train_centroids               # train and report only

Training texts: every sentence of the PII corpus's ``dev`` split (agent memories, chat, forms,
tickets and logs of many languages) and 6,000 memories of the benchmark's generator under a
seed no benchmark uses. No pair of the near-duplicate evaluations (``ops.bench.pairs``,
``tests/data/dedup``) is read for training: they measure the buckets below. Spherical k-means
(unit centroids, cosine assignment), seeded, ``--iterations`` rounds; the centroids are written
as int8 rows with a scale each to ``worker/data/centroids/<model>.npz`` (about 1.5 MB for 4,096).

The report (on the centroids as shipped, after int8): for every pair of those evaluations whose similarity is above the near-duplicate
threshold, in both directions, how far down the query's centroids (nearest first) the
partner's bucket is, as the share found within 4, 8, 16, 32 and 64 probes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

THRESHOLD = 0.92
TRAINING_SEED = 99  # the benchmark's generator under a seed of its own
OUT_DIR = Path(__file__).resolve().parents[2] / "worker" / "data" / "centroids"


def training_texts() -> list[str]:
    from ops.bench.corpus import generate
    from ops.pii_eval.corpus import load_split

    texts = [example.text for example in load_split("dev")] + [item.content for item in generate(6000, TRAINING_SEED)]
    return sorted(set(texts))


def evaluation_pairs() -> dict[str, list[tuple[str, str]]]:
    from ops.bench.pairs import generate as bench_pairs
    from ops.dedup_eval.evaluate import dev_pairs, heldout_pairs

    return {"bench pairs": [(p.a, p.b) for p in bench_pairs(seed=11)],
            "dedup dev": [(p.a, p.b) for p in dev_pairs()],
            "dedup heldout": [(p.a, p.b) for p in heldout_pairs()]}


def spherical_kmeans(vectors: np.ndarray, k: int, iterations: int, seed: int) -> np.ndarray:
    """``k`` unit centroids: each round assigns every vector to its most similar centroid and
    moves each centroid to its members' normalised mean (an empty one to a random vector)."""
    rng = np.random.default_rng(seed)
    centroids = vectors[rng.choice(len(vectors), k, replace=False)].copy()
    for _ in range(iterations):
        nearest = (vectors @ centroids.T).argmax(axis=1)
        sums = np.zeros_like(centroids)
        np.add.at(sums, nearest, vectors)
        counts = np.bincount(nearest, minlength=k)
        empty = counts == 0
        sums[empty] = vectors[rng.choice(len(vectors), int(empty.sum()), replace=False)]
        centroids = sums / np.linalg.norm(sums, axis=1, keepdims=True)
    return centroids.astype(np.float32)


def probe_ranks(a: np.ndarray, b: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """For each pair above the threshold, in both directions: the rank of the partner's bucket
    among the query's centroids, nearest first (0: the query's own nearest)."""
    above = (a * b).sum(axis=1) > THRESHOLD
    ranks = []
    for query, partner in ((a[above], b[above]), (b[above], a[above])):
        filed = (partner @ centroids.T).argmax(axis=1)
        scores = query @ centroids.T
        ranks.append((scores > scores[np.arange(len(query)), filed][:, None]).sum(axis=1))
    return np.concatenate(ranks) if ranks else np.zeros(0, dtype=int)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--centroids", type=int, default=4096)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--write", action="store_true", help=f"write the centroids to {OUT_DIR}")
    args = parser.parse_args(argv)

    from ibex_worker.adapters.centroids import dequantize, quantize
    from ibex_worker.config import Settings
    from ibex_worker.runtime import load_embedder

    settings = Settings(environment="test", embedding_threads=2)
    embedder = load_embedder(settings)
    texts = training_texts()
    vectors = np.asarray(embedder.embed_many(texts), dtype=np.float32)
    centroids = dequantize(*quantize(spherical_kmeans(vectors, args.centroids, args.iterations, args.seed)))
    sizes = np.bincount((vectors @ centroids.T).argmax(axis=1), minlength=args.centroids)
    print(f"{len(texts)} training texts, {args.centroids} centroids; largest bucket {sizes.max()}, "
          f"empty {int((sizes == 0).sum())}")
    for name, pairs in evaluation_pairs().items():
        a = np.asarray(embedder.embed_many([p[0] for p in pairs]), dtype=np.float32)
        b = np.asarray(embedder.embed_many([p[1] for p in pairs]), dtype=np.float32)
        ranks = probe_ranks(a, b, centroids)
        shares = " ".join(f"{probes}: {float((ranks < probes).mean()):.4f}" for probes in (4, 8, 16, 32, 64))
        print(f"{name}: {len(ranks)} directed pairs above {THRESHOLD}; partner found within {shares}; "
              f"worst rank {int(ranks.max()) if len(ranks) else '-'}")
    if args.write:
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        target = OUT_DIR / f"{settings.embedding_model_name}.npz"
        q, scale = quantize(centroids)
        np.savez_compressed(target, q=q, scale=scale)
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
