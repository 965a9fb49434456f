"""The sweeper: re-publishes jobs whose message was lost.

A job is lost when it is unfinished, nobody holds its lease (never claimed, released, or
the lease ran out because its worker died) and its last publish is older than
``republish_after_seconds``. Publishing a job twice is harmless: a delivery that finds the
job claimed or already past its stage drops it.
"""

from __future__ import annotations

import signal
import threading
from collections import defaultdict
from typing import Any

import structlog

from ibex_worker.db import maint_tx
from ibex_worker.errors import TransientError
from ibex_worker.publish import publish
from ibex_worker.store import jobs

log = structlog.get_logger("ibex.sweeper")


def sweep_once(engine: Any, app: Any, settings: Any) -> int:
    with maint_tx(engine) as conn:
        lost = jobs.sweep_lost(conn, settings.republish_after_seconds)
    by_stage: dict[str, list[str]] = defaultdict(list)
    for job_id, stage in lost:
        by_stage[stage].append(job_id)
    for stage, ids in by_stage.items():
        publish(app, settings, stage, ids)
        log.info("jobs_republished", stage=stage, jobs=len(ids))
    return len(lost)


def run_forever(engine: Any, app: Any, settings: Any, stop: threading.Event | None = None) -> None:
    stop = stop or threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    log.info("sweeper_started", interval_s=settings.sweeper_interval_seconds)
    while not stop.is_set():
        try:
            sweep_once(engine, app, settings)
        except TransientError:
            log.warning("sweep_failed", reason="database_unavailable")
        stop.wait(settings.sweeper_interval_seconds)
    log.info("sweeper_stopped")
