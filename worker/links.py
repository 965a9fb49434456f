"""A person undoes a relationship: the function behind
``DELETE /v1/memories/{id}/relationships/{other_id}?type=...``.

The link of that type between the two memories (either direction) is deleted and the removal
is audited in ``memory_relationship_decisions``: who, when, why (a reason, stored only after
the write path's PII analysis), the removed link's evidence and who had decided it, and the
content hashes of both memories. Undoing a call undoes its effect:

- ``near_duplicate_of``: the pair is no longer linked, its open escalations (raised because
  the two were near duplicates) end ``withdrawn``, decided by the person, and a later write
  of the same text is not linked to the same text again (``near_dedup`` leaves it out) while
  both memories exist; a changed text is a new pair and may be linked;
- ``contradicts``: the pair is no longer linked; both stay as they are;
- ``supersedes``: the superseded memory is active again, unless another memory still
  supersedes it, with the ``valid_until`` it had before the supersession (the escalation
  worker's, or the pipeline's for overlapping open-ended facts) closed it, when it did. If
  an identical text is active meanwhile, nothing changes and :class:`ReactivationBlocked`
  is raised: two active copies of one text are never stored.

Tenant-scoped: another tenant's memory, one of an agent outside ``agent_ids``, an unknown or
malformed id, two memories of different agents and a pair without such a link all raise
:class:`LinkNotFound`, checked before the reason meets the PII model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import structlog

from ibex_worker import notes
from ibex_worker.db import tenant_tx
from ibex_worker.errors import FieldIssue, IbexError, ValidationFailed
from ibex_worker.limits import NOTE_MAX_CHARS
from ibex_worker.review import MemoryNotFound, parse_id
from ibex_worker.store import corpus, escalations, memories, relationships

if TYPE_CHECKING:
    from ibex_worker.adapters.redactor import Redactor

log = structlog.get_logger("ibex.links")

TYPES = ("near_duplicate_of", "supersedes", "contradicts")


class LinkNotFound(IbexError):
    code = "NOT_FOUND"


class ReactivationBlocked(IbexError):
    code = "DUPLICATE_CONTENT"

    def __init__(self, memory_id: str) -> None:
        super().__init__("the superseded memory's text is active in another memory; it stays superseded")
        self.memory_id = memory_id


def remove(engine: Any, org_id: str, memory_id: str, other_id: str, kind: str, reason: str | None,
           decided_by: str, agent_ids: Sequence[str] | None = None,
           reason_redactor: Callable[[], Redactor] | None = None) -> None:
    """Remove the ``kind`` link between the two memories. Raises ``ValidationFailed``,
    ``LinkNotFound``, ``ReactivationBlocked`` or ``TransientError`` (the reason's PII
    analysis could not run). Locks in the escalation worker's order: the pair's open
    escalations, the agent's corpus row, the memories, the links."""
    _check(kind, reason)
    a, b = _ids(memory_id, other_id)
    with tenant_tx(engine, org_id) as conn:
        _pair(conn, org_id, a, b, kind, agent_ids, lock=False)
    stored_reason = notes.redacted(reason.strip(), reason_redactor, "reason") if reason and reason.strip() else None
    with tenant_tx(engine, org_id) as conn:
        open_escalations = escalations.lock_open_between(conn, org_id, a, b) if kind == "near_duplicate_of" else []
        agent_id, rows, links = _pair(conn, org_id, a, b, kind, agent_ids, lock=True)
        hashes = {memory: row.content_hash for memory, row in rows.items()}
        reactivated: list[str] = []
        for link in links:
            relationships.remove(conn, org_id, agent_id, link, hashes, decided_by, stored_reason)
            if kind == "supersedes":
                reactivated += _reactivate(conn, org_id, agent_id, link, rows[str(link.target_memory_id)])
        withdrawn = _withdraw(conn, org_id, open_escalations, decided_by, a, b)
    log.info("relationship_removed", org_id=org_id, source=str(links[0].source_memory_id),
             target=str(links[0].target_memory_id), type=kind, links=len(links), reactivated=len(reactivated),
             escalations_withdrawn=len(withdrawn))


def _check(kind: str, reason: str | None) -> None:
    issues = []
    if kind not in TYPES:
        issues.append(FieldIssue("type", f"must be one of {', '.join(TYPES)}"))
    if reason is not None and (not isinstance(reason, str) or len(reason) > NOTE_MAX_CHARS or "\x00" in reason):
        issues.append(FieldIssue("reason", f"must be a string of at most {NOTE_MAX_CHARS} characters"))
    if issues:
        raise ValidationFailed(issues)


def _ids(memory_id: str, other_id: str) -> tuple[str, str]:
    try:
        a, b = parse_id(memory_id), parse_id(other_id)
    except MemoryNotFound:
        raise LinkNotFound("no such relationship") from None
    if a == b:
        raise LinkNotFound("no such relationship")
    return a, b


def _pair(conn: Any, org_id: str, a: str, b: str, kind: str, agent_ids: Sequence[str] | None,
          *, lock: bool) -> tuple[str, dict[str, Any], list[Any]]:
    """(agent, the two memories by id, the links), or ``LinkNotFound``. With ``lock``, locked
    in persist's order: the agent's corpus row, the memories, the links."""
    rows = memories.read_pair(conn, org_id, a, b)
    agents = {r.agent_id for r in rows}
    if len(rows) != 2 or len(agents) != 1 or (agent_ids is not None and not agents <= set(agent_ids)):
        raise LinkNotFound("no such relationship")
    agent_id = agents.pop()
    if lock:
        corpus.lock(conn, org_id, agent_id)
        rows = memories.lock_pair(conn, org_id, a, b)
    links = relationships.between(conn, org_id, a, b, kind, lock=lock)
    if not links:
        raise LinkNotFound("no such relationship")
    return agent_id, {str(r.id): r for r in rows}, links


def _reactivate(conn: Any, org_id: str, agent_id: str, link: Any, older: Any) -> list[str]:
    """The superseded memory of ``link`` active again, unless something still supersedes it."""
    older_id = str(older.id)
    if older.status != "superseded" or older.deleted_at is not None or \
            relationships.superseded_by_another(conn, org_id, older_id):
        return []
    twin = memories.find_active_by_hash(conn, org_id, agent_id, older.content_hash)
    if twin is not None:
        raise ReactivationBlocked(twin)
    searchable_since = corpus.version(conn, org_id, agent_id) + 1  # locked by _pair; the version the bump gives
    memories.reactivate(conn, org_id, older_id, _valid_until_before(link, older.valid_until), searchable_since)
    corpus.bump(conn, org_id, agent_id)
    return [older_id]


def _withdraw(conn: Any, org_id: str, ids: list[str], decided_by: str, a: str, b: str) -> list[str]:
    withdrawn = escalations.withdraw(conn, org_id, ids, decided_by, escalations.UNLINKED_REASON) if ids else []
    for escalation_id in withdrawn:
        escalations.log_decision(conn, org_id, escalation_id, outcome="withdrawn", decided_by=decided_by,
                                 reason=escalations.UNLINKED_REASON, details={"memories": sorted((a, b))})
    return withdrawn


def _valid_until_before(link: Any, current: datetime | None) -> Any:
    """The older memory's ``valid_until`` before the supersession closed it, if it did."""
    interval = (link.evidence or {}).get("interval") or {}
    if interval.get("closed"):
        previous = interval.get("previous_valid_until")
        return datetime.fromisoformat(previous) if previous else None
    return current
