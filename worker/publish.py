"""Publishing job ids to stage queues. Messages carry ids, never content.

A failed publish is not an error for the caller: the job row is durable and the sweeper
re-publishes jobs whose last publish is older than ``republish_after_seconds``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import structlog

log = structlog.get_logger("ibex.publish")

# Give up quickly when the broker is down: the sweeper owns recovery, not the caller.
_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}


def task_name(stage: str) -> str:
    return f"ibex.stage.{stage}"


def publish(app: Any, settings: Any, stage: str, job_ids: Sequence[str], *, countdown: float | None = None,
            retries: int = 0) -> bool:
    """``retries``: deliveries of this stage the jobs already had (the task's retry budget
    counts them), for a retry published by a delivery of an earlier stage."""
    if not job_ids:
        return True
    try:
        app.send_task(task_name(stage), args=[list(job_ids)], queue=settings.queue_for(stage),
                      retry=True, retry_policy=_RETRY_POLICY, countdown=countdown, retries=retries)
    except Exception as exc:  # broker down: durable row stays, the sweeper re-publishes
        log.warning("publish_deferred", stage=stage, jobs=len(job_ids), error=type(exc).__name__)
        return False
    return True
