"""The per-agent corpus version: every change to an agent's active memories takes its row
lock first (one lock order for writes, escalation decisions and deletes) and bumps the
version, which near dedup reads to know whether its candidates went stale."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

_LOCK = text(
    "INSERT INTO memory_agent_corpus (org_id, agent_id) VALUES (:org_id, :agent_id) "
    "ON CONFLICT (org_id, agent_id) DO UPDATE SET version = memory_agent_corpus.version RETURNING version"
)
_VERSION = text("SELECT version FROM memory_agent_corpus WHERE org_id = :org_id AND agent_id = :agent_id")
_FORGET = text("DELETE FROM memory_agent_corpus WHERE org_id = :org_id AND agent_id = :agent_id")
_BUMP = text(
    "UPDATE memory_agent_corpus SET version = version + 1, updated_at = now() "
    "WHERE org_id = :org_id AND agent_id = :agent_id"
)


def lock(conn: Any, org_id: str, agent_id: str) -> int:
    """Lock the agent's corpus row (created if missing) until the transaction ends; its version."""
    return int(conn.execute(_LOCK, {"org_id": org_id, "agent_id": agent_id}).scalar_one())


def version(conn: Any, org_id: str, agent_id: str) -> int:
    """The agent's corpus version, read without locking (0 before its first change)."""
    row = conn.execute(_VERSION, {"org_id": org_id, "agent_id": agent_id}).first()
    return int(row.version) if row else 0


def bump(conn: Any, org_id: str, agent_id: str) -> None:
    conn.execute(_BUMP, {"org_id": org_id, "agent_id": agent_id})


def forget(conn: Any, org_id: str, agent_id: str) -> None:
    """Delete the agent's corpus row (an erased agent); a later write starts it again."""
    conn.execute(_FORGET, {"org_id": org_id, "agent_id": agent_id})
