"""The entry a stage task calls: run one delivery of a stage over its job ids and send the jobs on.

A delivery claims its jobs (``claiming``), carries them through the stage and the next
stages this worker consumes (``carrying``), and settles each one (``settling``): the jobs
that go on are published after their write-back committed, retries are scheduled, and
failures recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

from ibex_worker.errors import TransientError
from ibex_worker.pipeline import carrying, claiming, settling
from ibex_worker.pipeline.context import StageDeps
from ibex_worker.pipeline.settling import Redelivery, StageReport


def run_delivery(app: Any, stage: str, job_ids: Sequence[str], deps: StageDeps, *, queue: str | None,
                 retries: int, max_retries: int) -> Redelivery | None:
    """``queue``: the queue the delivery came from; ``retries``: the delivery's earlier retries
    out of ``max_retries``. Returns the retry of this delivery itself when one is due (its task
    raises it); everything else the delivery leads to is published here."""
    try:
        report = run_stage(stage, job_ids, deps, queue=queue)
    except TransientError as exc:  # could not even claim: retry the whole delivery
        return settling.retry_or_give_up(stage, job_ids, exc, deps, retries=retries, max_retries=max_retries)
    return settling.send_on(app, stage, report, deps, retries=retries, max_retries=max_retries)


def run_stage(stage: str, job_ids: Sequence[str], deps: StageDeps, *, queue: str | None = None) -> StageReport:
    """Claim, compute and write back; publishes nothing. ``queue``: the queue this delivery
    came from; waiting jobs published there join the batch, up to ``stage_batch_max`` jobs in all."""
    report = StageReport()
    rows = claiming.claim(stage, job_ids, deps, queue, top_up=carrying.reaches_model_stage(stage, deps))
    report.dropped = len(set(job_ids) - {str(row.id) for row in rows})
    with deps.leases.holding(rows) if deps.leases is not None else nullcontext():
        carrying.carry(stage, settling.admit(stage, rows, deps, report), deps, report)
    return report
