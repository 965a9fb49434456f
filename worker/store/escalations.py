"""Conflict escalations (``memory_conflict_escalations``) and their decision log
(``memory_conflict_decisions``).

An escalation is unique per ``(memory, candidate)``. A claim gives the row a fresh
``lease_token`` (the fencing token); every queue write after it is conditional on that
token and on ``status = 'claimed'``, and reports whether it changed the row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, TEXT, UUID

WITHDRAWN_REASON = "a memory it names was deleted"
UNLINKED_REASON = "a person removed the near-duplicate link between the two memories"
_COLUMNS = ("id, org_id, agent_id, memory_id, candidate_id, reason, evidence, status, outcome, decided_by, "
            "decision_reason, decided_at, attempts, next_attempt_at, last_error, created_by_job, created_at, "
            "updated_at")
_INSERT = text(
    "INSERT INTO memory_conflict_escalations (org_id, agent_id, memory_id, candidate_id, reason, evidence, "
    "created_by_job) "
    "VALUES (:org_id, :agent_id, :memory_id, :candidate_id, :reason, CAST(:evidence AS jsonb), :job_id) "
    "ON CONFLICT (org_id, memory_id, candidate_id) DO NOTHING RETURNING id"
)
_LIST = text(
    f"SELECT {_COLUMNS} FROM memory_conflict_escalations "
    "WHERE org_id = :org_id AND (CAST(:status AS text) IS NULL OR status = :status) "
    "AND (CAST(:agent_ids AS text[]) IS NULL OR agent_id = ANY(:agent_ids)) "
    "AND (CAST(:after_at AS timestamptz) IS NULL OR (created_at, id) > (:after_at, CAST(:after_id AS uuid))) "
    "ORDER BY created_at, id LIMIT :limit"
).bindparams(bindparam("agent_ids", type_=ARRAY(TEXT)))
_GET = text(f"SELECT {_COLUMNS} FROM memory_conflict_escalations WHERE org_id = :org_id AND id = :id")
_LOCK = text("SELECT * FROM memory_conflict_escalations WHERE org_id = :org_id AND id = :id FOR UPDATE")
_LOCK_CLAIMED = text(
    "SELECT * FROM memory_conflict_escalations WHERE org_id = :org_id AND id = :id "
    "AND lease_token = :token AND status = 'claimed' FOR UPDATE"
)
_RECORD_DECISION = text(
    "UPDATE memory_conflict_escalations SET status = :status, outcome = :outcome, decided_by = :decided_by, "
    "decision_reason = :reason, decided_at = now(), lease_token = NULL, lease_expires_at = NULL, "
    "lease_owner = NULL, updated_at = now() WHERE org_id = :org_id AND id = :id"
)
_LOG_DECISION = text(
    "INSERT INTO memory_conflict_decisions (org_id, escalation_id, outcome, decided_by, reason, details) "
    "VALUES (:org_id, :id, :outcome, :decided_by, :reason, CAST(:details AS jsonb)) RETURNING decided_at"
)
_DECISIONS = text(
    "SELECT outcome, decided_by, reason, details, decided_at FROM memory_conflict_decisions "
    "WHERE org_id = :org_id AND escalation_id = :id ORDER BY decided_at, id"
)
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
_RENEW_LEASE = text(
    "UPDATE memory_conflict_escalations SET lease_expires_at = now() + make_interval(secs => :lease_seconds), "
    "updated_at = now() WHERE org_id = :org_id AND id = :id AND lease_token = :token AND status = 'claimed' "
    "RETURNING id"
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
_COUNT_UNRESOLVED = text(
    "SELECT status, count(*) AS n FROM memory_conflict_escalations "
    "WHERE status IN ('pending', 'claimed', 'needs_review', 'dead') "
    "AND (cardinality(CAST(:org_ids AS text[])) = 0 OR org_id = ANY(:org_ids)) GROUP BY status"
).bindparams(bindparam("org_ids", type_=ARRAY(TEXT)))
_LOCK_OPEN_BETWEEN = text(
    "SELECT id FROM memory_conflict_escalations WHERE org_id = :org_id AND status <> 'resolved' "
    "AND ((memory_id = :a AND candidate_id = :b) OR (memory_id = :b AND candidate_id = :a)) ORDER BY id FOR UPDATE"
)
_WITHDRAW = text(
    """
    UPDATE memory_conflict_escalations
       SET status = 'resolved', outcome = 'withdrawn', decided_by = :decided_by,
           decision_reason = :reason, decided_at = now(),
           lease_token = NULL, lease_expires_at = NULL, updated_at = now()
     WHERE org_id = :org_id AND id = ANY(:ids) AND status <> 'resolved'
    RETURNING id
    """
).bindparams(bindparam("ids", type_=ARRAY(UUID(as_uuid=False))))
_WITHDRAW_NAMING = text(
    """
    UPDATE memory_conflict_escalations
       SET status = 'resolved', outcome = 'withdrawn', decided_by = :decided_by,
           decision_reason = :reason, decided_at = now(),
           lease_token = NULL, lease_expires_at = NULL, updated_at = now()
     WHERE org_id = :org_id AND (memory_id = :id OR candidate_id = :id) AND status <> 'resolved'
    RETURNING id
    """
)


def insert(conn: Any, *, org_id: str, agent_id: str, memory_id: str, candidate_id: str, reason: str,
           evidence: dict[str, Any], job_id: str) -> str | None:
    """The new escalation's id, or None when the pair is already escalated."""
    row = conn.execute(_INSERT, {
        "org_id": org_id, "agent_id": agent_id, "memory_id": memory_id, "candidate_id": candidate_id,
        "reason": reason, "evidence": json.dumps(evidence), "job_id": job_id}).first()
    return str(row.id) if row else None


def list_page(conn: Any, org_id: str, *, status: str | None, agent_ids: Sequence[str] | None,
              after_at: datetime | None, after_id: str | None, limit: int) -> list[Any]:
    """Up to ``limit`` escalations after ``(after_at, after_id)``, oldest first; ``status``
    and ``agent_ids`` (None: any) narrow them."""
    return conn.execute(_LIST, {"org_id": org_id, "status": status, "limit": limit,
                                "agent_ids": None if agent_ids is None else list(agent_ids),
                                "after_at": after_at, "after_id": after_id}).all()


def get(conn: Any, org_id: str, escalation_id: str) -> Any:
    return conn.execute(_GET, {"org_id": org_id, "id": escalation_id}).first()


def lock(conn: Any, org_id: str, escalation_id: str) -> Any:
    """The escalation, locked until the transaction ends; None if there is none."""
    return conn.execute(_LOCK, {"org_id": org_id, "id": escalation_id}).first()


def lock_claimed(conn: Any, org_id: str, escalation_id: str, token: str) -> Any:
    """The escalation, locked, if this claim still holds it (fencing); else None."""
    return conn.execute(_LOCK_CLAIMED, {"org_id": org_id, "id": escalation_id, "token": token}).first()


def record_decision(conn: Any, org_id: str, escalation_id: str, *, status: str, outcome: str, decided_by: str,
                    reason: str) -> None:
    """Set the escalation's decision and ``status``, and clear its lease."""
    conn.execute(_RECORD_DECISION, {"org_id": org_id, "id": escalation_id, "status": status, "outcome": outcome,
                                    "decided_by": decided_by, "reason": reason})


def log_decision(conn: Any, org_id: str, escalation_id: str, *, outcome: str, decided_by: str, reason: str,
                 details: dict[str, Any]) -> datetime:
    """Append a decision to the escalation's log; its time. ``details`` values JSON cannot
    hold (datetimes) are stored as their text."""
    return conn.execute(_LOG_DECISION, {"org_id": org_id, "id": escalation_id, "outcome": outcome,
                                        "decided_by": decided_by, "reason": reason,
                                        "details": json.dumps(details, default=str)}).scalar_one()


def decisions(conn: Any, org_id: str, escalation_id: str) -> list[Any]:
    """The escalation's logged decisions, oldest first."""
    return conn.execute(_DECISIONS, {"org_id": org_id, "id": escalation_id}).all()


def claim(conn: Any, *, limit: int, lease_seconds: int, owner: str, org_ids: Sequence[str]) -> list[Any]:
    """Lease up to ``limit`` due escalations (pending and due, or claimed with an expired
    lease) of ``org_ids`` (all orgs when empty), skipping rows another claim holds locked."""
    return conn.execute(_CLAIM, {"limit": limit, "lease_seconds": lease_seconds, "owner": owner,
                                 "org_ids": list(org_ids)}).all()


def renew_lease(conn: Any, org_id: str, escalation_id: str, token: str, lease_seconds: int) -> bool:
    return conn.execute(_RENEW_LEASE, {"org_id": org_id, "id": escalation_id, "token": token,
                                       "lease_seconds": lease_seconds}).first() is not None


def release(conn: Any, org_id: str, escalation_id: str, token: str) -> bool:
    """Pending again, the claim's attempt not counted."""
    return conn.execute(_RELEASE, {"org_id": org_id, "id": escalation_id, "token": token}).rowcount > 0


def retry_later(conn: Any, org_id: str, escalation_id: str, token: str, *, error: str,
                delay_seconds: float) -> bool:
    """Pending again after ``delay_seconds``, with ``error`` recorded."""
    return conn.execute(_RETRY_LATER, {"org_id": org_id, "id": escalation_id, "token": token, "error": error,
                                       "delay": delay_seconds}).first() is not None


def bury(conn: Any, org_id: str, escalation_id: str, token: str, *, error: str) -> bool:
    """Dead (never retried), with ``error`` recorded."""
    return conn.execute(_BURY, {"org_id": org_id, "id": escalation_id, "token": token,
                                "error": error}).first() is not None


def count_unresolved(conn: Any, org_ids: Sequence[str]) -> dict[str, int]:
    """Unresolved escalations of ``org_ids`` (all orgs when empty), by status; statuses
    with none are absent."""
    return {row.status: int(row.n) for row in conn.execute(_COUNT_UNRESOLVED, {"org_ids": list(org_ids)})}


def lock_open_between(conn: Any, org_id: str, a: str, b: str) -> list[str]:
    """Lock the unresolved escalations of the pair (either way round); their ids."""
    return [str(r.id) for r in conn.execute(_LOCK_OPEN_BETWEEN, {"org_id": org_id, "a": a, "b": b})]


def withdraw(conn: Any, org_id: str, ids: Sequence[str], decided_by: str, reason: str) -> list[str]:
    """Resolve those escalations as ``withdrawn``; the ids that were still open."""
    params = {"org_id": org_id, "ids": list(ids), "decided_by": decided_by, "reason": reason}
    return [str(r.id) for r in conn.execute(_WITHDRAW, params)]


def withdraw_naming(conn: Any, org_id: str, memory_id: str, decided_by: str) -> list[str]:
    """Resolve the open escalations naming the memory as ``withdrawn``; their ids."""
    params = {"org_id": org_id, "id": memory_id, "decided_by": decided_by, "reason": WITHDRAWN_REASON}
    return [str(r.id) for r in conn.execute(_WITHDRAW_NAMING, params)]
