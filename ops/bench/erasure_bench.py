"""Erasure benchmark: how fast an agent of 10,000 memories is erased, and what that does to
writes running at the same time. One run, one machine, the product's defaults (``ibex
worker`` on every queue, erase queue included; ``IBEX_ERASURE_BATCH_SIZE`` 500).

Steps, on one embedded stack (PostgreSQL with fsync, Redis, API, worker, sweeper):

1. warm-up writes (models loaded, caches warm);
2. **erasure alone**: an agent seeded with N memories (labels, near-duplicate links,
   escalations, finished jobs, ledger entries, cached copies) erased through
   ``POST /v1/erasures``; rate = N / (receipt finished_at - created_at);
3. **writes alone**: a burst of W writes to other agents sent at once; write throughput =
   W / (last commit - first accept);
4. **writes with an erasure**: the same burst (new agents), and one second in, the erasure of
   another agent of N memories; both rates again.

The ratios are writes-with-erasure / writes-alone and erasure-with-writes / erasure-alone.
``python -m ops.bench.erasure_bench`` prints the result and writes
``results/erasure_bench.json`` (generated output, out of git).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import redis

from ops.bench.corpus import generate
from ops.bench.ingest_load import cpu_model
from ops.bench.procmon import load_average
from ops.bench.service_bench import (AGENTS_PER_ORG, ORG_PREFIX, ORGS, RESULTS, Stack, open_loop, read_jobs,
                                     start_stack, stop_stack, wait_drained)

# An agent's memories and every kind of row an erasure removes, seeded in SQL (the erasure is
# what is measured, not the writes that would have made them).
SEED = [
    """INSERT INTO memories (org_id, agent_id, content, content_hash, source, metadata, subject_key, status)
       SELECT %(o)s, %(a)s, 'Note ' || %(tag)s || ' number ' || g, encode(sha256((%(tag)s || g)::bytea), 'hex'),
              'chat', jsonb_build_object('ref', %(tag)s), %(tag)s || ' subject',
              CASE WHEN g %% 7 = 0 THEN 'quarantined' WHEN g %% 11 = 0 THEN 'superseded' ELSE 'active' END
         FROM generate_series(1, %(n)s) g""",
    """INSERT INTO memory_labels (org_id, memory_id, label, confidence)
       SELECT org_id, id, 'ops', 0.8 FROM memories WHERE org_id = %(o)s AND agent_id = %(a)s""",
    """WITH m AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM memories
                  WHERE org_id = %(o)s AND agent_id = %(a)s)
       INSERT INTO memory_relationships (org_id, source_memory_id, target_memory_id, relationship_type, evidence,
                                         decided_by)
       SELECT %(o)s, b.id, a.id, 'near_duplicate_of', jsonb_build_object('similarity', 0.95), 'pipeline'
         FROM m a JOIN m b ON b.n = a.n + 1""",
    """WITH m AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM memories
                  WHERE org_id = %(o)s AND agent_id = %(a)s)
       INSERT INTO memory_conflict_escalations (org_id, agent_id, memory_id, candidate_id, reason, evidence)
       SELECT %(o)s, %(a)s, b.id, a.id, 'missing_valid_from', '{}'::jsonb
         FROM m a JOIN m b ON b.n = a.n + 1 WHERE a.n %% 10 = 0""",
    """INSERT INTO memory_conflict_decisions (org_id, escalation_id, outcome, decided_by, reason)
       SELECT org_id, id, 'needs_review', 'classifier:rules@1', 'undated' FROM memory_conflict_escalations
        WHERE org_id = %(o)s AND agent_id = %(a)s""",
    """INSERT INTO memory_write_jobs (org_id, agent_id, status, stage, request, memory_id, outcome, finished_at,
                                      idempotency_key, context)
       SELECT org_id, agent_id, 'succeeded', 'done', '{}'::jsonb, id, 'created', now(), %(tag)s || '-' || id,
              jsonb_build_object('subject_key', subject_key)
         FROM memories WHERE org_id = %(o)s AND agent_id = %(a)s""",
    """INSERT INTO memory_idempotency_keys (org_id, agent_id, key, fingerprint, job_id, state, response_status,
                                            response_body, lease_expires_at)
       SELECT org_id, agent_id, idempotency_key, repeat('a', 64), id, 'completed', 201,
              jsonb_build_object('memory_id', memory_id), now()
         FROM memory_write_jobs WHERE org_id = %(o)s AND agent_id = %(a)s""",
    """INSERT INTO memory_review_decisions (org_id, agent_id, memory_id, action, outcome, decided_by, note)
       SELECT org_id, agent_id, id, 'delete', 'deleted', 'cli:seed', 'about ' || %(tag)s
         FROM memories WHERE org_id = %(o)s AND agent_id = %(a)s AND status = 'quarantined'""",
]


def seed_agent(dsn: str, redis_url: str, org: str, agent: str, tag: str, n: int) -> list[str]:
    """Seed ``n`` memories of one agent with their labels, links, escalations (one per ten),
    decisions, finished jobs, ledger entries, review decisions and read-cache entries; their ids."""
    from ibex_worker.adapters.cache import cache_key

    with psycopg.connect(dsn) as conn:
        for statement in SEED:
            conn.execute(statement, {"o": org, "a": agent, "tag": tag, "n": n})
        ids = [str(r[0]) for r in conn.execute("SELECT id FROM memories WHERE org_id = %s AND agent_id = %s",
                                               (org, agent))]
    client = redis.Redis.from_url(redis_url)
    try:
        with client.pipeline() as pipe:
            for memory_id in ids:
                pipe.set(cache_key(org, memory_id), json.dumps({"memory_id": memory_id, "content": f"Note {tag}"}),
                         ex=3600)
            pipe.execute()
    finally:
        client.close()
    return ids


def log(msg: str) -> None:
    print(f"[erasure_bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def request_erasure(stack: Stack, org: str, agent: str) -> str:
    response = httpx.post(f"{stack.url}/v1/erasures", json={"org_id": org, "agent_id": agent},
                          headers={"Authorization": f"Bearer {stack.keys[org]}"}, timeout=30)
    response.raise_for_status()
    return str(response.json()["erasure_id"])


def wait_erasure(dsn: str, erasure_id: str, cap_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + cap_s
    while True:
        with psycopg.connect(dsn, autocommit=True) as conn:
            status, counts, created, finished, attempts = conn.execute(
                "SELECT status, counts, extract(epoch FROM created_at), extract(epoch FROM finished_at), attempts "
                "FROM memory_erasures WHERE id = %s", (erasure_id,)).fetchone()
        if status in ("succeeded", "failed") or time.monotonic() > deadline:
            seconds = float(finished) - float(created) if finished is not None else None
            memories = int((counts or {}).get("memories", 0))
            return {"status": status, "counts": counts, "attempts": attempts, "seconds": seconds,
                    "memories_per_s": round(memories / seconds, 1) if seconds else None,
                    "created": float(created), "finished": float(finished) if finished is not None else None}
        time.sleep(0.05)


def burst(stack: Stack, label: str, writes: int, seed: int, args: argparse.Namespace,
          erase: tuple[str, str] | None = None) -> dict[str, Any]:
    """``writes`` writes sent at once to fresh agents; with ``erase``, that agent's erasure is
    requested one second in. Write throughput over first accept -> last commit."""
    items = generate(writes, seed, orgs=ORGS, agents_per_org=AGENTS_PER_ORG, org_prefix=ORG_PREFIX,
                     agent_prefix=f"{label}-agent")
    erasure_id: list[str] = []

    async def run() -> dict[str, Any]:
        async def later() -> None:
            await asyncio.sleep(1.0)
            erasure_id.append(await asyncio.to_thread(request_erasure, stack, *erase))  # type: ignore[misc]

        task = asyncio.create_task(later()) if erase else None
        out = await open_loop(stack.url, stack.keys, items, args.burst_rate, f"{label}-{seed}", 60.0)
        if task:
            await task
        return out

    client = asyncio.run(run())
    drain_s, left = wait_drained(stack.dsn, f"{label}-", args.drain_cap, 45.0)
    jobs = read_jobs(stack.dsn, f"{label}-")
    done = [j for j in jobs if j["finished"] is not None]
    span = max(j["finished"] for j in done) - min(j["created"] for j in jobs) if done else None
    latency = sorted((j["finished"] - j["created"]) * 1000.0 for j in done)
    result: dict[str, Any] = {
        "writes": writes, "statuses": client["statuses"], "unfinished": left, "drain_s": drain_s,
        "succeeded": sum(1 for j in jobs if j["status"] == "succeeded"),
        "writes_per_s": round(len(done) / span, 1) if span else None,
        "latency_ms": {"p50": round(latency[len(latency) // 2], 1),
                       "p99": round(latency[min(len(latency) - 1, int(len(latency) * 0.99))], 1)} if latency else None,
    }
    if erase:
        result["erasure"] = wait_erasure(stack.dsn, erasure_id[0], args.erasure_cap)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000, help="memories of the erased agent")
    parser.add_argument("--writes", type=int, default=600, help="writes in a burst")
    parser.add_argument("--burst-rate", type=float, default=300.0, help="send rate of a burst, writes/s")
    parser.add_argument("--drain-cap", type=float, default=240.0)
    parser.add_argument("--erasure-cap", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", type=Path, default=RESULTS / "erasure_bench.json")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="ibex-erasure-bench-"))
    stack = Stack(folder=folder, batch_max=32)
    result: dict[str, Any] = {
        "benchmark": "erasure_bench", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "kernel": platform.release()},
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "load_average": {"start": load_average()},
    }
    org = f"{ORG_PREFIX}-0"
    try:
        start_stack(stack, None)
        log("stack up; warming up")
        burst(stack, "warm", 48, args.seed, args)

        seed_agent(stack.dsn, stack.redis.url, org, "erase-solo", "solo", args.memories)
        log(f"seeded {args.memories} memories; erasing them alone")
        result["erasure_alone"] = wait_erasure(stack.dsn, request_erasure(stack, org, "erase-solo"),
                                               args.erasure_cap)
        log(f"erasure alone: {result['erasure_alone']['memories_per_s']} memories/s")

        result["writes_alone"] = burst(stack, "alone", args.writes, args.seed + 1, args)
        log(f"writes alone: {result['writes_alone']['writes_per_s']} writes/s")

        seed_agent(stack.dsn, stack.redis.url, org, "erase-busy", "busy", args.memories)
        result["writes_with_erasure"] = burst(stack, "busy", args.writes, args.seed + 2, args,
                                              erase=(org, "erase-busy"))
        log(f"writes with an erasure: {result['writes_with_erasure']['writes_per_s']} writes/s, erasure "
            f"{result['writes_with_erasure']['erasure']['memories_per_s']} memories/s")
    finally:
        stop_stack(stack)
    result["load_average"]["end"] = load_average()
    alone, busy = result["writes_alone"], result["writes_with_erasure"]
    result["ratios"] = {
        "writes_with_erasure_over_alone": round(busy["writes_per_s"] / alone["writes_per_s"], 2),
        "erasure_with_writes_over_alone": round(busy["erasure"]["memories_per_s"]
                                                / result["erasure_alone"]["memories_per_s"], 2),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("machine", "erasure_alone", "writes_alone", "writes_with_erasure",
                                             "ratios")}, indent=1))


if __name__ == "__main__":
    main()
