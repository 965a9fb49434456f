"""Stage 3, exact_dedup: one live copy of the same redacted content per org and agent.

Guarantees: ``ctx.content_hash`` is the SHA-256 hex of the redacted content,
whitespace-collapsed and lowercased, and of its redaction tags when it has any (always
computed): "Call [PERSON] back" for two people is two memories, not one. When the lookup is enabled and an
active row of the same ``(org_id, agent_id, content_hash)`` exists, the job skips embed,
near_dedup, conflict and labels and goes to persist, which bumps that row's retrieval
count. The lookup is an optimisation: the partial unique index, re-checked in persist, is
the authority. Quarantined memories are not deduplicated (never matched, never matching).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from ibex_worker import redaction_tags
from ibex_worker.db import tenant_tx
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.store import memories

_WHITESPACE = re.compile(r"\s+")


def content_hash(content: str, tags: Sequence[str] = ()) -> str:
    normalised = _WHITESPACE.sub(" ", content).strip().lower()
    if tags:
        normalised += "\x00" + "\x00".join(redaction_tags.identity(tag) for tag in tags)
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


def run(ctx: WriteContext, deps: StageDeps) -> WriteContext:
    ctx.content_hash = content_hash(ctx.content or "", ctx.redaction_tags)
    if ctx.quarantined or not deps.settings.memory_dedup_exact_enabled:
        ctx.decide("exact_dedup", result="skipped",
                   reason="quarantined" if ctx.quarantined else "disabled")
        return ctx
    with tenant_tx(deps.engine, ctx.org_id) as conn:
        existing = memories.find_active_by_hash(conn, ctx.org_id, ctx.agent_id, ctx.content_hash)
    if existing:
        ctx.exact_duplicate_of = existing
        ctx.next_stage = "persist"
        ctx.decide("exact_dedup", result="hit", memory_id=existing)
    else:
        ctx.decide("exact_dedup", result="miss")
    return ctx
