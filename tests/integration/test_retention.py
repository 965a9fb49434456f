"""Retention on the real database and a real sweeper process: finished jobs older than
``IBEX_JOB_RETENTION_HOURS`` go with the ledger entries naming them, in bounded batches,
and nothing else goes; a replay of a purged key is a new write."""

from __future__ import annotations

import time
import uuid

import pytest
from sqlalchemy import text

from ibex_worker import sweeper
from ibex_worker.submit import record
from tests.conftest import Proc, isolated_queues, make_settings, memory, new_scope, query, read_counter, submit_and_wait

RETENTION_HOURS = 168


def _age(engine, job_ids: list[str], hours: float) -> None:
    """Pretend the jobs finished (or, unfinished, were created) ``hours`` ago."""
    with engine.begin() as conn:
        conn.execute(text("UPDATE memory_write_jobs SET finished_at = CASE WHEN finished_at IS NOT NULL "
                          "THEN now() - make_interval(hours => :h) END, "
                          "created_at = now() - make_interval(hours => :h + 1) WHERE id = ANY(CAST(:ids AS uuid[]))"),
                     {"h": hours, "ids": job_ids})


def _job_ids(engine, org: str) -> set[str]:
    return {str(r.id) for r in query(engine, "SELECT id FROM memory_write_jobs WHERE org_id = :o", o=org)}


def _ledger(engine, org: str) -> dict[str, str]:
    return {r.key: str(r.job_id) for r in query(
        engine, "SELECT key, job_id FROM memory_idempotency_keys WHERE org_id = :o", o=org)}


@pytest.fixture()
def aged(infra, engine, producer, settings, pipeline):
    """One org with: three keyed jobs that finished 200 h ago (two succeeded, one failed),
    one keyed job that finished 100 h ago, and one job queued 300 h ago that never finished."""
    org, agent = new_scope(), new_scope("agent")
    views, keys = {}, {}
    for n in range(4):
        keys[f"k{n}"] = f"retention-{uuid.uuid4().hex[:8]}-{n}"
        views[f"k{n}"] = submit_and_wait(engine, producer, settings,
                                         memory(org, agent, f"Retention probe {n}: the backup runs at 0{n}:30."),
                                         key=keys[f"k{n}"])
    assert all(v["status"] == "succeeded" for v in views.values()), views
    with engine.begin() as conn:
        conn.execute(text("UPDATE memory_write_jobs SET status = 'failed', outcome = NULL, memory_id = NULL, "
                          "error = '{\"code\": \"UNAVAILABLE\"}'::jsonb WHERE id = :j"), {"j": views["k2"]["job_id"]})
    parked = make_settings(infra, **isolated_queues(f"ibex.test.retention.{org}"))
    unfinished = record(engine, parked, memory(org, agent, "Retention probe: never taken by a worker.")).job_id
    old = [views[k]["job_id"] for k in ("k0", "k1", "k2")]
    _age(engine, old + [unfinished], 200)
    _age(engine, [views["k3"]["job_id"]], 100)
    yield org, agent, keys, views, old, unfinished
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM memory_write_jobs WHERE id = :j"), {"j": unfinished})


def test_purge_takes_exactly_the_finished_jobs_past_retention_and_their_ledger_entries_batch_by_batch(
        engine, infra, aged, monkeypatch):
    org, _, _, views, old, unfinished = aged
    keys_before = _ledger(engine, org)
    memories_before = query(engine, "SELECT id, content FROM memories WHERE org_id = :o ORDER BY id", o=org)
    monkeypatch.setattr(sweeper, "PURGE_BATCH", 2)
    settings = make_settings(infra, job_retention_hours=RETENTION_HOURS)

    first = sweeper.purge_once(engine, settings, max_batches=1)
    assert first.jobs == 2
    assert len(_job_ids(engine, org) & set(old)) == 1  # one batch of two, oldest first

    rest = sweeper.purge_once(engine, settings, max_batches=None)
    assert rest.jobs == 1
    assert first.idempotency_keys + rest.idempotency_keys == 3
    assert _job_ids(engine, org) == {views["k3"]["job_id"], unfinished}
    assert _ledger(engine, org) == {k: j for k, j in keys_before.items() if j == views["k3"]["job_id"]}
    assert query(engine, "SELECT id, content FROM memories WHERE org_id = :o ORDER BY id", o=org) == memories_before
    assert sweeper.purge_once(engine, settings).jobs == 0


def test_a_replay_of_a_purged_key_is_a_new_write(engine, producer, settings, infra, aged):
    org, agent, keys, views, old, _ = aged
    sweeper.purge_once(engine, make_settings(infra, job_retention_hours=RETENTION_HOURS), max_batches=None)
    assert keys["k0"] not in _ledger(engine, org)
    body = memory(org, agent, "Retention probe 0: the backup runs at 00:30.")
    replay = submit_and_wait(engine, producer, settings, body, key=keys["k0"])
    assert replay["job_id"] not in old
    assert replay["status"] == "succeeded"
    assert replay["outcome"] == "exact_duplicate"
    assert replay["memory_id"] == views["k0"]["memory_id"]


def test_the_sweeper_applies_retention_and_counts_what_it_purged(engine, infra, aged, tmp_path):
    org, _, _, views, old, unfinished = aged
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    env = infra.env(**isolated_queues(f"ibex.test.retention-sweeper.{org}"), job_retention_hours=RETENTION_HOURS)
    env["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir)
    proc = Proc(infra, ["sweeper"], "retention-sweeper", env)
    try:
        proc.wait_for_log("sweeper_started")
        deadline = time.monotonic() + 30
        while _job_ids(engine, org) & set(old) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        proc.stop()
    assert _job_ids(engine, org) == {views["k3"]["job_id"], unfinished}
    assert read_counter(metrics_dir, "ibex_purged_rows") == 3 + 3  # three jobs, three ledger entries
    assert "jobs_purged" in proc.log_text()
