"""Stage 5, near_dedup: find near-duplicates of the new memory among the agent's own
active memories, through ``VectorStore.search`` only.

Guarantees: ``ctx.near_duplicates`` lists candidates with similarity strictly greater
than the threshold in force (``min_similarity = threshold`` is requested, then ``>`` is
applied, ADR-0055), of the same org and agent, active, never quarantined; an empty corpus
gives none. ``ctx.corpus_version`` records the corpus version the answer was read at, so
persist can tell whether it is still current. A near duplicate is linked, never merged.
"""

from __future__ import annotations

from typing import Any

from ibex_worker.db import tenant_tx
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.store import corpus


def find(conn: Any, ctx: WriteContext, deps: StageDeps) -> list[dict[str, Any]]:
    threshold = deps.settings.memory_near_duplicate_sim_threshold
    found = deps.vector_store.search(conn, ctx.org_id, ctx.agent_id, ctx.embedding, model=ctx.embedding_model,
                                     min_similarity=threshold,
                                     limit=deps.settings.near_duplicate_candidate_limit)
    return [{"memory_id": c.memory_id, "similarity": c.similarity} for c in found if c.similarity > threshold]


def record(ctx: WriteContext, candidates: list[dict[str, Any]], deps: StageDeps) -> None:
    ctx.near_duplicates = candidates
    ctx.decide("near_dedup", result="near_duplicate" if candidates else "novel",
               candidates=candidates, threshold=deps.settings.memory_near_duplicate_sim_threshold,
               model=ctx.embedding_model)


def run(ctx: WriteContext, deps: StageDeps) -> WriteContext:
    if ctx.quarantined or ctx.embedding is None:
        ctx.decide("near_dedup", result="skipped", reason="quarantined")
        return ctx
    with tenant_tx(deps.engine, ctx.org_id) as conn:
        ctx.corpus_version = corpus.version(conn, ctx.org_id, ctx.agent_id)
        candidates = find(conn, ctx, deps)
    record(ctx, candidates, deps)
    return ctx
