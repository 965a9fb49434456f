"""The producer entry point: validate, claim the idempotency key, insert the job row (one
transaction), then publish the job id. The HTTP API and ``ibex submit`` both call it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text

from worker import jobs
from worker.db import tenant_tx
from worker.errors import IdempotencyConflict, IdempotencyInProgress
from worker.pipeline.validate import validate_request
from worker.publish import publish

_FIND_CLAIM = text(
    "SELECT fingerprint, job_id, state, response_status, response_body, "
    "GREATEST(0, CEIL(EXTRACT(EPOCH FROM lease_expires_at - now())))::int AS lease_left "
    "FROM memory_idempotency_keys WHERE org_id = :org_id AND agent_id = :agent_id AND key = :key FOR UPDATE"
)
_INSERT_CLAIM = text(
    "INSERT INTO memory_idempotency_keys (org_id, agent_id, key, fingerprint, job_id, lease_expires_at) "
    "VALUES (:org_id, :agent_id, :key, :fingerprint, :job_id, now() + make_interval(secs => :lease)) "
    "ON CONFLICT (org_id, agent_id, key) DO NOTHING RETURNING job_id"
)
_TAKE_OVER_CLAIM = text(
    "UPDATE memory_idempotency_keys SET job_id = :job_id, lease_expires_at = now() + make_interval(secs => :lease), "
    "updated_at = now() WHERE org_id = :org_id AND agent_id = :agent_id AND key = :key"
)


class _ClaimRace(Exception):
    """Another request claimed the same key first; roll back and read its claim."""


@dataclass
class Submission:
    job_id: str
    replayed: bool = False
    response_status: int | None = None   # set on replay: the stored final answer
    response_body: dict[str, Any] | None = None
    published: bool = False


def submit(engine: Any, app: Any, settings: Any, body: dict[str, Any],
           idempotency_key: str | None = None) -> Submission:
    """Raises ``ValidationFailed``, ``IdempotencyConflict``, ``IdempotencyInProgress`` or
    ``TransientError`` (database unavailable: nothing published)."""
    request = validate_request(body, settings)
    for _ in range(3):  # a concurrent first claim of the same key: re-read it
        try:
            submission = _record(engine, settings, body, request, idempotency_key)
            break
        except _ClaimRace:
            continue
    else:
        raise IdempotencyInProgress("", 1)
    if not submission.replayed:
        submission.published = publish(app, settings, "validate", [submission.job_id])
    return submission


def _record(engine: Any, settings: Any, body: dict[str, Any], request: dict[str, Any],
            key: str | None) -> Submission:
    org_id, agent_id = request["org_id"], request["agent_id"]
    fields = {k: v for k, v in request.items() if k not in ("org_id", "agent_id", "content")}
    with tenant_tx(engine, org_id) as conn:
        if key is None:
            return Submission(jobs.insert_job(conn, org_id, agent_id, request["content"], fields, None))
        scope = {"org_id": org_id, "agent_id": agent_id, "key": key}
        claim = conn.execute(_FIND_CLAIM, scope).first()
        fingerprint = jobs.fingerprint(body)
        if claim is not None:
            replay = _existing_claim(claim, fingerprint)
            if replay is not None:
                return replay
        job_id = jobs.insert_job(conn, org_id, agent_id, request["content"], fields, key)
        lease = {"job_id": job_id, "lease": settings.idempotency_lease_seconds}
        if claim is not None:  # lease expired: its job was lost; take the key over
            conn.execute(_TAKE_OVER_CLAIM, {**scope, **lease})
        elif conn.execute(_INSERT_CLAIM, {**scope, **lease, "fingerprint": fingerprint}).first() is None:
            raise _ClaimRace()
        return Submission(job_id)


def _existing_claim(claim: Any, fingerprint: str) -> Submission | None:
    if claim.fingerprint != fingerprint:
        raise IdempotencyConflict("this idempotency key was used with a different request body")
    if claim.state == "completed":
        return Submission(str(claim.job_id), replayed=True, response_status=claim.response_status,
                          response_body=claim.response_body)
    if claim.lease_left > 0:
        raise IdempotencyInProgress(str(claim.job_id), retry_after=min(claim.lease_left, 5))
    return None


_JOB_VIEW = text(
    "SELECT id, status, stage, attempts, result, error, decisions, timings_ms, created_at, finished_at, "
    "memory_id, outcome FROM memory_write_jobs WHERE org_id = :org_id AND id = :job_id"
)


def job_view(engine: Any, org_id: str, job_id: str) -> dict[str, Any] | None:
    """The job in the shape of ``GET /v1/jobs/{job_id}``."""
    with tenant_tx(engine, org_id) as conn:
        row = conn.execute(_JOB_VIEW, {"org_id": org_id, "job_id": job_id}).first()
    if row is None:
        return None
    return {
        "job_id": str(row.id), "status": row.status, "stage": row.stage, "attempts": row.attempts,
        "outcome": row.outcome, "memory_id": str(row.memory_id) if row.memory_id else None,
        "result": row.result, "error": row.error, "decisions": row.decisions, "timings_ms": row.timings_ms,
        "created_at": row.created_at.isoformat(),
        "finished_at": row.finished_at.isoformat() if row.finished_at else None,
    }


def wait_for_job(engine: Any, org_id: str, job_id: str, timeout: float, poll: float = 0.05) -> dict[str, Any] | None:
    deadline = time.monotonic() + timeout
    while True:
        view = job_view(engine, org_id, job_id)
        if view is None or view["status"] in ("succeeded", "failed") or time.monotonic() >= deadline:
            return view
        time.sleep(min(poll, max(0.0, deadline - time.monotonic())))
        poll = min(poll * 1.5, 0.5)
