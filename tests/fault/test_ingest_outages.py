"""PostgreSQL or Redis lost in the middle of an ingest run (PostgreSQL stopped in immediate mode,
Redis killed with SIGKILL, each restarted two seconds later), on servers of the test's own that
flush every commit as production does (Redis with its append-only file). Keyed writes keep
coming the whole time. Every key ends with exactly one job, that job succeeded, and one memory
per key is stored; a write answered 503 is sent again with its key afterwards, as a client
would, and never runs twice."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api_support import ApiServer
from tests.conftest import Infra, memory, new_scope, query, start_sweeper, start_worker, wait_until
from ibex_worker import apikeys
from ibex_worker.db import make_engine

WRITES = 60
RECOVERY = dict(republish_after_seconds=5)


def _post_all(server: ApiServer, api_key: str, org: str, keys: list[str], answers: dict[str, int]) -> None:
    """Post one keyed write per key, one after another, recording each status (0: no answer)."""
    with server.client(api_key, timeout=30.0) as client:
        for n, key in enumerate(keys):
            try:
                response = client.post("/v1/memories", headers={"X-Idempotency-Key": key}, json=memory(
                    org, "agent-outage", f"Outage note {n}: the gateway certificate is renewed on day {n}."))
                answers[key] = response.status_code
            except httpx.TransportError:
                answers[key] = 0
            time.sleep(0.05)


@pytest.fixture
def durable_infra(servers_path) -> Iterator[Infra]:
    """Servers of the test's own, PostgreSQL flushing every commit as in production."""
    stack = Infra(servers_path / "durable", durable=True)
    stack.start()
    yield stack
    stack.stop()


@pytest.fixture
def durable_engine(durable_infra) -> Iterator[Any]:
    engine = make_engine(durable_infra.pg.url)
    yield engine
    engine.dispose()


def _restart(infra: Infra, server: str) -> None:
    if server == "postgres":
        infra.pg.stop("immediate")
    else:
        infra.redis.kill()
    time.sleep(2.0)
    (infra.pg if server == "postgres" else infra.redis).start()


@pytest.mark.parametrize("outage", ["postgres", "redis"])
def test_every_keyed_write_ends_stored_once_across_a_server_restart_mid_ingest(durable_infra, durable_engine, outage):
    org = new_scope()
    api_key, _ = apikeys.create(durable_engine, org)
    keys = [f"outage-{uuid.uuid4().hex}" for _ in range(WRITES)]
    answers: dict[str, int] = {}
    server = ApiServer(durable_infra, "api-outage", **RECOVERY)
    worker = start_worker(durable_infra, "outage-worker", concurrency=2, **RECOVERY)
    sweeper = start_sweeper(durable_infra, "outage-sweeper", **RECOVERY)
    try:
        worker.wait_for_log('"event": "process_ready"', timeout=120, count=2)
        sender = threading.Thread(target=_post_all, args=(server, api_key, org, keys, answers))
        sender.start()
        assert wait_until(lambda: len(answers) >= WRITES // 3, timeout=60)
        _restart(durable_infra, outage)
        sender.join(timeout=180)
        assert not sender.is_alive()
        unanswered = [key for key in keys if answers[key] != 202]
        # A 503 says the write may have been recorded (a COMMIT lost with the server): count those.
        recorded_anyway = query(durable_engine, "SELECT count(*) AS n FROM memory_write_jobs WHERE org_id = :o "
                                            "AND idempotency_key = ANY(:k)", o=org, k=unanswered)[0].n
        retried = {}
        with server.client(api_key, timeout=30.0) as client:  # a client retries what was not accepted
            for key in unanswered:
                n = keys.index(key)
                retry = client.post("/v1/memories", headers={"X-Idempotency-Key": key}, json=memory(
                    org, "agent-outage", f"Outage note {n}: the gateway certificate is renewed on day {n}."))
                retried[key] = (answers[key], retry.status_code, retry.text[:300])
                assert retry.status_code in (201, 202, 409), retry.text
        done = wait_until(lambda: query(durable_engine, "SELECT count(*) AS n FROM memory_write_jobs "
                                        "WHERE org_id = :o AND status IN ('queued', 'running')", o=org)[0].n == 0
                          and query(durable_engine, "SELECT count(*) AS n FROM memory_write_jobs WHERE org_id = :o",
                                    o=org)[0].n >= WRITES, timeout=150, interval=0.5)
    finally:
        sweeper.stop()
        worker.stop()
        server.stop()

    states = query(durable_engine, "SELECT status, stage, attempts, lease_expires_at IS NOT NULL AS leased, count(*) AS n "
                               "FROM memory_write_jobs WHERE org_id = :o GROUP BY 1, 2, 3, 4", o=org)
    with_job = {r.idempotency_key for r in query(durable_engine, "SELECT idempotency_key FROM memory_write_jobs "
                                                             "WHERE org_id = :o", o=org)}
    missing = [(answers[k], retried.get(k)) for k in keys if k not in with_job]
    assert done, (missing, [tuple(s) for s in states])
    assert set(answers.values()) <= {0, 202, 503}, answers
    print(f"{outage} restarted: {sum(1 for s in answers.values() if s == 202)} of {WRITES} accepted at once, "
          f"{len(unanswered)} sent again, of which {recorded_anyway} had been recorded")
    jobs = query(durable_engine, "SELECT idempotency_key, status FROM memory_write_jobs WHERE org_id = :o", o=org)
    assert sorted(j.idempotency_key for j in jobs) == sorted(keys)  # one job per key
    assert {j.status for j in jobs} == {"succeeded"}
    stored = query(durable_engine, "SELECT count(*) AS n, count(DISTINCT content) AS distinct_n FROM memories "
                               "WHERE org_id = :o", o=org)[0]
    assert (stored.n, stored.distinct_n) == (WRITES, WRITES)
