"""Reads for producers and reviewers: one memory, and its relationships.

Every read runs in the reader's tenant transaction (row-level security on its org) and,
for a key limited to some agents, filters on them too: another tenant's id reads exactly
like an unknown one. Views hold identifiers, numbers and the stored (redacted) content;
the PII report keeps entity types and counts, never values or scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, TEXT

from worker.db import tenant_tx

_AGENTS = bindparam("agents", type_=ARRAY(TEXT))

_MEMORY = text(
    """
    SELECT m.id, m.agent_id, m.content, m.source, m.status, m.valid_from, m.valid_until, m.category,
           m.confidence, m.pii_report, m.metadata, m.retrieval_count, m.last_retrieved_at, m.created_by_job,
           m.created_at, m.updated_at,
           COALESCE((SELECT jsonb_agg(jsonb_build_object('label', l.label, 'confidence', l.confidence)
                                      ORDER BY l.confidence DESC, l.label)
                       FROM memory_labels l WHERE l.org_id = m.org_id AND l.memory_id = m.id), '[]'::jsonb) AS labels
      FROM memories m
     WHERE m.org_id = :org_id AND m.id = CAST(:memory_id AS uuid) AND m.deleted_at IS NULL
       AND (CAST(:agents AS text[]) IS NULL OR m.agent_id = ANY(:agents))
    """
).bindparams(_AGENTS)

_RELATIONSHIPS = text(
    """
    SELECT r.relationship_type, r.source_memory_id, r.target_memory_id, r.evidence, r.decided_by, r.created_at
      FROM memory_relationships r
     WHERE r.org_id = :org_id
       AND (r.source_memory_id = CAST(:memory_id AS uuid) OR r.target_memory_id = CAST(:memory_id AS uuid))
     ORDER BY r.created_at, r.id
    """
)


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
    params = {"org_id": org_id, "memory_id": memory_id, "agents": list(agents) if agents is not None else None}
    with tenant_tx(engine, org_id) as conn:
        row = conn.execute(_MEMORY, params).first()
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
    params = {"org_id": org_id, "memory_id": memory_id, "agents": list(agents) if agents is not None else None}
    with tenant_tx(engine, org_id) as conn:
        if conn.execute(_MEMORY, params).first() is None:
            return None
        rows = list(conn.execute(_RELATIONSHIPS, {"org_id": org_id, "memory_id": memory_id}))
    links = []
    for r in rows:
        outgoing = str(r.source_memory_id) == memory_id
        links.append({"type": r.relationship_type, "direction": "outgoing" if outgoing else "incoming",
                      "memory_id": str(r.target_memory_id if outgoing else r.source_memory_id),
                      "evidence": r.evidence, "decided_by": r.decided_by, "created_at": iso(r.created_at)})
    return {"memory_id": memory_id, "relationships": links}
