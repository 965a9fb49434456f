"""Regressions found in review: an idempotency retry never replaces an unfinished job (a
worker holds it, or it merely waits in the queue), only one known dead; and a delivery that runs out of retries fails only the jobs that used up their own
attempts at that stage."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from tests.conftest import make_settings, memory, new_scope, query
from ibex_worker.store import jobs
from ibex_worker.celery_app import create_app
from ibex_worker.db import tenant_tx
from ibex_worker.errors import IdempotencyInProgress, TransientError
from ibex_worker.pipeline.context import StageDeps
from ibex_worker.pipeline.settling import fail_exhausted
from ibex_worker.submit import submit


@pytest.fixture
def offline_producer(infra):
    """Publishing goes to queues nobody consumes: the jobs stay where the test puts them."""
    settings = make_settings(infra, queue_validate="nobody.validate")
    return settings, create_app(settings)


def _expire_claim(engine, org, key):
    with engine.begin() as conn:
        conn.execute(text("UPDATE memory_idempotency_keys SET lease_expires_at = now() - interval '1 second' "
                          "WHERE org_id = :o AND key = :k"), {"o": org, "k": key})


def test_an_expired_claim_whose_job_a_worker_holds_stays_in_progress(engine, offline_producer):
    settings, producer = offline_producer
    org, agent, key = new_scope(), new_scope("agent"), "retry-key-1"
    body = memory(org, agent, "The staging database is rebuilt every Sunday.")
    first = submit(engine, producer, settings, body, key).job_id
    with engine.begin() as conn:  # a worker holds the job
        conn.execute(text("UPDATE memory_write_jobs SET status = 'running', lease_token = gen_random_uuid(), "
                          "lease_expires_at = now() + interval '1 minute' WHERE id = :j"), {"j": first})
    _expire_claim(engine, org, key)
    with pytest.raises(IdempotencyInProgress) as caught:
        submit(engine, producer, settings, body, key)
    assert caught.value.job_id == first
    assert len(query(engine, "SELECT id FROM memory_write_jobs WHERE org_id = :o", o=org)) == 1


def test_a_keyed_retry_of_a_job_that_merely_waits_never_replaces_it(engine, offline_producer):
    settings, producer = offline_producer
    org, agent, key = new_scope(), new_scope("agent"), "retry-key-2"
    body = memory(org, agent, "The staging database is rebuilt every Saturday.")
    first = submit(engine, producer, settings, body, key).job_id
    _expire_claim(engine, org, key)  # a backlog longer than the claim's lease
    for _ in range(3):
        with pytest.raises(IdempotencyInProgress) as caught:
            submit(engine, producer, settings, body, key)
        assert caught.value.job_id == first and caught.value.retry_after == 5
    rows = query(engine, "SELECT id, status FROM memory_write_jobs WHERE org_id = :o", o=org)
    assert [(str(r.id), r.status) for r in rows] == [(first, "queued")]


def test_a_claim_whose_job_finished_without_answering_it_is_taken_over(engine, offline_producer):
    settings, producer = offline_producer
    org, agent, key = new_scope(), new_scope("agent"), "retry-key-3"
    body = memory(org, agent, "The staging database is rebuilt every Friday.")
    first = submit(engine, producer, settings, body, key).job_id
    with engine.begin() as conn:  # the job is known dead, its claim never answered
        conn.execute(text("UPDATE memory_write_jobs SET status = 'failed', raw_content = NULL, finished_at = now(), "
                          "error = '{\"code\": \"STAGE_CRASHED\"}'::jsonb WHERE id = :j"), {"j": first})
    _expire_claim(engine, org, key)
    second = submit(engine, producer, settings, body, key).job_id
    assert second != first
    claim = query(engine, "SELECT job_id FROM memory_idempotency_keys WHERE org_id = :o AND key = :k", o=org, k=key)
    assert [str(c.job_id) for c in claim] == [second]


def test_running_out_of_retries_fails_only_jobs_that_used_up_their_own_attempts(engine, settings):
    org, agent = new_scope(), new_scope("agent")
    with tenant_tx(engine, org) as conn:
        ids = [jobs.insert_job(conn, org, agent, f"Fact number {i} about the rota.", {"source": "chat"}, None)
               for i in range(3)]
    cap = settings.stage_max_retries + 1
    with engine.begin() as conn:
        conn.execute(text("UPDATE memory_write_jobs SET stage = 'pii', status = 'running', attempts = :a "
                          "WHERE id = :j"), [{"a": cap, "j": ids[0]}, {"a": 1, "j": ids[1]}])
        conn.execute(text("UPDATE memory_write_jobs SET stage = 'embed', status = 'running', attempts = :a "
                          "WHERE id = :j"), {"a": cap, "j": ids[2]})  # already moved on
    deps = StageDeps(settings=settings, engine=engine, vector_store=None)
    failed = fail_exhausted(ids, deps, TransientError("analyzer down", code="PII_ANALYSIS_FAILED"), "pii")
    assert failed == [ids[0]]
    rows = {str(r.id): r.status for r in query(engine, "SELECT id, status FROM memory_write_jobs WHERE org_id = :o",
                                               o=org)}
    assert rows == {ids[0]: "failed", ids[1]: "running", ids[2]: "running"}
