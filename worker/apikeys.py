"""API keys: created by the CLI, shown once, stored as the SHA-256 hex of the key.

A key is ``ibex_`` followed by 43 URL-safe characters (256 random bits), so a hash without
a salt is enough: nobody can enumerate the key space. The table keeps the hash, a short
visible prefix (to tell keys apart in listings) and the key's scope: one org, and either
every agent of it (``agents`` NULL) or a list of agents. Lookups by hash run as the
maintenance role because the org is not known until the key is found.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import uuid
from dataclasses import dataclass
from typing import Any

from ibex_worker.db import maint_tx, tenant_tx
from ibex_worker.store import apikeys as store

KEY_PREFIX = "ibex_"
_RANDOM_BYTES = 32
_VISIBLE_CHARS = 12  # "ibex_" + 7 characters of the random part
_KEY_RE = re.compile(r"^ibex_[A-Za-z0-9_-]{43}$")
# Same shape the validate stage accepts for org_id / agent_id.
_SCOPE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")


@dataclass(frozen=True)
class ApiKey:
    id: str
    org_id: str
    agents: tuple[str, ...] | None  # None: every agent of the org
    prefix: str

    def allows(self, org_id: Any, agent_id: Any) -> bool:
        """Whether a write or read for this org and agent is inside the key's scope."""
        if org_id != self.org_id:
            return False
        return self.agents is None or agent_id in self.agents


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def generate() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(_RANDOM_BYTES)


def check_scope_id(value: str, name: str) -> str:
    if not _SCOPE_RE.fullmatch(value):
        raise ValueError(f"{name} must be 1-128 letters, digits or . _ : @ -, starting with a letter or digit")
    return value


def create(engine: Any, org_id: str, agents: list[str] | None = None,
           description: str | None = None) -> tuple[str, dict[str, Any]]:
    """Create a key; returns the plaintext (shown once, never stored) and the stored record."""
    check_scope_id(org_id, "org")
    for agent in agents or ():
        check_scope_id(agent, "agent")
    key = generate()
    prefix, scope = key[:_VISIBLE_CHARS], sorted(set(agents)) if agents else None
    with tenant_tx(engine, org_id) as conn:
        row = store.insert(conn, org_id, hash_key(key), prefix, scope, description)
    record = {"id": str(row.id), "org_id": org_id, "prefix": prefix, "agents": scope,
              "description": description, "created_at": row.created_at.isoformat(), "revoked_at": None}
    return key, record


def verify(engine: Any, presented: str) -> ApiKey | None:
    """The live key matching ``presented``, or None (unknown, revoked or malformed).
    Raises ``TransientError`` when the database is unavailable."""
    if not _KEY_RE.fullmatch(presented):
        return None
    with maint_tx(engine) as conn:
        row = store.live_by_hash(conn, hash_key(presented))
    if row is None:
        return None
    agents = tuple(row.agents) if row.agents is not None else None
    return ApiKey(id=str(row.id), org_id=row.org_id, agents=agents, prefix=row.prefix)


def list_keys(engine: Any, org_id: str | None = None) -> list[dict[str, Any]]:
    """Every key (of one org, if given): identifiers, prefix and scope; never the hash."""
    with maint_tx(engine) as conn:
        rows = store.list_keys(conn, org_id)
    return [{"id": str(r.id), "org_id": r.org_id, "prefix": r.prefix,
             "agents": list(r.agents) if r.agents is not None else None, "description": r.description,
             "created_at": r.created_at.isoformat(),
             "revoked_at": r.revoked_at.isoformat() if r.revoked_at else None} for r in rows]


def revoke(engine: Any, key_id: str) -> bool:
    """Revoke a key by id; False when no live key has that id. Takes effect on the next request."""
    try:
        uuid.UUID(key_id)
    except ValueError:
        return False
    with maint_tx(engine) as conn:
        return store.revoke(conn, key_id)
