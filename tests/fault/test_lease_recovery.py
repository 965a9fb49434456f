"""Short leases renewed while their process lives: a slow delivery keeps its jobs, a dead one
lets them go within one lease, and the sweeper publishes them at its next look. Measured with
real processes: after a pool process, or a whole worker, is killed holding a job, another
worker runs the job again within 15 s. On a PostgreSQL and Redis of the test's own: the
sweep looks at every org's jobs."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import psutil
import pytest
from sqlalchemy import text

from tests.conftest import make_settings, memory, new_scope, query, start_sweeper, start_worker, wait_until
from ibex_worker.celery_app import create_app
from ibex_worker.db import maint_tx, tenant_tx
from ibex_worker.pipeline.leases import LeaseKeeper
from ibex_worker.store import jobs
from ibex_worker.submit import submit, wait_for_job

RECOVERY_TARGET = 15.0  # seconds from a kill to the job claimed again


def _job(engine: Any, org: str) -> str:
    with tenant_tx(engine, org) as conn:
        return jobs.insert_job(conn, org, "agent-lease", "The lease test note.", {"source": "chat"}, None)


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
    assert swept == [(dead, "validate")]  # not waiting out the 120 s a lost message gets
    assert query(own_engine, "SELECT lease_token, lease_expires_at FROM memory_write_jobs WHERE id = :j",
                 j=dead)[0] == (None, None)
    with maint_tx(own_engine) as conn:
        assert jobs.sweep_lost(conn, republish_after=120) == []  # once


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
