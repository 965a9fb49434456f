"""The idempotency ledger, ``memory_idempotency_keys``: one claim per (org, agent, key),
naming the job that answers it. An ``in_progress`` claim is leased; a ``completed`` one
holds the final HTTP status and body that every replay of the key receives."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import text

_FIND_CLAIM = text(
    "SELECT fingerprint, job_id, state, response_status, response_body, "
    "GREATEST(0, CEIL(EXTRACT(EPOCH FROM lease_expires_at - now())))::int AS lease_left "
    "FROM memory_idempotency_keys WHERE org_id = :org_id AND agent_id = :agent_id AND key = :key FOR UPDATE"
)
_INSERT_CLAIM = text(
    "INSERT INTO memory_idempotency_keys (org_id, agent_id, key, fingerprint, job_id, lease_expires_at) "
    "VALUES (:org_id, :agent_id, :key, :fingerprint, :job_id, now() + make_interval(secs => :lease)) "
    "ON CONFLICT (org_id, agent_id, key) DO NOTHING RETURNING job_id"
)
_MOVE_CLAIM = text(
    "UPDATE memory_idempotency_keys SET job_id = :job_id, lease_expires_at = now() + make_interval(secs => :lease), "
    "updated_at = now() WHERE org_id = :org_id AND agent_id = :agent_id AND key = :key"
)
_COMPLETE_CLAIM = text(
    "UPDATE memory_idempotency_keys SET state = 'completed', response_status = :status, "
    "response_body = CAST(:body AS jsonb), updated_at = now() "
    "WHERE org_id = :org_id AND agent_id = :agent_id AND key = :key AND job_id = :job_id"
)
_DROP_CLAIM = text(
    "DELETE FROM memory_idempotency_keys "
    "WHERE org_id = :org_id AND agent_id = :agent_id AND key = :key AND job_id = :job_id AND state = 'in_progress'"
)


def find_claim(conn: Any, org_id: str, agent_id: str, key: str) -> Any | None:
    """The key's claim (``fingerprint``, ``job_id``, ``state``, ``response_status``,
    ``response_body``, ``lease_left`` in whole seconds), locked until the transaction ends;
    None when the key is unclaimed."""
    return conn.execute(_FIND_CLAIM, {"org_id": org_id, "agent_id": agent_id, "key": key}).first()


def insert_claim(conn: Any, org_id: str, agent_id: str, key: str, fingerprint: str, job_id: str,
                 lease_seconds: float) -> bool:
    """Claim the key for ``job_id``; False when another transaction claimed it first."""
    return conn.execute(_INSERT_CLAIM, {"org_id": org_id, "agent_id": agent_id, "key": key,
                                        "fingerprint": fingerprint, "job_id": job_id,
                                        "lease": lease_seconds}).first() is not None


def move_claim(conn: Any, org_id: str, agent_id: str, key: str, job_id: str, lease_seconds: float) -> None:
    """Hand the key's claim to ``job_id`` with a fresh lease."""
    conn.execute(_MOVE_CLAIM, {"org_id": org_id, "agent_id": agent_id, "key": key, "job_id": job_id,
                               "lease": lease_seconds})


def complete_claim(conn: Any, org_id: str, agent_id: str, key: str, job_id: str, status: int,
                   body: dict[str, Any]) -> None:
    """Store the final answer, if the claim still names ``job_id``."""
    conn.execute(_COMPLETE_CLAIM, {"org_id": org_id, "agent_id": agent_id, "key": key, "job_id": job_id,
                                   "status": status, "body": json.dumps(body)})


def drop_claim(conn: Any, org_id: str, agent_id: str, key: str, job_id: str) -> None:
    """Free the key for a new request, if its claim is still ``job_id``'s and unanswered."""
    conn.execute(_DROP_CLAIM, {"org_id": org_id, "agent_id": agent_id, "key": key, "job_id": job_id})
