"""Removing memories in the caller's transaction.

- ``erase``: one memory; a tombstone stays (ids and times), and every table's part of the
  memory goes - labels, relationships, content, embedding, lexical signal, subject key,
  metadata, PII report, the requests of its finished jobs, the content hashes in a person's
  removals of its links, and the entity its subject resolved to when the pipeline made it
  and no other memory names it; the escalations naming it are withdrawn. Used by a
  delete, an erasure of listed memories, and a release that replaces the quarantined row.
- ``remove_agent_batch`` and ``refuse_agent_jobs``: an erasure of a whole agent, which leaves
  no row of the agent's memories at all (no other agent's memory links to them: near-dup
  links, supersessions and escalations stay within an agent), nor an entity the pipeline
  made for them that no other agent's memory names.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, UUID

from ibex_worker.store import entities, escalations, memories, relationships
from ibex_worker.store import jobs as job_store

_IDS = bindparam("ids", type_=ARRAY(UUID(as_uuid=False)))
_AGENT_BATCH = text(
    "SELECT id FROM memories WHERE org_id = :org_id AND agent_id = :agent_id ORDER BY id LIMIT :limit FOR UPDATE"
)
_IN = "org_id = :org_id AND {column} = ANY(:ids)"
_REMOVE = {
    # escalations first (their decision log goes with them), memories last
    "escalations": "DELETE FROM memory_conflict_escalations WHERE org_id = :org_id "
                   "AND (memory_id = ANY(:ids) OR candidate_id = ANY(:ids))",
    "relationships": "DELETE FROM memory_relationships WHERE org_id = :org_id "
                     "AND (source_memory_id = ANY(:ids) OR target_memory_id = ANY(:ids))",
    "relationship_decisions": "DELETE FROM memory_relationship_decisions WHERE org_id = :org_id "
                              "AND (source_memory_id = ANY(:ids) OR target_memory_id = ANY(:ids))",
    "labels": f"DELETE FROM memory_labels WHERE {_IN.format(column='memory_id')}",
    "review_decisions": f"DELETE FROM memory_review_decisions WHERE {_IN.format(column='memory_id')}",
    "memories": f"DELETE FROM memories WHERE {_IN.format(column='id')}",
}
_REMOVE_STATEMENTS = {kind: text(sql).bindparams(_IDS) for kind, sql in _REMOVE.items()}
# The memories go in the same transaction: their labels' category projection is skipped.
_ERASING_AGENT = text("SELECT set_config('ibex.erasing_agent', 'on', true)")
ERASED_CODE = "ERASED"
_REFUSE_JOBS = text(
    """
    UPDATE memory_write_jobs
       SET status = 'failed', error = CAST(:error AS jsonb), raw_content = NULL, request = '{}'::jsonb,
           context = '{}'::jsonb, embedding = NULL, lease_token = NULL, lease_expires_at = NULL,
           finished_at = now(), updated_at = now()
     WHERE org_id = :org_id AND agent_id = :agent_id AND status IN ('queued', 'running')
    RETURNING id
    """
)
_DELETE_AGENT_JOBS = text(
    "DELETE FROM memory_write_jobs WHERE org_id = :org_id AND agent_id = :agent_id "
    "AND status IN ('succeeded', 'failed') AND NOT (id = ANY(:keep))"
).bindparams(bindparam("keep", type_=ARRAY(UUID(as_uuid=False))))
_DROP_AGENT_KEYS = text("DELETE FROM memory_idempotency_keys WHERE org_id = :org_id AND agent_id = :agent_id")

DELETED_BY_SYSTEM = "system:memory_deleted"  # who withdraws the escalations of a deleted memory


def erase(conn: Any, org_id: str, key: str, decided_by: str) -> dict[str, int]:
    """Tombstone a memory in the caller's transaction: labels, relationships and content gone,
    escalations naming it withdrawn, its jobs scrubbed. Returns what it removed, by kind."""
    labels = memories.delete_labels(conn, org_id, key)
    links = relationships.delete_naming(conn, org_id, key)
    relationships.forget_hashes(conn, org_id, key)
    withdrawn = escalations.withdraw_naming(conn, org_id, key, DELETED_BY_SYSTEM)
    for escalation_id in withdrawn:
        escalations.log_decision(conn, org_id, escalation_id, outcome="withdrawn", decided_by=DELETED_BY_SYSTEM,
                                 reason=escalations.WITHDRAWN_REASON,
                                 details={"memory_id": key, "deleted_by": decided_by})
    named = entities.of_memories(conn, org_id, [key])
    entities.drop_written_aliases(conn, org_id, [key])
    memories.tombstone(conn, org_id, key)
    jobs_scrubbed = job_store.scrub_finished(conn, org_id, key)
    return {"labels": labels, "relationships": links, "escalations": len(withdrawn), "jobs": jobs_scrubbed,
            "entities": entities.drop_orphans(conn, org_id, named)}


def agent_batch(conn: Any, org_id: str, agent_id: str, limit: int) -> list[str]:
    """Lock up to ``limit`` of the agent's memories, of any status; their ids."""
    return [str(r.id) for r in conn.execute(_AGENT_BATCH, {"org_id": org_id, "agent_id": agent_id, "limit": limit})]


def remove_agent_batch(conn: Any, org_id: str, memory_ids: Sequence[str]) -> dict[str, int]:
    """Delete the memories (of one agent) and every row naming them; counts by kind."""
    conn.execute(_ERASING_AGENT)
    params = {"org_id": org_id, "ids": list(memory_ids)}
    named = entities.of_memories(conn, org_id, memory_ids)
    entities.drop_written_aliases(conn, org_id, memory_ids)
    removed = {kind: conn.execute(statement, params).rowcount for kind, statement in _REMOVE_STATEMENTS.items()}
    return {**removed, "entities": entities.drop_orphans(conn, org_id, named)}


def refuse_agent_jobs(conn: Any, org_id: str, agent_id: str) -> list[str]:
    """Fail the agent's unfinished jobs as ``ERASED``, keeping nothing of their request; their ids."""
    error = {"code": ERASED_CODE, "message": "the agent was erased while this write was in flight; nothing was stored"}
    rows = conn.execute(_REFUSE_JOBS, {"org_id": org_id, "agent_id": agent_id, "error": json.dumps(error)})
    return [str(r.id) for r in rows]


def delete_agent_jobs(conn: Any, org_id: str, agent_id: str, keep: Sequence[str]) -> int:
    """Delete every finished job of the agent but ``keep`` (after its ledger entries went),
    waiting for rows other transactions hold; how many."""
    return conn.execute(_DELETE_AGENT_JOBS, {"org_id": org_id, "agent_id": agent_id, "keep": list(keep)}).rowcount


def drop_agent_keys(conn: Any, org_id: str, agent_id: str) -> int:
    """Delete every idempotency-ledger entry of the agent; how many."""
    return conn.execute(_DROP_AGENT_KEYS, {"org_id": org_id, "agent_id": agent_id}).rowcount
