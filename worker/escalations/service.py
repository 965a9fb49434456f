"""Escalations for people: list them, read one, resolve one. Tenant-scoped throughout.

These are the functions behind ``GET /v1/escalations``, ``GET /v1/escalations/{id}`` and
``POST /v1/escalations/{id}/resolve`` (the HTTP layer maps the errors below) and behind
``ibex escalations list|resolve``.

A person's resolution is applied at once, with the same code as an automatic one, whatever
the escalation's state: ``pending``, ``claimed`` (the poller's later result is then fenced
out and dropped), ``needs_review`` or ``dead``. A ``resolved`` escalation is final:
resolving it again raises :class:`EscalationAlreadyResolved` (HTTP 409), because its side
effects (a closed interval, a superseded memory) are not undone by a second decision.
Another tenant's escalation and an unknown id both raise :class:`EscalationNotFound`, and
so does an escalation of an agent outside ``agent_ids`` (an API key limited to some agents).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import structlog

from ibex_worker import notes
from ibex_worker.cursor import page, page_start
from ibex_worker.db import tenant_tx
from ibex_worker.errors import FieldIssue, IbexError, ValidationFailed
from ibex_worker.escalations import apply as applying
from ibex_worker.limits import LIST_LIMIT_MAX, NOTE_MAX_CHARS
from ibex_worker.store import escalations

if TYPE_CHECKING:
    from ibex_worker.adapters.cache import ReadCache
    from ibex_worker.adapters.redactor import Redactor

log = structlog.get_logger("ibex.escalations")

STATUSES = ("pending", "claimed", "needs_review", "resolved", "dead")
HUMAN_OUTCOMES = ("supersedes", "contradicts", "compatible")
HUMAN_PREFIXES = ("api_key:", "cli:")
DEFAULT_HUMAN_REASON = "resolved by a person"


class EscalationNotFound(IbexError):
    code = "NOT_FOUND"


class EscalationAlreadyResolved(IbexError):
    code = "ESCALATION_ALREADY_RESOLVED"

    def __init__(self, view: dict[str, Any]) -> None:
        super().__init__("this escalation is already resolved; its decision is final")
        self.escalation = view


def list_escalations(engine: Any, org_id: str, status: str | None = None, limit: int = 50,
                     cursor: str | None = None, agent_ids: Sequence[str] | None = None) -> dict[str, Any]:
    """One page, oldest first: ``{"items": [...], "next_cursor": str | None}``.
    ``agent_ids`` (None: every agent) limits it to those agents' escalations."""
    issues = []
    if status is not None and status not in STATUSES:
        issues.append(FieldIssue("status", f"must be one of {', '.join(STATUSES)}"))
    after = page_start(limit, LIST_LIMIT_MAX, cursor, issues)
    with tenant_tx(engine, org_id) as conn:
        rows = escalations.list_page(conn, org_id, status=status, agent_ids=agent_ids, after_at=after[0],
                                     after_id=after[1], limit=limit + 1)
    return page(rows, limit, view)


def get_escalation(engine: Any, org_id: str, escalation_id: str,
                   agent_ids: Sequence[str] | None = None) -> dict[str, Any]:
    """One escalation with its decision history (every decision, automatic or human)."""
    key = _parse_id(escalation_id)
    with tenant_tx(engine, org_id) as conn:
        row = _visible(escalations.get(conn, org_id, key), agent_ids)
        decisions = escalations.decisions(conn, org_id, key)
    return {**view(row), "decisions": [_decision_view(d) for d in decisions]}


def resolve(engine: Any, org_id: str, escalation_id: str, outcome: str, note: str | None,
            decided_by: str, cache: ReadCache | None = None, agent_ids: Sequence[str] | None = None,
            note_redactor: Callable[[], Redactor] | None = None) -> dict[str, Any]:
    """A person's decision, applied now. ``decided_by`` is ``api_key:<key id>`` or
    ``cli:<user>``. A note is stored as the decision's reason only after the write path's PII
    analysis (``note_redactor`` returns that redactor; it is needed when a note is given): its
    findings, certain or not, are placeholders, and an analysis that fails refuses the decision
    with ``TransientError``. Raises ``ValidationFailed``, ``EscalationNotFound`` or
    ``EscalationAlreadyResolved``; returns the escalation as :func:`get_escalation` does.

    The request is checked (fields, the escalation visible and unresolved) before the note is
    analysed, so a refused decision never waits for the PII model; the check is repeated
    under the row lock."""
    _check_decision(outcome, note, decided_by)
    key = _parse_id(escalation_id)
    with tenant_tx(engine, org_id) as conn:
        _unresolved(_visible(escalations.get(conn, org_id, key), agent_ids))
    decision = _human_decision(outcome, note, decided_by, note_redactor)
    with tenant_tx(engine, org_id) as conn:
        row = _unresolved(_visible(escalations.lock(conn, org_id, key), agent_ids))
        applied = applying.apply(conn, row, decision)
    _after_commit(cache, org_id, applied)
    log.info("escalation_resolved", escalation_id=key, org_id=org_id, outcome=outcome, by="person",
             previous_status=row.status)
    return get_escalation(engine, org_id, key)


def _visible(row: Any, agent_ids: Sequence[str] | None) -> Any:
    if row is None or (agent_ids is not None and row.agent_id not in agent_ids):
        raise EscalationNotFound("escalation not found")
    return row


def _unresolved(row: Any) -> Any:
    if row.status == "resolved":
        raise EscalationAlreadyResolved(view(row))
    return row


def _check_decision(outcome: str, note: str | None, decided_by: str) -> None:
    issues = []
    if outcome not in HUMAN_OUTCOMES:
        issues.append(FieldIssue("outcome", f"must be one of {', '.join(HUMAN_OUTCOMES)}"))
    if note is not None and (not isinstance(note, str) or len(note) > NOTE_MAX_CHARS):
        issues.append(FieldIssue("note", f"must be a string of at most {NOTE_MAX_CHARS} characters"))
    if issues:
        raise ValidationFailed(issues)
    if not decided_by.startswith(HUMAN_PREFIXES) or len(decided_by) <= len("cli:"):
        raise ValueError("a person's decision is made by api_key:<key id> or cli:<user>")


def _human_decision(outcome: str, note: str | None, decided_by: str,
                    note_redactor: Callable[[], Redactor] | None) -> applying.Decision:
    reason = notes.redacted(note.strip(), note_redactor, "note") if note and note.strip() else DEFAULT_HUMAN_REASON
    return applying.Decision(outcome, reason, decided_by, {"decided_by_person": True})


def _after_commit(cache: ReadCache | None, org_id: str, applied: applying.Applied) -> None:
    from ibex_worker.metrics import get_metrics

    get_metrics().conflict_decided(applied.outcome)
    if cache is not None and applied.superseded:
        cache.evict(org_id, applied.superseded)


def _parse_id(escalation_id: str) -> str:
    try:
        return str(uuid.UUID(str(escalation_id)))
    except ValueError:
        raise EscalationNotFound("escalation not found") from None


def view(row: Any) -> dict[str, Any]:
    """The escalation as the API shows it: identifiers, statuses, decision; never content."""
    return {
        "escalation_id": str(row.id), "org_id": row.org_id, "agent_id": row.agent_id,
        "memory_id": str(row.memory_id), "candidate_id": str(row.candidate_id), "reason": row.reason,
        "evidence": dict(row.evidence or {}), "status": row.status, "outcome": row.outcome,
        "decided_by": row.decided_by, "decision_reason": row.decision_reason,
        "decided_at": _iso(row.decided_at), "attempts": row.attempts,
        "next_attempt_at": _iso(row.next_attempt_at), "last_error": row.last_error,
        "created_by_job": str(row.created_by_job) if row.created_by_job else None,
        "created_at": _iso(row.created_at), "updated_at": _iso(row.updated_at),
    }


def _decision_view(row: Any) -> dict[str, Any]:
    return {"outcome": row.outcome, "decided_by": row.decided_by, "reason": row.reason,
            "details": dict(row.details or {}), "decided_at": _iso(row.decided_at)}


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
