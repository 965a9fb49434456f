"""Relationships between memories (``memory_relationships``): ``near_duplicate_of``,
``supersedes`` and ``contradicts``, each with its evidence and who decided it; and a
person's removals of them (``memory_relationship_decisions``).

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


_BETWEEN = (
    "SELECT source_memory_id, target_memory_id, relationship_type, evidence, decided_by FROM memory_relationships "
    "WHERE org_id = :org_id AND relationship_type = :type AND ((source_memory_id = :a AND target_memory_id = :b) "
    "OR (source_memory_id = :b AND target_memory_id = :a)) ORDER BY source_memory_id"
)
_READ_BETWEEN, _LOCK_BETWEEN = text(_BETWEEN), text(_BETWEEN + " FOR UPDATE")
_FORGET_HASHES = text(
    "UPDATE memory_relationship_decisions SET source_content_hash = NULL, target_content_hash = NULL "
    "WHERE org_id = :org_id AND (source_memory_id = :id OR target_memory_id = :id) "
    "AND (source_content_hash IS NOT NULL OR target_content_hash IS NOT NULL)"
)
_DELETE_ONE = text(
    "DELETE FROM memory_relationships WHERE org_id = :org_id AND source_memory_id = :source "
    "AND target_memory_id = :target AND relationship_type = :type"
)
_RECORD_REMOVAL = text(
    "INSERT INTO memory_relationship_decisions (org_id, agent_id, source_memory_id, target_memory_id, "
    "relationship_type, source_content_hash, target_content_hash, evidence, decided_by, reason) "
    "VALUES (:org_id, :agent_id, :source, :target, :type, :source_hash, :target_hash, CAST(:evidence AS jsonb), "
    ":decided_by, :reason) RETURNING id, decided_at"
)
_UNLINKED_PARTNERS = text(
    "SELECT target_content_hash AS other FROM memory_relationship_decisions WHERE org_id = :org_id "
    "AND agent_id = :agent_id AND relationship_type = 'near_duplicate_of' AND source_content_hash = :hash "
    "UNION SELECT source_content_hash FROM memory_relationship_decisions WHERE org_id = :org_id "
    "AND agent_id = :agent_id AND relationship_type = 'near_duplicate_of' AND target_content_hash = :hash"
)
_SUPERSEDED_BY_ANOTHER = text(
    "SELECT 1 FROM memory_relationships WHERE org_id = :org_id AND target_memory_id = :id "
    "AND relationship_type = 'supersedes' LIMIT 1"
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


def between(conn: Any, org_id: str, a: str, b: str, kind: str, *, lock: bool) -> list[Any]:
    """The relationships of ``kind`` between the two memories, either direction; locked
    until the transaction ends when ``lock``."""
    return conn.execute(_LOCK_BETWEEN if lock else _READ_BETWEEN, {"org_id": org_id, "a": a, "b": b,
                                                                    "type": kind}).all()


def forget_hashes(conn: Any, org_id: str, memory_id: str) -> int:
    """A deleted memory's removals keep their audit (ids, who, when, why) but not its
    content hashes: the deleted text written again is a new pair. How many rows."""
    return conn.execute(_FORGET_HASHES, {"org_id": org_id, "id": memory_id}).rowcount


def remove(conn: Any, org_id: str, agent_id: str, link: Any, hashes: dict[str, str], decided_by: str,
           reason: str | None) -> Any:
    """Delete ``link`` (a row of :func:`lock_between`) and audit the removal with the pair's
    content hashes; the decision row's ``id, decided_at``."""
    source, target = str(link.source_memory_id), str(link.target_memory_id)
    conn.execute(_DELETE_ONE, {"org_id": org_id, "source": source, "target": target, "type": link.relationship_type})
    evidence = {"evidence": dict(link.evidence or {}), "decided_by": link.decided_by}
    return conn.execute(_RECORD_REMOVAL, {
        "org_id": org_id, "agent_id": agent_id, "source": source, "target": target, "type": link.relationship_type,
        "source_hash": hashes[source], "target_hash": hashes[target], "evidence": json.dumps(evidence, default=str),
        "decided_by": decided_by, "reason": reason}).one()


def unlinked_partners(conn: Any, org_id: str, agent_id: str, content_hash: str) -> set[str]:
    """Content hashes a person said the text with ``content_hash`` is not a near duplicate of."""
    rows = conn.execute(_UNLINKED_PARTNERS, {"org_id": org_id, "agent_id": agent_id, "hash": content_hash})
    return {r.other for r in rows}


def superseded_by_another(conn: Any, org_id: str, memory_id: str) -> bool:
    """Whether some memory still supersedes this one."""
    return conn.execute(_SUPERSEDED_BY_ANOTHER, {"org_id": org_id, "id": memory_id}).first() is not None
