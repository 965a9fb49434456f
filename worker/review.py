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

import uuid
from collections.abc import Sequence
from typing import Any

import structlog

from ibex_worker.cursor import page, page_start
from ibex_worker.db import tenant_tx
from ibex_worker.errors import FieldIssue, IbexError, ValidationFailed
from ibex_worker.publish import publish
from ibex_worker.reads import iso, pii_summary
from ibex_worker.limits import LIST_LIMIT_MAX, NOTE_MAX_CHARS
from ibex_worker.store import corpus, erasure, memories, quarantine
from ibex_worker.store import jobs as job_store

log = structlog.get_logger("ibex.review")



class MemoryNotFound(IbexError):
    code = "NOT_FOUND"


class NotQuarantined(IbexError):
    code = "NOT_QUARANTINED"


class ReleaseInProgress(IbexError):
    code = "RELEASE_IN_PROGRESS"

    def __init__(self, job_id: str) -> None:
        super().__init__("a release of this memory is already running")
        self.job_id = job_id


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
        rows = quarantine.page_rows(conn, org_id, limit + 1, after, agent_ids)
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
        row = _visible(quarantine.lock_memory(conn, org_id, key), agent_ids)
        if row.status != "quarantined":
            raise NotQuarantined(f"the memory is {row.status}, not quarantined")
        running = job_store.running_release(conn, org_id, key)
        if running is not None:
            raise ReleaseInProgress(running)
        labels = memories.labels(conn, org_id, key)
        job_id = job_store.insert_release_job(conn, org_id, row.agent_id, _release_request(row, note),
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
            "redaction_tags": list(row.redaction_tags or []), "labels": labels, "release_of": str(row.id), "reviewer": decided_by, "quarantine_reasons": []}


def delete(engine: Any, org_id: str, memory_id: str, decided_by: str, agent_ids: Sequence[str] | None = None,
           cache: Any = None) -> bool:
    """Delete a memory (a tombstone stays). True when it was deleted now, False when it was
    already. Raises ``MemoryNotFound``."""
    key = parse_id(memory_id)
    with tenant_tx(engine, org_id) as conn:
        agent_id = memories.agent_of(conn, org_id, key)
        if agent_id is None or (agent_ids is not None and agent_id not in agent_ids):
            raise MemoryNotFound("memory not found")
        corpus.lock(conn, org_id, agent_id)  # persist's lock order
        row = _visible(quarantine.lock_memory(conn, org_id, key), agent_ids)
        if row.deleted_at is not None:
            return False
        counts = erasure.erase(conn, org_id, key, decided_by)
        if row.status == "active":
            corpus.bump(conn, org_id, row.agent_id)
        quarantine.record_decision(conn, org_id, row.agent_id, key, "delete", "deleted", decided_by)
    if cache is not None:
        cache.evict(org_id, [key])
    log.info("memory_deleted", memory_id=key, org_id=org_id, previous_status=row.status, **counts)
    return True


def _visible(row: Any, agent_ids: Sequence[str] | None) -> Any:
    if row is None or (agent_ids is not None and row.agent_id not in agent_ids):
        raise MemoryNotFound("memory not found")
    return row
