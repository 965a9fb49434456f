"""The producer entry point: validate, claim the idempotency key, insert the job row (one
transaction), then publish the job id. The HTTP API and ``ibex submit`` both call it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ibex_worker.db import tenant_tx
from ibex_worker.errors import (ErasureInProgress, FieldIssue, IbexError, IdempotencyConflict, IdempotencyInProgress,
                               TransientError, ValidationFailed, final_status_of)
from ibex_worker.pipeline.validate import validate_request
from ibex_worker.publish import ENTRY_STAGE, Waker, publish
from ibex_worker.store import erasure_receipts, idempotency
from ibex_worker.store import jobs as job_store

# 1-255 visible ASCII characters; the ledger's CHECK constraint says the same.
IDEMPOTENCY_KEY_RE = re.compile(r"^[\x21-\x7e]{1,255}$")
_CLAIM_ATTEMPTS = 3
_PLAIN_FIELD = re.compile(r"[a-z][a-z0-9_]{0,39}")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


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
           idempotency_key: str | None = None, *, admit: Callable[[str], None] | None = None,
           waker: Waker | None = None) -> Submission:
    """Raises ``ValidationFailed``, ``ErasureInProgress``, ``IdempotencyConflict``,
    ``IdempotencyInProgress`` or ``TransientError`` (database unavailable: nothing published),
    or whatever ``admit(org_id)`` raises: it runs only when a new job is about to be inserted.
    ``waker``: send the job's wake-up through it (coalesced with a pending one) instead of a
    message of its own."""
    submission = record(engine, settings, body, idempotency_key, admit=admit)
    if not submission.replayed:
        submission.published = _wake(app, settings, waker, [submission.job_id])
    return submission


def _wake(app: Any, settings: Any, waker: Waker | None, job_ids: list[str]) -> bool:
    if not job_ids:
        return True
    if waker is not None:
        return waker.wake(ENTRY_STAGE, job_ids)
    return publish(app, settings, ENTRY_STAGE, job_ids)


def submit_many(engine: Any, app: Any, settings: Any, items: Sequence[tuple[dict[str, Any], str | None]], *,
                admit: Callable[[str], None] | None = None, waker: Waker | None = None) -> list[Submission | IbexError]:
    """Each item in its own transaction (a failing item fails alone), then one wake-up for
    every new job: the validate stage takes a list of ids, so a batch travels as one."""
    results: list[Submission | IbexError] = []
    for body, key in items:
        try:
            results.append(record(engine, settings, body, key, admit=admit))
        except IbexError as exc:
            results.append(exc)
    fresh = [r for r in results if isinstance(r, Submission) and not r.replayed]
    published = _wake(app, settings, waker, [r.job_id for r in fresh])
    for submission in fresh:
        submission.published = published
    return results


def record(engine: Any, settings: Any, body: dict[str, Any], idempotency_key: str | None = None, *,
           admit: Callable[[str], None] | None = None) -> Submission:
    """Validate, then claim the key and insert the job row in one transaction. Publishes
    nothing: a process that dies right after this leaves a durable job for the sweeper."""
    request = validate_request(body, settings)
    check_storable(body)
    check_idempotency_key(idempotency_key)
    for _ in range(_CLAIM_ATTEMPTS):  # a concurrent first claim of the same key: re-read it
        try:
            return _record(engine, settings, body, request, idempotency_key, admit)
        except _ClaimRace:
            continue
    # The claim appeared and vanished again between reads (a released claim): unknown state.
    raise TransientError("the idempotency key's claim kept changing; retry", code="IDEMPOTENCY_UNAVAILABLE")


def check_storable(body: dict[str, Any]) -> None:
    """PostgreSQL text and jsonb refuse NUL characters and UTF-8 cannot carry an unpaired
    surrogate: refuse both anywhere in the body (labels, metadata, keys) as a 422 rather than
    letting the insert fail. Iterative, so a deeply nested document cannot exhaust the stack."""
    bad = sorted({name if _PLAIN_FIELD.fullmatch(name) else "body"
                  for name, value in body.items() if not _storable(name) or not _storable(value)})
    if bad:
        raise ValidationFailed([FieldIssue(name, "must not contain NUL characters or unpaired surrogates")
                                for name in bad])


def _storable(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item or _SURROGATE.search(item):
                return False
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def check_idempotency_key(key: str | None, field: str = "idempotency_key") -> None:
    if key is not None and not IDEMPOTENCY_KEY_RE.fullmatch(key):
        raise ValidationFailed([FieldIssue(field, "1 to 255 visible ASCII characters")])


def _record(engine: Any, settings: Any, body: dict[str, Any], request: dict[str, Any],
            key: str | None, admit: Callable[[str], None] | None) -> Submission:
    org_id, agent_id = request["org_id"], request["agent_id"]
    fields = {k: v for k, v in request.items() if k not in ("org_id", "agent_id", "content")}
    with tenant_tx(engine, org_id) as conn:
        erasure_receipts.share_agent_writes(conn, org_id, agent_id)
        erasure_id = erasure_receipts.open_for_agent(conn, org_id, agent_id)
        if erasure_id is not None:
            raise ErasureInProgress(erasure_id)
        if key is None:
            if admit is not None:
                admit(org_id)
            return Submission(job_store.insert_job(conn, org_id, agent_id, request["content"], fields, None,
                                                   queue=settings.queue_validate))
        claim = idempotency.find_claim(conn, org_id, agent_id, key)
        fingerprint = request_fingerprint(body, settings.idempotency_fingerprint_key.get_secret_value())
        if claim is not None:
            replay = _existing_claim(claim, fingerprint)
            if replay is not None:
                return replay
        if claim is not None and not may_take_over(conn, org_id, str(claim.job_id)):
            # The claim's lease ran out but its job is unfinished (waiting or running): in progress.
            raise IdempotencyInProgress(str(claim.job_id), retry_after=5)
        if admit is not None:
            admit(org_id)
        job_id = job_store.insert_job(conn, org_id, agent_id, request["content"], fields, key,
                                      queue=settings.queue_validate)
        lease = settings.idempotency_lease_seconds
        if claim is not None:  # lease expired and its job finished without answering it: take the key over
            idempotency.move_claim(conn, org_id, agent_id, key, job_id, lease)
        elif not idempotency.insert_claim(conn, org_id, agent_id, key, fingerprint, job_id, lease):
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


def job_view(engine: Any, org_id: str, job_id: str, agents: Sequence[str] | None = None) -> dict[str, Any] | None:
    """The job in the shape of ``GET /v1/jobs/{job_id}``; None when it is not the org's (or,
    with ``agents``, not one of those agents')."""
    with tenant_tx(engine, org_id) as conn:
        row = job_store.view(conn, org_id, job_id, agents)
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


# ---------------------------------------------------------------- final answers

@dataclass(frozen=True)
class FinalAnswer:
    """What a producer waiting for a job is told: an HTTP status and body. 201 and 409
    ``DUPLICATE_CONTENT`` come from the job (or, for a keyed write, the ledger, which persist
    finalised in the same transaction); 422 is a permanent failure; 503 is never final."""

    status: int
    body: dict[str, Any]


def final_answer(engine: Any, org_id: str, job_id: str) -> FinalAnswer | None:
    """None while the job is unfinished (or unknown)."""
    with tenant_tx(engine, org_id) as conn:
        row = job_store.final_state(conn, org_id, job_id)
    if row is None or row.status not in ("succeeded", "failed"):
        return None
    if row.idempotency_key is not None:
        return _keyed_answer(row, job_id)
    if row.status == "succeeded":
        return FinalAnswer(201 if row.outcome in ("created", "released") else 409, row.result)
    return _failure_answer(row.error or {}, job_id)


def _keyed_answer(row: Any, job_id: str) -> FinalAnswer:
    if row.claim_state == "completed":
        return FinalAnswer(row.response_status, row.response_body)
    if row.status == "succeeded":  # the memory committed but this job does not hold a final claim
        return FinalAnswer(503, {"error": {"code": "IDEMPOTENCY_UNAVAILABLE",
                                           "message": "the write finished but its idempotency key holds no final "
                                                      "answer for it; retry with the same key"},
                                 "job_id": job_id})
    return _failure_answer(row.error or {}, job_id)  # a transient failure released the key


# Failures that are final (resubmitting the same request cannot help).
PERMANENT_CODES = frozenset({"VALIDATION_ERROR", "PII_IN_FIELD", "NOT_QUARANTINED", "ERASED"})


def _failure_answer(error: dict[str, Any], job_id: str) -> FinalAnswer:
    """Validation failures and personal data in a field (422), a release of a memory no longer
    quarantined and a write whose agent was erased while it was in flight (409) are final;
    anything else failed after its retries and is worth submitting again (503, never stored as
    the key's final answer)."""
    if error.get("code") in PERMANENT_CODES:
        return FinalAnswer(final_status_of(error["code"]), {"error": error, "job_id": job_id})
    message = f"the write failed ({error.get('code', 'UNKNOWN')}); nothing was stored, submit it again"
    return FinalAnswer(503, {"error": {"code": "UNAVAILABLE", "message": message}, "job_id": job_id})


def may_take_over(conn: Any, org_id: str, job_id: str) -> bool:
    """An idempotency claim's lease ran out and a new request with the key wants it: only a
    job known to be dead - finished, or gone - gives its key up. An unfinished job is alive
    however long it waits (its row is durable and the sweeper re-publishes it), so a retry
    never replaces it and sends it to the back of the queue. The job row stays locked until
    the caller's transaction ends, so it cannot finish in between."""
    row = job_store.status_for_update(conn, org_id, job_id)
    return row is None or row.status not in ("queued", "running")


def request_fingerprint(body: dict[str, Any], key: str) -> str:
    """HMAC-SHA256 of the canonical JSON under the deployment's key: key order and whitespace do
    not matter, and without the key nobody can test a guessed request against the ledger."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hmac.new(key.encode("utf-8"), canonical.encode("utf-8"), hashlib.sha256).hexdigest()
