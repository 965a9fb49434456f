"""Reviewing quarantined memories, and deleting memories: the functions behind
``GET /v1/quarantine``, ``POST /v1/memories/{id}/release``, ``DELETE /v1/memories/{id}`` and
``ibex quarantine``.

Tenant-scoped throughout: another tenant's memory, one of an agent outside ``agent_ids``,
an unknown id and a malformed id all raise :class:`MemoryNotFound`.

- A **release** is a write job of record: it starts at the PII stage (which redacts the
  reviewer's note), then runs exact and near dedup, embedding, conflict and persist like any
  write; persist turns the quarantined row active (or, if an identical active memory exists,
  retires it in favour of that one) and audits the decision. The masked text stays masked.
- A **delete** leaves a tombstone (ids and times, no content, embedding, metadata or subject
  key), removes the memory's labels and relationships, ends the escalations naming it as
  ``withdrawn`` (decided by ``system:memory_deleted``), scrubs the jobs that wrote it, and is
  audited. Deleting again is a no-op.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

import structlog
from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, TEXT

from worker import corpus, jobs
from worker.cursor import page, page_start
from worker.db import tenant_tx
from worker.errors import FieldIssue, IbexError, ValidationFailed
from worker.publish import publish
from worker.reads import iso, pii_summary

log = structlog.get_logger("ibex.review")

NOTE_MAX_CHARS = 2000
LIST_LIMIT_MAX = 200
DELETED_BY_SYSTEM = "system:memory_deleted"
TOMBSTONE_HASH = "0" * 64  # a deleted memory's content_hash: no content, nothing to match


class MemoryNotFound(IbexError):
    code = "NOT_FOUND"


class NotQuarantined(IbexError):
    code = "NOT_QUARANTINED"


class ReleaseInProgress(IbexError):
    code = "RELEASE_IN_PROGRESS"

    def __init__(self, job_id: str) -> None:
        super().__init__("a release of this memory is already running")
        self.job_id = job_id


_AGENTS = bindparam("agent_ids", type_=ARRAY(TEXT))
_LIST = text(
    "SELECT id, agent_id, content, source, pii_report, metadata, valid_from, valid_until, created_at "
    "FROM memories WHERE org_id = :org_id AND status = 'quarantined' AND deleted_at IS NULL "
    "AND (CAST(:agent_ids AS text[]) IS NULL OR agent_id = ANY(:agent_ids)) "
    "AND (CAST(:after_at AS timestamptz) IS NULL OR (created_at, id) > (:after_at, CAST(:after_id AS uuid))) "
    "ORDER BY created_at, id LIMIT :limit"
).bindparams(_AGENTS)
_MEMORY_FOR_UPDATE = text(
    "SELECT id, agent_id, status, deleted_at, content, source, pii_report, metadata, subject_key, valid_from, "
    "valid_until FROM memories WHERE org_id = :org_id AND id = CAST(:id AS uuid) FOR UPDATE"
)
_MEMORY_AGENT = text("SELECT agent_id FROM memories WHERE org_id = :org_id AND id = CAST(:id AS uuid)")
_LABELS = text("SELECT label, confidence FROM memory_labels WHERE org_id = :org_id AND memory_id = :id "
               "ORDER BY confidence DESC, label")
_RELEASE_RUNNING = text(
    "SELECT id FROM memory_write_jobs WHERE org_id = :org_id AND release_of = :id AND status IN ('queued', 'running')"
)
_DELETE_LABELS = text("DELETE FROM memory_labels WHERE org_id = :org_id AND memory_id = :id")
_DELETE_RELATIONSHIPS = text(
    "DELETE FROM memory_relationships WHERE org_id = :org_id AND (source_memory_id = :id OR target_memory_id = :id)"
)
_WITHDRAW_ESCALATIONS = text(
    """
    UPDATE memory_conflict_escalations
       SET status = 'resolved', outcome = 'withdrawn', decided_by = :decided_by,
           decision_reason = 'a memory it names was deleted', decided_at = now(),
           lease_token = NULL, lease_expires_at = NULL, updated_at = now()
     WHERE org_id = :org_id AND (memory_id = :id OR candidate_id = :id) AND status <> 'resolved'
    RETURNING id
    """
)
_LOG_WITHDRAWAL = text(
    "INSERT INTO memory_conflict_decisions (org_id, escalation_id, outcome, decided_by, reason, details) "
    "VALUES (:org_id, :escalation_id, 'withdrawn', :decided_by, 'a memory it names was deleted', "
    "CAST(:details AS jsonb))"
)
_TOMBSTONE = text(
    """
    UPDATE memories
       SET status = 'deleted', deleted_at = now(), content = '', content_hash = :tombstone_hash, embedding = NULL,
           embedding_model = NULL, subject_key = NULL, metadata = '{}'::jsonb, pii_report = '{}'::jsonb,
           updated_at = now()
     WHERE org_id = :org_id AND id = :id
    """
)
_SCRUB_JOBS = text(
    "UPDATE memory_write_jobs SET context = '{}'::jsonb, request = '{}'::jsonb, updated_at = now() "
    "WHERE org_id = :org_id AND (memory_id = :id OR release_of = :id) AND status IN ('succeeded', 'failed')"
)
AUDIT = text(
    "INSERT INTO memory_review_decisions (org_id, agent_id, memory_id, action, outcome, result_memory_id, "
    "decided_by, note, job_id) VALUES (:org_id, :agent_id, :memory_id, :action, :outcome, :result_memory_id, "
    ":decided_by, :note, :job_id)"
)


def parse_id(memory_id: str) -> str:
    try:
        return str(uuid.UUID(str(memory_id)))
    except ValueError:
        raise MemoryNotFound("memory not found") from None


def list_quarantined(engine: Any, org_id: str, limit: int = 50, cursor: str | None = None,
                     agent_ids: Sequence[str] | None = None) -> dict[str, Any]:
    """One page of the org's quarantined memories, oldest first: their masked content only."""
    after = page_start(limit, LIST_LIMIT_MAX, cursor)
    with tenant_tx(engine, org_id) as conn:
        rows = conn.execute(_LIST, {"org_id": org_id, "limit": limit + 1, "after_at": after[0],
                                    "after_id": after[1],
                                    "agent_ids": None if agent_ids is None else list(agent_ids)}).all()
    return page(rows, limit, _quarantined_view)


def _quarantined_view(row: Any) -> dict[str, Any]:
    return {"memory_id": str(row.id), "agent_id": row.agent_id, "content": row.content, "source": row.source,
            "metadata": row.metadata, "pii": pii_summary(row.pii_report),
            "valid_from": iso(row.valid_from), "valid_until": iso(row.valid_until),
            "created_at": iso(row.created_at)}


def release(engine: Any, app: Any, settings: Any, org_id: str, memory_id: str, note: str | None,
            decided_by: str, agent_ids: Sequence[str] | None = None) -> str:
    """Queue the release of a quarantined memory; returns the job id. Raises
    ``ValidationFailed`` (note), ``MemoryNotFound``, ``NotQuarantined`` or ``ReleaseInProgress``."""
    if note is not None and (not isinstance(note, str) or len(note) > NOTE_MAX_CHARS or "\x00" in note):
        raise ValidationFailed([FieldIssue("note", f"a string of at most {NOTE_MAX_CHARS} characters")])
    key = parse_id(memory_id)
    with tenant_tx(engine, org_id) as conn:
        row = _visible(conn.execute(_MEMORY_FOR_UPDATE, {"org_id": org_id, "id": key}).first(), agent_ids)
        if row.status != "quarantined":
            raise NotQuarantined(f"the memory is {row.status}, not quarantined")
        running = conn.execute(_RELEASE_RUNNING, {"org_id": org_id, "id": key}).first()
        if running is not None:
            raise ReleaseInProgress(str(running.id))
        labels = [{"label": r.label, "confidence": r.confidence}
                  for r in conn.execute(_LABELS, {"org_id": org_id, "id": key})]
        job_id = jobs.insert_release_job(conn, org_id, row.agent_id, _release_request(row, note),
                                         _release_context(row, labels, decided_by), key,
                                         queue=settings.queue_pii)
    publish(app, settings, "pii", [job_id])
    log.info("release_queued", memory_id=key, org_id=org_id, job_id=job_id)
    return job_id


def _release_request(row: Any, note: str | None) -> dict[str, Any]:
    request = {"source": row.source, "valid_from": iso(row.valid_from), "valid_until": iso(row.valid_until),
               "metadata": row.metadata or {}}
    if note:
        request["note"] = note
    return request


def _release_context(row: Any, labels: list[dict[str, Any]], decided_by: str) -> dict[str, Any]:
    return {"content": row.content, "pii_report": row.pii_report or {}, "subject_key": row.subject_key,
            "labels": labels, "release_of": str(row.id), "reviewer": decided_by, "quarantine_reasons": []}


def delete(engine: Any, org_id: str, memory_id: str, decided_by: str, agent_ids: Sequence[str] | None = None,
           cache: Any = None) -> bool:
    """Delete a memory (a tombstone stays). True when it was deleted now, False when it was
    already. Raises ``MemoryNotFound``."""
    key = parse_id(memory_id)
    with tenant_tx(engine, org_id) as conn:
        agent = conn.execute(_MEMORY_AGENT, {"org_id": org_id, "id": key}).first()
        if agent is None or (agent_ids is not None and agent.agent_id not in agent_ids):
            raise MemoryNotFound("memory not found")
        corpus.lock(conn, org_id, agent.agent_id)  # persist's lock order
        row = _visible(conn.execute(_MEMORY_FOR_UPDATE, {"org_id": org_id, "id": key}).first(), agent_ids)
        if row.deleted_at is not None:
            return False
        counts = erase(conn, org_id, key, decided_by)
        if row.status == "active":
            corpus.bump(conn, org_id, row.agent_id)
        conn.execute(AUDIT, {"org_id": org_id, "agent_id": row.agent_id, "memory_id": key, "action": "delete",
                             "outcome": "deleted", "result_memory_id": None, "decided_by": decided_by,
                             "note": None, "job_id": None})
    if cache is not None:
        cache.evict(org_id, [key])
    log.info("memory_deleted", memory_id=key, org_id=org_id, previous_status=row.status, **counts)
    return True


def erase(conn: Any, org_id: str, key: str, decided_by: str) -> dict[str, int]:
    """Tombstone a memory in the caller's transaction: labels, relationships and content gone,
    escalations naming it withdrawn, its jobs scrubbed. Returns what it removed, by kind."""
    params = {"org_id": org_id, "id": key}
    labels = conn.execute(_DELETE_LABELS, params).rowcount
    relationships = conn.execute(_DELETE_RELATIONSHIPS, params).rowcount
    withdrawn = [str(r.id) for r in conn.execute(_WITHDRAW_ESCALATIONS, {**params, "decided_by": DELETED_BY_SYSTEM})]
    for escalation_id in withdrawn:
        conn.execute(_LOG_WITHDRAWAL, {"org_id": org_id, "escalation_id": escalation_id,
                                       "decided_by": DELETED_BY_SYSTEM,
                                       "details": json.dumps({"memory_id": key, "deleted_by": decided_by})})
    conn.execute(_TOMBSTONE, {**params, "tombstone_hash": TOMBSTONE_HASH})
    jobs_scrubbed = conn.execute(_SCRUB_JOBS, params).rowcount
    return {"labels": labels, "relationships": relationships, "escalations": len(withdrawn), "jobs": jobs_scrubbed}


def _visible(row: Any, agent_ids: Sequence[str] | None) -> Any:
    if row is None or (agent_ids is not None and row.agent_id not in agent_ids):
        raise MemoryNotFound("memory not found")
    return row
