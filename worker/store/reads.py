"""Read-only views of stored memories: one memory with its labels, and the relationships
naming it. Both filter on the org and, for a reader limited to some agents, on those agents
(``agents`` None: every agent of the org)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, TEXT

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
).bindparams(bindparam("agents", type_=ARRAY(TEXT)))

_RELATIONSHIPS = text(
    """
    SELECT r.relationship_type, r.source_memory_id, r.target_memory_id, r.evidence, r.decided_by, r.created_at
      FROM memory_relationships r
     WHERE r.org_id = :org_id
       AND (r.source_memory_id = CAST(:memory_id AS uuid) OR r.target_memory_id = CAST(:memory_id AS uuid))
     ORDER BY r.created_at, r.id
    """
)


def memory(conn: Any, org_id: str, memory_id: str, agents: Sequence[str] | None) -> Any | None:
    """The memory, not deleted, with its ``labels`` (JSON, highest confidence first), or None
    when it is unknown or outside ``agents``."""
    params = {"org_id": org_id, "memory_id": memory_id, "agents": list(agents) if agents is not None else None}
    return conn.execute(_MEMORY, params).first()


def relationships(conn: Any, org_id: str, memory_id: str) -> list[Any]:
    """Every relationship with the memory as its source or its target, oldest first."""
    return list(conn.execute(_RELATIONSHIPS, {"org_id": org_id, "memory_id": memory_id}))
