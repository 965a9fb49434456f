"""A worker killed with SIGKILL in the middle of a job: after a restart the job completes
and exactly one memory exists (at-least-once delivery, exactly-once effect)."""

from __future__ import annotations


from sqlalchemy import text

from tests.conftest import (isolated_queues, make_settings, memory, new_scope, query, start_sweeper, start_worker,
                            wait_until)
from ibex_worker.celery_app import create_app
from ibex_worker.submit import submit, wait_for_job

# Short leases so recovery happens within the test: time limit < lease < visibility timeout.
FAST_RECOVERY = dict(task_soft_time_limit=4, task_time_limit=5, job_lease_seconds=6,
                     broker_visibility_timeout=30, republish_after_seconds=1)


def _isolated(infra, prefix):
    """Settings whose stage queues no other test's worker consumes."""
    queues = isolated_queues(prefix)
    return make_settings(infra, **queues, **FAST_RECOVERY), {**queues, **FAST_RECOVERY}


def test_worker_killed_during_persist_recovers_and_stores_exactly_one_memory(infra, engine):
    settings, overrides = _isolated(infra, "crash")
    producer = create_app(settings)
    queues = ",".join(settings.all_queues)
    org, agent = new_scope(), new_scope("agent")
    worker = start_worker(infra, "crash-1", queues=queues, **overrides)
    blocker = engine.connect()
    try:
        # Hold the agent's corpus lock so the worker stops inside persist, lease held.
        tx = blocker.begin()
        blocker.execute(text("INSERT INTO memory_agent_corpus (org_id, agent_id) VALUES (:o, :a)"), {"o": org, "a": agent})
        job_id = submit(engine, producer, settings, memory(org, agent, "The deploy window is Tuesday 14:00 UTC.")).job_id
        # Persist runs inline after near_dedup: the job row stays at its last write (after embed).
        in_persist = wait_until(lambda: query(
            engine, "SELECT 1 FROM memory_write_jobs WHERE id = :j AND stage = 'near_dedup' "
                    "AND lease_token IS NOT NULL", j=job_id) and query(
            engine, "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND query LIKE 'INSERT INTO memory_agent_corpus%'"))
        assert in_persist, "the worker never reached persist"
        worker.kill()
        tx.commit()
    finally:
        blocker.close()
        worker.stop()

    assert query(engine, "SELECT count(*) AS n FROM memories WHERE org_id = :o", o=org)[0].n == 0
    restarted = start_worker(infra, "crash-2", queues=queues, **overrides)
    sweeper = start_sweeper(infra, "crash-sweeper", **{k: v for k, v in overrides.items() if k.startswith("queue_")},
                            republish_after_seconds=1)
    try:
        view = wait_for_job(engine, org, job_id, timeout=60)
    finally:
        sweeper.stop()
        restarted.stop()

    assert view["status"] == "succeeded", view
    assert view["outcome"] == "created"
    rows = query(engine, "SELECT id FROM memories WHERE org_id = :o", o=org)
    assert [str(r.id) for r in rows] == [view["memory_id"]]
    assert view["attempts"] >= 2  # the lost delivery and the one that finished


def test_a_job_whose_message_was_lost_is_republished_by_the_sweeper(infra, engine):
    settings, overrides = _isolated(infra, "lost")
    org, agent = new_scope(), new_scope("agent")
    # Insert the job of record without publishing it: exactly what a broker outage leaves.
    from ibex_worker.store import jobs
    from ibex_worker.db import tenant_tx

    with tenant_tx(engine, org) as conn:
        job_id = jobs.insert_job(conn, org, agent, "Invoices are sent on the first business day.",
                                 {"source": "chat"}, None)
    queues = ",".join(settings.all_queues)
    worker = start_worker(infra, "lost-worker", queues=queues, **overrides)
    sweeper = start_sweeper(infra, "lost-sweeper", **overrides)
    try:
        view = wait_for_job(engine, org, job_id, timeout=60)
    finally:
        sweeper.stop()
        worker.stop()
    assert view["status"] == "succeeded", view
    assert len(query(engine, "SELECT id FROM memories WHERE org_id = :o", o=org)) == 1
