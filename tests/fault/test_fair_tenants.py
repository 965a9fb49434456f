"""Two orgs on one worker: org A floods the API, org B writes twice a second. A meets its own
limit (429 BACKPRESSURE for A alone) and loses nothing it was told was accepted; B is never
refused, and because waiting jobs are taken with the orgs taking turns, B's writes do not wait
behind A's backlog. On a PostgreSQL and Redis of the test's own (loopback, bounded: a few
hundred writes)."""

from __future__ import annotations

import statistics
import time
import uuid
from typing import Any

from tests.api_support import ApiServer
from tests.conftest import memory, new_scope, query, start_worker, wait_until
from ibex_worker import apikeys

ORG_LIMIT = 1000
FLOOD_BATCHES, BATCH_ITEMS = 10, 100
B_WRITES, B_INTERVAL = 16, 0.5
B_BOUND_SECONDS = 5.0  # accepted to committed, the slowest of B's writes (the 2 s p99, with margin)


def _latencies(engine: Any, org: str) -> list[float]:
    return [r.s for r in query(engine, "SELECT extract(epoch FROM finished_at - created_at) AS s FROM memory_write_jobs "
                                       "WHERE org_id = :o AND status = 'succeeded'", o=org)]


def test_one_orgs_flood_neither_refuses_nor_delays_another_orgs_writes(own_infra, own_engine):
    a, b = new_scope(), new_scope()
    key_a, _ = apikeys.create(own_engine, a)
    key_b, _ = apikeys.create(own_engine, b)
    server = ApiServer(own_infra, "api-fair", org_backlog_limit=ORG_LIMIT)
    worker = start_worker(own_infra, "fair-worker", concurrency=2)
    try:
        worker.wait_for_log('"event": "process_ready"', timeout=120, count=2)
        a_codes: list[str] = []
        b_status: list[int] = []
        with server.client(key_a) as client_a, server.client(key_b) as client_b:
            def flood(batch: int) -> None:
                items = [{**memory(a, "agent-a", f"Flood item {batch}-{n}: the build cache is warmed at {n}:00."),
                          "idempotency_key": f"flood-{uuid.uuid4().hex}"} for n in range(BATCH_ITEMS)]
                answer = client_a.post("/v1/memories:batch", json={"items": items})
                a_codes.extend(r.get("status") or r["error"]["code"] for r in answer.json()["results"])
            for batch in range(FLOOD_BATCHES):  # A fills its share of the pipeline ...
                flood(batch)
            for n in range(B_WRITES):  # ... and keeps it full while B writes
                flood(FLOOD_BATCHES + n)
                b_status.append(client_b.post("/v1/memories", json=memory(
                    b, "agent-b", f"Reminder {n}: the standup moves to room {n + 100}.")).status_code)
                time.sleep(B_INTERVAL)
        accepted_a = a_codes.count("queued")
        finished = wait_until(lambda: query(own_engine, "SELECT count(*) AS n FROM memory_write_jobs "
                                            "WHERE status IN ('queued', 'running')")[0].n == 0, timeout=300)
    finally:
        worker.stop()
        server.stop()

    assert finished
    assert b_status == [202] * B_WRITES
    assert set(a_codes) == {"queued", "BACKPRESSURE"} and ORG_LIMIT <= accepted_a < len(a_codes)
    outcomes = query(own_engine, "SELECT org_id, status, count(*) AS n FROM memory_write_jobs GROUP BY org_id, status")
    assert sorted((r.org_id, r.status, r.n) for r in outcomes) == sorted(
        [(a, "succeeded", accepted_a), (b, "succeeded", B_WRITES)])
    stored = query(own_engine, "SELECT org_id, count(*) AS n FROM memories GROUP BY org_id")
    assert sorted((r.org_id, r.n) for r in stored) == sorted([(a, accepted_a), (b, B_WRITES)])
    slowest_b, median_a = max(_latencies(own_engine, b)), statistics.median(_latencies(own_engine, a))
    print(f"A: {accepted_a} of {len(a_codes)} accepted, median {median_a:.1f} s; B: slowest {slowest_b:.2f} s, "
          f"p50 {statistics.median(_latencies(own_engine, b)):.2f} s")
    assert slowest_b < B_BOUND_SECONDS and slowest_b < median_a  # B does not queue behind A
