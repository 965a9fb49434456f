"""Micro-batching: one delivery takes the jobs waiting on its queue, runs the model once for
all of them and hands each on separately, with per-job semantics unchanged."""

from __future__ import annotations

from tests.conftest import isolated_queues, make_settings, new_scope, query, start_worker
from worker import jobs
from worker.celery_app import create_app
from worker.db import tenant_tx
from worker.publish import publish
from worker.submit import wait_for_job


def _isolated(infra, prefix, **extra):
    queues = isolated_queues(prefix)
    return make_settings(infra, **queues, **extra), {**queues, **extra}


def _park(engine, settings, org, agent, content):
    """A job of record waiting on the validate queue, not yet published."""
    with tenant_tx(engine, org) as conn:
        return jobs.insert_job(conn, org, agent, content, {"source": "chat"}, None, queue=settings.queue_validate)


def test_waiting_jobs_of_several_tenants_form_one_batch_without_crossing(infra, engine):
    settings, overrides = _isolated(infra, "batch")
    orgs = [new_scope() for _ in range(3)]
    parked = []
    for i in range(12):
        org = orgs[i % 3]
        content = f"Contact Jane Doe at jane{i}@example.com about ticket {1000 + i} for {org}."
        parked.append((org, _park(engine, settings, org, "agent", content), i))
    worker = start_worker(infra, "batcher", queues=",".join(settings.all_queues), **overrides)
    try:
        assert publish(create_app(settings), settings, "validate", [parked[0][1]])  # one message for twelve jobs
        views = {job_id: wait_for_job(engine, org, job_id, timeout=90) for org, job_id, _ in parked}
    finally:
        worker.stop()

    for org, job_id, i in parked:
        view = views[job_id]
        assert view["status"] == "succeeded", view
        pii = next(d for d in view["decisions"] if d["stage"] == "pii")
        embed = next(d for d in view["decisions"] if d["stage"] == "embed")
        assert pii["batch_size"] == 12 and embed["batch_size"] == 12
        row = query(engine, "SELECT org_id, content FROM memories WHERE id = :m", m=view["memory_id"])[0]
        assert row.org_id == org
        assert row.content == f"Contact [PERSON] at [EMAIL_ADDRESS] about ticket {1000 + i} for {org}."


def test_with_batching_off_each_delivery_takes_only_its_own_job(infra, engine):
    settings, overrides = _isolated(infra, "nobatch", stage_batch_max=1)
    org = new_scope()
    parked = [_park(engine, settings, org, "agent", f"Weekly report number {i} is due on Friday.") for i in range(3)]
    worker = start_worker(infra, "nobatcher", queues=",".join(settings.all_queues), **overrides)
    try:
        app = create_app(settings)
        assert publish(app, settings, "validate", [parked[0]])
        first = wait_for_job(engine, org, parked[0], timeout=60)
        others = query(engine, "SELECT status, stage FROM memory_write_jobs WHERE id = ANY(CAST(:ids AS uuid[]))",
                       ids=parked[1:])
    finally:
        worker.stop()
    assert first["status"] == "succeeded"
    assert next(d for d in first["decisions"] if d["stage"] == "pii")["batch_size"] == 1
    assert [(r.status, r.stage) for r in others] == [("queued", "validate")] * 2
