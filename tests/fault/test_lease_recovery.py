"""Short leases renewed while their process lives: a slow delivery keeps its jobs, a dead one
lets them go within one lease, and the sweeper publishes them at its next look. Measured with
real processes: after a pool process, or a whole worker, is killed holding a job, another
worker runs the job again within 15 s. On a PostgreSQL and Redis of the test's own: the
sweep looks at every org's jobs."""

from __future__ import annotations

import base64
import json
import os
import signal
import time
from typing import Any

import psutil
import pytest
import redis
from sqlalchemy import text

from tests.conftest import make_settings, memory, new_scope, query, start_sweeper, start_worker, wait_until
from ibex_worker.celery_app import create_app
from ibex_worker.db import maint_tx, tenant_tx
from ibex_worker.adapters.vector_store import PgVectorStore
from ibex_worker.pipeline.context import StageDeps
from ibex_worker.pipeline.leases import LeaseKeeper
from ibex_worker.pipeline.runner import run_stage
from ibex_worker.store import jobs
from ibex_worker.sweeper import sweep_once
from ibex_worker.submit import submit, wait_for_job

RECOVERY_TARGET = 15.0  # seconds from a kill to the job claimed again


def _job(engine: Any, org: str, queue: str | None = None) -> str:
    with tenant_tx(engine, org) as conn:
        return jobs.insert_job(conn, org, "agent-lease", "The lease test note.", {"source": "chat"}, None, queue)


def _die(engine: Any, job_ids: list[str]) -> None:
    """What a delivery killed holding these jobs leaves: leases nobody renews, run out."""
    with maint_tx(engine) as conn:
        conn.execute(text("UPDATE memory_write_jobs SET lease_expires_at = now() - interval '1 millisecond', "
                          "published_at = LEAST(published_at, now() - interval '1 second') "  # published before
                          "WHERE id = ANY(CAST(:ids AS uuid[]))"), {"ids": job_ids})


def _claim(engine: Any, job_id: str, lease_seconds: int) -> list[Any]:
    with maint_tx(engine) as conn:
        return jobs.claim(conn, [job_id], "validate", lease_seconds)


def _lease_left(engine: Any, job_id: str) -> float:
    return query(engine, "SELECT extract(epoch FROM lease_expires_at - now()) AS s FROM memory_write_jobs "
                         "WHERE id = :j", j=job_id)[0].s


def test_a_delivery_keeps_its_jobs_past_its_lease_while_its_process_lives_and_loses_them_after(own_engine):
    org = new_scope()
    job_id = _job(own_engine, org)
    [row] = _claim(own_engine, job_id, 2)
    keeper = LeaseKeeper(own_engine, 2)
    try:
        with keeper.holding([row]):
            time.sleep(5.0)  # two and a half leases
            assert _lease_left(own_engine, job_id) > 0
            assert _claim(own_engine, job_id, 2) == []  # nobody else can take it
            with own_engine.begin() as writing:  # its own delivery writing the row: skipped, not waited on
                writing.execute(text("SELECT 1 FROM memory_write_jobs WHERE id = :j FOR UPDATE"), {"j": job_id})
                assert keeper.renew_now() == 0
            assert keeper.renew_now() == 1
    finally:
        keeper.stop()
    assert wait_until(lambda: _lease_left(own_engine, job_id) < 0, timeout=5)
    [again] = _claim(own_engine, job_id, 2)
    assert again.attempts == 2 and again.lease_token != row.lease_token


def test_the_sweeper_publishes_a_job_whose_lease_ran_out_at_once_and_leaves_held_and_recent_ones(own_engine):
    org = new_scope()
    dead, held, recent = (_job(own_engine, org) for _ in range(3))
    with maint_tx(own_engine) as conn:
        conn.execute(text("UPDATE memory_write_jobs SET published_at = now() WHERE id = ANY(CAST(:ids AS uuid[]))"),
                     {"ids": [dead, held, recent]})
    _claim(own_engine, dead, 1)
    _claim(own_engine, held, 60)
    time.sleep(1.5)
    with maint_tx(own_engine) as conn:
        swept = jobs.sweep_lost(conn, republish_after=120)
    assert [(str(r.id), r.stage, r.holder_died, r.suspect) for r in swept] == [(dead, "validate", True, False)]
    # not waiting out the 120 s a lost message gets
    with maint_tx(own_engine) as conn:
        assert jobs.sweep_lost(conn, republish_after=120) == []  # once


def test_a_dead_batch_goes_on_together_once_then_a_job_that_keeps_killing_goes_alone_and_fails_alone(own_engine):
    settings = make_settings(stage_max_retries=2)  # three claims at a stage
    org, queue = new_scope(), "ibex.test.lease-poison.validate"
    batch_of_four = [_job(own_engine, org, queue) for _ in range(4)]
    with maint_tx(own_engine) as conn:
        first = jobs.claim(conn, batch_of_four, "validate", 10, own_limit=settings.stage_batch_max)
    assert sorted(str(r.id) for r in first) == sorted(batch_of_four) and not any(r.holder_died for r in first)
    _die(own_engine, batch_of_four)

    with maint_tx(own_engine) as conn:
        swept = jobs.sweep_lost(conn, republish_after=120)
        fresh = _job(own_engine, org, queue)
        # A batch on their queue takes none of them; their own message takes the four, and no other job.
        batch = jobs.claim(conn, [], "validate", 10, queue=queue, extra=10)
        together = jobs.claim(conn, batch_of_four, "validate", 10, queue=queue, extra=10)
    assert sorted((str(r.id), r.holder_died, r.suspect) for r in swept) == sorted(
        (job, True, False) for job in batch_of_four)
    assert [str(r.id) for r in batch] == [fresh]
    assert sorted(str(r.id) for r in together) == sorted(batch_of_four)
    assert all(r.holder_died and r.attempts == 2 for r in together)
    _die(own_engine, batch_of_four)  # one of them kills its process again

    with maint_tx(own_engine) as conn:
        swept = jobs.sweep_lost(conn, republish_after=120)
        [alone] = jobs.claim(conn, batch_of_four[:2], "validate", 10, queue=queue, extra=10)
    assert all(r.suspect for r in swept) and alone.holder_died and alone.attempts == 3
    poison = str(alone.id)  # the one that kills its process: its delivery alone dies too
    mates = [job for job in batch_of_four if job != poison]
    _die(own_engine, [poison])
    deps = StageDeps(settings=settings, engine=own_engine, vector_store=PgVectorStore(8))
    report = run_stage("validate", [poison], deps)
    assert report.failed == [poison]
    failed = query(own_engine, "SELECT status, error->>'code' AS code, attempts FROM memory_write_jobs WHERE id = :j",
                   j=poison)[0]
    assert (failed.status, failed.code, failed.attempts) == ("failed", "STAGE_CRASHED", 4)
    assert [r.attempts for r in query(own_engine, "SELECT attempts FROM memory_write_jobs "
                                                  "WHERE id = ANY(CAST(:ids AS uuid[]))", ids=mates)] == [2, 2, 2]
    report = run_stage("validate", mates, deps)  # each alone, on its last claim: not failed
    assert report.failed == []


def test_the_sweeper_sends_lost_jobs_in_batches_a_dead_batch_first_and_a_suspect_alone_first(own_infra, own_engine):
    settings = make_settings(own_infra, stage_batch_max=4)
    org = new_scope()
    lost = [_job(own_engine, org) for _ in range(5)]
    orphaned = [_job(own_engine, org) for _ in range(4)]
    suspect = _job(own_engine, org)
    with maint_tx(own_engine) as conn:
        conn.execute(text("UPDATE memory_write_jobs SET published_at = now() - interval '1 hour' "
                          "WHERE id = ANY(CAST(:ids AS uuid[]))"), {"ids": lost})
        jobs.claim(conn, [suspect], "validate", 10)
    _die(own_engine, [suspect])
    with maint_tx(own_engine) as conn:
        jobs.claim(conn, orphaned, "validate", 10)
        jobs.claim(conn, [suspect], "validate", 10)
    _die(own_engine, orphaned + [suspect])
    assert sweep_once(own_engine, create_app(settings), settings) == 10
    client = redis.Redis.from_url(own_infra.redis.url)
    try:  # the list's right end is delivered first
        messages = [json.loads(base64.b64decode(json.loads(raw)["body"]))[0][0]
                    for raw in client.lrange(settings.queue_for("validate"), 0, -1)]
    finally:
        client.close()
    assert sorted(len(ids) for ids in messages) == [1, 1, 4, 4]
    assert sorted(job for ids in messages for job in ids) == sorted(lost + orphaned + [suspect])
    first = messages[-2:]  # the dead batch together, and the suspect alone
    assert sorted(map(sorted, first)) == sorted([sorted(orphaned), [suspect]])
    with maint_tx(own_engine) as conn:  # and a delivery named more ids than a batch takes a batch
        assert len(jobs.claim(conn, lost, "validate", 10, own_limit=settings.stage_batch_max)) == 4


def _holder(workers: list[Any]) -> Any:
    """The worker whose delivery took the job (its log shows the validate task received)."""
    [holder] = [w for w in workers if w.deliveries("validate") >= 1]
    return holder


def _attempts(engine: Any, job_id: str) -> int:
    return query(engine, "SELECT attempts FROM memory_write_jobs WHERE id = :j", j=job_id)[0].attempts


@pytest.mark.parametrize("kill", ["pool process", "whole worker"])
def test_a_job_held_by_a_killed_process_runs_again_within_the_target(own_infra, own_engine, kill):
    settings = make_settings(own_infra)
    org, agent = new_scope(), new_scope("agent")
    workers = [start_worker(own_infra, f"lease-{n}") for n in (1, 2)]
    sweeper = start_sweeper(own_infra, "lease-sweeper")
    blocker = own_engine.connect()
    recovered_after = None
    try:
        for worker in workers:
            worker.wait_for_log('"event": "process_ready"', timeout=120)
        # Hold the agent's corpus lock: the delivery stops inside persist, its lease held.
        tx = blocker.begin()
        blocker.execute(text("INSERT INTO memory_agent_corpus (org_id, agent_id) VALUES (:o, :a)"),
                        {"o": org, "a": agent})
        job_id = submit(own_engine, create_app(settings), settings,
                        memory(org, agent, "The fire drill is on the first Monday.")).job_id
        assert wait_until(lambda: query(own_engine, "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                                    "AND query LIKE 'INSERT INTO memory_agent_corpus%'"), timeout=60)
        holder = _holder(workers)
        before = _attempts(own_engine, job_id)
        main = psutil.Process(holder.popen.pid)
        if kill == "pool process":
            [child] = main.children()
            child.send_signal(signal.SIGKILL)
        else:
            os.killpg(main.pid, signal.SIGKILL)  # the worker and its pool processes
        killed_at = time.monotonic()
        tx.rollback()  # the lock goes; the killed delivery's statement went with its connection
        assert wait_until(lambda: _attempts(own_engine, job_id) > before, timeout=60, interval=0.1)
        recovered_after = time.monotonic() - killed_at
        view = wait_for_job(own_engine, org, job_id, timeout=60)
    finally:
        blocker.close()
        sweeper.stop()
        for worker in workers:
            worker.stop()

    print(f"{kill} killed: the job was claimed again after {recovered_after:.1f} s")
    assert recovered_after <= RECOVERY_TARGET
    assert view["status"] == "succeeded", view
    assert [r.n for r in query(own_engine, "SELECT count(*) AS n FROM memories WHERE org_id = :o", o=org)] == [1]
