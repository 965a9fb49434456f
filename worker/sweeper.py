"""The sweeper: re-publishes jobs and erasures whose message was lost, and applies retention.

A job is lost when it is unfinished and nobody holds its lease: either the lease ran out (the
process holding it died and stopped renewing it), published again at once and ahead of the
messages already waiting (with the rest of its dead batch; alone when it is a suspect, see
``store.jobs``), or it was
never claimed or was released and its last publish is older than ``republish_after_seconds``,
published in messages of at most ``stage_batch_max`` ids. Publishing a job twice is harmless:
a delivery that finds the job claimed or already past its stage drops it.

Retention: each round also purges finished jobs older than ``job_retention_hours`` with
the ledger entries naming them, a batch of ``PURGE_BATCH`` rows per transaction and at most
``PURGE_BATCHES_PER_ROUND`` batches, so a large backlog of old rows is worked off over
several rounds without delaying re-publishing.
"""

from __future__ import annotations

import signal
import threading
from collections import Counter, defaultdict
from typing import Any

import structlog

from ibex_worker.db import maint_tx
from ibex_worker.errors import TransientError
from ibex_worker.metrics import get_metrics
from ibex_worker.publish import publish, publish_erasure
from ibex_worker.store import erasure_receipts, jobs, retention

log = structlog.get_logger("ibex.sweeper")

PURGE_BATCH = 1000
PURGE_BATCHES_PER_ROUND = 10


def sweep_once(engine: Any, app: Any, settings: Any) -> int:
    with maint_tx(engine) as conn:
        lost = jobs.sweep_lost(conn, settings.republish_after_seconds)
        lost_erasures = erasure_receipts.sweep_lost(conn, settings.republish_after_seconds)
    for erasure_id in lost_erasures:
        publish_erasure(app, settings, erasure_id)
    if lost_erasures:
        log.info("erasures_republished", erasures=len(lost_erasures))
    batches: dict[tuple[str, bool], list[str]] = defaultdict(list)
    for job in lost:
        if job.suspect:  # it may be what kills its deliveries: alone, and first
            publish(app, settings, job.stage, [str(job.id)], front=True)
        else:  # a dead delivery's jobs go first, together
            batches[(job.stage, job.holder_died)].append(str(job.id))
    for (stage, died), ids in batches.items():
        # A message of at most a batch: its delivery claims every id it names (a dead
        # delivery's jobs join no other batch, so one left out would wait for a later sweep).
        for start in range(0, len(ids), settings.stage_batch_max):
            publish(app, settings, stage, ids[start:start + settings.stage_batch_max], front=died)
    alone = Counter(job.stage for job in lost if job.suspect)
    died = Counter(job.stage for job in lost if job.holder_died)
    for stage, count in Counter(job.stage for job in lost).items():
        log.info("jobs_republished", stage=stage, jobs=count, holder_died=died[stage], alone=alone[stage])
    return len(lost)


def purge_once(engine: Any, settings: Any, max_batches: int | None = PURGE_BATCHES_PER_ROUND) -> retention.Purged:
    """Purge finished jobs past retention, batch by batch, until a batch comes out short or
    ``max_batches`` ran (None: until done). Returns the rows removed, by table."""
    older_than = settings.job_retention_hours * 3600.0
    jobs_total = keys_total = batches = 0
    while max_batches is None or batches < max_batches:
        with maint_tx(engine) as conn:
            purged = retention.purge_finished(conn, older_than, PURGE_BATCH)
        batches += 1
        jobs_total += purged.jobs
        keys_total += purged.idempotency_keys
        get_metrics().rows_purged(jobs=purged.jobs, idempotency_keys=purged.idempotency_keys)
        if purged.jobs < PURGE_BATCH:
            break
    if jobs_total:
        log.info("jobs_purged", jobs=jobs_total, idempotency_keys=keys_total, batches=batches)
    return retention.Purged(jobs=jobs_total, idempotency_keys=keys_total)


def run_forever(engine: Any, app: Any, settings: Any, stop: threading.Event | None = None) -> None:
    stop = stop or threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    log.info("sweeper_started", interval_s=settings.sweeper_interval_seconds)
    metrics = get_metrics()
    while not stop.is_set():
        try:
            sweep_once(engine, app, settings)
            purge_once(engine, settings)
            metrics.round_done("sweeper")
        except TransientError:
            log.warning("sweep_failed", reason="database_unavailable")
        stop.wait(settings.sweeper_interval_seconds)
    log.info("sweeper_stopped")
