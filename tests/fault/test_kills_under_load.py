"""A 2,000-write run on a freshly started worker, with its processes killed at random points:
one pool process while it loads its models, two while they work, then the whole worker (main
process and pool, as a container's end kills them), after which a new worker starts. Each kill
waits for the recovery from the one before (two kills seconds apart are one longer outage). Nothing
is lost, nothing is stored twice, nothing crash-loops, and after every kill the jobs that were
running are running again (claimed anew or finished) within the recovery bound (after the whole
worker, counted from the new worker's first pool process being ready). Default lease
and sweeper settings; a PostgreSQL and Redis of the test's own."""

from __future__ import annotations

import random
import signal
import threading
import time
from typing import Any

from tests.conftest import make_settings, memory, new_scope, query, start_sweeper, start_worker, wait_until
from tests.fault.test_worker_start import _pool, _ready, _ready_pids, assert_each_stored_once
from ibex_worker.celery_app import create_app
from ibex_worker.submit import submit

WRITES = 2000
AGENTS = 20
# The target is 15 s; a loaded CI machine gets twice that before the test fails.
RECOVERY_BOUND_S = 30.0
SEED = 20261201


class Recovery:
    """Seconds from a kill until every job the killed process held is claimed anew or final.
    A job leased at the kill whose lease is then renewed or cleared under the same token has a
    live holder; a job the killed process held keeps its lease until it runs out, the sweeper
    republishes it, and a new claim changes the token."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.seconds: list[tuple[str, float]] = []
        self._threads: list[threading.Thread] = []

    def running(self) -> dict[str, tuple[str, Any]]:
        rows = query(self.engine, "SELECT id, lease_token, lease_expires_at FROM memory_write_jobs "
                                  "WHERE status = 'running' AND lease_expires_at > now()")
        return {str(r.id): (str(r.lease_token), r.lease_expires_at) for r in rows}

    def watch(self, label: str, held: dict[str, tuple[str, Any]], killed_at: float) -> None:
        def follow() -> None:
            waiting = dict(held)
            deadline = killed_at + 180
            while waiting and time.monotonic() < deadline:
                rows = query(self.engine, "SELECT id, status, lease_token, lease_expires_at FROM memory_write_jobs "
                                          "WHERE id = ANY(CAST(:ids AS uuid[]))", ids=list(waiting))
                for r in rows:
                    token, expires = waiting[str(r.id)]
                    if (r.status in ("succeeded", "failed") or str(r.lease_token) != token
                            or r.lease_expires_at is None or r.lease_expires_at > expires):
                        waiting.pop(str(r.id), None)
                time.sleep(0.2)
            self.seconds.append((label, time.monotonic() - killed_at if not waiting else float("inf")))

        thread = threading.Thread(target=follow, daemon=True)
        thread.start()
        self._threads.append(thread)

    def join(self) -> None:
        """Wait for the recoveries being watched."""
        for thread in self._threads:
            thread.join(timeout=200)


def _succeeded(engine: Any) -> int:
    return query(engine, "SELECT count(*) AS n FROM memory_write_jobs WHERE status = 'succeeded'")[0].n


def test_a_2000_write_run_survives_pool_and_worker_kills_with_nothing_lost_or_doubled(own_infra, own_engine):
    rng = random.Random(SEED)
    settings = make_settings(own_infra)
    org = new_scope()
    agents = [new_scope("agent") for _ in range(AGENTS)]
    recovery = Recovery(own_engine)
    # Every write is queued before the worker starts: its pool processes load their models in
    # seconds, sooner than 2,000 writes are submitted, and one must still be loading when killed.
    producer = create_app(settings)
    job_ids = [submit(own_engine, producer, settings, memory(
        org, agents[n % AGENTS], f"Standing order {n}: the backup of shard {n} rotates on day {n % 28 + 1} "
                                 f"at {n % 24:02d}:{n % 60:02d}.")).job_id for n in range(WRITES)]
    worker = start_worker(own_infra, "kills-1", concurrency=2)
    sweeper = replacement = None
    logs: list[str] = []
    try:
        loading_killed = wait_until(lambda: _kill_a_loading_process(worker), timeout=120, interval=0.2)
        assert loading_killed, "no pool process was seen loading its models"
        sweeper = start_sweeper(own_infra, "kills-sweeper")
        for label, low, high in (("pool process working", 150, 500), ("pool process working", 600, 950)):
            target = rng.randint(low, high)
            assert wait_until(lambda: _succeeded(own_engine) >= target, timeout=300, interval=0.2), \
                worker.log_text()[-3000:]
            busiest = _busiest([p for p in _pool(worker) if p.pid in _ready_pids(worker)])
            held = recovery.running()
            busiest.send_signal(signal.SIGKILL)
            recovery.watch(label, held, time.monotonic())
            recovery.join()
        target = rng.randint(1100, 1500)
        assert wait_until(lambda: _succeeded(own_engine) >= target, timeout=300, interval=0.2)
        held = recovery.running()
        worker.kill()
        killed_at = time.monotonic()
        logs.append(worker.log_text())
        replacement = start_worker(own_infra, "kills-2", concurrency=2)
        recovery.watch("whole worker", held, killed_at)
        assert wait_until(lambda: bool(_ready_pids(replacement)), timeout=180, interval=0.2), \
            replacement.log_text()[-3000:]
        startup = time.monotonic() - killed_at
        finished = wait_until(lambda: query(own_engine, "SELECT count(*) AS n FROM memory_write_jobs "
                                            "WHERE status IN ('succeeded', 'failed')")[0].n == WRITES,
                              timeout=400, interval=0.5)
        logs.append(replacement.log_text())
        recovery.join()
    finally:
        for proc in (sweeper, replacement, worker):
            if proc is not None:
                proc.stop()

    assert finished, logs[-1][-3000:]
    assert_each_stored_once(own_engine, org, job_ids)
    for log in logs:
        assert "Timed out waiting for UP message" not in log
    first, second = (len(_ready(log)) for log in logs)
    assert first <= 2 + 3 and second <= 2, f"pool processes that came up: {first}, then {second}"
    print("recovery seconds:", ", ".join(f"{label} {seconds:.1f}" for label, seconds in recovery.seconds),
          f"| the new worker's first pool process ready after {startup:.1f} | pool processes up: {first} + {second}")
    # The whole worker's jobs wait for a new worker: its start and model load are the machine's
    # speed, not the recovery's, and are not counted against the bound.
    allowed = {"whole worker": RECOVERY_BOUND_S + startup}
    assert len(recovery.seconds) == 3 and all(s <= allowed.get(label, RECOVERY_BOUND_S)
                                              for label, s in recovery.seconds), (recovery.seconds, startup)


def _busiest(processes: list[Any]) -> Any:
    """The pool process that used the most CPU over a third of a second: one in a delivery."""
    assert processes, "no working pool process to kill"
    before = {p.pid: sum(p.cpu_times()[:2]) for p in processes}
    time.sleep(0.3)
    return max(processes, key=lambda p: sum(p.cpu_times()[:2]) - before[p.pid])


def _kill_a_loading_process(worker: Any) -> bool:
    """SIGKILL a pool process one second into its model load; False while none is loading."""
    loading = [p for p in _pool(worker) if p.pid not in _ready_pids(worker)]
    if not loading:
        return False
    time.sleep(1.0)
    if loading[0].pid in _ready_pids(worker):
        return False
    loading[0].send_signal(signal.SIGKILL)
    return True
