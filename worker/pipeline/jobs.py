"""A stage delivery's write-backs to its job, and the job's idempotency key.

Functions take a connection and never commit. A stage delivery claims the job with a fresh
lease token (``ibex_worker.store.jobs.claim``); every write-back here is fenced on that token, so
a delivery whose lease expired and was taken over cannot overwrite the winner. Finishing or
failing a keyed job settles its idempotency key in the same transaction.
"""

from __future__ import annotations

from typing import Any

from ibex_worker.errors import LeaseLost
from ibex_worker.pipeline.context import WriteContext
from ibex_worker.store import idempotency
from ibex_worker.store import jobs as job_store


def save_stage(conn: Any, ctx: WriteContext, next_stage: str, queue: str | None, *,
               keep_lease: bool = False) -> bool:
    """Write the job back at ``next_stage`` (fenced on the lease). ``keep_lease``: the same
    delivery goes on with the job (inline continuation), so nobody else may claim it yet."""
    return job_store.save_stage(
        conn, ctx.org_id, ctx.job_id, ctx.lease_token, next_stage=next_stage, queue=queue, keep_lease=keep_lease,
        raw_content=ctx.raw_content, request=ctx.request, context=ctx.context_json(), embedding=ctx.embedding,
        decisions=ctx.decisions, timings=ctx.timings_ms)


def finish(conn: Any, ctx: WriteContext, *, outcome: str, memory_id: str, response_status: int,
           body: dict[str, Any]) -> None:
    """Record the outcome; raises ``LeaseLost`` (rolling the caller's transaction back) if the
    job is no longer ours."""
    finished = job_store.mark_succeeded(conn, ctx.org_id, ctx.job_id, ctx.lease_token, outcome=outcome,
                                        memory_id=memory_id, result=body, decisions=ctx.decisions,
                                        timings=ctx.timings_ms, context=ctx.context_json())
    if not finished:
        raise LeaseLost("job lease lost at finish")
    if ctx.idempotency_key:
        idempotency.complete_claim(conn, ctx.org_id, ctx.agent_id, ctx.idempotency_key, ctx.job_id,
                                   response_status, body)


def fail(conn: Any, *, org_id: str, agent_id: str, job_id: str, lease_token: str | None,
         idempotency_key: str | None, error: dict[str, Any], final_status: int | None,
         stage: str | None = None) -> bool:
    """Mark a job failed. A permanent failure (``final_status`` given, e.g. 422) becomes the
    idempotency key's final answer; a transient one releases the key so a retry runs anew."""
    done = job_store.mark_failed(conn, org_id, job_id, lease_token, stage, error)
    if done and idempotency_key:
        if final_status is None:
            idempotency.drop_claim(conn, org_id, agent_id, idempotency_key, job_id)
        else:
            idempotency.complete_claim(conn, org_id, agent_id, idempotency_key, job_id, final_status,
                                       {"error": error, "job_id": job_id})
    return done


def release(conn: Any, ctx: WriteContext, hold_seconds: float = 0.0) -> None:
    """Give the job up for a delayed retry. ``hold_seconds`` (the longest retry countdown) keeps
    the sweeper from re-publishing it before its own retry message is due."""
    job_store.release(conn, ctx.org_id, ctx.job_id, ctx.lease_token, hold_seconds)
