"""The quarantine review: the page of quarantined memories, the memory a release or delete
locks, and the audit of every decision in ``memory_review_decisions``. What a delete does to
each table is in that table's module."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, TEXT

_PAGE = text(
    "SELECT id, agent_id, content, source, pii_report, metadata, valid_from, valid_until, created_at "
    "FROM memories WHERE org_id = :org_id AND status = 'quarantined' AND deleted_at IS NULL "
    "AND (CAST(:agent_ids AS text[]) IS NULL OR agent_id = ANY(:agent_ids)) "
    "AND (CAST(:after_at AS timestamptz) IS NULL OR (created_at, id) > (:after_at, CAST(:after_id AS uuid))) "
    "ORDER BY created_at, id LIMIT :limit"
).bindparams(bindparam("agent_ids", type_=ARRAY(TEXT)))
_MEMORY_FOR_UPDATE = text(
    "SELECT id, agent_id, status, deleted_at, content, source, pii_report, metadata, subject_key, valid_from, "
    "valid_until, redaction_tags FROM memories WHERE org_id = :org_id AND id = CAST(:id AS uuid) FOR UPDATE"
)
_RECORD_DECISION = text(
    "INSERT INTO memory_review_decisions (org_id, agent_id, memory_id, action, outcome, result_memory_id, "
    "decided_by, note, job_id) VALUES (:org_id, :agent_id, :memory_id, :action, :outcome, :result_memory_id, "
    ":decided_by, :note, :job_id)"
)


def page_rows(conn: Any, org_id: str, limit: int, after: tuple[datetime | None, str | None],
         agent_ids: Sequence[str] | None) -> list[Any]:
    """Up to ``limit`` quarantined memories of the org (of ``agent_ids`` if given), ordered by
    ``(created_at, id)`` and starting after ``after`` (``(None, None)``: from the first)."""
    return conn.execute(_PAGE, {"org_id": org_id, "limit": limit, "after_at": after[0], "after_id": after[1],
                                "agent_ids": None if agent_ids is None else list(agent_ids)}).all()


def lock_memory(conn: Any, org_id: str, memory_id: str) -> Any | None:
    """The memory (deleted or not), locked until the transaction ends; None when unknown."""
    return conn.execute(_MEMORY_FOR_UPDATE, {"org_id": org_id, "id": memory_id}).first()


def record_decision(conn: Any, org_id: str, agent_id: str, memory_id: str, action: str, outcome: str,
                    decided_by: str, *, result_memory_id: str | None = None, note: str | None = None,
                    job_id: str | None = None) -> None:
    """Audit one review decision (``action`` release or delete) on the memory."""
    conn.execute(_RECORD_DECISION, {"org_id": org_id, "agent_id": agent_id, "memory_id": memory_id,
                                    "action": action, "outcome": outcome, "result_memory_id": result_memory_id,
                                    "decided_by": decided_by, "note": note, "job_id": job_id})
