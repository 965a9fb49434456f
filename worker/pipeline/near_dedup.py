"""Stage 5, near_dedup: find near-duplicates of the new memory among the agent's own
active memories, by two signals: the embedding (``VectorStore.search``, similarity strictly
greater than the threshold in force: ``min_similarity = threshold`` is requested, then ``>``
is applied, ADR-0055) and the lexical signal (``ibex_worker.lexical``: trigram similarity at
or above its threshold, or the same word-set fingerprint, or the same words apart from a few
misspellings or British/American spellings, ``conflict_rules.edits.small_edits_only``;
candidates proposed by the store's band index), and a rewording: above the rewording floor
(``IBEX_MEMORY_NEAR_DUPLICATE_REWORDING_FLOOR``), at most one content word on one side only, or
only words that say when (``ibex_worker.rewording``; read by the process's tagger, so a process without one leaves it
out). Any signal makes a near duplicate; each candidate carries every signal's score, and the
link's evidence says which fired.

Guarantees: ``ctx.near_duplicates`` lists candidates of the same org and agent, active,
never quarantined, best first; an empty corpus gives none. Left out, and named in the
decision's ``left_out``: a memory whose link with this very text a person removed, and a
memory about another record of the same kind (``ticket 84898`` / ``ticket 78037``: alike,
but two facts), and a memory whose redacted name is another person's (their keyed tags
differ, ``ibex_worker.redaction_tags``: "[PERSON] asked for a call back" about two people). ``ctx.corpus_version`` records the corpus version the answer was read at,
so persist can tell whether it is still current. A near duplicate is linked, never merged.
"""

from __future__ import annotations

from typing import Any

from ibex_worker import identifiers, lexical, redaction_tags, rewording
from ibex_worker.conflict_rules import edits, verdicts
from ibex_worker.db import tenant_tx
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.store import corpus, memories, relationships
from ibex_worker.store import lexical as lexical_store


def find(conn: Any, ctx: WriteContext, deps: StageDeps,
         since: int | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Near duplicates, best first, and the candidates left out with the reason; with
    ``since``, among the memories that became searchable after that corpus version only.

    A candidate is a near duplicate when its embedding similarity is strictly above the
    embedding threshold, or its trigram similarity reaches the lexical threshold, or both
    texts have the same word-set fingerprint, or the same words but for misspellings
    ("stnadup", "Thursadys") and spelling variants, which a short text's trigrams miss, or its
    embedding similarity is above the rewording floor and at most one content word stands on
    one side only, or only words that say when ("on Wednesdays" / "on Mondays") (of the candidates only the rewording could link, the nearest
    ``rewording.CANDIDATES_TAGGED`` not screened out below are tagged); each carries every
    signal's score. It is left
    out when a person removed the link between these very texts (``unlinked_by_a_person``),
    when both name a kind of record by different identifiers (``different_records``), or
    when their redacted names are different people's (``different_people``). Names spelt two
    ways that sound alike ("Jon Smyth", "John Smith") are possibly one person: linked, with
    ``names_sound_alike`` in the evidence."""
    settings = deps.settings
    threshold, lexical_threshold = (settings.memory_near_duplicate_sim_threshold,
                                    settings.memory_near_duplicate_lexical_threshold)
    floor = min(threshold, settings.memory_near_duplicate_rewording_floor) if deps.tagger else threshold
    found = deps.vector_store.search(conn, ctx.org_id, ctx.agent_id, ctx.embedding, model=ctx.embedding_model,
                                     min_similarity=floor,
                                     limit=settings.near_duplicate_candidate_limit, since=since,
                                     corpus=ctx.corpus_version)
    embedded = {c.memory_id: c.similarity for c in found if c.similarity > floor}
    mine = lexical.profile(ctx.content or "", ctx.org_id, ctx.agent_id)
    words, grams = verdicts.tokens(ctx.content or ""), lexical.trigrams(ctx.content or "")
    proposed = {str(r.id): r for r in lexical_store.candidates(
        conn, ctx.org_id, ctx.agent_id, mine.bands, mine.fingerprint, ctx.embedding, ctx.embedding_model,
        settings.near_duplicate_coarse_candidates, since)}
    missing = [i for i in embedded if i not in proposed]
    rows = {**proposed, **(lexical_store.rows(conn, ctx.org_id, missing) if missing else {})}
    kept, left_out = [], []
    partners, tagged, my_records = None, 0, identifiers.find(ctx.content or "")

    def similarity_of(memory_id: str) -> float | None:
        return embedded.get(memory_id, getattr(rows[memory_id], "similarity", None))

    for memory_id in sorted(rows, key=lambda i: (-(similarity_of(i) or -1.0), i)):
        row, similarity = rows[memory_id], similarity_of(memory_id)
        lexical_similarity = lexical.jaccard(grams, lexical.trigrams(row.content))
        same_fingerprint = row.lexical_fingerprint == mine.fingerprint
        fired = ((similarity is not None and similarity > threshold) or same_fingerprint
                 or (lexical_similarity is not None and lexical_similarity >= lexical_threshold))
        small_edits = edits.small_edits_only(words, verdicts.tokens(row.content))
        in_band = not (fired or small_edits) and similarity is not None and similarity > floor
        if not (fired or small_edits or in_band):
            continue
        records = identifiers.distinct_records(my_records, identifiers.find(row.content))
        people = redaction_tags.relation(ctx.redaction_tags, row.redaction_tags)
        differing = None
        if in_band and not records and people != "different_people" and tagged < rewording.CANDIDATES_TAGGED:
            differing, tagged = _differing(ctx, row.content, deps), tagged + 1
        if in_band and (differing is None or not rewording.reworded(differing)):
            continue
        if partners is None:
            partners = relationships.unlinked_partners(conn, ctx.org_id, ctx.agent_id, ctx.content_hash)
        if row.content_hash in partners:
            left_out.append({"memory_id": memory_id, "why": "unlinked_by_a_person"})
        elif records:
            left_out.append({"memory_id": memory_id, "why": "different_records", "records": records})
        elif people == "different_people":
            left_out.append({"memory_id": memory_id, "why": "different_people"})
        else:
            kept.append({"memory_id": memory_id, "similarity": similarity, "lexical_similarity": lexical_similarity,
                         "same_fingerprint": same_fingerprint, "small_edits": small_edits,
                         "names_sound_alike": people == "names_sound_alike",
                         **({"differing_words": len(differing),
                             "only_when_differs": rewording.only_when_differs(differing)}
                            if differing is not None else {})})
    kept.sort(key=lambda c: (-max(c["similarity"] or 0.0, c["lexical_similarity"] or 0.0), c["memory_id"]))
    return kept[:settings.near_duplicate_candidate_limit], left_out


def _differing(ctx: WriteContext, other: str, deps: StageDeps) -> list[str] | None:
    """The content words of the two texts on one side only (``ibex_worker.rewording``), when
    this process has a tagger and neither text is empty."""
    if deps.tagger is None or not ctx.content or not other:
        return None
    return rewording.differing(deps.tagger.terms(ctx.content), deps.tagger.terms(other))


def refresh(conn: Any, ctx: WriteContext, deps: StageDeps) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """The candidates as of now, from those found at ``ctx.corpus_version``: the earlier ones
    still active plus those that arrived since, best first (``"since"``). When a full
    list lost one, a memory beyond its cut may now belong in it, so the whole search runs
    again (``"full"``)."""
    limit = deps.settings.near_duplicate_candidate_limit
    prior = ctx.near_duplicates
    still = {str(r.id) for r in memories.active_facts(conn, ctx.org_id, [c["memory_id"] for c in prior])}
    kept = [c for c in prior if c["memory_id"] in still]
    if ctx.corpus_version is None or (len(prior) >= limit and len(kept) < len(prior)):
        return (*find(conn, ctx, deps), "full")
    arrived, left_out = find(conn, ctx, deps, since=ctx.corpus_version)
    merged = {c["memory_id"]: c for c in kept} | {c["memory_id"]: c for c in arrived}
    ranked = sorted(merged.values(),
                    key=lambda c: (-max(c["similarity"] or 0.0, c.get("lexical_similarity") or 0.0), c["memory_id"]))
    return ranked[:limit], left_out, "since"


def record(ctx: WriteContext, candidates: list[dict[str, Any]], deps: StageDeps,
           left_out: list[dict[str, Any]]) -> None:
    ctx.near_duplicates = candidates
    extra = {"left_out": left_out} if left_out else {}
    ctx.decide("near_dedup", result="near_duplicate" if candidates else "novel",
               candidates=candidates, threshold=deps.settings.memory_near_duplicate_sim_threshold,
               lexical_threshold=deps.settings.memory_near_duplicate_lexical_threshold,
               model=ctx.embedding_model, **extra)


def run(ctx: WriteContext, deps: StageDeps) -> WriteContext:
    if ctx.quarantined or ctx.embedding is None:
        ctx.decide("near_dedup", result="skipped", reason="quarantined")
        return ctx
    with tenant_tx(deps.engine, ctx.org_id) as conn:
        ctx.corpus_version = corpus.version(conn, ctx.org_id, ctx.agent_id)
        candidates, left_out = find(conn, ctx, deps)
    record(ctx, candidates, deps, left_out)
    return ctx
