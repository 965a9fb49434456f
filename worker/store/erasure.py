"""Erasing one memory in the caller's transaction: a tombstone stays (ids and times), and
every table's part of the memory goes - labels, relationships, content, embedding, subject
key, metadata, PII report, the requests of its finished jobs; the escalations naming it are
withdrawn. Used by a reviewer's delete and by a release, which replaces the quarantined row."""

from __future__ import annotations

from typing import Any

from ibex_worker.store import escalations, memories, relationships
from ibex_worker.store import jobs as job_store

DELETED_BY_SYSTEM = "system:memory_deleted"  # who withdraws the escalations of a deleted memory


def erase(conn: Any, org_id: str, key: str, decided_by: str) -> dict[str, int]:
    """Tombstone a memory in the caller's transaction: labels, relationships and content gone,
    escalations naming it withdrawn, its jobs scrubbed. Returns what it removed, by kind."""
    labels = memories.delete_labels(conn, org_id, key)
    links = relationships.delete_naming(conn, org_id, key)
    withdrawn = escalations.withdraw_naming(conn, org_id, key, DELETED_BY_SYSTEM)
    for escalation_id in withdrawn:
        escalations.log_decision(conn, org_id, escalation_id, outcome="withdrawn", decided_by=DELETED_BY_SYSTEM,
                                 reason=escalations.WITHDRAWN_REASON,
                                 details={"memory_id": key, "deleted_by": decided_by})
    memories.tombstone(conn, org_id, key)
    jobs_scrubbed = job_store.scrub_finished(conn, org_id, key)
    return {"labels": labels, "relationships": links, "escalations": len(withdrawn), "jobs": jobs_scrubbed}
