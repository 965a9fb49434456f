"""Two orgs on one worker: org A floods the API for 30 s (a batch of 100 every half second,
about three times what the worker sustains here), org B writes twice a second meanwhile. A
meets its own limit (429 BACKPRESSURE for A alone) and loses nothing it was told was accepted;
B is never refused, and because waiting jobs are taken with the orgs taking turns and a
quarter of every batch is kept for them, B's writes do not wait behind A's backlog. On a
PostgreSQL and Redis of the test's own (loopback, bounded in time)."""

from __future__ import annotations

import math
import statistics
import threading
import time
import uuid
from typing import Any

from tests.api_support import ApiServer
from tests.conftest import memory, new_scope, query, start_worker, wait_until
from ibex_worker import apikeys

ORG_LIMIT = 600
BATCH_ITEMS, A_INTERVAL = 100, 0.5
FLOOD_SECONDS, B_INTERVAL = 30.0, 0.5
B_P99_BOUND_SECONDS = 6.0  # accepted to committed (the target is 2 s; margin for a loaded CI machine)


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
        stop = threading.Event()
        with server.client(key_a) as client_a, server.client(key_b) as client_b:
            def flood() -> None:
                batch = 0
                while not stop.wait(A_INTERVAL if batch >= 10 else 0):  # ten at once fill its share
                    items = [{**memory(a, "agent-a", f"Flood item {batch}-{n}: the build cache is warmed at {n}:00."),
                              "idempotency_key": f"flood-{uuid.uuid4().hex}"} for n in range(BATCH_ITEMS)]
                    answer = client_a.post("/v1/memories:batch", json={"items": items})
                    a_codes.extend(r.get("status") or r["error"]["code"] for r in answer.json()["results"])
                    batch += 1
            flooder = threading.Thread(target=flood)
            flooder.start()
            try:
                assert wait_until(lambda: "BACKPRESSURE" in a_codes, timeout=60)  # A holds its share ...
                ends = time.monotonic() + FLOOD_SECONDS
                n = 0
                while time.monotonic() < ends:  # ... and keeps it full while B writes
                    b_status.append(client_b.post("/v1/memories", json=memory(
                        b, "agent-b", f"Reminder {n}: the standup moves to room {n + 100}.")).status_code)
                    n += 1
                    time.sleep(B_INTERVAL)
            finally:
                stop.set()
                flooder.join(timeout=60)
        accepted_a = a_codes.count("queued")
        finished = wait_until(lambda: query(own_engine, "SELECT count(*) AS n FROM memory_write_jobs "
                                            "WHERE status IN ('queued', 'running')")[0].n == 0, timeout=300)
    finally:
        worker.stop()
        server.stop()

    assert finished
    assert b_status == [202] * len(b_status)
    assert set(a_codes) == {"queued", "BACKPRESSURE"} and ORG_LIMIT <= accepted_a < len(a_codes)
    outcomes = query(own_engine, "SELECT org_id, status, count(*) AS n FROM memory_write_jobs GROUP BY org_id, status")
    assert sorted((r.org_id, r.status, r.n) for r in outcomes) == sorted(
        [(a, "succeeded", accepted_a), (b, "succeeded", len(b_status))])
    stored = query(own_engine, "SELECT org_id, count(*) AS n FROM memories GROUP BY org_id")
    assert sorted((r.org_id, r.n) for r in stored) == sorted([(a, accepted_a), (b, len(b_status))])
    b_latencies, median_a = sorted(_latencies(own_engine, b)), statistics.median(_latencies(own_engine, a))
    p99_b = b_latencies[math.ceil(0.99 * len(b_latencies)) - 1]  # nearest rank
    print(f"A: {accepted_a} of {len(a_codes)} accepted, median {median_a:.1f} s; B: {len(b_latencies)} writes, "
          f"p50 {statistics.median(b_latencies):.2f} s, p99 {p99_b:.2f} s, slowest {b_latencies[-1]:.2f} s")
    assert p99_b < B_P99_BOUND_SECONDS and b_latencies[-1] < median_a  # B does not queue behind A
