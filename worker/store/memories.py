"""The memory aggregate: ``memories`` rows and their ``memory_labels``.

The partial unique index on active ``(org_id, agent_id, content_hash)`` is the authority
on exact duplicates: an insert that meets it writes nothing and returns no id. Only active,
undeleted memories are ever matched as duplicates or read as conflict facts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, UUID

from ibex_worker.store.vectors import EMBEDDING_DIM

TOMBSTONE_HASH = "0" * 64  # a deleted memory's content_hash: no content, nothing to match
_FIND_ACTIVE_BY_HASH = text(
    "SELECT id FROM memories WHERE org_id = :org_id AND agent_id = :agent_id "
    "AND content_hash = :content_hash AND status = 'active' AND deleted_at IS NULL"
)
_BUMP_RETRIEVAL = text(
    "UPDATE memories SET retrieval_count = retrieval_count + 1, last_retrieved_at = now(), updated_at = now() "
    "WHERE org_id = :org_id AND id = :id RETURNING retrieval_count"
)
_INSERT = text(
    """
    INSERT INTO memories (org_id, agent_id, content, content_hash, source, status, valid_from, valid_until,
                          subject_key, subject_entity_id, subject_aspect, embedding, embedding_model, pii_report,
                          metadata, created_by_job, searchable_since, lexical_fingerprint, lexical_bands,
                          redaction_tags, embedding_bucket)
    VALUES (:org_id, :agent_id, :content, :content_hash, :source, :status, :valid_from, :valid_until,
            :subject_key, :entity_id, :aspect, :embedding, :embedding_model, CAST(:pii_report AS jsonb),
            CAST(:metadata AS jsonb), :job_id, :searchable_since, :lexical_fingerprint,
            CAST(:lexical_bands AS bigint[]), CAST(:redaction_tags AS text[]), :embedding_bucket)
    ON CONFLICT (org_id, agent_id, content_hash) WHERE status = 'active' AND deleted_at IS NULL DO NOTHING
    RETURNING id
    """
).bindparams(bindparam("embedding", type_=Vector(EMBEDDING_DIM)))
_LOCK_QUARANTINED = text(
    "SELECT id FROM memories WHERE org_id = :org_id AND id = :id AND status = 'quarantined' "
    "AND deleted_at IS NULL FOR UPDATE"
)
_RELEASE_QUARANTINED = text(
    "UPDATE memories SET status = :status, content_hash = :content_hash, embedding = :embedding, "
    "embedding_model = :embedding_model, subject_key = :subject_key, subject_entity_id = :entity_id, "
    "subject_aspect = COALESCE(:aspect, subject_aspect), searchable_since = :searchable_since, "
    "lexical_fingerprint = :lexical_fingerprint, lexical_bands = CAST(:lexical_bands AS bigint[]), updated_at = now() "
    "WHERE org_id = :org_id AND id = :id AND status = 'quarantined' AND deleted_at IS NULL RETURNING id"
).bindparams(bindparam("embedding", type_=Vector(EMBEDDING_DIM)))
_MARK_SUPERSEDED = text(
    "UPDATE memories SET status = 'superseded', updated_at = now() "
    "WHERE org_id = :org_id AND id = :id AND status = 'active'"
)
_SET_STATUS_AND_VALID_UNTIL = text(
    "UPDATE memories SET status = :status, valid_until = :valid_until, updated_at = now() "
    "WHERE org_id = :org_id AND id = :id AND status IN ('active', 'superseded') AND deleted_at IS NULL"
)
_REACTIVATE = text(
    "UPDATE memories SET status = 'active', valid_until = :valid_until, searchable_since = :searchable_since, "
    "updated_at = now() WHERE org_id = :org_id AND id = :id AND status = 'superseded' AND deleted_at IS NULL"
)
_ACTIVE_FACTS = text(
    "SELECT id, valid_from, valid_until, subject_key, subject_entity_id, subject_aspect, content, redaction_tags "
    "FROM memories WHERE org_id = :org_id AND id = ANY(:ids) AND status = 'active' AND deleted_at IS NULL"
).bindparams(bindparam("ids", type_=ARRAY(UUID(as_uuid=False))))
_LOCK_PAIR = text(
    "SELECT id, agent_id, content, content_hash, status, deleted_at, valid_from, valid_until, subject_key, "
    "created_at FROM memories WHERE org_id = :org_id AND id IN (:a, :b) ORDER BY id FOR UPDATE"
)
_READ_PAIR = text(
    "SELECT id, agent_id, content, status, deleted_at, valid_from, valid_until, subject_key, subject_aspect, "
    "created_at, redaction_tags FROM memories WHERE org_id = :org_id AND id IN (:a, :b)"
)
_INSERT_LABEL = text(
    "INSERT INTO memory_labels (org_id, memory_id, label, confidence) VALUES (:org_id, :memory_id, :label, :confidence)"
)
_LIVE_AGENTS = text(
    "SELECT id, agent_id FROM memories WHERE org_id = :org_id AND id = ANY(:ids) AND deleted_at IS NULL"
).bindparams(bindparam("ids", type_=ARRAY(UUID(as_uuid=False))))
_LOCK_LIVE = text(
    "SELECT id, status FROM memories WHERE org_id = :org_id AND id = ANY(:ids) AND deleted_at IS NULL "
    "ORDER BY id FOR UPDATE"
).bindparams(bindparam("ids", type_=ARRAY(UUID(as_uuid=False))))
_MEMORY_AGENT = text("SELECT agent_id FROM memories WHERE org_id = :org_id AND id = CAST(:id AS uuid)")
_LABELS = text("SELECT label, confidence FROM memory_labels WHERE org_id = :org_id AND memory_id = :id "
               "ORDER BY confidence DESC, label")
_DELETE_LABELS = text("DELETE FROM memory_labels WHERE org_id = :org_id AND memory_id = :id")
_TOMBSTONE = text(
    """
    UPDATE memories
       SET status = 'deleted', deleted_at = now(), content = '', content_hash = :tombstone_hash, embedding = NULL,
           embedding_model = NULL, subject_key = NULL, subject_entity_id = NULL,
           subject_aspect = NULL, metadata = '{}'::jsonb, pii_report = '{}'::jsonb,
           lexical_fingerprint = NULL, lexical_bands = NULL, redaction_tags = NULL, updated_at = now()
     WHERE org_id = :org_id AND id = :id
    """
)


def find_active_by_hash(conn: Any, org_id: str, agent_id: str, content_hash: str) -> str | None:
    """The agent's active memory with this content hash, if there is one."""
    row = conn.execute(_FIND_ACTIVE_BY_HASH,
                       {"org_id": org_id, "agent_id": agent_id, "content_hash": content_hash}).first()
    return str(row.id) if row else None


def bump_retrieval(conn: Any, org_id: str, memory_id: str) -> int:
    """Count one more retrieval of the memory; its new retrieval count."""
    return conn.execute(_BUMP_RETRIEVAL, {"org_id": org_id, "id": memory_id}).scalar_one()


def insert(conn: Any, *, org_id: str, agent_id: str, content: str | None, content_hash: str | None, source: str,
           status: str, valid_from: str | None, valid_until: str | None, subject_key: str | None,
           embedding: Sequence[float] | None, embedding_model: str | None, pii_report: dict[str, Any],
           metadata: dict[str, Any], job_id: str, searchable_since: int,
           lexical: Any, redaction_tags: Sequence[str] = (), entity_id: str | None = None,
           aspect: str | None = None, embedding_bucket: int | None = None) -> str | None:
    """The new memory's id, or None when an active memory of the agent already holds this
    content hash (nothing is written then). ``searchable_since`` is the corpus version its
    write gives the agent; ``lexical`` the text's ``ibex_worker.lexical.Profile``;
    ``redaction_tags`` its masked values' tags (NULL when none); ``entity_id`` and ``aspect``
    what its subject resolved to (``ibex_worker.pipeline.entities.recorded``); ``embedding_bucket``
    the centroid the embedding is filed under (None: the database files it)."""
    row = conn.execute(_INSERT, {
        "org_id": org_id, "agent_id": agent_id, "content": content, "content_hash": content_hash,
        "source": source, "status": status, "valid_from": valid_from, "valid_until": valid_until,
        "subject_key": subject_key, "embedding": embedding, "embedding_model": embedding_model,
        "pii_report": json.dumps(pii_report), "metadata": json.dumps(metadata), "job_id": job_id,
        "searchable_since": searchable_since, "lexical_fingerprint": lexical.fingerprint,
        "lexical_bands": lexical.bands, "redaction_tags": list(redaction_tags) or None,
        "entity_id": entity_id, "aspect": aspect, "embedding_bucket": embedding_bucket,
    }).first()
    return str(row.id) if row else None


def lock_quarantined(conn: Any, org_id: str, memory_id: str) -> bool:
    """Lock the memory until the transaction ends if it is quarantined; whether it is."""
    return conn.execute(_LOCK_QUARANTINED, {"org_id": org_id, "id": memory_id}).first() is not None


def release_quarantined(conn: Any, org_id: str, memory_id: str, *, status: str, content_hash: str | None,
                        embedding: Sequence[float] | None, embedding_model: str | None,
                        subject_key: str | None, searchable_since: int, lexical: Any,
                        entity_id: str | None = None, aspect: str | None = None) -> str | None:
    """The quarantined memory takes ``status`` and the pipeline's results (its subject's
    entity, and the aspect when one is given); its id, or None when it is no longer
    quarantined."""
    row = conn.execute(_RELEASE_QUARANTINED, {
        "org_id": org_id, "id": memory_id, "status": status, "content_hash": content_hash,
        "embedding": embedding, "embedding_model": embedding_model, "subject_key": subject_key,
        "searchable_since": searchable_since, "lexical_fingerprint": lexical.fingerprint,
        "lexical_bands": lexical.bands, "entity_id": entity_id, "aspect": aspect,
    }).first()
    return str(row.id) if row else None


def mark_superseded(conn: Any, org_id: str, memory_id: str) -> None:
    """An active memory becomes superseded; a memory in any other status is left as it is."""
    conn.execute(_MARK_SUPERSEDED, {"org_id": org_id, "id": memory_id})


def set_status_and_valid_until(conn: Any, org_id: str, memory_id: str, status: str,
                               valid_until: datetime | None) -> None:
    conn.execute(_SET_STATUS_AND_VALID_UNTIL, {"org_id": org_id, "id": memory_id, "status": status,
                                               "valid_until": valid_until})


def active_facts(conn: Any, org_id: str, ids: Sequence[str]) -> list[Any]:
    """``id, valid_from, valid_until, subject_key, subject_entity_id, subject_aspect, content,
    redaction_tags`` of those memories that are active, in no order."""
    return conn.execute(_ACTIVE_FACTS, {"org_id": org_id, "ids": list(ids)}).all()


def reactivate(conn: Any, org_id: str, memory_id: str, valid_until: Any, searchable_since: int) -> bool:
    """A superseded memory active again, with ``valid_until``, searchable from that corpus
    version; False when it was not superseded."""
    return conn.execute(_REACTIVATE, {"org_id": org_id, "id": memory_id, "valid_until": valid_until,
                                      "searchable_since": searchable_since}).rowcount == 1


def lock_pair(conn: Any, org_id: str, a: str, b: str) -> list[Any]:
    """Both memories, locked in id order until the transaction ends."""
    return conn.execute(_LOCK_PAIR, {"org_id": org_id, "a": a, "b": b}).all()


def read_pair(conn: Any, org_id: str, a: str, b: str) -> list[Any]:
    """Both memories (those that exist), with agent, content, status, deletion time, validity,
    subject key and aspect, unlocked."""
    return conn.execute(_READ_PAIR, {"org_id": org_id, "a": a, "b": b}).all()


def insert_label(conn: Any, org_id: str, memory_id: str, label: str, confidence: float) -> None:
    conn.execute(_INSERT_LABEL, {"org_id": org_id, "memory_id": memory_id, "label": label, "confidence": confidence})


def agent_of(conn: Any, org_id: str, memory_id: str) -> str | None:
    """The agent a memory belongs to, read without a lock; None when unknown."""
    row = conn.execute(_MEMORY_AGENT, {"org_id": org_id, "id": memory_id}).first()
    return None if row is None else row.agent_id


def agents_of(conn: Any, org_id: str, memory_ids: list[str]) -> dict[str, str]:
    """The agent of each of these memories that is not deleted, read without a lock."""
    return {str(r.id): r.agent_id for r in conn.execute(_LIVE_AGENTS, {"org_id": org_id, "ids": memory_ids})}


def lock_live(conn: Any, org_id: str, memory_ids: list[str]) -> list[Any]:
    """Lock these memories that are not deleted (lock the corpus rows of their agents first);
    ``id`` and ``status`` each."""
    return list(conn.execute(_LOCK_LIVE, {"org_id": org_id, "ids": memory_ids}))


def labels(conn: Any, org_id: str, memory_id: str) -> list[dict[str, Any]]:
    """The memory's labels, highest confidence first: ``{"label", "confidence"}`` each."""
    return [{"label": r.label, "confidence": r.confidence}
            for r in conn.execute(_LABELS, {"org_id": org_id, "id": memory_id})]


def delete_labels(conn: Any, org_id: str, memory_id: str) -> int:
    return conn.execute(_DELETE_LABELS, {"org_id": org_id, "id": memory_id}).rowcount


def tombstone(conn: Any, org_id: str, memory_id: str) -> None:
    """Mark the memory deleted and drop its content, embedding, subject key, metadata and PII report."""
    conn.execute(_TOMBSTONE, {"org_id": org_id, "id": memory_id, "tombstone_hash": TOMBSTONE_HASH})
