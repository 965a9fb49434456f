"""Reads for producers and reviewers: one memory, and its relationships.

Every read runs in the reader's tenant transaction (row-level security on its org) and,
for a key limited to some agents, filters on them too: another tenant's id reads exactly
like an unknown one. Views hold identifiers, numbers and the stored (redacted) content;
the PII report keeps entity types and counts, never values or scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ibex_worker.db import tenant_tx
from ibex_worker.store import reads as store


def iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def pii_summary(report: dict[str, Any] | None) -> dict[str, Any]:
    """Types and counts only (the stored report also keeps scores and thresholds)."""
    report = report or {}
    entities = {etype: {"count": int(entry.get("count", 0)), "redacted": int(entry.get("redacted", 0)),
                        "masked": int(entry.get("masked", 0))}
                for etype, entry in (report.get("entities") or {}).items()}
    fields = {field: {etype: int(n) for etype, n in counts.items()}
              for field, counts in (report.get("fields") or {}).items()}
    return {"status": report.get("status", "clean"), "entities": entities, "fields": fields,
            "quarantine_reasons": list(report.get("quarantine_reasons") or [])}


def memory_view(engine: Any, org_id: str, memory_id: str,
                agents: Sequence[str] | None = None) -> dict[str, Any] | None:
    """The stored memory in the shape of ``GET /v1/memories/{memory_id}``, or None."""
    with tenant_tx(engine, org_id) as conn:
        row = store.memory(conn, org_id, memory_id, agents)
    if row is None:
        return None
    return {
        "memory_id": str(row.id), "org_id": org_id, "agent_id": row.agent_id, "status": row.status,
        "content": row.content, "source": row.source, "category": row.category, "confidence": row.confidence,
        "labels": row.labels, "valid_from": iso(row.valid_from), "valid_until": iso(row.valid_until),
        "retrieval_count": row.retrieval_count, "last_retrieved_at": iso(row.last_retrieved_at),
        "pii": pii_summary(row.pii_report), "metadata": row.metadata,
        "created_by_job": str(row.created_by_job) if row.created_by_job else None,
        "created_at": iso(row.created_at), "updated_at": iso(row.updated_at),
    }


def relationships_view(engine: Any, org_id: str, memory_id: str,
                       agents: Sequence[str] | None = None) -> dict[str, Any] | None:
    """``near_duplicate_of``, ``supersedes`` and ``contradicts`` links of one memory, both
    directions: ``outgoing`` when this memory is the link's source ("this supersedes that"),
    ``incoming`` when it is the target. None when the memory is not visible to the reader."""
    with tenant_tx(engine, org_id) as conn:
        if store.memory(conn, org_id, memory_id, agents) is None:
            return None
        rows = store.relationships(conn, org_id, memory_id)
    links = []
    for r in rows:
        outgoing = str(r.source_memory_id) == memory_id
        links.append({"type": r.relationship_type, "direction": "outgoing" if outgoing else "incoming",
                      "memory_id": str(r.target_memory_id if outgoing else r.source_memory_id),
                      "evidence": r.evidence, "decided_by": r.decided_by, "created_at": iso(r.created_at)})
    return {"memory_id": memory_id, "relationships": links}
