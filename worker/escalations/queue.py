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

from ibex_worker.db import maint_tx, tenant_tx
from ibex_worker.conflict_rules.verdicts import MemoryFact
from ibex_worker.store import escalations, memories

BACKLOG_STATUSES = ("pending", "claimed", "needs_review", "dead")


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
        rows = escalations.claim(conn, limit=limit, lease_seconds=lease_seconds, owner=owner, org_ids=org_ids)
    return [_claim(row) for row in rows]


def _claim(row: Any) -> Claim:
    return Claim(row.org_id, str(row.id), row.agent_id, str(row.memory_id), str(row.candidate_id), row.reason,
                 dict(row.evidence or {}), str(row.lease_token), int(row.attempts))


def start(engine: Any, claim: Claim, lease_seconds: int) -> Loaded | None:
    """Renew the item's lease (fenced) and read both memories; None when fenced out."""
    with tenant_tx(engine, claim.org_id) as conn:
        if not escalations.renew_lease(conn, claim.org_id, claim.id, claim.lease_token, lease_seconds):
            return None
        rows = {str(r.id): r for r in memories.read_pair(conn, claim.org_id, claim.memory_id, claim.candidate_id)}
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
    return MemoryFact(str(row.id), row.content, row.valid_from, row.valid_until, row.subject_key, row.created_at,
                      row.subject_aspect, tuple(row.redaction_tags or ()))


def renew_waiting(engine: Any, claims: Sequence[Claim], lease_seconds: int) -> None:
    """Keep the not-yet-handled items of a batch leased while an earlier item is classified:
    a lease covers one classification, not a whole batch, so without this the tail of a slow
    batch would expire and be re-claimed (counting attempts it never used)."""
    if not claims:
        return
    with maint_tx(engine) as conn:
        for c in claims:
            escalations.renew_lease(conn, c.org_id, c.id, c.lease_token, lease_seconds)


def release(engine: Any, claims: Sequence[Claim]) -> int:
    """Hand unprocessed items back (graceful stop): pending again, the attempt not counted."""
    if not claims:
        return 0
    with maint_tx(engine) as conn:
        return sum(escalations.release(conn, c.org_id, c.id, c.lease_token) for c in claims)


def fail(engine: Any, claim: Claim, error: str, *, dead: bool, delay_seconds: float) -> bool:
    """Record a failed attempt: back to pending after ``delay_seconds``, or ``dead``.
    ``error`` is a code and an exception type name, never content. False when fenced out."""
    with tenant_tx(engine, claim.org_id) as conn:
        if dead:
            return escalations.bury(conn, claim.org_id, claim.id, claim.lease_token, error=error)
        return escalations.retry_later(conn, claim.org_id, claim.id, claim.lease_token, error=error,
                                       delay_seconds=delay_seconds)


def backlog(engine: Any, org_ids: Sequence[str] = ()) -> dict[str, int]:
    """Unresolved escalations by status, of the orgs this poller serves (all when empty)."""
    with maint_tx(engine) as conn:
        counts = escalations.count_unresolved(conn, org_ids)
    return {status: counts.get(status, 0) for status in BACKLOG_STATUSES}
