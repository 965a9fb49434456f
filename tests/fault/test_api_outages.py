"""Outages under the API, on a PostgreSQL and Redis of the test's own (``conftest``): with
PostgreSQL down a write is refused with 503 and nothing is published; with Redis down a write
is still accepted and the sweeper publishes it once Redis is back."""

from __future__ import annotations

import time
from typing import Any

import pytest
import redis
from sqlalchemy import text

from tests.api_support import ApiServer, assert_envelope, new_key, wait_for_job
from tests.conftest import make_settings, memory, new_scope, query, start_sweeper, start_worker
from ibex_worker import apikeys
from ibex_worker.celery_app import create_app
from ibex_worker.errors import TransientError
from ibex_worker.submit import submit


def broker_messages(url: str) -> int:
    """Messages waiting in any queue of the broker (kombu keeps each queue as a Redis list)."""
    client = redis.Redis.from_url(url)
    try:
        return sum(client.llen(k) for k in client.scan_iter() if client.type(k) == b"list")
    finally:
        client.close()


def _stored_memory(engine: Any, org: str, agent: str) -> str:
    """A memory with a label, written in SQL (no worker runs on this test's servers)."""
    with engine.begin() as conn:
        memory_id = str(conn.execute(text(
            "INSERT INTO memories (org_id, agent_id, content, content_hash, source) "
            "VALUES (:o, :a, 'The archive moves to cold storage.', repeat('c', 64), 'chat') RETURNING id"),
            {"o": org, "a": agent}).scalar_one())
        conn.execute(text("INSERT INTO memory_labels (org_id, memory_id, label, confidence) VALUES (:o, :m, 'ops', 0.9)"),
                     {"o": org, "m": memory_id})
    return memory_id


def test_with_postgres_stopped_writes_answer_503_publish_nothing_and_succeed_after_a_restart(own_infra, own_engine):
    org, agent, key = new_scope(), new_scope("agent"), new_key()
    api_key, _ = apikeys.create(own_engine, org)
    keyed_body = memory(org, agent, "The data center moves in May.")
    plain_body = memory(org, agent, "The office plants are watered on Wednesdays.")
    stored = _stored_memory(own_engine, org, agent)
    server = ApiServer(own_infra, "api-pg-outage")
    try:
        own_infra.pg.stop()
        with server.client(api_key) as client:
            keyed = client.post("/v1/memories", json=keyed_body, headers={"X-Idempotency-Key": key})
            plain = client.post("/v1/memories", json=plain_body)
            ready = client.get("/readyz")
            deleting = client.delete(f"/v1/memories/{stored}")
            erasing = client.post("/v1/erasures", json={"org_id": org, "agent_id": agent})
        assert_envelope(keyed, 503, "IDEMPOTENCY_UNAVAILABLE")
        assert_envelope(plain, 503, "UNAVAILABLE")
        for refused in (deleting, erasing):
            assert_envelope(refused, 503, "UNAVAILABLE")
        assert all(r.headers["retry-after"] for r in (keyed, plain, deleting, erasing))
        assert ready.status_code == 503 and ready.json()["checks"]["postgres"] is False
        # Past authentication too: the producer entry point itself refuses and publishes nothing.
        settings = make_settings(own_infra)
        with pytest.raises(TransientError):
            submit(own_engine, create_app(settings), settings, keyed_body, key)
        assert broker_messages(own_infra.redis.url) == 0

        own_infra.pg.start()
        with server.client(api_key) as client:
            keyed_again = client.post("/v1/memories", json=keyed_body, headers={"X-Idempotency-Key": key})
            plain_again = client.post("/v1/memories", json=plain_body)
            keyed_once_more = client.post("/v1/memories", json=keyed_body, headers={"X-Idempotency-Key": key})
    finally:
        server.stop()
    assert keyed_again.status_code == 202 and plain_again.status_code == 202
    assert assert_envelope(keyed_once_more, 409, "IDEMPOTENCY_IN_PROGRESS")["job_id"] == keyed_again.json()["job_id"]
    assert [(r.status, r.labels) for r in query(
        own_engine, "SELECT m.status, (SELECT count(*) FROM memory_labels l WHERE l.memory_id = m.id) AS labels "
                    "FROM memories m WHERE m.id = :m", m=stored)] == [("active", 1)]  # nothing half-deleted
    assert query(own_engine, "SELECT count(*) AS n FROM memory_erasures WHERE org_id = :o", o=org)[0].n == 0
    jobs = query(own_engine, "SELECT id FROM memory_write_jobs WHERE org_id = :o ORDER BY created_at", o=org)
    assert [str(j.id) for j in jobs] == [keyed_again.json()["job_id"], plain_again.json()["job_id"]]
    # One wake-up for both: no worker took the first, so the second job shares it.
    assert broker_messages(own_infra.redis.url) == 1


def test_with_redis_stopped_writes_are_still_accepted_and_all_finish_once_redis_is_back(own_infra, own_engine):
    org, agent = new_scope(), new_scope("agent")
    api_key, _ = apikeys.create(own_engine, org)
    worker = start_worker(own_infra, "outage-worker", concurrency=1)
    sweeper = start_sweeper(own_infra, "outage-sweeper", republish_after_seconds=1)
    server = ApiServer(own_infra, "api-redis-outage")
    try:
        own_infra.redis.stop()
        accepted, slowest = [], 0.0
        with server.client(api_key) as client:
            for i in range(6):
                headers = {"X-Idempotency-Key": new_key()} if i % 2 else {}
                started = time.monotonic()
                response = client.post("/v1/memories", json=memory(org, agent, f"Outage note {i}: use the side door."),
                                       headers=headers)
                slowest = max(slowest, time.monotonic() - started)
                assert response.status_code == 202, response.text
                accepted.append(response.json()["job_id"])
        assert slowest < 3.0, f"a write waited {slowest:.2f}s on the missing broker"
        assert "publish_deferred" in server.log_text()

        own_infra.redis.start()
        with server.client(api_key) as client:
            views = [wait_for_job(client, job_id, timeout=180) for job_id in accepted]
    finally:
        server.stop()
        sweeper.stop()
        worker.stop()
    assert [v["status"] for v in views] == ["succeeded"] * 6
    stored = query(own_engine, "SELECT id FROM memories WHERE org_id = :o", o=org)
    assert sorted(str(m.id) for m in stored) == sorted(v["memory_id"] for v in views)
