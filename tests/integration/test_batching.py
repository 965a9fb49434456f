"""Micro-batching: one delivery takes the jobs waiting on its queue, runs the model once for
all of them and hands each on separately, with per-job semantics unchanged."""

from __future__ import annotations

import time

from tests.conftest import isolated_queues, make_settings, new_scope, query, start_worker
from ibex_worker.store import jobs
from ibex_worker.celery_app import create_app
from ibex_worker.config import STAGES
from ibex_worker.db import tenant_tx
from ibex_worker.publish import publish
from ibex_worker.submit import wait_for_job


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
        content = f"Contact Jane Doe at jane{i}@example.com about ticket {1000 + i}."
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
        assert row.content == f"Contact [PERSON] at [EMAIL_ADDRESS] about ticket {1000 + i}."


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


def _stage_deliveries(worker):
    return {stage: worker.deliveries(stage) for stage in STAGES}


def _one_write(infra, engine, prefix, content, **extra):
    """One job through a worker on every (isolated) queue: its view and the worker's deliveries."""
    settings, overrides = _isolated(infra, prefix, stage_batch_wait_ms=0, **extra)
    org = new_scope()
    worker = start_worker(infra, f"{prefix}-worker", queues=",".join(settings.all_queues), **overrides)
    try:
        job_id = _park(engine, settings, org, "agent", content)
        assert publish(create_app(settings), settings, "validate", [job_id])
        view = wait_for_job(engine, org, job_id, timeout=60)
        deliveries = _stage_deliveries(worker)
    finally:
        worker.stop()
    assert view["status"] == "succeeded", view
    return job_id, view, deliveries


def test_a_worker_on_every_queue_carries_a_write_through_all_stages_in_one_delivery(infra, engine):
    job_id, view, deliveries = _one_write(infra, engine, "inline",
                                          "Reach Jane Doe at jane@example.com about the offsite.")
    assert [s for s in STAGES if s in view["timings_ms"]] == list(STAGES)  # every stage ran, each timed
    assert deliveries == {stage: int(stage == "validate") for stage in STAGES}
    [row] = query(engine, "SELECT raw_content, stage, lease_token FROM memory_write_jobs WHERE id = :j", j=job_id)
    assert (row.raw_content, row.stage, row.lease_token) == (None, "done", None)


def test_with_inline_off_every_stage_is_its_own_broker_delivery(infra, engine):
    _, _, deliveries = _one_write(infra, engine, "hops", "The quarterly review moved to the second week of May.",
                                  stage_inline=False)
    assert deliveries == {stage: 1 for stage in STAGES}


def test_a_stage_not_consumed_here_is_handed_on_through_the_broker(infra, engine):
    """Inline stops at a queue this worker does not take: the job is written back, its lease
    released, and published there (a separate embedding host, say)."""
    settings, overrides = _isolated(infra, "split")
    org = new_scope()
    mine = [settings.queue_for(stage) for stage in STAGES if stage != "embed"]
    assert settings.queue_embed not in mine
    worker = start_worker(infra, "no-embed", queues=",".join(mine), **overrides)
    try:
        job_id = _park(engine, settings, org, "agent", "Invoices are approved by the finance lead on Mondays.")
        assert publish(create_app(settings), settings, "validate", [job_id])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            [row] = query(engine, "SELECT stage, lease_token, published_queue, raw_content, context "
                                  "FROM memory_write_jobs WHERE id = :j", j=job_id)
            if row.stage == "embed":
                break
            time.sleep(0.1)
        time.sleep(0.5)
        deliveries = _stage_deliveries(worker)
    finally:
        worker.stop()
    assert row.stage == "embed" and row.lease_token is None and row.published_queue == settings.queue_embed
    assert row.raw_content is None and row.context["content_hash"]
    assert deliveries == {stage: int(stage == "validate") for stage in STAGES}


def test_a_short_batch_waits_once_for_jobs_that_arrive_within_the_wait_bound(infra, engine):
    settings, overrides = _isolated(infra, "linger", stage_batch_wait_ms=3000)
    org = new_scope()
    worker = start_worker(infra, "lingerer", queues=",".join(settings.all_queues), **overrides)
    try:
        first = _park(engine, settings, org, "agent", "The staging server listens on port 8080.")
        assert publish(create_app(settings), settings, "validate", [first])
        worker.wait_for_log("Task ibex.stage.validate[")
        time.sleep(1.0)
        # Parked without a message: only the waiting delivery's second look can take it.
        late = _park(engine, settings, org, "agent", "Weekly backups run every Sunday at 02:00.")
        views = [wait_for_job(engine, org, job_id, timeout=60) for job_id in (first, late)]
    finally:
        worker.stop()
    for view in views:
        assert view["status"] == "succeeded", view
        assert next(d for d in view["decisions"] if d["stage"] == "pii")["batch_size"] == 2
