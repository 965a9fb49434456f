"""Relationships between memories (``memory_relationships``): ``near_duplicate_of``,
``supersedes`` and ``contradicts``, each with its evidence and who decided it.

A relationship is unique per ``(source, target, type)``: recording it again is a no-op.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import text

_INSERT = text(
    "INSERT INTO memory_relationships (org_id, source_memory_id, target_memory_id, relationship_type, evidence, "
    "decided_by) VALUES (:org_id, :source, :target, :type, CAST(:evidence AS jsonb), :decided_by) "
    "ON CONFLICT (org_id, source_memory_id, target_memory_id, relationship_type) DO NOTHING"
)
_DELETE_NAMING = text(
    "DELETE FROM memory_relationships WHERE org_id = :org_id AND (source_memory_id = :id OR target_memory_id = :id)"
)


def insert(conn: Any, org_id: str, source: str, target: str, kind: str, evidence: dict[str, Any],
           decided_by: str) -> None:
    """Record ``source -kind-> target`` unless it is already recorded. ``evidence`` values
    JSON cannot hold (datetimes) are stored as their text."""
    conn.execute(_INSERT, {"org_id": org_id, "source": source, "target": target, "type": kind,
                           "evidence": json.dumps(evidence, default=str), "decided_by": decided_by})


def delete_naming(conn: Any, org_id: str, memory_id: str) -> int:
    """Remove the relationships naming the memory, either side; how many there were."""
    return conn.execute(_DELETE_NAMING, {"org_id": org_id, "id": memory_id}).rowcount
