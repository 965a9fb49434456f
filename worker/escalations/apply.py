"""Applying a conflict decision: its side effects and the escalation's new status, in the
caller's one transaction.

- ``supersedes``: the older memory (earlier ``valid_from``; if either is missing, earlier
  ``created_at``) gets ``valid_until = newer.valid_from`` when that shortens a non-empty
  interval (otherwise the interval is left and the evidence says why), becomes
  ``superseded`` if it was active, and a ``supersedes`` relationship newer -> older is
  recorded; the agent's corpus version is bumped when a status changed.
- ``contradicts``: a ``contradicts`` relationship memory -> candidate; both stay active.
- ``compatible``: the decision is recorded, nothing else changes.
- ``needs_review``: the escalation waits for a person.

Every decision sets the escalation's outcome, ``decided_by``, reason and time, clears its
lease, and appends a row to ``memory_conflict_decisions``. Relationship inserts are
idempotent (unique per pair and type). Lock order matches persist's: the escalation row,
then the agent's corpus row, then the memories (by id), so the two never deadlock.
Superseding only ever takes a row *out* of the active set, so the partial unique index on
active content hashes cannot be violated by it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import text

from worker import corpus
from worker.escalations.classifiers import MemoryFact, order_pair

_LOCK_CLAIMED = text(
    "SELECT * FROM memory_conflict_escalations WHERE org_id = :org_id AND id = :id "
    "AND lease_token = :token AND status = 'claimed' FOR UPDATE"
)
_LOCK_ANY = text("SELECT * FROM memory_conflict_escalations WHERE org_id = :org_id AND id = :id FOR UPDATE")
_LOCK_MEMORIES = text(
    "SELECT id, content, status, valid_from, valid_until, subject_key, created_at FROM memories "
    "WHERE org_id = :org_id AND id IN (:a, :b) ORDER BY id FOR UPDATE"
)
_SUPERSEDE = text(
    "UPDATE memories SET status = :status, valid_until = :valid_until, updated_at = now() "
    "WHERE org_id = :org_id AND id = :id"
)
_RELATE = text(
    "INSERT INTO memory_relationships (org_id, source_memory_id, target_memory_id, relationship_type, evidence, "
    "decided_by) VALUES (:org_id, :source, :target, :type, CAST(:evidence AS jsonb), :decided_by) "
    "ON CONFLICT (org_id, source_memory_id, target_memory_id, relationship_type) DO NOTHING RETURNING id"
)
_DECIDE = text(
    "UPDATE memory_conflict_escalations SET status = :status, outcome = :outcome, decided_by = :decided_by, "
    "decision_reason = :reason, decided_at = now(), lease_token = NULL, lease_expires_at = NULL, "
    "lease_owner = NULL, updated_at = now() WHERE org_id = :org_id AND id = :id"
)
_LOG = text(
    "INSERT INTO memory_conflict_decisions (org_id, escalation_id, outcome, decided_by, reason, details) "
    "VALUES (:org_id, :id, :outcome, :decided_by, :reason, CAST(:details AS jsonb)) RETURNING decided_at"
)


@dataclass(frozen=True)
class Decision:
    outcome: str                      # supersedes | contradicts | compatible | needs_review
    reason: str
    decided_by: str                   # classifier:<name>@<version> | api_key:<id> | cli:<user>
    details: dict[str, Any] = field(default_factory=dict)  # classifier, rule, poller...: never content


@dataclass
class Applied:
    escalation_id: str
    outcome: str
    status: str
    decided_at: datetime
    relationship: dict[str, str] | None = None   # {source, target, type}
    superseded: list[str] = field(default_factory=list)  # memories that stopped being active


def lock_claimed(conn: Any, org_id: str, escalation_id: str, token: str) -> Any:
    """The escalation, locked, if this claim still holds it (fencing); else None."""
    return conn.execute(_LOCK_CLAIMED, {"org_id": org_id, "id": escalation_id, "token": token}).first()


def lock_escalation(conn: Any, org_id: str, escalation_id: str) -> Any:
    return conn.execute(_LOCK_ANY, {"org_id": org_id, "id": escalation_id}).first()


def apply(conn: Any, escalation: Any, decision: Decision) -> Applied:
    """Apply ``decision`` to the locked ``escalation`` row. The caller owns the transaction
    and has checked that the escalation may still be decided."""
    evidence = {"escalation_id": str(escalation.id), "decided_by": decision.decided_by, "reason": decision.reason,
                **decision.details}
    relationship, superseded = None, []
    if decision.outcome == "supersedes":
        relationship, superseded = _supersede(conn, escalation, decision, evidence)
    elif decision.outcome == "contradicts":
        relationship = _relate(conn, escalation.org_id, str(escalation.memory_id), str(escalation.candidate_id),
                               "contradicts", evidence, decision.decided_by)
    status = "needs_review" if decision.outcome == "needs_review" else "resolved"
    decided_at = _record(conn, escalation, decision, status)
    return Applied(str(escalation.id), decision.outcome, status, decided_at, relationship, superseded)


def _supersede(conn: Any, escalation: Any, decision: Decision,
               evidence: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    org_id = escalation.org_id
    corpus.lock(conn, org_id, escalation.agent_id)
    rows = conn.execute(_LOCK_MEMORIES, {"org_id": org_id, "a": escalation.memory_id,
                                         "b": escalation.candidate_id}).all()
    facts = [MemoryFact(str(r.id), "", r.valid_from, r.valid_until, r.subject_key, r.created_at) for r in rows]
    older, newer = order_pair(facts[0], facts[1])
    status_before = next(r.status for r in rows if str(r.id) == older.memory_id)
    valid_until, interval = close_interval(older, newer)
    status_after = "superseded" if status_before == "active" else status_before
    conn.execute(_SUPERSEDE, {"org_id": org_id, "id": older.memory_id, "status": status_after,
                              "valid_until": valid_until})
    if status_after != status_before:
        corpus.bump(conn, org_id, escalation.agent_id)
    evidence = {**evidence, "interval": interval, "older_status_before": status_before}
    link = _relate(conn, org_id, newer.memory_id, older.memory_id, "supersedes", evidence, decision.decided_by)
    return link, [older.memory_id] if status_after != status_before else []


def close_interval(older: MemoryFact, newer: MemoryFact) -> tuple[datetime | None, dict[str, Any]]:
    """The older memory's new ``valid_until`` and a record of what happened to its interval.
    Only ever shortens, and never to an empty interval."""
    before = older.valid_until
    record: dict[str, Any] = {"previous_valid_until": before.isoformat() if before else None}
    if newer.valid_from is None:
        return before, {**record, "closed": False, "why": "newer_has_no_valid_from"}
    if older.valid_from is not None and newer.valid_from <= older.valid_from:
        return before, {**record, "closed": False, "why": "would_leave_an_empty_interval"}
    if before is not None and before <= newer.valid_from:
        return before, {**record, "closed": False, "why": "already_ends_by_newer_valid_from"}
    return newer.valid_from, {**record, "closed": True, "valid_until": newer.valid_from.isoformat()}


def _relate(conn: Any, org_id: str, source: str, target: str, kind: str, evidence: dict[str, Any],
            decided_by: str) -> dict[str, str]:
    conn.execute(_RELATE, {"org_id": org_id, "source": source, "target": target, "type": kind,
                           "evidence": json.dumps(evidence, default=str), "decided_by": decided_by})
    return {"source": source, "target": target, "type": kind}


def _record(conn: Any, escalation: Any, decision: Decision, status: str) -> datetime:
    params = {"org_id": escalation.org_id, "id": escalation.id, "status": status, "outcome": decision.outcome,
              "decided_by": decision.decided_by, "reason": decision.reason}
    conn.execute(_DECIDE, params)
    return conn.execute(_LOG, {**params, "details": json.dumps(decision.details, default=str)}).scalar_one()
