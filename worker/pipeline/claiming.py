"""Claiming a delivery's jobs: lease the ids in the message plus the jobs waiting on its queue.

A delivery takes its own jobs and up to ``stage_batch_max`` jobs in all from those waiting
for the same stage on the same queue (micro-batching). A message naming more jobs than a batch
(a wake-up for a whole batch request of one org) fills at most ``1 - 1/TURN_SHARE`` of it
with them: the rest goes to waiting jobs with the orgs taking turns, so another org's write
does not wait for the deliveries that work through the hundred, and the jobs it leaves are
taken by the wake-ups it chains. When a model stage lies ahead and the
batch came out short, it waits once (``stage_batch_wait_ms`` after the first claim) and tops
the batch up. For the entry stage with coalesced wake-ups (``ibex_worker.publish.Waker``), the
delivery clears the stage's wake-up flag before claiming, and sends the next wake-up itself
when its share of waiting jobs came out full.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import structlog

from ibex_worker.db import maint_tx
from ibex_worker.errors import TransientError
from ibex_worker.pipeline.context import StageDeps
from ibex_worker.store import jobs as job_store

if TYPE_CHECKING:
    from ibex_worker.publish import Waker

log = structlog.get_logger("ibex.pipeline")

TURN_SHARE = 4  # a message naming more than a batch leaves a quarter of it to waiting jobs


def claim(stage: str, job_ids: Sequence[str], deps: StageDeps, queue: str | None, *, top_up: bool) -> list[Any]:
    """Lease the delivery's jobs and those waiting on ``queue``; the claimed job rows.
    ``top_up``: a model stage lies ahead, so a short batch is topped up once more after
    ``stage_batch_wait_ms``: one job alone waits no longer than that. Raises
    ``TransientError`` when the first claim fails."""
    settings = deps.settings
    started = time.monotonic()
    limit = settings.stage_batch_max
    waker = _waker(stage, deps, queue)
    if waker is not None:
        waker.taking(stage, queue)  # before the claim: it sees every job the flag stood for
    named = len(set(job_ids))
    own_limit = limit - limit // TURN_SHARE if queue and named > limit else limit
    extra = max(0, limit - min(named, own_limit))
    rows = _lease(stage, job_ids, deps, queue, extra, own_limit)
    if waker is not None and (named > own_limit or _took_all_allowed(rows, job_ids, extra)):
        waker.chain(stage)  # jobs may still be waiting (its own among them), and nothing else may wake them
    wait = settings.stage_batch_wait_ms / 1000.0
    if not rows or not queue or wait <= 0 or len(rows) >= limit or not top_up:
        return rows
    time.sleep(max(0.0, wait - (time.monotonic() - started)))
    return rows + _top_up(stage, deps, queue, limit - len(rows), waker)


def _waker(stage: str, deps: StageDeps, queue: str | None) -> Waker | None:
    """The process's waker when this delivery keeps ``stage``'s wake-up flag, else None."""
    return deps.waker if queue and deps.waker is not None and deps.waker.wakes(stage) else None


def _lease(stage: str, job_ids: Sequence[str], deps: StageDeps, queue: str | None, extra: int,
           own_limit: int) -> list[Any]:
    # Claims commit without waiting for the WAL flush: after a database crash a lost one
    # only means the stage runs again (fencing drops the stale delivery).
    with maint_tx(deps.engine, durable=False) as conn:
        return job_store.claim(conn, job_ids, stage, deps.settings.job_lease_seconds, queue=queue, extra=extra,
                               own_limit=own_limit)


def _top_up(stage: str, deps: StageDeps, queue: str, extra: int, waker: Any) -> list[Any]:
    """Claim up to ``extra`` more waiting jobs; none when that claim fails."""
    try:
        more = _lease(stage, [], deps, queue, extra, 0)
    except TransientError:  # the jobs already leased go on; the others wait for their own delivery
        log.warning("batch_top_up_failed", stage=stage)
        return []
    if waker is not None and _took_all_allowed(more, [], extra):
        waker.chain(stage)
    return more


def _took_all_allowed(rows: Sequence[Any], job_ids: Sequence[str], extra: int) -> bool:
    """True when the claim's share of waiting jobs was full (or nil): more may be waiting."""
    own = set(job_ids)
    return sum(1 for row in rows if str(row.id) not in own) >= extra
