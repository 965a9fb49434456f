"""The ``api_keys`` table: one row per key, holding its SHA-256 hash (never the key), a short
visible prefix and its scope (one org; ``agents`` NULL for every agent of it)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

_INSERT = text(
    "INSERT INTO api_keys (org_id, key_hash, prefix, agents, description) "
    "VALUES (:org_id, :key_hash, :prefix, :agents, :description) RETURNING id, created_at"
)
_LIVE_BY_HASH = text(
    "SELECT id, org_id, agents, prefix FROM api_keys WHERE key_hash = :key_hash AND revoked_at IS NULL"
)
_LIST = text(
    "SELECT id, org_id, prefix, agents, description, created_at, revoked_at FROM api_keys "
    "WHERE CAST(:org_id AS text) IS NULL OR org_id = :org_id ORDER BY org_id, created_at"
)
_REVOKE = text("UPDATE api_keys SET revoked_at = now() WHERE id = :id AND revoked_at IS NULL RETURNING org_id")


def insert(conn: Any, org_id: str, key_hash: str, prefix: str, agents: list[str] | None,
           description: str | None) -> Any:
    """The new key's row: ``id`` and ``created_at``."""
    return conn.execute(_INSERT, {"org_id": org_id, "key_hash": key_hash, "prefix": prefix, "agents": agents,
                                  "description": description}).one()


def live_by_hash(conn: Any, key_hash: str) -> Any | None:
    """The unrevoked key with this hash (``id``, ``org_id``, ``agents``, ``prefix``), or None."""
    return conn.execute(_LIVE_BY_HASH, {"key_hash": key_hash}).first()


def list_keys(conn: Any, org_id: str | None) -> list[Any]:
    """Every key (of one org, if given), by org then age; every column but the hash."""
    return list(conn.execute(_LIST, {"org_id": org_id}))


def revoke(conn: Any, key_id: str) -> bool:
    """Revoke a live key by id; False when no live key has that id."""
    return conn.execute(_REVOKE, {"id": key_id}).first() is not None
