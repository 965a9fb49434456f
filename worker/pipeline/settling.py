"""Settling what a delivery left: publishing, dropping, failing, retrying. Every retry
decision of the pipeline is made here.

Per job, the outcome of a delivery is one of: advanced (saved with the next stage, published
after commit), finished (persist committed, see ``carrying``), failed, retried or dropped.
A failing job fails alone.

- Which errors retry: ``LeaseLost`` drops the job (another delivery owns it);
  ``PermanentError`` fails it, never retried; ``TransientError`` and anything unmapped (a
  bug: ``STAGE_CRASHED``) release the lease and retry it later.
- Inline or later: a model call that fails for a batch is retried at once, job by job, so a
  bad item fails alone; every other retry is a later delivery of the stage the job row is
  at, the lease released and held back from the sweeper for ``retry_backoff_cap``.
- When: after a capped, jittered backoff (``ibex_worker.retry.backoff_seconds``) by the
  delivery's attempt: this stage's own retry goes through its task's retry (that delivery's
  budget), a job reached inline is sent to its stage's task as that stage's second delivery.
- How many: a delivery retries at most ``max_retries`` times; then those of its jobs that
  used up their own attempts at the stage (``stage_max_retries + 1`` claims) fail, and a job
  claimed more often than that fails at its claim.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from ibex_worker.db import maint_tx, tenant_tx
from ibex_worker.errors import IbexError, LeaseLost, PermanentError, TransientError, ValidationFailed, final_status_of
from ibex_worker.pipeline import jobs
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.publish import publish
from ibex_worker.retry import backoff_seconds
from ibex_worker.store import jobs as job_store

log = structlog.get_logger("ibex.pipeline")
# A delivery's own retry budget is its Celery task's: giving it up is logged as the task's.
task_log = structlog.get_logger("ibex.tasks")


@dataclass
class StageReport:
    """What one delivery did with its jobs."""

    publish: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    # job ids to re-deliver later, by the stage their job row is at (where a retry claims them)
    retry: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    failed: list[str] = field(default_factory=list)
    dropped: int = 0
    retry_error: IbexError | None = None


@dataclass(frozen=True)
class Redelivery:
    """``job_ids`` sent to ``stage`` again ``countdown`` seconds from now; ``retries``: the
    deliveries of that stage the jobs already had (the task's retry budget counts them)."""

    stage: str
    job_ids: list[str]
    countdown: float
    retries: int


def retries_at_later_stages(stage: str, retry: Mapping[str, Sequence[str]], settings: Any) -> list[Redelivery]:
    """Jobs of a ``stage`` delivery that are retried at a later stage (reached inline). That
    was their first attempt at it (attempts = 1 in the row), so their retry is that stage's
    second delivery."""
    return [Redelivery(at, list(ids), _backoff(1, settings), 1) for at, ids in retry.items() if at != stage]


def retry_delivery(stage: str, job_ids: Sequence[str], settings: Any, *, retries: int,
                   max_retries: int) -> Redelivery | None:
    """This delivery again, after its ``retries`` earlier retries; None once the budget is spent."""
    attempt = retries + 1
    if attempt > max_retries:
        return None
    return Redelivery(stage, list(job_ids), _backoff(attempt, settings), attempt)


def _backoff(attempt: int, settings: Any) -> float:
    return backoff_seconds(attempt, base=settings.retry_backoff_base, cap=settings.retry_backoff_cap)


def _attempt_cap(settings: Any) -> int:
    """Claims a job may have at one stage: the first delivery and ``stage_max_retries`` more."""
    return settings.stage_max_retries + 1


def admit(stage: str, rows: Sequence[Any], deps: StageDeps, report: StageReport) -> list[WriteContext]:
    """The claimed jobs that may run ``stage``; one claimed more often than a stage allows fails
    now: ``STAGE_CRASHED`` when its last delivery died holding it (it never reached a batch
    again, see ``store.jobs``), else ``RETRIES_EXHAUSTED``."""
    ctxs = []
    for row in rows:
        ctx = WriteContext.from_row(row)
        if row.attempts > _attempt_cap(deps.settings):
            error = (TransientError("the stage's deliveries died holding this job", code="STAGE_CRASHED")
                     if row.holder_died else TransientError("stage retries exhausted", code="RETRIES_EXHAUSTED"))
            fail(ctx, deps, error, report, stage)
        else:
            ctxs.append(ctx)
    return ctxs


def send_on(app: Any, stage: str, report: StageReport, deps: StageDeps, *, retries: int,
            max_retries: int) -> Redelivery | None:
    """After the delivery's write-backs committed: publish the jobs that go on, then the
    retries at later stages; last, this delivery's own retry, returned for its task to raise."""
    for next_stage, ids in report.publish.items():
        publish(app, deps.settings, next_stage, ids)
    for later in retries_at_later_stages(stage, report.retry, deps.settings):
        publish(app, deps.settings, later.stage, later.job_ids, countdown=later.countdown, retries=later.retries)
    own = report.retry.get(stage)
    if not own:
        return None
    return retry_or_give_up(stage, own, report.retry_error, deps, retries=retries, max_retries=max_retries)


def retry_or_give_up(stage: str, job_ids: Sequence[str], error: Any, deps: StageDeps, *, retries: int,
                     max_retries: int) -> Redelivery | None:
    """This delivery's retry; None when its budget is spent and the jobs out of attempts failed."""
    again = retry_delivery(stage, job_ids, deps.settings, retries=retries, max_retries=max_retries)
    if again is None:
        _give_up(stage, job_ids, error, deps)
    return again


def _give_up(stage: str, job_ids: Sequence[str], error: Any, deps: StageDeps) -> None:
    try:
        failed = fail_exhausted(job_ids, deps, error, stage)
    except TransientError:
        failed = []
    if len(failed) < len(job_ids):  # the rest keep their own attempt budget: the sweeper re-publishes
        task_log.warning("stage_retries_exhausted", stage=stage, jobs=len(job_ids), failed=len(failed))


def guard(stage: str, ctxs: Sequence[WriteContext], deps: StageDeps, report: StageReport, work: Callable[[], None]) -> None:
    """Run ``work`` for the jobs and settle them by what it raised."""
    if not ctxs:
        return
    try:
        work()
    except LeaseLost:
        dropped(stage, len(ctxs), report)
    except PermanentError as exc:
        for ctx in ctxs:
            try:
                fail(ctx, deps, exc, report, stage)
            except TransientError as db_exc:  # could not even record the failure: try again later
                retry_later(stage, [ctx], deps, report, db_exc)
    except TransientError as exc:
        retry_later(stage, ctxs, deps, report, exc)
    except Exception as exc:  # a bug or an unmapped library error: bounded by the attempt cap
        retry_later(stage, ctxs, deps, report, _crashed(stage, len(ctxs), exc, "stage"))


def guard_batch(stage: str, ctxs: list[WriteContext], deps: StageDeps, report: StageReport,
                call: Callable[[list[WriteContext]], None]) -> list[WriteContext]:
    """Run a model stage's ``call`` once for the batch; return the jobs that completed it.
    A job the stage refuses (``ctx.failure``) fails alone; if the call fails, each job is
    retried alone at once, so a bad item fails alone and the others go on."""
    done: list[WriteContext] = []
    try:
        call(ctxs)
    except Exception as exc:
        if len(ctxs) == 1:
            guard(stage, ctxs, deps, report, lambda error=exc: _raise(error))
            return done
        log.warning("batch_split", stage=stage, jobs=len(ctxs), error=type(exc).__name__)
        for ctx in ctxs:
            guard(stage, [ctx], deps, report, lambda c=ctx: _call_alone(call, c, done))
        return done
    for ctx in ctxs:
        if ctx.failure is None:
            done.append(ctx)
        else:
            guard(stage, [ctx], deps, report, lambda c=ctx: _raise(c.failure))
    return done


def _call_alone(call: Callable[[list[WriteContext]], None], ctx: WriteContext, done: list[WriteContext]) -> None:
    call([ctx])
    if ctx.failure is not None:
        raise ctx.failure
    done.append(ctx)


def _raise(exc: BaseException) -> None:
    raise exc


def write_back_failed(stage: str, ctxs: Sequence[WriteContext], deps: StageDeps, report: StageReport,
                      exc: Exception) -> None:
    """Nothing of a write-back committed: all its jobs again later."""
    if not isinstance(exc, TransientError):
        exc = _crashed(stage, len(ctxs), exc, "write-back")
    retry_later(stage, ctxs, deps, report, exc)


def _crashed(stage: str, jobs_count: int, exc: Exception, what: str) -> TransientError:
    log.error("stage_crashed", stage=stage, jobs=jobs_count, error=type(exc).__name__)
    return TransientError(f"{what} crashed ({type(exc).__name__})", code="STAGE_CRASHED")


def dropped(stage: str, jobs_count: int, report: StageReport) -> None:
    """Jobs whose lease was lost: another delivery owns them."""
    if jobs_count:
        report.dropped += jobs_count
        log.info("stage_dropped", stage=stage, jobs=jobs_count, reason="lease_lost")


def retry_later(stage: str, ctxs: Sequence[WriteContext], deps: StageDeps, report: StageReport,
                exc: TransientError) -> None:
    _release(ctxs, deps, stage)
    for ctx in ctxs:
        report.retry[ctx.stored_stage or stage].append(ctx.job_id)
    report.retry_error = exc
    log.warning("stage_retrying", stage=stage, jobs=len(ctxs), error_code=exc.code)


def _release(ctxs: Sequence[WriteContext], deps: StageDeps, stage: str) -> None:
    for ctx in ctxs:
        try:
            with tenant_tx(deps.engine, ctx.org_id) as conn:
                jobs.release(conn, ctx, hold_seconds=deps.settings.retry_backoff_cap)
        except TransientError:
            log.warning("lease_release_failed", stage=stage, job_id=ctx.job_id)  # expires on its own


def fail_exhausted(job_ids: Sequence[str], deps: StageDeps, error: IbexError, stage: str) -> list[str]:
    """A delivery ran out of retries: fail those of its jobs that used up their own attempts
    at this stage and that nobody holds. Jobs that joined the batch later keep their budget
    (released; the sweeper re-publishes them); jobs that moved on are left alone."""
    with maint_tx(deps.engine) as conn:
        rows = job_store.exhausted(conn, job_ids, stage, _attempt_cap(deps.settings))
    report = StageReport()
    for row in rows:
        ctx = WriteContext(job_id=str(row.id), org_id=row.org_id, agent_id=row.agent_id, request={},
                           idempotency_key=row.idempotency_key)
        fail(ctx, deps, error, report, stage, fenced=False)
    return report.failed


def fail(ctx: WriteContext, deps: StageDeps, exc: IbexError, report: StageReport, stage: str, *, fenced: bool = True) -> None:
    """Fail the job for good (fenced on its lease unless ``fenced`` is False)."""
    final_status = final_status_of(exc.code) if isinstance(exc, (ValidationFailed, PermanentError)) else None
    with tenant_tx(deps.engine, ctx.org_id) as conn:
        done = jobs.fail(conn, org_id=ctx.org_id, agent_id=ctx.agent_id, job_id=ctx.job_id,
                         lease_token=ctx.lease_token if fenced else None, stage=stage,
                         idempotency_key=ctx.idempotency_key, error=exc.as_dict(), final_status=final_status)
    if done:
        report.failed.append(ctx.job_id)
        log.warning("job_failed", stage=stage, job_id=ctx.job_id, org_id=ctx.org_id, error_code=exc.code)
        if deps.metrics is not None:
            deps.metrics.job_finished("failed", exc.code, ctx)
