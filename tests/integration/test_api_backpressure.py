"""Back-pressure: once the pipeline holds IBEX_BACKLOG_LIMIT unfinished jobs, new writes
answer 429 with Retry-After and create nothing, while answers that add no work (replays,
in-progress keys, conflicts) are still given; when workers drain the backlog, writes are
accepted again. On a PostgreSQL of its own, so that the backlog is this test's alone."""

from __future__ import annotations

from tests.api_support import ApiServer, assert_envelope, new_key, wait_for_job
from tests.conftest import Infra, memory, new_scope, query, start_worker
from ibex_worker import apikeys
from ibex_worker.db import make_engine

LIMIT = 4


def test_writes_answer_429_at_the_backlog_limit_and_are_accepted_again_once_it_drains(servers_path):
    own = Infra(servers_path / "own")
    own.start()
    engine = make_engine(own.pg.url)
    server = worker = None
    try:
        org, agent = new_scope(), new_scope("agent")
        api_key, _ = apikeys.create(engine, org)
        server = ApiServer(own, "api-backpressure", backlog_limit=LIMIT, backlog_cache_seconds=0,
                           backpressure_retry_after_seconds=7)
        keys = [new_key() for _ in range(LIMIT)]
        with server.client(api_key) as client:
            accepted = [client.post("/v1/memories", json=memory(org, agent, f"Queued note {i}."),
                                    headers={"X-Idempotency-Key": keys[i]}) for i in range(LIMIT)]
            refused = client.post("/v1/memories", json=memory(org, agent, "One too many."))
            refused_batch = client.post("/v1/memories:batch", json={"items": [memory(org, agent, "Batch item.")]})
            in_progress = client.post("/v1/memories", json=memory(org, agent, "Queued note 0."),
                                      headers={"X-Idempotency-Key": keys[0]})
            conflict = client.post("/v1/memories", json=memory(org, agent, "Something else."),
                                   headers={"X-Idempotency-Key": keys[1]})
            assert [a.status_code for a in accepted] == [202] * LIMIT
            assert_envelope(refused, 429, "BACKPRESSURE")
            assert refused.headers["retry-after"] == "7"
            assert refused_batch.status_code == 207 and refused_batch.headers["retry-after"] == "7"
            assert refused_batch.json()["results"][0]["error"]["code"] == "BACKPRESSURE"
            first_job = accepted[0].json()["job_id"]
            assert assert_envelope(in_progress, 409, "IDEMPOTENCY_IN_PROGRESS")["job_id"] == first_job
            assert_envelope(conflict, 409, "IDEMPOTENCY_CONFLICT")
            assert len(query(engine, "SELECT id FROM memory_write_jobs WHERE org_id = :o", o=org)) == LIMIT

            worker = start_worker(own, "drain-worker", concurrency=1)
            for response in accepted:
                assert wait_for_job(client, response.json()["job_id"], timeout=180)["status"] == "succeeded"
            after = client.post("/v1/memories", json=memory(org, agent, "One too many."), headers={"Prefer": "wait=30"})
            assert after.status_code == 201, after.text
            replay = client.post("/v1/memories", json=memory(org, agent, "Queued note 0."),
                                 headers={"X-Idempotency-Key": keys[0]})
            assert replay.status_code == 201 and replay.headers["idempotent-replayed"] == "true"
    finally:
        if worker is not None:
            worker.stop()
        if server is not None:
            server.stop()
        engine.dispose()
        own.stop()


def test_an_org_at_its_own_limit_is_refused_alone(own_infra, own_engine):
    flooding, other = new_scope(), new_scope()
    key_flooding, _ = apikeys.create(own_engine, flooding)
    key_other, _ = apikeys.create(own_engine, other)
    server = ApiServer(own_infra, "api-org-backpressure", org_backlog_limit=LIMIT, backlog_cache_seconds=0)
    try:
        with server.client(key_flooding) as client:
            accepted = [client.post("/v1/memories", json=memory(flooding, "agent-f", f"Flood note {i}."))
                        for i in range(LIMIT)]
            refused = client.post("/v1/memories", json=memory(flooding, "agent-f", "One too many."))
            batch = client.post("/v1/memories:batch", json={"items": [memory(flooding, "agent-f", "And another.")]})
        with server.client(key_other) as client:
            welcome = client.post("/v1/memories", json=memory(other, "agent-o", "A note of another org."))
    finally:
        server.stop()
    assert [a.status_code for a in accepted] == [202] * LIMIT
    assert "this org" in assert_envelope(refused, 429, "BACKPRESSURE")["error"]["message"]
    assert batch.status_code == 207 and batch.json()["results"][0]["error"]["code"] == "BACKPRESSURE"
    assert welcome.status_code == 202
