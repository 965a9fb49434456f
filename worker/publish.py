"""Publishing job ids to stage queues, and erasure ids to the erase queue. Messages carry
ids, never content.

A failed publish is not an error for the caller: the job row is durable and the sweeper
re-publishes jobs whose last publish is older than ``republish_after_seconds``.

Coalesced wake-ups (``Waker``, when batching is on): a new job does not need a message of
its own while an earlier message to the same stage is still waiting to be taken, because
the delivery of that message claims every job waiting on its queue (up to the batch size).
A Redis flag per stage and queue marks "a wake-up is pending": set (``SET NX``) by the
publisher that sends one, deleted by a delivery just before it claims waiting jobs. So

- a job committed while the flag is set is claimed by the pending message's delivery (that
  delivery deletes the flag, then claims: it sees every job committed before the flag was
  found set);
- a delivery whose batch came out full may have left jobs waiting: it sends the next
  wake-up itself, right after its claim (``chain``), so a burst larger than a batch drains
  without waiting for the sweeper;
- the flag expires after ``WAKE_TTL_SECONDS``, so a wake-up lost with the broker costs the
  jobs behind it at most that long before the next write sends one (the sweeper still
  covers jobs nobody writes after).

Without it every write sends a message; under load one delivery takes the jobs of many,
and the others find their job gone and are delivered for nothing (each a claim
transaction and a Celery round trip), piling up in Redis while the load lasts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis
import structlog

from ibex_worker.broker import FRONT

log = structlog.get_logger("ibex.publish")

# Give up quickly when the broker is down: the sweeper owns recovery, not the caller.
_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}


ERASURE_TASK = "ibex.erasure"
REEMBED_TASK = "ibex.reembed"


def task_name(stage: str) -> str:
    return f"ibex.stage.{stage}"


def publish_erasure(app: Any, settings: Any, erasure_id: str, *, countdown: float | None = None) -> bool:
    """Send an erasure's id to the erase queue; False when the broker could not take it (the
    receipt is durable and the sweeper re-publishes it)."""
    try:
        app.send_task(ERASURE_TASK, args=[erasure_id], queue=settings.queue_erase, countdown=countdown,
                      retry=True, retry_policy=_RETRY_POLICY)
    except Exception as exc:  # broker down
        log.warning("erasure_publish_deferred", erasure_id=erasure_id, error=type(exc).__name__)
        return False
    return True


def publish(app: Any, settings: Any, stage: str, job_ids: Sequence[str], *, countdown: float | None = None,
            retries: int = 0, empty_ok: bool = False, front: bool = False) -> bool:
    """``retries``: deliveries of this stage the jobs already had (the task's retry budget
    counts them), for a retry published by a delivery of an earlier stage. ``empty_ok``: send
    a message without ids (a wake-up: its delivery claims the jobs waiting on the queue).
    ``front``: delivered before the messages already waiting (``ibex_worker.broker``)."""
    if not job_ids and not empty_ok:
        return True
    try:
        app.send_task(task_name(stage), args=[list(job_ids)], queue=settings.queue_for(stage),
                      retry=True, retry_policy=_RETRY_POLICY, countdown=countdown, retries=retries,
                      headers={FRONT: True} if front else None)
    except Exception as exc:  # broker down: durable row stays, the sweeper re-publishes
        log.warning("publish_deferred", stage=stage, jobs=len(job_ids), error=type(exc).__name__)
        return False
    return True


def publish_reembed(app: Any, settings: Any, org_id: str, memory_ids: Sequence[str], model: str) -> None:
    """Send memory ids to re-embed with ``model`` to the embed queue (raises when the broker is
    down: the command that publishes them is interactive and stops)."""
    app.send_task(REEMBED_TASK, args=[org_id, list(memory_ids), model], queue=settings.queue_embed,
                  retry=True, retry_policy=_RETRY_POLICY)


# How long a "wake-up pending" flag outlives its message at most (a message lost with the
# broker, or one still waiting behind a busy worker: then one more message is sent).
WAKE_TTL_SECONDS = 5.0


ENTRY_STAGE = "validate"


def wake_flag(stage: str, queue: str) -> str:
    return f"ibex:wake:{queue}:{stage}"


class Waker:
    """Coalesced wake-ups for a batching stage (see the module docstring). With batching
    off (``stage_batch_max`` 1) a delivery takes only its own job, so every job is sent its
    own message, as ``publish`` does."""

    def __init__(self, app: Any, settings: Any, client: Any) -> None:
        self._app = app
        self._settings = settings
        self._redis = client
        self.coalescing = settings.stage_batch_max > 1

    def wakes(self, stage: str) -> bool:
        """Whether deliveries of ``stage`` must keep the flag (the only stage new jobs enter)."""
        return self.coalescing and stage == ENTRY_STAGE

    def wake(self, stage: str, job_ids: Sequence[str]) -> bool:
        """Make sure a delivery of ``stage`` will claim these (committed) jobs: send a message
        unless one is already pending. False when the broker could not take it."""
        if not self.coalescing:
            return publish(self._app, self._settings, stage, job_ids)
        flag = wake_flag(stage, self._settings.queue_for(stage))
        try:
            first = self._redis.set(flag, "1", nx=True, px=int(WAKE_TTL_SECONDS * 1000))
        except redis.RedisError:
            first = True  # cannot tell: send one (the broker is probably down as well)
        if not first:
            return True
        if publish(self._app, self._settings, stage, job_ids, empty_ok=True):
            return True
        self._clear(flag)  # nothing is pending after all: the next write must send one
        return False

    def taking(self, stage: str, queue: str) -> None:
        """A delivery is about to claim the jobs waiting on ``queue``: jobs committed from now
        on need a wake-up of their own."""
        self._clear(wake_flag(stage, queue))

    def chain(self, stage: str) -> bool:
        """A delivery's batch came out full: jobs may still be waiting; wake another one."""
        return self.wake(stage, [])

    def _clear(self, flag: str) -> None:
        try:
            self._redis.delete(flag)
        except redis.RedisError:
            log.warning("wake_flag_clear_failed")  # expires on its own
