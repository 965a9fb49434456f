"""Carrying a claimed batch through its stage and on into the next stages this worker consumes.

Inline continuation (``IBEX_STAGE_INLINE``): when the next stage's queue is one this worker
process consumes, the delivery carries its jobs on to that stage itself instead of publishing
them back to the broker for the same worker to take again. The jobs keep their lease; the
job row is written before and after each model stage (the raw content is erased after PII,
the embedding kept) and before every hop, so a crash or a retry resumes from there. A
worker that does not consume a stage's queue (a separate PII or embedding host) still hands
the job over through the broker. Each stage stays its own function, metrics and decisions.
A job that completes a stage is logged and counted here, and a job persist finished has
its read cache updated after the commit; a job that fails, or whose lease was lost, is
``settling``'s.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import structlog

from ibex_worker.config import STAGES
from ibex_worker.db import maint_tx
from ibex_worker.errors import LeaseLost
from ibex_worker.pipeline import conflict, embed, exact_dedup, jobs, labels, near_dedup, persist, pii, settling, validate
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.pipeline.settling import StageReport

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


def runs_inline(stage: str, deps: StageDeps) -> bool:
    """True when this process would take ``stage``'s queue itself: no hop needed."""
    settings = deps.settings
    return bool(settings.stage_inline) and settings.queue_for(stage) in deps.consumed_queues


def reaches_model_stage(stage: str, deps: StageDeps) -> bool:
    """True when ``stage`` is a model stage or a delivery of it carries its jobs into one."""
    current: str | None = stage
    while current is not None:
        if current in BATCH:
            return True
        current = NEXT_STAGE.get(current)
        if current is not None and not runs_inline(current, deps):
            return False
    return False


def carry(stage: str, ctxs: list[WriteContext], deps: StageDeps, report: StageReport) -> None:
    """Run the claimed jobs through ``stage`` and every later stage reached inline."""
    pending: dict[str, list[WriteContext]] = defaultdict(list)
    pending[stage] = ctxs
    for current in STAGES[STAGES.index(stage):]:
        batch = pending.pop(current, [])
        if batch:
            _hand_on(current, _compute(current, batch, deps, report), deps, report, pending)


def _compute(stage: str, ctxs: list[WriteContext], deps: StageDeps, report: StageReport) -> list[WriteContext]:
    """Run ``stage`` over the jobs; return those that completed it and go on. Failures are
    settled job by job."""
    if stage in BATCH:
        return settling.guard_batch(stage, ctxs, deps, report, lambda batch: _compute_batch(stage, batch, deps))
    done: list[WriteContext] = []
    if stage == "persist":  # each job is settled (or sent back to a stage) by persist itself
        for ctx in _fewest_first(ctxs):
            settling.guard(stage, [ctx], deps, report, lambda c=ctx: _persist(c, deps, report))
        return done
    for ctx in ctxs:
        settling.guard(stage, [ctx], deps, report, lambda c=ctx: _compute_one(stage, c, deps, done))
    return done


def _fewest_first(ctxs: list[WriteContext]) -> list[WriteContext]:
    """The jobs of agents with the fewest jobs in the batch first: a light tenant's write
    commits before the delivery works through a flooding agent's, whose corpus lock another
    delivery may hold."""
    per_agent = Counter((ctx.org_id, ctx.agent_id) for ctx in ctxs)
    return sorted(ctxs, key=lambda ctx: per_agent[(ctx.org_id, ctx.agent_id)])


def _hand_on(stage: str, ctxs: list[WriteContext], deps: StageDeps, report: StageReport,
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
    skip = _write_back(stage, to_save, deps, report) if to_save else set()
    for ctx, next_stage, inline in moves:
        if ctx.job_id in skip:
            continue
        _completed(deps, stage, ctx)
        if inline:
            pending[next_stage].append(ctx)
        else:
            report.publish[next_stage].append(ctx.job_id)


def _write_back(stage: str, moves: list[tuple[WriteContext, str, bool]], deps: StageDeps,
                report: StageReport) -> set[str]:
    """Save the jobs at their next stage; returns the ids that do not go on (lease lost, or
    the write-back failed and settling hands them back for a retry)."""
    try:
        lost = _save(moves, deps)
    except Exception as exc:  # nothing of this write-back committed: settling decides what now
        settling.write_back_failed(stage, [ctx for ctx, _, _ in moves], deps, report, exc)
        return {ctx.job_id for ctx, _, _ in moves}
    settling.dropped(stage, len(lost), report)
    for ctx, next_stage, _ in moves:
        ctx.stored_stage = next_stage
    return lost


def _save(moves: Sequence[tuple[WriteContext, str, bool]], deps: StageDeps) -> set[str]:
    """Write the jobs back in one transaction; returns the ids whose lease was lost."""
    lost: set[str] = set()
    # Stage write-backs commit without waiting for the WAL flush: after a database crash a
    # lost one only means the stage runs again (fencing drops the stale delivery).
    with maint_tx(deps.engine, durable=False) as conn:
        for ctx, next_stage, inline in moves:
            if not jobs.save_stage(conn, ctx, next_stage, deps.settings.queue_for(next_stage), keep_lease=inline):
                lost.add(ctx.job_id)
    return lost


def _timed(stage: str, ctxs: Sequence[WriteContext], started: float) -> None:
    share = (time.perf_counter() - started) * 1000.0 / max(1, len(ctxs))
    for ctx in ctxs:
        ctx.timings_ms[stage] = round(ctx.timings_ms.get(stage, 0.0) + share, 3)


def _compute_one(stage: str, ctx: WriteContext, deps: StageDeps, done: list[WriteContext]) -> None:
    started = time.perf_counter()
    SINGLE[stage](ctx, deps)
    _timed(stage, [ctx], started)
    done.append(ctx)


def _compute_batch(stage: str, ctxs: list[WriteContext], deps: StageDeps) -> None:
    """One model call for the jobs; a job the stage refuses is marked (``ctx.failure``)."""
    started = time.perf_counter()
    BATCH[stage](ctxs, deps)
    _timed(stage, ctxs, started)


def _persist(ctx: WriteContext, deps: StageDeps, report: StageReport) -> None:
    started = time.perf_counter()
    outcome = persist.run(ctx, deps)
    if outcome.reroute_to:
        _timed("persist", [ctx], started)
        _advance_to(outcome.reroute_to, ctx, deps, report)
        return
    _succeeded(ctx, outcome, deps)


def _completed(deps: StageDeps, stage: str, ctx: WriteContext) -> None:
    log.info("stage_completed", stage=stage, job_id=ctx.job_id, org_id=ctx.org_id,
             duration_ms=ctx.timings_ms.get(stage))
    if deps.metrics is not None:
        deps.metrics.stage_completed(stage, ctx.timings_ms.get(stage, 0.0) / 1000.0)


def _succeeded(ctx: WriteContext, outcome: Any, deps: StageDeps) -> None:
    """Persist committed the job: log and count it, then update the read cache."""
    _completed(deps, "persist", ctx)
    log.info("job_succeeded", job_id=ctx.job_id, org_id=ctx.org_id, outcome=outcome.outcome,
             memory_id=outcome.memory_id)
    if deps.metrics is not None:
        deps.metrics.job_finished("succeeded", outcome.outcome, ctx)
    if deps.cache is not None:  # after commit: failures here degrade reads only
        deps.cache.evict(ctx.org_id, outcome.cache_evict)
        if outcome.cache_entry is not None:
            deps.cache.put(outcome.cache_entry)


def _advance_to(next_stage: str, ctx: WriteContext, deps: StageDeps, report: StageReport) -> None:
    if _save([(ctx, next_stage, False)], deps):
        raise LeaseLost("job lease lost before write-back")
    ctx.stored_stage = next_stage
    report.publish[next_stage].append(ctx.job_id)
