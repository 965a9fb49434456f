"""A worker whose pool processes die while their models load, on cores kept busy: replacement
processes come up instead of being killed for slowness one after another, and every job
finishes once. While no worker makes progress, /readyz and /metrics say the pipeline is
stalled, and stop saying it once a worker catches up. On a PostgreSQL and Redis of the
test's own: the stall figure counts every org's jobs."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from typing import Any

import psutil

from tests.api_support import ApiServer, new_key
from tests.conftest import make_settings, memory, new_scope, query, start_sweeper, start_worker, wait_until
from ibex_worker import apikeys
from ibex_worker.celery_app import create_app
from ibex_worker.submit import submit

# Leases short enough that a killed process's jobs run again within the test, long enough for
# a model call on busy cores: time limit < lease < visibility timeout.
RECOVERY = dict(task_soft_time_limit=20, task_time_limit=25, job_lease_seconds=30, broker_visibility_timeout=60,
                republish_after_seconds=2)
WRITES = 40
HOG_SECONDS = 150


def _busy_cores(count: int) -> list[subprocess.Popen]:
    """Processes that spin for at most HOG_SECONDS: the start-up of a pool process on a loaded host."""
    spin = f"import time\nend = time.monotonic() + {HOG_SECONDS}\nwhile time.monotonic() < end:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(count)]


def _ready(log: str) -> list[dict[str, Any]]:
    """The ``process_ready`` lines of a worker's JSON log: one per pool process that loaded its models."""
    return [line for line in map(json.loads, re.findall(r"^\{.*\}$", log, re.M)) if line.get("event") == "process_ready"]


def _ready_pids(worker: Any) -> set[int]:
    return {line["pid"] for line in _ready(worker.log_text())}


def _pool(worker: Any) -> list[psutil.Process]:
    return [p for p in psutil.Process(worker.popen.pid).children() if p.is_running()]


def test_pool_processes_killed_while_loading_are_replaced_and_every_job_finishes_once(own_infra, own_engine):
    settings = make_settings(own_infra, **RECOVERY)
    org, agent = new_scope(), new_scope("agent")
    hogs = _busy_cores(os.cpu_count() or 2)
    worker = sweeper = None
    killed: list[tuple[int, str]] = []
    try:
        worker = start_worker(own_infra, "start-kills", concurrency=2, **RECOVERY)
        sweeper = start_sweeper(own_infra, "start-kills-sweeper", **RECOVERY)
        producer = create_app(settings)
        job_ids = [submit(own_engine, producer, settings, memory(org, agent, f"Standing order {n}: the "
                                                                  f"backup rotates on day {n} of the cycle.")).job_id
                   for n in range(WRITES)]
        # Three kills while a process is still loading its models, then one while it works.
        deadline = time.monotonic() + 180
        while len(killed) < 3 and time.monotonic() < deadline:
            loading = [p for p in _pool(worker) if p.pid not in _ready_pids(worker)
                       and p.pid not in {pid for pid, _ in killed}]
            if loading:
                time.sleep(1.0)  # inside the model load, not before it
                if loading[0].pid not in _ready_pids(worker):
                    loading[0].send_signal(signal.SIGKILL)
                    killed.append((loading[0].pid, "loading"))
                    continue
            time.sleep(0.2)
        assert len(killed) == 3, f"pool processes never seen loading: {killed}"
        assert wait_until(lambda: query(own_engine, "SELECT count(*) AS n FROM memory_write_jobs "
                                        "WHERE status = 'succeeded'")[0].n >= 5, timeout=240), worker.log_text()[-3000:]
        working = [p for p in _pool(worker) if p.pid in _ready_pids(worker)]
        working[0].send_signal(signal.SIGKILL)
        killed.append((working[0].pid, "working"))
        finished = wait_until(lambda: query(own_engine, "SELECT count(*) AS n FROM memory_write_jobs "
                                            "WHERE status IN ('succeeded', 'failed')")[0].n == WRITES, timeout=240)
        log = worker.log_text()
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        for proc in (sweeper, worker):
            if proc is not None:
                proc.stop()

    assert finished, log[-3000:]
    assert "Timed out waiting for UP message" not in log
    started = len(_ready(log))
    assert started <= 2 + len(killed), f"{started} pool processes came up for {len(killed)} kills"
    assert_each_stored_once(own_engine, org, job_ids)


def assert_each_stored_once(engine: Any, org: str, job_ids: list[str]) -> None:
    """Every job succeeded and the org holds one memory per job (distinct contents)."""
    rows = query(engine, "SELECT status, count(*) AS n FROM memory_write_jobs WHERE id = ANY(CAST(:ids AS uuid[])) "
                         "GROUP BY status", ids=job_ids)
    assert [(r.status, r.n) for r in rows] == [("succeeded", len(job_ids))]
    stored = query(engine, "SELECT count(*) AS n, count(DISTINCT content_hash) AS distinct_n FROM memories "
                           "WHERE org_id = :o", o=org)[0]
    assert (stored.n, stored.distinct_n) == (len(job_ids), len(job_ids))


def test_readyz_and_metrics_report_a_stalled_pipeline_until_a_worker_catches_up(own_infra, own_engine):
    org, agent = new_scope(), new_scope("agent")
    api_key, _ = apikeys.create(own_engine, org)
    server = ApiServer(own_infra, "api-stall", pipeline_stall_seconds=3)
    worker = None
    try:
        with server.client(api_key) as client:
            idle = client.get("/readyz").json()["pipeline"]
            accepted = [client.post("/v1/memories", headers={"X-Idempotency-Key": new_key()},
                                    json=memory(org, agent, f"The canteen opens at {7 + n}:00.")) for n in range(3)]
            assert [r.status_code for r in accepted] == [202] * 3
            fresh = client.get("/readyz").json()["pipeline"]
            assert wait_until(lambda: client.get("/readyz").json()["pipeline"]["stalled"], timeout=20)
            stalled = client.get("/readyz")
            gauge = float(re.search(r"^ibex_pipeline_stalled_seconds (\S+)$", client.get("/metrics").text, re.M).group(1))
            worker = start_worker(own_infra, "stall-worker")
            assert wait_until(lambda: query(own_engine, "SELECT count(*) AS n FROM memory_write_jobs "
                                            "WHERE status = 'succeeded'")[0].n == 3, timeout=120)
            caught_up = client.get("/readyz").json()["pipeline"]
    finally:
        if worker is not None:
            worker.stop()
        server.stop()

    assert idle == {"stalled": False, "seconds_without_progress": 0}
    assert fresh["stalled"] is False and fresh["seconds_without_progress"] < 3
    assert stalled.status_code == 200 and stalled.json()["status"] == "ready"  # reported, not a readiness failure
    assert stalled.json()["pipeline"]["seconds_without_progress"] >= 3 and gauge >= 3
    assert caught_up == {"stalled": False, "seconds_without_progress": 0}
