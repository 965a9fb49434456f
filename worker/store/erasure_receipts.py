"""The erasure receipt, ``memory_erasures``: what was asked (an agent, or a list of memory
ids), how far it got (counts by kind) and when; never content.

An erasure moves ``queued -> running -> succeeded | failed``. A delivery claims it with a
fresh lease token; every batch ends by writing its counts fenced on that token in the
batch's own transaction, so the counts are exactly what was removed, and a batch run under a
lost lease is rolled back whole.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, TEXT, UUID

_INSERT = text(
    "INSERT INTO memory_erasures (org_id, agent_id, memory_ids, agent_scope, requested_by, published_at) "
    "VALUES (:org_id, :agent_id, :memory_ids, :agent_scope, :requested_by, now()) "
    "ON CONFLICT (org_id, agent_id) WHERE agent_id IS NOT NULL AND status IN ('queued', 'running') DO NOTHING "
    "RETURNING id"
).bindparams(bindparam("memory_ids", type_=ARRAY(UUID(as_uuid=False))),
             bindparam("agent_scope", type_=ARRAY(TEXT)))
_OPEN_FOR_AGENT = text(
    "SELECT id, status FROM memory_erasures WHERE org_id = :org_id AND agent_id = :agent_id "
    "AND status IN ('queued', 'running') LIMIT 1"
)
# Recording a write of an agent takes this lock shared, requesting the agent's erasure takes it
# exclusively: a write is recorded either before the erasure exists or sees it.
_AGENT_WRITES_LOCK = "hashtextextended(:org_id || chr(31) || :agent_id, 0)"
_SHARE_AGENT_WRITES = text(f"SELECT pg_advisory_xact_lock_shared({_AGENT_WRITES_LOCK})")
_LOCK_AGENT_WRITES = text(f"SELECT pg_advisory_xact_lock({_AGENT_WRITES_LOCK})")
_VIEW = text(
    "SELECT id, agent_id, cardinality(memory_ids) AS memory_count, agent_scope, status, counts, error, "
    "created_at, finished_at FROM memory_erasures WHERE org_id = :org_id AND id = :id"
)
_CLAIM = text(
    """
    UPDATE memory_erasures
       SET status = 'running', lease_token = gen_random_uuid(),
           lease_expires_at = now() + make_interval(secs => :lease_seconds),
           attempts = attempts + 1, updated_at = now()
     WHERE id = :id AND status IN ('queued', 'running')
       AND (lease_expires_at IS NULL OR lease_expires_at < now())
    RETURNING org_id, id, agent_id, memory_ids, agent_scope, counts, lease_token, attempts, failures
    """
)
_FENCED = "WHERE org_id = :org_id AND id = :id AND lease_token = :lease_token AND status = 'running'"
_ADVANCE = text(
    "UPDATE memory_erasures SET counts = CAST(:counts AS jsonb), "
    f"lease_expires_at = now() + make_interval(secs => :lease_seconds), updated_at = now() {_FENCED}"
)
_FINISH = text(
    "UPDATE memory_erasures SET status = :status, counts = CAST(:counts AS jsonb), error = CAST(:error AS jsonb), "
    f"lease_token = NULL, lease_expires_at = NULL, finished_at = now(), updated_at = now() {_FENCED}"
)
_HAND_OVER = text(
    "UPDATE memory_erasures SET lease_token = NULL, lease_expires_at = NULL, "
    "failures = failures + CASE WHEN :failed THEN 1 ELSE 0 END, "
    "published_at = now() + make_interval(secs => :hold_seconds), updated_at = now() "
    f"{_FENCED}"
)
_SWEEP = text(
    """
    UPDATE memory_erasures SET published_at = now()
     WHERE id IN (
        SELECT id FROM memory_erasures
         WHERE status IN ('queued', 'running')
           AND (lease_expires_at IS NULL OR lease_expires_at < now())
           AND (published_at IS NULL OR published_at < now() - make_interval(secs => :republish_after))
         ORDER BY created_at
         LIMIT :limit
           FOR UPDATE SKIP LOCKED)
    RETURNING id
    """
)


def insert(conn: Any, org_id: str, *, agent_id: str | None, memory_ids: Sequence[str] | None,
           agent_scope: Sequence[str] | None, requested_by: str) -> str | None:
    """A new queued erasure's id; None when the agent already has an open one."""
    row = conn.execute(_INSERT, {"org_id": org_id, "agent_id": agent_id,
                                 "memory_ids": list(memory_ids) if memory_ids is not None else None,
                                 "agent_scope": list(agent_scope) if agent_scope is not None else None,
                                 "requested_by": requested_by}).first()
    return None if row is None else str(row.id)


def open_for_agent(conn: Any, org_id: str, agent_id: str) -> str | None:
    """The id of the agent's queued or running erasure, if it has one."""
    found = open_status(conn, org_id, agent_id)
    return None if found is None else found[0]


def open_status(conn: Any, org_id: str, agent_id: str) -> tuple[str, str] | None:
    """The id and status of the agent's queued or running erasure, if it has one."""
    row = conn.execute(_OPEN_FOR_AGENT, {"org_id": org_id, "agent_id": agent_id}).first()
    return None if row is None else (str(row.id), str(row.status))


def share_agent_writes(conn: Any, org_id: str, agent_id: str) -> None:
    """Recording a write of the agent: hold off a request to erase it until this transaction ends.
    A statement of its own, before ``open_for_agent``: a read in the same statement would take
    its snapshot before the lock is granted and miss an erasure committed while it waited."""
    conn.execute(_SHARE_AGENT_WRITES, {"org_id": org_id, "agent_id": agent_id})


def lock_agent_writes(conn: Any, org_id: str, agent_id: str) -> None:
    """Requesting the agent's erasure: wait for writes of it being recorded, hold off new ones."""
    conn.execute(_LOCK_AGENT_WRITES, {"org_id": org_id, "agent_id": agent_id})


def view(conn: Any, org_id: str, erasure_id: str) -> Any | None:
    return conn.execute(_VIEW, {"org_id": org_id, "id": erasure_id}).first()


def claim(conn: Any, erasure_id: str, lease_seconds: float) -> Any | None:
    """Take the erasure's lease (maintenance transaction); None when it is finished or leased."""
    return conn.execute(_CLAIM, {"id": erasure_id, "lease_seconds": lease_seconds}).first()


def advance(conn: Any, org_id: str, erasure_id: str, lease_token: str, counts: dict[str, int],
            lease_seconds: float) -> bool:
    """Record the counts so far and extend the lease; False when the lease was lost."""
    return conn.execute(_ADVANCE, {"org_id": org_id, "id": erasure_id, "lease_token": lease_token,
                                   "counts": json.dumps(counts), "lease_seconds": lease_seconds}).rowcount == 1


def finish(conn: Any, org_id: str, erasure_id: str, lease_token: str, counts: dict[str, int],
           error: dict[str, Any] | None = None) -> bool:
    """``succeeded`` (no error) or ``failed``; False when the lease was lost."""
    return conn.execute(_FINISH, {"org_id": org_id, "id": erasure_id, "lease_token": lease_token,
                                  "status": "failed" if error else "succeeded", "counts": json.dumps(counts),
                                  "error": json.dumps(error) if error else None}).rowcount == 1


def hand_over(conn: Any, org_id: str, erasure_id: str, lease_token: str, hold_seconds: float = 0.0, *,
              failed: bool = False) -> bool:
    """Give the lease up for the next delivery (a continuation, or a retry after ``hold_seconds``;
    ``failed`` counts an unexpected error)."""
    return conn.execute(_HAND_OVER, {"org_id": org_id, "id": erasure_id, "lease_token": lease_token,
                                     "hold_seconds": hold_seconds, "failed": failed}).rowcount == 1


def sweep_lost(conn: Any, republish_after: float, limit: int = 100) -> list[str]:
    """Unfinished erasures nobody holds whose last publish is older than ``republish_after``;
    marked published now (maintenance transaction)."""
    return [str(r.id) for r in conn.execute(_SWEEP, {"republish_after": republish_after, "limit": limit})]
