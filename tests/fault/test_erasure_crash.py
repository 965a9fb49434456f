"""An agent of 2,000 memories (labels, near-duplicate links, escalations, quarantined and
superseded rows, finished jobs, ledger entries, cached copies) erased while its worker is
killed with SIGKILL mid-way: a new worker and the sweeper finish it, the counts are exact,
and no table or Redis key holds anything of the agent afterwards."""

from __future__ import annotations

import uuid

import redis
from sqlalchemy import text

from ibex_worker import erasures
from ibex_worker.adapters.cache import cache_key
from ibex_worker.celery_app import create_app
from ibex_worker.migrate import libpq_url
from ops.bench.erasure_bench import seed_agent
from tests.conftest import (isolated_queues, make_settings, new_scope, query, redis_text, start_sweeper,
                            start_worker, wait_until)

MEMORIES = 2000
FAST_RECOVERY = dict(task_soft_time_limit=4, task_time_limit=5, job_lease_seconds=6, erasure_lease_seconds=6,
                     broker_visibility_timeout=30, republish_after_seconds=1, erasure_batch_size=5)


def _seed(infra, org: str, agent: str, tag: str, n: int) -> list[str]:
    return seed_agent(libpq_url(infra.pg.url), infra.redis.url, org, agent, tag, n)


def _receipt(engine, erasure_id: str):
    return query(engine, "SELECT status, counts, attempts FROM memory_erasures WHERE id = :e", e=erasure_id)[0]


def _tables_holding(engine, needle: str) -> dict[str, int]:
    tables = [r.table_name for r in query(engine, "SELECT table_name FROM information_schema.tables "
                                                  "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'")]
    found = {t: query(engine, f'SELECT count(*) AS n FROM "{t}" r WHERE r::text LIKE :p', p=f"%{needle}%")[0].n
             for t in tables}
    return {t: n for t, n in found.items() if n}


def _cached(infra, org: str, ids: list[str]) -> int:
    client = redis.Redis.from_url(infra.redis.url)
    try:
        return sum(client.exists(cache_key(org, memory_id)) for memory_id in ids)
    finally:
        client.close()


def test_an_agent_erasure_killed_mid_way_resumes_and_leaves_nothing_of_the_agent(infra, engine):
    prefix = f"ibex.test.erasure-crash.{uuid.uuid4().hex[:8]}"
    overrides = {**isolated_queues(prefix), **FAST_RECOVERY}
    settings = make_settings(infra, **overrides)
    org, agent, neighbour = new_scope(), new_scope("agent"), new_scope("agent")
    tag = "zq" + uuid.uuid4().hex[:10]
    ids = _seed(infra, org, agent, tag, MEMORIES)
    spared = _seed(infra, org, neighbour, "zq" + uuid.uuid4().hex[:10], 20)
    assert len(ids) == MEMORIES

    worker = start_worker(infra, "erasure-crash-1", queues=settings.queue_erase, **overrides)
    blocker = engine.connect()
    try:
        erasure_id, _ = erasures.request(engine, create_app(settings), settings, org, agent_id=agent,
                                         memory_ids=None, requested_by="cli:test")
        mid_way = wait_until(lambda: _receipt(engine, erasure_id).counts.get("memories", 0) >= 100, 60)
        # Hold the agent's corpus lock between two batches, so the worker is killed mid-way however fast it is.
        tx = blocker.begin()
        blocker.execute(text("SELECT version FROM memory_agent_corpus WHERE org_id = :o AND agent_id = :a FOR UPDATE"),
                        {"o": org, "a": agent})
        waiting = wait_until(lambda: query(engine, "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                                   "AND query LIKE 'INSERT INTO memory_agent_corpus%'"), 30)
        worker.kill()
        tx.rollback()
    finally:
        blocker.close()
        worker.stop()
    assert mid_way and waiting, _receipt(engine, erasure_id)
    killed = _receipt(engine, erasure_id)
    assert killed.status == "running" and killed.counts["memories"] < MEMORIES, killed

    restarted = start_worker(infra, "erasure-crash-2", queues=settings.queue_erase, **overrides)
    sweeper = start_sweeper(infra, "erasure-crash-sweeper", **overrides)
    try:
        finished = wait_until(lambda: _receipt(engine, erasure_id).status in ("succeeded", "failed"), 90)
    finally:
        sweeper.stop()
        restarted.stop()
    receipt = _receipt(engine, erasure_id)
    assert finished and receipt.status == "succeeded", receipt
    assert receipt.attempts >= 2
    counts = receipt.counts
    assert {k: counts[k] for k in ("memories", "labels", "relationships", "escalations", "jobs",
                                   "idempotency_keys")} == {
        "memories": MEMORIES, "labels": MEMORIES, "relationships": MEMORIES - 1, "escalations": (MEMORIES - 1) // 10,
        "jobs": MEMORIES, "idempotency_keys": MEMORIES}
    assert 0 < counts["cache_keys"] <= MEMORIES

    assert _tables_holding(engine, tag) == {}
    assert _tables_holding(engine, agent) == {"memory_erasures": 1}  # the receipt names the agent, nothing else
    assert _cached(infra, org, ids) == 0
    assert tag not in redis_text(infra)  # keys, values and the append-only file
    assert query(engine, "SELECT count(*) AS n FROM memories WHERE org_id = :o AND agent_id = :a",
                 o=org, a=neighbour)[0].n == len(spared)
