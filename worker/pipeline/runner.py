"""Runs one stage delivery over a batch of job ids: claim, compute, write back, say what to publish.

Per job, the stage's outcome is one of: advanced (saved with the next stage), finished
(persist committed), failed (permanent error, or transient errors past the attempt cap),
retry (transient error: lease released, the caller re-delivers later) or dropped (lease
lost, or the job already moved on: another delivery owns it). A failing job fails alone.

Inline continuation (``IBEX_STAGE_INLINE``): when the next stage's queue is one this worker
process consumes, the delivery carries its jobs on to that stage itself instead of publishing
them back to the broker for the same worker to take again. The jobs keep their lease; the
job row is written before and after each model stage (the raw content is erased after PII,
the embedding kept) and before every hop, so a crash or a retry resumes from there. A
worker that does not consume a stage's queue (a separate PII or embedding host) still hands
the job over through the broker. Each stage stays its own function, metrics and decisions.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from worker import jobs
from worker.config import STAGES
from worker.db import maint_tx, tenant_tx
from worker.errors import IbexError, LeaseLost, PermanentError, TransientError, ValidationFailed
from worker.pipeline import conflict, embed, exact_dedup, labels, near_dedup, persist, pii, validate
from worker.pipeline.context import WriteContext

log = structlog.get_logger("ibex.pipeline")

NEXT_STAGE = dict(zip(STAGES, STAGES[1:]))
SINGLE: dict[str, Callable[[WriteContext, Any], WriteContext]] = {
    "validate": validate.run, "exact_dedup": exact_dedup.run, "near_dedup": near_dedup.run,
    "conflict": conflict.run, "labels": labels.run,
}
BATCH: dict[str, Callable[[Sequence[WriteContext], Any], list[WriteContext]]] = {
    "pii": pii.run_batch, "embed": embed.run_batch,
}
# Job-row writes around the model stages even when the next stage runs inline: before them
# (a model failure is retried from that stage, and a failed job says where it stopped) and
# after them (the raw content must not outlive PII; a retry keeps the costly embedding).
# Between database-only stages nothing is written: a retry re-runs them from the last write.


def _checkpoint(stage: str, next_stage: str) -> bool:
    return stage in BATCH or next_stage in BATCH


@dataclass
class StageReport:
    publish: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    # job ids to re-deliver later, by the stage their job row is at (where a retry claims them)
    retry: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    failed: list[str] = field(default_factory=list)
    dropped: int = 0
    retry_error: IbexError | None = None


def runs_inline(stage: str, deps: Any) -> bool:
    """True when this process would take ``stage``'s queue itself: no hop needed."""
    settings = deps.settings
    return bool(settings.stage_inline) and settings.queue_for(stage) in deps.consumed_queues


def run_stage(stage: str, job_ids: Sequence[str], deps: Any, *, queue: str | None = None) -> StageReport:
    """``queue``: the queue this delivery came from; waiting jobs published there join the
    batch, up to ``stage_batch_max`` jobs in all."""
    report = StageReport()
    rows = _claim(stage, job_ids, deps, queue)
    report.dropped = len(set(job_ids) - {str(row.id) for row in rows})
    ctxs = []
    for row in rows:
        ctx = WriteContext.from_row(row)
        if row.attempts > deps.settings.stage_max_retries + 1:
            _fail(ctx, deps, TransientError("stage retries exhausted", code="RETRIES_EXHAUSTED"), report, stage)
        else:
            ctxs.append(ctx)
    pending: dict[str, list[WriteContext]] = defaultdict(list)
    pending[stage] = ctxs
    for current in STAGES[STAGES.index(stage):]:
        batch = pending.pop(current, [])
        if batch:
            _hand_on(current, _compute(current, batch, deps, report), deps, report, pending)
    return report


def _claim(stage: str, job_ids: Sequence[str], deps: Any, queue: str | None) -> list[Any]:
    """Lease the delivery's jobs and those waiting on its queue. When batching and a model
    stage lies ahead, a short batch is topped up once more after ``stage_batch_wait_ms``:
    one job alone waits no longer than that."""
    settings = deps.settings
    started = time.monotonic()
    limit = settings.stage_batch_max
    waker = deps.waker if queue and deps.waker is not None and deps.waker.wakes(stage) else None
    if waker is not None:
        waker.taking(stage, queue)  # before the claim: it sees every job the flag stood for
    extra = max(0, limit - len(set(job_ids)))
    # Claims and stage write-backs commit without waiting for the WAL flush: after a database
    # crash a lost one only means the stage runs again (fencing drops the stale delivery).
    with maint_tx(deps.engine, durable=False) as conn:
        rows = jobs.claim(conn, job_ids, stage, settings.job_lease_seconds, queue=queue, extra=extra)
    if waker is not None and _took_all_allowed(rows, job_ids, extra):
        waker.chain(stage)  # jobs may still be waiting, and nothing else may wake them
    wait = settings.stage_batch_wait_ms / 1000.0
    if not rows or not queue or wait <= 0 or len(rows) >= limit or not _model_stage_ahead(stage, deps):
        return rows
    time.sleep(max(0.0, wait - (time.monotonic() - started)))
    try:
        with maint_tx(deps.engine, durable=False) as conn:
            more = jobs.claim(conn, [], stage, settings.job_lease_seconds, queue=queue, extra=limit - len(rows))
    except TransientError:  # the jobs already leased go on; the others wait for their own delivery
        log.warning("batch_top_up_failed", stage=stage)
        return rows
    if waker is not None and _took_all_allowed(more, [], limit - len(rows)):
        waker.chain(stage)
    return rows + more


def _took_all_allowed(rows: Sequence[Any], job_ids: Sequence[str], extra: int) -> bool:
    """True when the claim's share of waiting jobs was full (or nil): more may be waiting."""
    own = set(job_ids)
    return sum(1 for row in rows if str(row.id) not in own) >= extra


def _model_stage_ahead(stage: str, deps: Any) -> bool:
    current: str | None = stage
    while current is not None:
        if current in BATCH:
            return True
        current = NEXT_STAGE.get(current)
        if current is not None and not runs_inline(current, deps):
            return False
    return False


def _compute(stage: str, ctxs: list[WriteContext], deps: Any, report: StageReport) -> list[WriteContext]:
    """Run ``stage`` over the jobs; return those that completed it and go on. Failures are
    settled here, job by job."""
    done: list[WriteContext] = []
    if stage == "persist":
        for ctx in ctxs:
            _guard(stage, [ctx], deps, report, lambda c=ctx: _persist(c, deps, report))
    elif stage in BATCH:
        _run_batch(stage, ctxs, deps, report, done)
    else:
        for ctx in ctxs:
            _guard(stage, [ctx], deps, report, lambda c=ctx: _compute_one(stage, c, deps, done))
    return done


def _run_batch(stage: str, ctxs: list[WriteContext], deps: Any, report: StageReport,
               done: list[WriteContext]) -> None:
    """One model call for the whole batch; if it fails, each job alone, so a bad item fails
    alone and the others go on."""
    started = time.perf_counter()
    try:
        BATCH[stage](ctxs, deps)
    except Exception as exc:
        if len(ctxs) == 1:
            _guard(stage, ctxs, deps, report, lambda error=exc: _raise(error))
            return
        log.warning("batch_split", stage=stage, jobs=len(ctxs), error=type(exc).__name__)
        for ctx in ctxs:
            _guard(stage, [ctx], deps, report, lambda c=ctx: _compute_batch(stage, [c], deps, done))
        return
    _timed(stage, ctxs, started)
    _settle_failures(stage, ctxs, deps, report, done)


def _settle_failures(stage: str, ctxs: list[WriteContext], deps: Any, report: StageReport,
                     done: list[WriteContext]) -> None:
    """A batch stage marks a job it refuses (``ctx.failure``): that job fails alone."""
    for ctx in ctxs:
        if ctx.failure is None:
            done.append(ctx)
        else:
            _guard(stage, [ctx], deps, report, lambda c=ctx: _raise(c.failure))


def _hand_on(stage: str, ctxs: list[WriteContext], deps: Any, report: StageReport,
             pending: dict[str, list[WriteContext]]) -> None:
    """Jobs that completed ``stage``: those whose next stage runs here go on in this delivery
    (written back first around a model stage); the others are written back with the lease
    released and published. All write-backs of one stage share one transaction."""
    if not ctxs:
        return
    moves: list[tuple[WriteContext, str, bool]] = []  # (job, next stage, inline)
    for ctx in ctxs:
        next_stage = ctx.next_stage or NEXT_STAGE[stage]
        ctx.next_stage = None
        moves.append((ctx, next_stage, runs_inline(next_stage, deps)))
    to_save = [move for move in moves if not move[2] or _checkpoint(stage, move[1])]
    skip: set[str] = set()
    if to_save:
        try:
            skip = _save(to_save, deps)
        except Exception as exc:  # nothing of this write-back committed: all of them again later
            if not isinstance(exc, TransientError):
                log.error("stage_crashed", stage=stage, jobs=len(to_save), error=type(exc).__name__)
                exc = TransientError(f"write-back crashed ({type(exc).__name__})", code="STAGE_CRASHED")
            _retry_later(stage, [ctx for ctx, _, _ in to_save], deps, report, exc)
            skip = {ctx.job_id for ctx, _, _ in to_save}
        else:
            if skip:
                report.dropped += len(skip)
                log.info("stage_dropped", stage=stage, jobs=len(skip), reason="lease_lost")
            for ctx, next_stage, _ in to_save:
                ctx.stored_stage = next_stage
    for ctx, next_stage, inline in moves:
        if ctx.job_id in skip:
            continue
        _observe(deps, stage, ctx)
        if inline:
            pending[next_stage].append(ctx)
        else:
            report.publish[next_stage].append(ctx.job_id)


def _save(moves: Sequence[tuple[WriteContext, str, bool]], deps: Any) -> set[str]:
    """Write the jobs back in one transaction; returns the ids whose lease was lost."""
    lost: set[str] = set()
    with maint_tx(deps.engine, durable=False) as conn:
        for ctx, next_stage, inline in moves:
            if not jobs.save_stage(conn, ctx, next_stage, deps.settings.queue_for(next_stage), keep_lease=inline):
                lost.add(ctx.job_id)
    return lost


def _raise(exc: BaseException) -> None:
    raise exc


def _guard(stage: str, ctxs: Sequence[WriteContext], deps: Any, report: StageReport, work: Callable[[], None]) -> None:
    if not ctxs:
        return
    try:
        work()
    except LeaseLost:
        report.dropped += len(ctxs)
        log.info("stage_dropped", stage=stage, jobs=len(ctxs), reason="lease_lost")
    except PermanentError as exc:
        for ctx in ctxs:
            try:
                _fail(ctx, deps, exc, report, stage)
            except TransientError as db_exc:  # could not even record the failure: try again later
                _retry_later(stage, [ctx], deps, report, db_exc)
    except TransientError as exc:
        _retry_later(stage, ctxs, deps, report, exc)
    except Exception as exc:  # a bug or an unmapped library error: bounded by the attempt cap
        log.error("stage_crashed", stage=stage, jobs=len(ctxs), error=type(exc).__name__)
        _retry_later(stage, ctxs, deps, report, TransientError(f"stage crashed ({type(exc).__name__})",
                                                               code="STAGE_CRASHED"))


def _retry_later(stage: str, ctxs: Sequence[WriteContext], deps: Any, report: StageReport,
                 exc: TransientError) -> None:
    _release(ctxs, deps, stage)
    for ctx in ctxs:
        report.retry[ctx.stored_stage or stage].append(ctx.job_id)
    report.retry_error = exc
    log.warning("stage_retrying", stage=stage, jobs=len(ctxs), error_code=exc.code)


def _timed(stage: str, ctxs: Sequence[WriteContext], started: float) -> None:
    share = (time.perf_counter() - started) * 1000.0 / max(1, len(ctxs))
    for ctx in ctxs:
        ctx.timings_ms[stage] = round(ctx.timings_ms.get(stage, 0.0) + share, 3)


def _compute_one(stage: str, ctx: WriteContext, deps: Any, done: list[WriteContext]) -> None:
    started = time.perf_counter()
    SINGLE[stage](ctx, deps)
    _timed(stage, [ctx], started)
    done.append(ctx)


def _compute_batch(stage: str, ctxs: list[WriteContext], deps: Any, done: list[WriteContext]) -> None:
    started = time.perf_counter()
    BATCH[stage](ctxs, deps)
    _timed(stage, ctxs, started)
    for ctx in ctxs:
        if ctx.failure is not None:
            raise ctx.failure
    done.extend(ctxs)


def _persist(ctx: WriteContext, deps: Any, report: StageReport) -> None:
    started = time.perf_counter()
    outcome = persist.run(ctx, deps)
    if outcome.reroute_to:
        _timed("persist", [ctx], started)
        _advance_to(outcome.reroute_to, ctx, deps, report)
        return
    _observe(deps, "persist", ctx)
    log.info("job_succeeded", job_id=ctx.job_id, org_id=ctx.org_id, outcome=outcome.outcome,
             memory_id=outcome.memory_id)
    if deps.metrics is not None:
        deps.metrics.job_finished("succeeded", outcome.outcome, ctx)
    if deps.cache is not None:  # after commit: failures here degrade reads only
        deps.cache.evict(ctx.org_id, outcome.cache_evict)
        if outcome.cache_entry is not None:
            deps.cache.put(outcome.cache_entry)


def _advance_to(next_stage: str, ctx: WriteContext, deps: Any, report: StageReport) -> None:
    if _save([(ctx, next_stage, False)], deps):
        raise LeaseLost("job lease lost before write-back")
    ctx.stored_stage = next_stage
    report.publish[next_stage].append(ctx.job_id)


def _observe(deps: Any, stage: str, ctx: WriteContext) -> None:
    log.info("stage_completed", stage=stage, job_id=ctx.job_id, org_id=ctx.org_id,
             duration_ms=ctx.timings_ms.get(stage))
    if deps.metrics is not None:
        deps.metrics.stage_completed(stage, ctx.timings_ms.get(stage, 0.0) / 1000.0)


def _release(ctxs: Sequence[WriteContext], deps: Any, stage: str) -> None:
    for ctx in ctxs:
        try:
            with tenant_tx(deps.engine, ctx.org_id) as conn:
                jobs.release(conn, ctx, hold_seconds=deps.settings.retry_backoff_cap)
        except TransientError:
            log.warning("lease_release_failed", stage=stage, job_id=ctx.job_id)  # expires on its own


def fail_exhausted(job_ids: Sequence[str], deps: Any, error: IbexError, stage: str) -> list[str]:
    """A delivery ran out of retries: fail those of its jobs that used up their own attempts
    at this stage and that nobody holds. Jobs that joined the batch later keep their budget
    (released; the sweeper re-publishes them); jobs that moved on are left alone."""
    cap = deps.settings.stage_max_retries + 1
    with maint_tx(deps.engine) as conn:
        rows = list(conn.execute(jobs.EXHAUSTED_BY_IDS, {"ids": list(job_ids), "stage": stage, "cap": cap}))
    report = StageReport()
    for row in rows:
        ctx = WriteContext(job_id=str(row.id), org_id=row.org_id, agent_id=row.agent_id, request={},
                           idempotency_key=row.idempotency_key)
        _fail(ctx, deps, error, report, stage, fenced=False)
    return report.failed


def _fail(ctx: WriteContext, deps: Any, exc: IbexError, report: StageReport, stage: str, *, fenced: bool = True) -> None:
    final_status = 422 if isinstance(exc, (ValidationFailed, PermanentError)) else None
    with tenant_tx(deps.engine, ctx.org_id) as conn:
        done = jobs.fail(conn, org_id=ctx.org_id, agent_id=ctx.agent_id, job_id=ctx.job_id,
                         lease_token=ctx.lease_token if fenced else None, stage=stage,
                         idempotency_key=ctx.idempotency_key, error=exc.as_dict(), final_status=final_status)
    if done:
        report.failed.append(ctx.job_id)
        log.warning("job_failed", stage=stage, job_id=ctx.job_id, org_id=ctx.org_id, error_code=exc.code)
        if deps.metrics is not None:
            deps.metrics.job_finished("failed", exc.code, ctx)
