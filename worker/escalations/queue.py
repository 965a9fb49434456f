"""The escalation queue in ``memory_conflict_escalations``: claim, renew, release, fail.

Every function is one short transaction. A claim gives each row a fresh ``lease_token``
(the fencing token) and a lease; every later write on the row is conditional on that token
and on ``status = 'claimed'``, so a poller whose lease ran out, or whose item a person
resolved meanwhile, changes nothing. Claims run as the maintenance role (one poller serves
every tenant); per-item work runs as the tenant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, TEXT

from worker.db import maint_tx, tenant_tx
from worker.escalations.classifiers import MemoryFact

BACKLOG_STATUSES = ("pending", "claimed", "needs_review", "dead")

_CLAIM = text(
    """
    WITH picked AS (
        SELECT org_id, id FROM memory_conflict_escalations
         WHERE ((status = 'pending' AND next_attempt_at <= now())
                OR (status = 'claimed' AND lease_expires_at < now()))
           AND (cardinality(CAST(:org_ids AS text[])) = 0 OR org_id = ANY(:org_ids))
         ORDER BY next_attempt_at
         LIMIT :limit
         FOR UPDATE SKIP LOCKED
    )
    UPDATE memory_conflict_escalations e
       SET status = 'claimed', lease_token = gen_random_uuid(),
           lease_expires_at = now() + make_interval(secs => :lease_seconds),
           lease_owner = :owner, attempts = e.attempts + 1, updated_at = now()
      FROM picked
     WHERE e.org_id = picked.org_id AND e.id = picked.id
    RETURNING e.org_id, e.id, e.agent_id, e.memory_id, e.candidate_id, e.reason, e.evidence,
              e.lease_token, e.attempts
    """
).bindparams(bindparam("org_ids", type_=ARRAY(TEXT)))

_RENEW = text(
    "UPDATE memory_conflict_escalations SET lease_expires_at = now() + make_interval(secs => :lease_seconds), "
    "updated_at = now() WHERE org_id = :org_id AND id = :id AND lease_token = :token AND status = 'claimed' "
    "RETURNING id"
)
_LOAD_MEMORIES = text(
    "SELECT id, content, status, deleted_at, valid_from, valid_until, subject_key, created_at FROM memories "
    "WHERE org_id = :org_id AND id IN (:a, :b)"
)
_RELEASE = text(
    "UPDATE memory_conflict_escalations SET status = 'pending', lease_token = NULL, lease_expires_at = NULL, "
    "lease_owner = NULL, attempts = greatest(attempts - 1, 0), updated_at = now() "
    "WHERE org_id = :org_id AND id = :id AND lease_token = :token AND status = 'claimed'"
)
_RETRY_LATER = text(
    "UPDATE memory_conflict_escalations SET status = 'pending', lease_token = NULL, lease_expires_at = NULL, "
    "lease_owner = NULL, last_error = :error, next_attempt_at = now() + make_interval(secs => :delay), "
    "updated_at = now() WHERE org_id = :org_id AND id = :id AND lease_token = :token AND status = 'claimed' "
    "RETURNING id"
)
_BURY = text(
    "UPDATE memory_conflict_escalations SET status = 'dead', lease_token = NULL, lease_expires_at = NULL, "
    "lease_owner = NULL, last_error = :error, updated_at = now() "
    "WHERE org_id = :org_id AND id = :id AND lease_token = :token AND status = 'claimed' RETURNING id"
)
_BACKLOG = text(
    "SELECT status, count(*) AS n FROM memory_conflict_escalations "
    "WHERE status IN ('pending', 'claimed', 'needs_review', 'dead') "
    "AND (cardinality(CAST(:org_ids AS text[])) = 0 OR org_id = ANY(:org_ids)) GROUP BY status"
).bindparams(bindparam("org_ids", type_=ARRAY(TEXT)))


@dataclass(frozen=True)
class Claim:
    org_id: str
    id: str
    agent_id: str
    memory_id: str
    candidate_id: str
    reason: str
    evidence: dict[str, Any]
    lease_token: str
    attempts: int


@dataclass(frozen=True)
class Loaded:
    """What a claimed escalation is about, read in the transaction that renewed its lease."""
    memory: MemoryFact | None          # the newly written memory (escalation.memory_id)
    candidate: MemoryFact | None
    unusable: str | None               # why the pair must not go to a classifier, if so


def claim_batch(engine: Any, *, limit: int, lease_seconds: int, owner: str,
                org_ids: Sequence[str] = ()) -> list[Claim]:
    with maint_tx(engine) as conn:
        rows = conn.execute(_CLAIM, {"limit": limit, "lease_seconds": lease_seconds, "owner": owner,
                                     "org_ids": list(org_ids)}).all()
    return [_claim(row) for row in rows]


def _claim(row: Any) -> Claim:
    return Claim(row.org_id, str(row.id), row.agent_id, str(row.memory_id), str(row.candidate_id), row.reason,
                 dict(row.evidence or {}), str(row.lease_token), int(row.attempts))


def start(engine: Any, claim: Claim, lease_seconds: int) -> Loaded | None:
    """Renew the item's lease (fenced) and read both memories; None when fenced out."""
    with tenant_tx(engine, claim.org_id) as conn:
        renewed = conn.execute(_RENEW, {"org_id": claim.org_id, "id": claim.id, "token": claim.lease_token,
                                        "lease_seconds": lease_seconds}).first()
        if renewed is None:
            return None
        rows = {str(r.id): r for r in conn.execute(_LOAD_MEMORIES, {"org_id": claim.org_id, "a": claim.memory_id,
                                                                    "b": claim.candidate_id})}
    memory, candidate = rows.get(claim.memory_id), rows.get(claim.candidate_id)
    unusable = next((_unusable(r) for r in (memory, candidate) if _unusable(r)), None)
    return Loaded(_fact(memory), _fact(candidate), unusable)


def _unusable(row: Any) -> str | None:
    if row is None or row.deleted_at is not None or row.status == "deleted":
        return "memory_deleted"
    if row.status == "quarantined":  # may hold unredacted PII: never sent anywhere
        return "memory_quarantined"
    return None


def _fact(row: Any) -> MemoryFact | None:
    if row is None:
        return None
    return MemoryFact(str(row.id), row.content, row.valid_from, row.valid_until, row.subject_key, row.created_at)


def renew_waiting(engine: Any, claims: Sequence[Claim], lease_seconds: int) -> None:
    """Keep the not-yet-handled items of a batch leased while an earlier item is classified:
    a lease covers one classification, not a whole batch, so without this the tail of a slow
    batch would expire and be re-claimed (counting attempts it never used)."""
    if not claims:
        return
    with maint_tx(engine) as conn:
        for c in claims:
            conn.execute(_RENEW, {"org_id": c.org_id, "id": c.id, "token": c.lease_token,
                                  "lease_seconds": lease_seconds})


def release(engine: Any, claims: Sequence[Claim]) -> int:
    """Hand unprocessed items back (graceful stop): pending again, the attempt not counted."""
    if not claims:
        return 0
    released = 0
    with maint_tx(engine) as conn:
        for c in claims:
            released += conn.execute(_RELEASE, {"org_id": c.org_id, "id": c.id, "token": c.lease_token}).rowcount
    return released


def fail(engine: Any, claim: Claim, error: str, *, dead: bool, delay_seconds: float) -> bool:
    """Record a failed attempt: back to pending after ``delay_seconds``, or ``dead``.
    ``error`` is a code and an exception type name, never content. False when fenced out."""
    params = {"org_id": claim.org_id, "id": claim.id, "token": claim.lease_token, "error": error,
              "delay": delay_seconds}
    with tenant_tx(engine, claim.org_id) as conn:
        return conn.execute(_BURY if dead else _RETRY_LATER, params).first() is not None


def backlog(engine: Any, org_ids: Sequence[str] = ()) -> dict[str, int]:
    """Unresolved escalations by status, of the orgs this poller serves (all when empty)."""
    with maint_tx(engine) as conn:
        counts = {row.status: int(row.n) for row in conn.execute(_BACKLOG, {"org_ids": list(org_ids)})}
    return {status: counts.get(status, 0) for status in BACKLOG_STATUSES}
