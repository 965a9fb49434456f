"""Stage 5, near_dedup: find near-duplicates of the new memory among the agent's own
active memories, through ``VectorStore.search`` only.

Guarantees: ``ctx.near_duplicates`` lists candidates with similarity strictly greater
than the threshold in force (``min_similarity = threshold`` is requested, then ``>`` is
applied, ADR-0055), of the same org and agent, active, never quarantined; an empty corpus
gives none; a memory whose link with this very text a person removed is left out (named
in the decision as ``unlinked_by_a_person``). ``ctx.corpus_version`` records the corpus version the answer was read at, so
persist can tell whether it is still current. A near duplicate is linked, never merged.
"""

from __future__ import annotations

from typing import Any

from ibex_worker.db import tenant_tx
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.store import corpus, memories, relationships


def find(conn: Any, ctx: WriteContext, deps: StageDeps,
         since: int | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Candidates over the threshold, best first, and the ids left out because a person
    removed the link between these very texts; with ``since``, among the memories that
    became searchable after that corpus version only."""
    threshold = deps.settings.memory_near_duplicate_sim_threshold
    found = deps.vector_store.search(conn, ctx.org_id, ctx.agent_id, ctx.embedding, model=ctx.embedding_model,
                                     min_similarity=threshold,
                                     limit=deps.settings.near_duplicate_candidate_limit, since=since)
    candidates = [{"memory_id": c.memory_id, "similarity": c.similarity} for c in found if c.similarity > threshold]
    if not candidates:
        return candidates, []
    partners = relationships.unlinked_partners(conn, ctx.org_id, ctx.agent_id, ctx.content_hash)
    if not partners:
        return candidates, []
    hashes = memories.content_hashes(conn, ctx.org_id, [c["memory_id"] for c in candidates])
    unlinked = [c["memory_id"] for c in candidates if hashes.get(c["memory_id"]) in partners]
    return [c for c in candidates if c["memory_id"] not in unlinked], unlinked


def refresh(conn: Any, ctx: WriteContext, deps: StageDeps) -> tuple[list[dict[str, Any]], list[str], str]:
    """The candidates as of now, from those found at ``ctx.corpus_version``: the earlier ones
    still searchable plus those that arrived since, best first (``"since"``). When a full
    list lost one, a memory beyond its cut may now belong in it, so the whole search runs
    again (``"full"``)."""
    limit = deps.settings.near_duplicate_candidate_limit
    prior = ctx.near_duplicates
    still = deps.vector_store.still_searchable(conn, ctx.org_id, [c["memory_id"] for c in prior],
                                               model=ctx.embedding_model)
    kept = [c for c in prior if c["memory_id"] in still]
    if ctx.corpus_version is None or (len(prior) >= limit and len(kept) < len(prior)):
        return (*find(conn, ctx, deps), "full")
    arrived, unlinked = find(conn, ctx, deps, since=ctx.corpus_version)
    merged = {c["memory_id"]: c for c in kept} | {c["memory_id"]: c for c in arrived}
    ranked = sorted(merged.values(), key=lambda c: (-c["similarity"], c["memory_id"]))
    return ranked[:limit], unlinked, "since"


def record(ctx: WriteContext, candidates: list[dict[str, Any]], deps: StageDeps, unlinked: list[str]) -> None:
    ctx.near_duplicates = candidates
    extra = {"unlinked_by_a_person": unlinked} if unlinked else {}
    ctx.decide("near_dedup", result="near_duplicate" if candidates else "novel",
               candidates=candidates, threshold=deps.settings.memory_near_duplicate_sim_threshold,
               model=ctx.embedding_model, **extra)


def run(ctx: WriteContext, deps: StageDeps) -> WriteContext:
    if ctx.quarantined or ctx.embedding is None:
        ctx.decide("near_dedup", result="skipped", reason="quarantined")
        return ctx
    with tenant_tx(deps.engine, ctx.org_id) as conn:
        ctx.corpus_version = corpus.version(conn, ctx.org_id, ctx.agent_id)
        candidates, unlinked = find(conn, ctx, deps)
    record(ctx, candidates, deps, unlinked)
    return ctx
