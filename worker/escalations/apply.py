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

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ibex_worker.conflict_rules.verdicts import MemoryFact, order_pair
from ibex_worker.store import corpus, escalations, memories, relationships


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


def apply(conn: Any, escalation: Any, decision: Decision) -> Applied:
    """Apply ``decision`` to the ``escalation`` row, which the caller has locked
    (``ibex_worker.store.escalations.lock`` or ``lock_claimed``) and checked may still be decided.
    The caller owns the transaction."""
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
    rows = memories.lock_pair(conn, org_id, escalation.memory_id, escalation.candidate_id)
    facts = [MemoryFact(str(r.id), "", r.valid_from, r.valid_until, r.subject_key, r.created_at) for r in rows]
    older, newer = order_pair(facts[0], facts[1])
    status_before = next(r.status for r in rows if str(r.id) == older.memory_id)
    valid_until, interval = close_interval(older, newer)
    status_after = "superseded" if status_before == "active" else status_before
    memories.set_status_and_valid_until(conn, org_id, older.memory_id, status_after, valid_until)
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
    relationships.insert(conn, org_id, source, target, kind, evidence, decided_by)
    return {"source": source, "target": target, "type": kind}


def _record(conn: Any, escalation: Any, decision: Decision, status: str) -> datetime:
    escalations.record_decision(conn, escalation.org_id, escalation.id, status=status, outcome=decision.outcome,
                                decided_by=decision.decided_by, reason=decision.reason)
    return escalations.log_decision(conn, escalation.org_id, escalation.id, outcome=decision.outcome,
                                    decided_by=decision.decided_by, reason=decision.reason, details=decision.details)
