"""The job of record: ``memory_write_jobs`` and the idempotency ledger.

Repository helpers take a connection and never commit. A job moves
``queued -> running -> succeeded | failed``; ``stage`` says which stage runs next. A stage
delivery claims the job with a fresh lease token; every write-back is fenced on that token,
so a delivery whose lease expired and was taken over cannot overwrite the winner.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, UUID

from worker.adapters.embedder import EMBEDDING_DIM
from worker.errors import LeaseLost
from worker.pipeline.context import WriteContext

_IDS = bindparam("ids", type_=ARRAY(UUID(as_uuid=False)))

_INSERT_JOB = text(
    "INSERT INTO memory_write_jobs (org_id, agent_id, raw_content, request, idempotency_key, published_at, "
    "published_queue) VALUES (:org_id, :agent_id, :raw_content, CAST(:request AS jsonb), :idempotency_key, now(), "
    ":queue) RETURNING id"
)

_INSERT_RELEASE_JOB = text(
    "INSERT INTO memory_write_jobs (org_id, agent_id, stage, request, context, release_of, published_at, "
    "published_queue) VALUES (:org_id, :agent_id, 'pii', CAST(:request AS jsonb), CAST(:context AS jsonb), "
    ":release_of, now(), :queue) RETURNING id"
)

_CLAIMABLE = ("stage = :stage AND status IN ('queued', 'running') "
              "AND (lease_expires_at IS NULL OR lease_expires_at < now())")

_CLAIM = text(
    f"""
    WITH own AS (
        SELECT id FROM memory_write_jobs
         WHERE id = ANY(:ids) AND {_CLAIMABLE}
           FOR UPDATE SKIP LOCKED
    ), waiting AS (
        SELECT id FROM memory_write_jobs
         WHERE {_CLAIMABLE} AND published_queue = :queue AND id <> ALL(:ids)
         ORDER BY updated_at
         LIMIT :extra
           FOR UPDATE SKIP LOCKED
    )
    UPDATE memory_write_jobs
       SET status = 'running', lease_token = gen_random_uuid(),
           lease_expires_at = now() + make_interval(secs => :lease_seconds),
           attempts = attempts + 1, updated_at = now()
     WHERE id IN (SELECT id FROM own UNION SELECT id FROM waiting)
    RETURNING *
    """
).bindparams(_IDS)

_SAVE_STAGE = text(
    """
    UPDATE memory_write_jobs
       SET stage = :next_stage, raw_content = :raw_content, request = CAST(:request AS jsonb),
           context = CAST(:context AS jsonb),
           embedding = :embedding, decisions = CAST(:decisions AS jsonb), timings_ms = CAST(:timings AS jsonb),
           -- at a new stage: 0 claims yet, or 1 when this delivery goes on with the job (inline)
           attempts = CASE WHEN :next_stage = stage THEN attempts WHEN :keep_lease THEN 1 ELSE 0 END,
           lease_token = CASE WHEN :keep_lease THEN lease_token END,
           lease_expires_at = CASE WHEN :keep_lease THEN lease_expires_at END,
           published_at = now(), published_queue = :queue,
           updated_at = now()
     WHERE org_id = :org_id AND id = :job_id AND lease_token = :lease_token AND status = 'running'
    """
).bindparams(bindparam("embedding", type_=Vector(EMBEDDING_DIM)))

_HOLDS_LEASE = text(
    "SELECT 1 FROM memory_write_jobs WHERE org_id = :org_id AND id = :job_id "
    "AND lease_token = :lease_token AND status = 'running' FOR UPDATE"
)

_FINISH = text(
    """
    UPDATE memory_write_jobs
       SET status = 'succeeded', stage = 'done', memory_id = :memory_id, outcome = :outcome,
           result = CAST(:result AS jsonb), decisions = CAST(:decisions AS jsonb),
           timings_ms = CAST(:timings AS jsonb), context = CAST(:context AS jsonb) - 'content',
           raw_content = NULL, request = '{}'::jsonb, embedding = NULL, lease_token = NULL, lease_expires_at = NULL,
           finished_at = now(), updated_at = now()
     WHERE org_id = :org_id AND id = :job_id AND lease_token = :lease_token
    """
)

_FAIL = text(
    """
    UPDATE memory_write_jobs
       SET status = 'failed', error = CAST(:error AS jsonb), raw_content = NULL, request = '{}'::jsonb,
           embedding = NULL,
           stage = COALESCE(CAST(:stage AS text), stage),  -- where it failed (inline stages are not saved)
           context = context - 'content', lease_token = NULL, lease_expires_at = NULL,
           finished_at = now(), updated_at = now()
     WHERE org_id = :org_id AND id = :job_id AND status IN ('queued', 'running')
       AND CASE WHEN CAST(:lease_token AS uuid) IS NULL
                THEN (lease_token IS NULL OR lease_expires_at < now())  -- nobody else is working on it
                     AND stage = CAST(:stage AS text)                    -- and it has not moved on
                ELSE lease_token = CAST(:lease_token AS uuid) END
    """
)

_JOB_STATUS = text("SELECT status, stage FROM memory_write_jobs WHERE org_id = :org_id AND id = :job_id FOR UPDATE")

_RELEASE = text(
    "UPDATE memory_write_jobs SET lease_token = NULL, lease_expires_at = NULL, updated_at = now(), "
    "published_at = now() + make_interval(secs => :hold_seconds) "
    "WHERE org_id = :org_id AND id = :job_id AND lease_token = :lease_token"
)

_FINALIZE_CLAIM = text(
    "UPDATE memory_idempotency_keys SET state = 'completed', response_status = :status, "
    "response_body = CAST(:body AS jsonb), updated_at = now() "
    "WHERE org_id = :org_id AND agent_id = :agent_id AND key = :key AND job_id = :job_id"
)

_DROP_CLAIM = text(
    "DELETE FROM memory_idempotency_keys "
    "WHERE org_id = :org_id AND agent_id = :agent_id AND key = :key AND job_id = :job_id AND state = 'in_progress'"
)


def insert_job(conn: Any, org_id: str, agent_id: str, raw_content: str, request: dict[str, Any],
               idempotency_key: str | None, queue: str | None = None) -> str:
    """``queue``: where the job's first stage will be published (lets deliveries batch it)."""
    return str(conn.execute(_INSERT_JOB, {
        "org_id": org_id, "agent_id": agent_id, "raw_content": raw_content,
        "request": json.dumps(request), "idempotency_key": idempotency_key, "queue": queue}).scalar_one())


def insert_release_job(conn: Any, org_id: str, agent_id: str, request: dict[str, Any], context: dict[str, Any],
                       release_of: str, queue: str) -> str:
    """A reviewer's release of a quarantined memory: a job that starts at the PII stage (for
    the reviewer's note) with the memory's stored, masked text in its context. The unique
    index on ``release_of`` refuses a second one while this one runs."""
    return str(conn.execute(_INSERT_RELEASE_JOB, {
        "org_id": org_id, "agent_id": agent_id, "request": json.dumps(request), "context": json.dumps(context),
        "release_of": release_of, "queue": queue}).scalar_one())


def claim(conn: Any, job_ids: Sequence[str], stage: str, lease_seconds: int, *,
          queue: str | None = None, extra: int = 0) -> list[Any]:
    """Lease the given jobs that are still at ``stage`` and unheld, plus up to ``extra`` other
    jobs waiting for the same stage on the same queue (micro-batching: one delivery, one model
    call, many writes; their own messages later find them gone and are dropped)."""
    return list(conn.execute(_CLAIM, {"ids": list(job_ids), "stage": stage, "lease_seconds": lease_seconds,
                                      "queue": queue, "extra": extra if queue else 0}))


def save_stage(conn: Any, ctx: WriteContext, next_stage: str, queue: str | None, *,
               keep_lease: bool = False) -> bool:
    """Write the job back at ``next_stage`` (fenced on the lease). ``keep_lease``: the same
    delivery goes on with the job (inline continuation), so nobody else may claim it yet."""
    return conn.execute(_SAVE_STAGE, {
        "org_id": ctx.org_id, "job_id": ctx.job_id, "lease_token": ctx.lease_token, "next_stage": next_stage,
        "queue": queue, "keep_lease": keep_lease, "request": json.dumps(ctx.request),
        "raw_content": ctx.raw_content, "context": json.dumps(ctx.context_json()), "embedding": ctx.embedding,
        "decisions": json.dumps(ctx.decisions), "timings": json.dumps(ctx.timings_ms),
    }).rowcount == 1


def holds_lease(conn: Any, ctx: WriteContext) -> bool:
    return conn.execute(_HOLDS_LEASE, {"org_id": ctx.org_id, "job_id": ctx.job_id,
                                       "lease_token": ctx.lease_token}).first() is not None


def finish(conn: Any, ctx: WriteContext, *, outcome: str, memory_id: str, response_status: int,
           body: dict[str, Any]) -> None:
    """Record the outcome; raises ``LeaseLost`` (rolling the caller's transaction back) if the
    job is no longer ours."""
    finished = conn.execute(_FINISH, {
        "org_id": ctx.org_id, "job_id": ctx.job_id, "lease_token": ctx.lease_token, "memory_id": memory_id,
        "outcome": outcome, "result": json.dumps(body), "decisions": json.dumps(ctx.decisions),
        "timings": json.dumps(ctx.timings_ms), "context": json.dumps(ctx.context_json()),
    }).rowcount
    if finished != 1:
        raise LeaseLost("job lease lost at finish")
    if ctx.idempotency_key:
        conn.execute(_FINALIZE_CLAIM, {"org_id": ctx.org_id, "agent_id": ctx.agent_id, "key": ctx.idempotency_key,
                                       "job_id": ctx.job_id, "status": response_status, "body": json.dumps(body)})


def fail(conn: Any, *, org_id: str, agent_id: str, job_id: str, lease_token: str | None,
         idempotency_key: str | None, error: dict[str, Any], final_status: int | None,
         stage: str | None = None) -> bool:
    """Mark a job failed. A permanent failure (``final_status`` given, e.g. 422) becomes the
    idempotency key's final answer; a transient one releases the key so a retry runs anew."""
    done = conn.execute(_FAIL, {"org_id": org_id, "job_id": job_id, "lease_token": lease_token,
                                "stage": stage, "error": json.dumps(error)}).rowcount == 1
    if done and idempotency_key:
        params = {"org_id": org_id, "agent_id": agent_id, "key": idempotency_key, "job_id": job_id}
        if final_status is None:
            conn.execute(_DROP_CLAIM, params)
        else:
            body = {"error": error, "job_id": job_id}
            conn.execute(_FINALIZE_CLAIM, {**params, "status": final_status, "body": json.dumps(body)})
    return done


def retire_for_takeover(conn: Any, org_id: str, job_id: str) -> bool:
    """An idempotency claim's lease ran out and a new request with the key wants it. Its old
    job may only be replaced if nobody is working on it: an unfinished job without a live
    lease is failed (``TAKEN_OVER``; its later deliveries find it finished and drop it), so at
    most one of the two can ever persist. False when a worker holds it (still in progress)."""
    row = conn.execute(_JOB_STATUS, {"org_id": org_id, "job_id": job_id}).first()
    if row is None or row.status not in ("queued", "running"):
        return True
    error = {"code": "TAKEN_OVER", "message": "a retry with the same idempotency key replaced this job"}
    # No key handling here: the caller moves the claim to the new job in the same transaction.
    return fail(conn, org_id=org_id, agent_id="", job_id=job_id, lease_token=None, idempotency_key=None,
                error=error, final_status=None, stage=row.stage)


def release(conn: Any, ctx: WriteContext, hold_seconds: float = 0.0) -> None:
    """Give the job up for a delayed retry. ``hold_seconds`` (the longest retry countdown) keeps
    the sweeper from re-publishing it before its own retry message is due."""
    conn.execute(_RELEASE, {"org_id": ctx.org_id, "job_id": ctx.job_id, "lease_token": ctx.lease_token,
                            "hold_seconds": hold_seconds})


def fingerprint(body: dict[str, Any], key: str) -> str:
    """HMAC-SHA256 of the canonical JSON under the deployment's key: key order and whitespace do
    not matter, and without the key nobody can test a guessed request against the ledger."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hmac.new(key.encode("utf-8"), canonical.encode("utf-8"), hashlib.sha256).hexdigest()


EXHAUSTED_BY_IDS = text(
    "SELECT id, org_id, agent_id, idempotency_key FROM memory_write_jobs "
    "WHERE id = ANY(:ids) AND stage = :stage AND status IN ('queued', 'running') AND attempts >= :cap "
    "AND (lease_token IS NULL OR lease_expires_at < now())"
).bindparams(_IDS)

_SWEEP = text(
    """
    UPDATE memory_write_jobs SET published_at = now()
     WHERE id IN (
        SELECT id FROM memory_write_jobs
         WHERE status IN ('queued', 'running')
           AND (lease_expires_at IS NULL OR lease_expires_at < now())
           AND (published_at IS NULL OR published_at < now() - make_interval(secs => :republish_after))
         ORDER BY created_at
         LIMIT :limit
         FOR UPDATE SKIP LOCKED)
    RETURNING id, stage
    """
)


def sweep_lost(conn: Any, republish_after: float, limit: int = 500) -> list[tuple[str, str]]:
    """Unfinished jobs nobody holds whose last publish is old: their message was lost (broker
    restart, a publish that failed, a worker killed mid-stage). Marks them re-published."""
    rows = conn.execute(_SWEEP, {"republish_after": republish_after, "limit": limit})
    return [(str(r.id), r.stage) for r in rows]
