"""The job of record, ``memory_write_jobs``.

A job moves ``queued -> running -> succeeded | failed``; ``stage`` says which stage runs
next. A delivery claims a job with a fresh lease token, and every write-back is fenced on
that token (the statement matches no row once the lease was taken over).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, TEXT, UUID

from ibex_worker.store.vectors import EMBEDDING_DIM

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
# Claimed twice or more at its stage and its holder died (again): it may be what kills them.
SUSPECT_AFTER_CLAIMS = 2
_SUSPECT = f"(lease_expires_at IS NOT NULL AND attempts >= {SUSPECT_AFTER_CLAIMS})"

# Jobs waiting on the delivery's queue join its batch with their orgs taking turns, so one org's
# flood does not hold another's writes back. A lease still set on a claimable job ran out: the
# delivery that held it died without settling it (settling clears the lease). Such a job never
# joins another delivery's batch. After its first claim at the stage died, the sweeper sends it
# again with the rest of its dead batch, and they are claimed together (a kill of the process,
# not of the job, costs one attempt and a few seconds). A job that was claimed at least twice
# and whose holder died again is a suspect: it is claimed alone, so a job that kills its
# process burns its batch-mates' attempts twice at most.
_CLAIM = text(
    f"""
    WITH candidates AS (
        SELECT id, lease_expires_at IS NOT NULL AS holder_died, {_SUSPECT} AS suspect FROM memory_write_jobs
         WHERE id = ANY(:ids) AND {_CLAIMABLE}
         ORDER BY {_SUSPECT} DESC, updated_at
         LIMIT :own_limit
           FOR UPDATE SKIP LOCKED
    ), suspect AS (
        SELECT id FROM candidates WHERE suspect LIMIT 1
    ), own AS (  -- a suspect goes alone
        SELECT id, holder_died FROM candidates
         WHERE NOT EXISTS (SELECT 1 FROM suspect) OR id = (SELECT id FROM suspect)
    ), waiting AS (  -- orgs take turns: each org's oldest, then each org's second oldest, ...
        SELECT id, false AS holder_died FROM memory_write_jobs
         WHERE id IN (
            SELECT id FROM (
                SELECT id, updated_at, row_number() OVER (PARTITION BY org_id ORDER BY updated_at) AS turn
                  FROM memory_write_jobs
                 WHERE {_CLAIMABLE} AND lease_expires_at IS NULL AND published_queue = :queue
                   AND id <> ALL(:ids) AND NOT EXISTS (SELECT 1 FROM candidates WHERE holder_died)
            ) AS by_org
             ORDER BY turn, updated_at
             LIMIT :extra)
           AND {_CLAIMABLE} AND lease_expires_at IS NULL
           FOR UPDATE SKIP LOCKED
    ), taken AS (
        SELECT * FROM own UNION ALL SELECT * FROM waiting
    )
    UPDATE memory_write_jobs AS j
       SET status = 'running', lease_token = gen_random_uuid(),
           lease_expires_at = now() + make_interval(secs => :lease_seconds),
           attempts = attempts + 1, updated_at = now()
      FROM taken
     WHERE j.id = taken.id
    RETURNING j.*, taken.holder_died
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

_SUCCEED = text(
    """
    UPDATE memory_write_jobs
       SET status = 'succeeded', stage = 'done', memory_id = :memory_id, outcome = :outcome,
           result = CAST(:result AS jsonb), decisions = CAST(:decisions AS jsonb),
           timings_ms = CAST(:timings AS jsonb), context = CAST(:context AS jsonb) - 'content' - 'redaction_tags',
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
           context = context - 'content' - 'redaction_tags', lease_token = NULL, lease_expires_at = NULL,
           finished_at = now(), updated_at = now()
     WHERE org_id = :org_id AND id = :job_id AND status IN ('queued', 'running')
       AND CASE WHEN CAST(:lease_token AS uuid) IS NULL
                THEN (lease_token IS NULL OR lease_expires_at < now())  -- nobody else is working on it
                     AND stage = CAST(:stage AS text)                    -- and it has not moved on
                ELSE lease_token = CAST(:lease_token AS uuid) END
    """
)

_STATUS_FOR_UPDATE = text(
    "SELECT status, stage FROM memory_write_jobs WHERE org_id = :org_id AND id = :job_id FOR UPDATE"
)

_RELEASE = text(
    "UPDATE memory_write_jobs SET lease_token = NULL, lease_expires_at = NULL, updated_at = now(), "
    "published_at = now() + make_interval(secs => :hold_seconds) "
    "WHERE org_id = :org_id AND id = :job_id AND lease_token = :lease_token"
)

_EXHAUSTED = text(
    "SELECT id, org_id, agent_id, idempotency_key FROM memory_write_jobs "
    "WHERE id = ANY(:ids) AND stage = :stage AND status IN ('queued', 'running') AND attempts >= :cap "
    "AND (lease_token IS NULL OR lease_expires_at < now())"
).bindparams(_IDS)

# A row locked right now is being written by its own delivery (claims and the sweeper skip
# locked rows too): skipped, so the renewal never waits on, or deadlocks with, that transaction.
_RENEW = text(
    """
    UPDATE memory_write_jobs
       SET lease_expires_at = now() + make_interval(secs => :lease_seconds)
     WHERE id IN (
        SELECT j.id FROM memory_write_jobs AS j
          JOIN unnest(CAST(:ids AS uuid[]), CAST(:tokens AS uuid[])) AS held(id, token)
            ON j.id = held.id AND j.lease_token = held.token
         WHERE j.status = 'running'
           FOR UPDATE OF j SKIP LOCKED)
    """
)

_SWEEP = text(
    f"""
    UPDATE memory_write_jobs SET published_at = now()
     WHERE id IN (
        SELECT id FROM memory_write_jobs
         WHERE status IN ('queued', 'running')
           AND (lease_expires_at IS NULL OR lease_expires_at < now())
           AND (published_at IS NULL OR published_at < now() - make_interval(secs => :republish_after)
                OR published_at < lease_expires_at)  -- its holder stopped renewing: dead, publish at once
         ORDER BY created_at
         LIMIT :limit
         FOR UPDATE SKIP LOCKED)
    RETURNING id, stage, lease_expires_at IS NOT NULL AS holder_died, {_SUSPECT} AS suspect
    """
)

_VIEW = text(
    "SELECT id, status, stage, attempts, result, error, decisions, timings_ms, created_at, finished_at, "
    "memory_id, outcome FROM memory_write_jobs WHERE org_id = :org_id AND id = CAST(:job_id AS uuid) "
    "AND (CAST(:agents AS text[]) IS NULL OR agent_id = ANY(:agents))"
).bindparams(bindparam("agents", type_=ARRAY(TEXT)))

_FINAL_STATE = text(
    """
    SELECT j.status, j.outcome, j.result, j.error, j.idempotency_key,
           k.state AS claim_state, k.response_status, k.response_body
      FROM memory_write_jobs j
      LEFT JOIN memory_idempotency_keys k
             ON k.org_id = j.org_id AND k.agent_id = j.agent_id AND k.key = j.idempotency_key AND k.job_id = j.id
     WHERE j.org_id = :org_id AND j.id = CAST(:job_id AS uuid)
    """
)
_RUNNING_RELEASE = text(
    "SELECT id FROM memory_write_jobs WHERE org_id = :org_id AND release_of = :id AND status IN ('queued', 'running')"
)
_SCRUB_JOBS = text(
    "UPDATE memory_write_jobs SET context = '{}'::jsonb, request = '{}'::jsonb, updated_at = now() "
    "WHERE org_id = :org_id AND (memory_id = :id OR release_of = :id) AND status IN ('succeeded', 'failed')"
)
# Counts over every org (the workers are shared), for back-pressure and /metrics; they read the
# sweeper's partial index (memory_write_jobs_unfinished), so their cost follows the backlog.
_COUNT_UNFINISHED = text("SELECT count(*) FROM memory_write_jobs WHERE status IN ('queued', 'running')")
_COUNT_UNFINISHED_OF = text(
    "SELECT count(*) FROM memory_write_jobs WHERE org_id = :org_id AND status IN ('queued', 'running')"
)
# The later of the last job finishing and the oldest unfinished job's arrival: how long the
# pipeline has had work and finished none (the finished index answers the max; the unfinished
# rows are bounded by the backlog limit).
_SECONDS_WITHOUT_PROGRESS = text(
    """
    SELECT CASE WHEN oldest IS NULL THEN 0
                ELSE extract(epoch FROM now() - GREATEST(oldest, COALESCE(last_finished, oldest))) END AS seconds
      FROM (SELECT (SELECT min(created_at) FROM memory_write_jobs WHERE status IN ('queued', 'running')) AS oldest,
                   (SELECT max(finished_at) FROM memory_write_jobs
                     WHERE status IN ('succeeded', 'failed')) AS last_finished) AS progress
    """
)
_UNFINISHED_BY_STAGE = text(
    "SELECT stage, count(*) AS n FROM memory_write_jobs WHERE status IN ('queued', 'running') GROUP BY stage"
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
          queue: str | None = None, extra: int = 0, own_limit: int = 512) -> list[Any]:
    """Lease up to ``own_limit`` of the given jobs that are still at ``stage`` and unheld, plus
    up to ``extra`` other jobs waiting for the same stage on the same queue (micro-batching: one
    delivery, one model call, many writes; their own messages later find them gone and are
    dropped), never one whose last holder died; a suspect (see above) alone. Rows carry
    ``holder_died``."""
    return list(conn.execute(_CLAIM, {"ids": list(job_ids), "stage": stage, "lease_seconds": lease_seconds,
                                      "queue": queue, "extra": extra if queue else 0, "own_limit": own_limit}))


def save_stage(conn: Any, org_id: str, job_id: str, lease_token: str | None, *, next_stage: str,
               queue: str | None, keep_lease: bool, raw_content: str | None, request: dict[str, Any],
               context: dict[str, Any], embedding: list[float] | None, decisions: list[dict[str, Any]],
               timings: dict[str, float]) -> bool:
    """Write the job back at ``next_stage``; False when the lease is no longer ``lease_token``.
    ``keep_lease``: the lease stays, so nobody else may claim the job yet."""
    return conn.execute(_SAVE_STAGE, {
        "org_id": org_id, "job_id": job_id, "lease_token": lease_token, "next_stage": next_stage,
        "queue": queue, "keep_lease": keep_lease, "request": json.dumps(request), "raw_content": raw_content,
        "context": json.dumps(context), "embedding": embedding, "decisions": json.dumps(decisions),
        "timings": json.dumps(timings),
    }).rowcount == 1


def holds_lease(conn: Any, org_id: str, job_id: str, lease_token: str | None) -> bool:
    """Whether the running job's lease is still ``lease_token``; locks the job row if so."""
    return conn.execute(_HOLDS_LEASE, {"org_id": org_id, "job_id": job_id,
                                       "lease_token": lease_token}).first() is not None


def mark_succeeded(conn: Any, org_id: str, job_id: str, lease_token: str | None, *, outcome: str, memory_id: str,
                   result: dict[str, Any], decisions: list[dict[str, Any]], timings: dict[str, float],
                   context: dict[str, Any]) -> bool:
    """Record the outcome and drop the job's content; False when the lease is no longer ``lease_token``."""
    return conn.execute(_SUCCEED, {
        "org_id": org_id, "job_id": job_id, "lease_token": lease_token, "memory_id": memory_id,
        "outcome": outcome, "result": json.dumps(result), "decisions": json.dumps(decisions),
        "timings": json.dumps(timings), "context": json.dumps(context),
    }).rowcount == 1


def mark_failed(conn: Any, org_id: str, job_id: str, lease_token: str | None, stage: str | None,
                error: dict[str, Any]) -> bool:
    """Fail an unfinished job and drop its content. With ``lease_token``, only while that lease
    holds it; without, only if nobody holds it and it is still at ``stage``. False otherwise."""
    return conn.execute(_FAIL, {"org_id": org_id, "job_id": job_id, "lease_token": lease_token,
                                "stage": stage, "error": json.dumps(error)}).rowcount == 1


def status_for_update(conn: Any, org_id: str, job_id: str) -> Any | None:
    """The job's ``status`` and ``stage``, its row locked until the transaction ends; None if unknown."""
    return conn.execute(_STATUS_FOR_UPDATE, {"org_id": org_id, "job_id": job_id}).first()


def release(conn: Any, org_id: str, job_id: str, lease_token: str | None, hold_seconds: float) -> None:
    """Drop the lease; the job counts as published ``hold_seconds`` from now."""
    conn.execute(_RELEASE, {"org_id": org_id, "job_id": job_id, "lease_token": lease_token,
                            "hold_seconds": hold_seconds})


def exhausted(conn: Any, job_ids: Sequence[str], stage: str, cap: int) -> list[Any]:
    """Those of the jobs still unfinished at ``stage`` that nobody holds and that were claimed
    ``cap`` times or more: ``id``, ``org_id``, ``agent_id``, ``idempotency_key``."""
    return list(conn.execute(_EXHAUSTED, {"ids": list(job_ids), "stage": stage, "cap": cap}))


def renew_leases(conn: Any, held: dict[str, str], lease_seconds: float) -> int:
    """Extend the leases still held by these tokens ({job id: lease token}); how many were."""
    result = conn.execute(_RENEW, {"ids": list(held), "tokens": list(held.values()), "lease_seconds": lease_seconds})
    return int(result.rowcount)


def sweep_lost(conn: Any, republish_after: float, limit: int = 500) -> list[Any]:
    """Unfinished jobs whose lease ran out (the delivery holding them died: it stopped renewing)
    or that nobody holds and whose last publish is old (the message was lost: a broker restart,
    a publish that failed). Marks them re-published; rows of id, stage, ``holder_died`` and
    ``suspect``."""
    return list(conn.execute(_SWEEP, {"republish_after": republish_after, "limit": limit}))


def view(conn: Any, org_id: str, job_id: str, agents: Sequence[str] | None = None) -> Any | None:
    """The job's public columns; None when it is not the org's (or, with ``agents``, not one
    of those agents')."""
    params = {"org_id": org_id, "job_id": job_id, "agents": list(agents) if agents is not None else None}
    return conn.execute(_VIEW, params).first()


def final_state(conn: Any, org_id: str, job_id: str) -> Any | None:
    """The job's ``status``, ``outcome``, ``result``, ``error`` and ``idempotency_key``, with
    its key's ledger row (``claim_state``, ``response_status``, ``response_body``; NULL when
    the key no longer names this job). None when the job is unknown."""
    return conn.execute(_FINAL_STATE, {"org_id": org_id, "job_id": job_id}).first()


def running_release(conn: Any, org_id: str, memory_id: str) -> str | None:
    """The id of a queued or running release job of the memory, if there is one."""
    row = conn.execute(_RUNNING_RELEASE, {"org_id": org_id, "id": memory_id}).first()
    return None if row is None else str(row.id)


def scrub_finished(conn: Any, org_id: str, memory_id: str) -> int:
    """Empty the request and context of the finished jobs that wrote or released the memory; how many."""
    return conn.execute(_SCRUB_JOBS, {"org_id": org_id, "id": memory_id}).rowcount


def count_unfinished_of(conn: Any, org_id: str) -> int:
    return int(conn.execute(_COUNT_UNFINISHED_OF, {"org_id": org_id}).scalar_one())


def count_unfinished(conn: Any) -> int:
    return int(conn.execute(_COUNT_UNFINISHED).scalar_one())


def seconds_without_progress(conn: Any) -> float:
    """0 with no unfinished job; else seconds since a job last finished or, if later, since
    the oldest unfinished job arrived."""
    return max(0.0, float(conn.execute(_SECONDS_WITHOUT_PROGRESS).scalar_one()))


def unfinished_by_stage(conn: Any) -> dict[str, int]:
    """Unfinished jobs by the stage they wait for (stages without any are absent)."""
    return {r.stage: int(r.n) for r in conn.execute(_UNFINISHED_BY_STAGE)}
