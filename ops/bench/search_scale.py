"""Near-duplicate search at scale: the production ``VectorStore`` (the whole agent's sketches,
and its embedding buckets) against exact search and against the global HNSW index, at 10k /
100k / 1M memories spread over 1,000 agents, or all in one agent (``--agents 1``: a hot agent).

    python -m ops.bench.search_scale --sizes 10000,100000,1000000 --queries 400
    python -m ops.bench.search_scale --agents 1 --sizes 10000,100000,1000000 --skip-hnsw

Corpus vectors are MiniLM embeddings of a seeded pool of generated sentences, each stored
row a noisy copy of a pool vector (so the corpus has the clustered structure of real
embeddings without embedding a million texts). Queries are noisy copies of stored rows
(the near-duplicates the pipeline must find, cosine ~0.95) and fresh pool sentences.
Recall is measured at the strict threshold (similarity > 0.92) against an exact scan of
the same agent. Runs against its own embedded PostgreSQL in a temporary folder; bounded by
``--hnsw-build-budget`` for the index build. Writes JSON to ops/bench/results/.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from ibex_worker import migrate
from ibex_worker.adapters import centroids
from ibex_worker.adapters.vector_store import PgVectorStore
from ibex_worker.db import make_engine, tenant_tx
from ibex_worker.devstack.postgres import EmbeddedPostgres

AGENTS = 1000  # the default spread; --agents 1 puts every row in one agent
THRESHOLD = 0.92
ORG = "bench"
MODEL = "all-MiniLM-L6-v2"  # the embedding model every seeded row names (the search compares one model)
SUBJECTS = ["the staging server", "the user", "the billing service", "our team", "the deploy pipeline",
            "the mobile app", "the data warehouse", "the support queue", "the nightly backup", "the VPN"]
VERBS = ["uses", "prefers", "runs on", "depends on", "is moving to", "reports to", "needs", "avoids"]
OBJECTS = ["port 8080", "Python 3.11", "PostgreSQL 16", "a weekly cadence", "dark mode", "Kubernetes",
           "two-factor login", "the EU region", "Go for services", "tea over coffee", "Friday releases"]
TAILS = ["", " since March", " for data work", " in production", " on weekends", " after the migration"]


def sentence_pool(size: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    pool = set()
    while len(pool) < size:
        pool.add(f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
                 f"{rng.choice(TAILS)} (note {rng.integers(10000)}).")
    return sorted(pool)


def embed_pool(texts: list[str]) -> np.ndarray:
    from ibex_worker.adapters.embedder import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder("", "all-MiniLM-L6-v2", threads=2)
    return np.asarray(embedder.embed_many(texts), dtype=np.float32)


def noisy(base: np.ndarray, scale: float, rng: np.random.Generator) -> np.ndarray:
    v = base + rng.normal(scale=scale, size=base.shape).astype(np.float32)
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


def load(dsn: str, pool: np.ndarray, size: int, agents: int, rng: np.random.Generator) -> None:
    """``size`` rows over ``agents`` agents by COPY, each filed in its bucket here (the trigger
    that does it per row is off for the load: same answer, computed in one matrix product)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("TRUNCATE memories CASCADE")
        conn.execute("DROP INDEX IF EXISTS memories_embedding_hnsw")
        filed = centroids.shipped().get(MODEL)  # the ones the migrations loaded
        conn.execute("ALTER TABLE memories DISABLE TRIGGER memories_embedding_bucket")
        with conn.cursor().copy("COPY memories (org_id, agent_id, content, content_hash, source, embedding, "
                                "embedding_model, embedding_bucket) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["text", "text", "text", "text", "text", "vector", "text", "int2"])
            for first in range(0, size, 10_000):
                count = min(10_000, size - first)
                chunk = noisy(pool[rng.integers(len(pool), size=count)], 0.025, rng)  # cos ~0.8 between siblings
                buckets = (chunk @ filed.T).argmax(axis=1) if filed is not None else [None] * count
                for i, vector, bucket in zip(range(first, first + count), chunk, buckets):
                    content = f"row {i}"
                    copy.write_row((ORG, f"agent-{i % agents}", content, hashlib.sha256(content.encode()).hexdigest(),
                                    "bench", vector, MODEL, None if bucket is None else int(bucket)))
        conn.execute("ALTER TABLE memories ENABLE TRIGGER memories_embedding_bucket")
        conn.execute("INSERT INTO memory_agent_corpus (org_id, agent_id, version) "
                     "SELECT org_id, agent_id, count(*) FROM memories GROUP BY org_id, agent_id "
                     "ON CONFLICT (org_id, agent_id) DO UPDATE SET version = EXCLUDED.version")
        conn.execute("VACUUM ANALYZE memories")





def queries(dsn: str, pool: np.ndarray, count: int, agents: int,
            rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    out = []
    with psycopg.connect(dsn) as conn:
        register_vector(conn)
        total = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        for _ in range(count // 2):
            agent, vector = conn.execute("SELECT agent_id, embedding FROM memories OFFSET %s LIMIT 1",
                                         (int(rng.integers(total)),)).fetchone()
            out.append((agent, noisy(np.asarray(vector.to_list(), dtype=np.float32), 0.01, rng)))  # cos ~0.96
        for _ in range(count - count // 2):
            out.append((f"agent-{rng.integers(agents)}", pool[rng.integers(len(pool))]))
    return out


EXACT = ("WITH s AS MATERIALIZED (SELECT id, embedding FROM memories WHERE org_id = %s AND agent_id = %s "
         "AND status = 'active' AND deleted_at IS NULL) "
         "SELECT id, 1 - (embedding <=> %s) FROM s ORDER BY embedding <=> %s LIMIT 10")
HNSW = ("SELECT id, 1 - (embedding <=> %s) FROM memories WHERE org_id = %s AND agent_id = %s "
        "AND status = 'active' AND deleted_at IS NULL ORDER BY embedding <=> %s LIMIT 10")


def run_exact(dsn: str, qs: list[tuple[str, np.ndarray]]) -> tuple[list[float], list[set[str]]]:
    lat, hits = [], []
    with psycopg.connect(dsn) as conn:
        register_vector(conn)
        for agent, v in qs:
            started = time.perf_counter()
            rows = conn.execute(EXACT, (ORG, agent, v, v)).fetchall()
            lat.append((time.perf_counter() - started) * 1000)
            hits.append({str(r[0]) for r in rows if r[1] > THRESHOLD})
    return lat, hits


def run_store(url: str, qs: list[tuple[str, np.ndarray]], probes: int = 0) -> tuple[list[float], list[set[str]]]:
    """The production search as the tenant role: the whole agent, or (``probes``) its buckets."""
    engine, store, lat, hits = make_engine(url), PgVectorStore(probes=probes), [], []
    for agent, v in qs:
        vector = v.tolist()
        started = time.perf_counter()
        with tenant_tx(engine, ORG) as conn:
            found = store.search(conn, ORG, agent, vector, model=MODEL, min_similarity=THRESHOLD, limit=10,
                                 corpus=1 << 40)
        lat.append((time.perf_counter() - started) * 1000)
        hits.append({c.memory_id for c in found if c.similarity > THRESHOLD})
    engine.dispose()
    return lat, hits


def run_hnsw(dsn: str, qs: list[tuple[str, np.ndarray]]) -> tuple[list[float], list[set[str]]]:
    lat, hits = [], []
    with psycopg.connect(dsn) as conn:
        register_vector(conn)
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        conn.execute("SET hnsw.ef_search = 100")
        for agent, v in qs:
            started = time.perf_counter()
            rows = conn.execute(HNSW, (v, ORG, agent, v)).fetchall()
            lat.append((time.perf_counter() - started) * 1000)
            hits.append({str(r[0]) for r in rows if r[1] > THRESHOLD})
    return lat, hits


def build_hnsw(dsn: str, budget_s: float) -> float | None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '4GB'")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        conn.execute(f"SET statement_timeout = '{int(budget_s * 1000)}'")
        started = time.perf_counter()
        try:
            conn.execute("CREATE INDEX memories_embedding_hnsw ON memories USING hnsw (embedding vector_cosine_ops)")
        except psycopg.errors.QueryCanceled:
            return None
        conn.execute("ANALYZE memories")
        return time.perf_counter() - started


def summary(lat: list[float], hits: list[set[str]] | None = None, truth: list[set[str]] | None = None) -> dict[str, Any]:
    arr = np.asarray(lat)
    out: dict[str, Any] = {f"p{p}_ms": round(float(np.percentile(arr, p)), 3) for p in (50, 95, 99)}
    if hits is not None and truth is not None:
        expected = sum(len(t) for t in truth)
        found = sum(len(t & h) for t, h in zip(truth, hits))
        out.update(recall=round(found / expected, 4) if expected else None, near_duplicates_expected=expected)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--pool", type=int, default=3000)
    parser.add_argument("--hnsw-build-budget", type=float, default=1800.0, help="seconds per HNSW build")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--agents", type=int, default=AGENTS, help="agents the rows are spread over")
    parser.add_argument("--probes", default="8,16,32", help="bucket probes to measure (comma-separated)")
    parser.add_argument("--skip-hnsw", action="store_true", help="measure no HNSW index")
    parser.add_argument("--out", default="ops/bench/results/search_scale.json")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    pool = embed_pool(sentence_pool(args.pool, args.seed))
    root = Path(tempfile.mkdtemp(prefix="ibex-bench-search-"))
    pg = EmbeddedPostgres(root / "pgdata", fsync=False)
    results: dict[str, Any] = {"machine": {"cpus": __import__("os").cpu_count(), "cpu": _cpu_model(),
                                           "python": platform.python_version()},
                               "agents": args.agents, "threshold": THRESHOLD, "queries": args.queries, "sizes": {}}
    try:
        pg.start()
        migrate.up(pg.url)
        dsn = migrate.libpq_url(pg.url)
        with psycopg.connect(dsn) as conn:
            results["machine"]["postgres"] = conn.execute("SHOW server_version").fetchone()[0]
            results["machine"]["pgvector"] = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
        for size in [int(s) for s in args.sizes.split(",")]:
            results["sizes"][size] = _measure(pg, dsn, pool, size, args, rng)
            print(json.dumps({size: results["sizes"][size]}), flush=True)
    finally:
        pg.stop()
        shutil.rmtree(root, ignore_errors=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))


def _measure(pg: EmbeddedPostgres, dsn: str, pool: np.ndarray, size: int, args: argparse.Namespace,
             rng: np.random.Generator) -> dict[str, Any]:
    started = time.perf_counter()
    load(dsn, pool, size, args.agents, rng)
    entry: dict[str, Any] = {"load_s": round(time.perf_counter() - started, 1)}
    qs = queries(dsn, pool, args.queries, args.agents, rng)
    run_exact(dsn, qs[:20])  # warm the cache
    exact_lat, truth = run_exact(dsn, qs)
    store_lat, store_hits = run_store(pg.url, qs)
    entry["exact_scan"] = summary(exact_lat)
    entry["vector_store"] = summary(store_lat, store_hits, truth)
    for probes in [int(p) for p in args.probes.split(",") if p]:
        bucket_lat, bucket_hits = run_store(pg.url, qs, probes)
        entry[f"vector_store_buckets_{probes}"] = summary(bucket_lat, bucket_hits, truth)
    if args.skip_hnsw:
        return entry
    build = build_hnsw(dsn, args.hnsw_build_budget)
    entry["hnsw_build_s"] = round(build, 1) if build is not None else f"over budget ({args.hnsw_build_budget}s)"
    if build is not None:
        hnsw_lat, hnsw_hits = run_hnsw(dsn, qs)
        entry["hnsw_relaxed"] = summary(hnsw_lat, hnsw_hits, truth)
        store_lat, store_hits = run_store(pg.url, qs)
        entry["vector_store_with_hnsw_present"] = summary(store_lat, store_hits, truth)
    return entry


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()
