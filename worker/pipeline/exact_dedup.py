"""Stage 3, exact_dedup: one live copy of the same redacted content per org and agent.

Guarantees: ``ctx.content_hash`` is the SHA-256 hex of the redacted content,
whitespace-collapsed and lowercased (always computed). When the lookup is enabled and an
active row of the same ``(org_id, agent_id, content_hash)`` exists, the job skips embed,
near_dedup, conflict and labels and goes to persist, which bumps that row's retrieval
count. The lookup is an optimisation: the partial unique index, re-checked in persist, is
the authority. Quarantined memories are not deduplicated (never matched, never matching).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from sqlalchemy import text

from worker.db import tenant_tx
from worker.pipeline.context import WriteContext

_WHITESPACE = re.compile(r"\s+")

_FIND_ACTIVE = text(
    "SELECT id FROM memories WHERE org_id = :org_id AND agent_id = :agent_id "
    "AND content_hash = :content_hash AND status = 'active' AND deleted_at IS NULL"
)


def content_hash(content: str) -> str:
    normalised = _WHITESPACE.sub(" ", content).strip().lower()
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


def find_active_duplicate(conn: Any, org_id: str, agent_id: str, digest: str) -> str | None:
    row = conn.execute(_FIND_ACTIVE, {"org_id": org_id, "agent_id": agent_id, "content_hash": digest}).first()
    return str(row.id) if row else None


def run(ctx: WriteContext, deps: Any) -> WriteContext:
    ctx.content_hash = content_hash(ctx.content or "")
    if ctx.quarantined or not deps.settings.memory_dedup_exact_enabled:
        ctx.decide("exact_dedup", result="skipped",
                   reason="quarantined" if ctx.quarantined else "disabled")
        return ctx
    with tenant_tx(deps.engine, ctx.org_id) as conn:
        existing = find_active_duplicate(conn, ctx.org_id, ctx.agent_id, ctx.content_hash)
    if existing:
        ctx.exact_duplicate_of = existing
        ctx.next_stage = "persist"
        ctx.decide("exact_dedup", result="hit", memory_id=existing)
    else:
        ctx.decide("exact_dedup", result="miss")
    return ctx
