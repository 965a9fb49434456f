"""Stage 8, persist: the single durable effect of a write.

In one transaction: lock the agent's corpus row (serialising near-dup and conflict
decisions per org and agent), check the job still holds its lease (fencing), re-check the
exact duplicate against the partial unique index, recompute near-duplicates and conflicts
if the corpus changed since they were computed (searching only the memories that became
searchable since, so the time under the lock follows the concurrent writes, not the
agent's corpus), then write the memory, its labels,
relationships, supersessions, escalations, the job's outcome and the idempotency claim's
final response. After commit, the read cache; its failure degrades reads, never the record.

Outcomes: ``created`` (201 body) or ``exact_duplicate`` (409 ``DUPLICATE_CONTENT`` body,
retrieval count bumped). A job whose exact twin vanished before persist (superseded in
between) and was never embedded is sent back to ``embed`` instead.

A reviewer's release (``ctx.release_of``) writes no new row: the quarantined memory becomes
active (``released``, 201), or, when an identical active memory exists, is retired as a
tombstone in its favour (``exact_duplicate``, 409); either way the decision is audited in
the same transaction. A memory no longer quarantined fails the release (``NOT_QUARANTINED``).

A write for an agent whose erasure is open fails (``ERASED``): the erasure's last step,
under the same lock, fails whatever of the agent is still in flight after it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ibex_worker import entity_keys, lexical, rewording
from ibex_worker.adapters.centroids import BUCKETS
from ibex_worker.db import tenant_tx
from ibex_worker.errors import LeaseLost, PermanentError
from ibex_worker.pipeline import conflict, entities, jobs, near_dedup
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.store import corpus, erasure, erasure_receipts, escalations, memories, quarantine, relationships
from ibex_worker.store import jobs as job_store


DECIDED_BY = "pipeline"  # who decided the relationships a write records


@dataclass
class PersistOutcome:
    outcome: str | None          # created | exact_duplicate | None when rerouted
    memory_id: str | None = None
    reroute_to: str | None = None
    cache_entry: dict[str, Any] | None = None
    cache_evict: list[str] = field(default_factory=list)  # memories this write superseded


def run(ctx: WriteContext, deps: StageDeps) -> PersistOutcome:
    ctx.timings_ms.pop("persist", None)
    started = time.perf_counter()
    with tenant_tx(deps.engine, ctx.org_id) as conn:
        if ctx.embedding:  # before the corpus lock: the agent's other writes need not wait for it
            ctx.embedding_bucket = BUCKETS.nearest(conn, ctx.embedding_model, ctx.embedding)
        version = corpus.lock(conn, ctx.org_id, ctx.agent_id)
        if not job_store.holds_lease(conn, ctx.org_id, ctx.job_id, ctx.lease_token):
            raise LeaseLost("job lease lost before persist")
        if erasure_receipts.open_for_agent(conn, ctx.org_id, ctx.agent_id) is not None:
            raise PermanentError("the agent was erased while this write was in flight; nothing was stored",
                                 code=erasure.ERASED_CODE)
        if ctx.release_of and not memories.lock_quarantined(conn, ctx.org_id, ctx.release_of):
            raise PermanentError("the memory is no longer quarantined", code="NOT_QUARANTINED")
        existing = None if ctx.quarantined else memories.find_active_by_hash(conn, ctx.org_id, ctx.agent_id,
                                                                              ctx.content_hash)
        if existing:
            return _bump_duplicate(conn, ctx, existing, started)
        if not ctx.quarantined and ctx.embedding is None:
            return _reroute_to_embed(conn, ctx)
        if not ctx.quarantined and ctx.corpus_version != version:
            _recompute(conn, ctx, deps, version)
        return _create(conn, ctx, deps, started, version)


def _stamp(ctx: WriteContext, started: float) -> None:
    """Persist's own time, up to the final write (its commit cannot time itself)."""
    ctx.timings_ms["persist"] = round((time.perf_counter() - started) * 1000.0, 3)


def _bump_duplicate(conn: Any, ctx: WriteContext, existing: str, started: float) -> PersistOutcome:
    if ctx.release_of:  # the released text already lives in an active memory: retire this one
        erasure.erase(conn, ctx.org_id, ctx.release_of, ctx.reviewer or "system:release")
        _audit_release(conn, ctx, "exact_duplicate", existing)
    count = memories.bump_retrieval(conn, ctx.org_id, existing)
    ctx.exact_duplicate_of = existing
    ctx.decide("persist", result="exact_duplicate", memory_id=existing, retrieval_count=count)
    body = {"error": {"code": "DUPLICATE_CONTENT",
                      "message": "an identical active memory already exists; its retrieval count was bumped"},
            "job_id": ctx.job_id, "memory_id": existing, "status": "active", "outcome": "exact_duplicate"}
    _stamp(ctx, started)
    jobs.finish(conn, ctx, outcome="exact_duplicate", memory_id=existing, response_status=409, body=body)
    return PersistOutcome("exact_duplicate", existing)


def _reroute_to_embed(conn: Any, ctx: WriteContext) -> PersistOutcome:
    ctx.exact_duplicate_of = None
    ctx.decide("persist", result="rerouted", reason="exact_duplicate_no_longer_active", next_stage="embed")
    return PersistOutcome(None, reroute_to="embed")


def _recompute(conn: Any, ctx: WriteContext, deps: StageDeps, version: int) -> None:
    """The corpus changed since near_dedup read it: decide again, now under the lock, looking
    only at what changed since (``near_dedup.refresh``)."""
    candidates, left_out, scope = near_dedup.refresh(conn, ctx, deps)
    near_dedup.record(ctx, candidates, deps, left_out)
    conflict.decide(conn, ctx, deps)
    ctx.decide("persist", result="recomputed", scope=scope, read_version=ctx.corpus_version, current_version=version)
    ctx.corpus_version = version


def _create(conn: Any, ctx: WriteContext, deps: StageDeps, started: float, version: int) -> PersistOutcome:
    plan = ctx.conflict or {}
    status = _status(ctx, plan)
    searchable_since = version + 1  # the version the bump below gives the corpus
    memory_id, entity = _write_memory(conn, ctx, deps, status, searchable_since)
    if memory_id is None:  # unreachable under the corpus lock; mapped, not assumed
        existing = memories.find_active_by_hash(conn, ctx.org_id, ctx.agent_id, ctx.content_hash)
        return _bump_duplicate(conn, ctx, existing, started)
    outcome = "released" if ctx.release_of else "created"
    if ctx.release_of:
        _audit_release(conn, ctx, outcome, memory_id)
    else:
        for label in ctx.labels:
            memories.insert_label(conn, ctx.org_id, memory_id, label["label"], label["confidence"])
    _link_near_duplicates(conn, ctx, memory_id, deps)
    _apply_supersessions(conn, ctx, memory_id, plan)
    escalation_ids = _escalate(conn, ctx, memory_id, plan)
    if status == "active" or plan.get("supersedes"):
        corpus.bump(conn, ctx.org_id, ctx.agent_id)
    body = {"job_id": ctx.job_id, "memory_id": memory_id, "status": status, "outcome": outcome,
            "near_duplicates": [{"memory_id": c["memory_id"], "similarity": c["similarity"],
                                 "lexical_similarity": c.get("lexical_similarity")} for c in ctx.near_duplicates],
            "supersedes": list(plan.get("supersedes", [])), "superseded_by": list(plan.get("superseded_by", [])),
            "escalations": escalation_ids}
    ctx.decide("persist", result=outcome, memory_id=memory_id, status=status, **entity)
    _stamp(ctx, started)
    jobs.finish(conn, ctx, outcome=outcome, memory_id=memory_id, response_status=201, body=body)
    cache_entry = None if status != "active" else {"memory_id": memory_id, "org_id": ctx.org_id,
                                                   "agent_id": ctx.agent_id, "content": ctx.content,
                                                   "status": status}
    return PersistOutcome(outcome, memory_id, cache_entry=cache_entry,
                          cache_evict=list(plan.get("supersedes", [])))


def _status(ctx: WriteContext, plan: dict[str, Any]) -> str:
    if ctx.quarantined:
        return "quarantined"
    return "superseded" if plan.get("superseded_by") else "active"


def _write_memory(conn: Any, ctx: WriteContext, deps: StageDeps, status: str,
                  searchable_since: int) -> tuple[str | None, dict[str, Any]]:
    """Insert the memory (or activate the released one) with the entity its subject resolves
    to, created when new, in the same statement; what the decision log says about it: the
    entity's id alone, since a key limited to one agent reads its jobs, and how a name
    resolved tells what other agents wrote (the entity's own view, for org-wide keys, has its
    resemblances). A quarantined memory's subject is resolved on release."""
    name = None if status == "quarantined" else entity_keys.subject_name(ctx.subject_key)
    write = _activate if ctx.release_of else _insert_memory
    if name is None:
        return write(conn, ctx, status, searchable_since, None), {}
    memory_id, resolution = entities.recorded(
        conn, ctx.org_id, name, deps.settings.entity_fuzzy_threshold,
        lambda entity_id: write(conn, ctx, status, searchable_since, entity_id))
    if memory_id is None:
        return None, {}
    entities.logged(ctx.org_id, memory_id, resolution)
    return memory_id, {"subject_entity": resolution.entity_id}


def _insert_memory(conn: Any, ctx: WriteContext, status: str, searchable_since: int,
                   entity_id: str | None) -> str | None:
    req = ctx.request
    return memories.insert(
        conn, org_id=ctx.org_id, agent_id=ctx.agent_id, content=ctx.content, content_hash=ctx.content_hash,
        source=req["source"], status=status, valid_from=req.get("valid_from"), valid_until=req.get("valid_until"),
        subject_key=ctx.subject_key, embedding=ctx.embedding, embedding_model=ctx.embedding_model,
        pii_report=ctx.pii_report, metadata=req.get("metadata") or {}, job_id=ctx.job_id,
        searchable_since=searchable_since, lexical=lexical.profile(ctx.content or "", ctx.org_id, ctx.agent_id),
        redaction_tags=ctx.redaction_tags, entity_id=entity_id,
        aspect=ctx.subject_aspect if entity_id else None,
        embedding_bucket=ctx.embedding_bucket)


def _activate(conn: Any, ctx: WriteContext, status: str, searchable_since: int,
              entity_id: str | None) -> str | None:
    return memories.release_quarantined(
        conn, ctx.org_id, ctx.release_of, status=status, content_hash=ctx.content_hash, embedding=ctx.embedding,
        embedding_model=ctx.embedding_model, subject_key=ctx.subject_key, searchable_since=searchable_since,
        lexical=lexical.profile(ctx.content or "", ctx.org_id, ctx.agent_id), entity_id=entity_id,
        aspect=ctx.subject_aspect if entity_id else None)


def _audit_release(conn: Any, ctx: WriteContext, outcome: str, result_memory_id: str) -> None:
    quarantine.record_decision(conn, ctx.org_id, ctx.agent_id, ctx.release_of, "release", outcome,
                               ctx.reviewer or "system:release", result_memory_id=result_memory_id,
                               note=ctx.request.get("note"), job_id=ctx.job_id)


def _link_near_duplicates(conn: Any, ctx: WriteContext, memory_id: str, deps: StageDeps) -> None:
    threshold = deps.settings.memory_near_duplicate_sim_threshold
    for cand in ctx.near_duplicates:
        relationships.insert(conn, ctx.org_id, memory_id, cand["memory_id"], "near_duplicate_of",
                             {"similarity": cand["similarity"], "threshold": threshold, "model": ctx.embedding_model,
                              "signals": _signals(cand, deps), "job_id": ctx.job_id}, DECIDED_BY)


def _signals(candidate: dict[str, Any], deps: StageDeps) -> dict[str, Any]:
    """Every signal's score and threshold, and whether it fired (ADR-025's evidence)."""
    embedding, threshold = candidate["similarity"], deps.settings.memory_near_duplicate_sim_threshold
    lexical_similarity = candidate.get("lexical_similarity")
    lexical_threshold = deps.settings.memory_near_duplicate_lexical_threshold
    return {"embedding": {"similarity": embedding, "threshold": threshold,
                          "fired": embedding is not None and embedding > threshold},
            "lexical": {"similarity": lexical_similarity, "threshold": lexical_threshold,
                        "fired": lexical_similarity is not None and lexical_similarity >= lexical_threshold},
            "fingerprint": {"same": bool(candidate.get("same_fingerprint"))},
            "small_edits": {"same_words": bool(candidate.get("small_edits"))},
            "names": {"sound_alike": bool(candidate.get("names_sound_alike"))},
            **({"rewording": _rewording(candidate, deps)} if "differing_words" in candidate else {})}


def _rewording(candidate: dict[str, Any], deps: StageDeps) -> dict[str, Any]:
    floor, differing = deps.settings.memory_near_duplicate_rewording_floor, candidate["differing_words"]
    when = bool(candidate.get("only_when_differs"))
    return {"similarity": candidate["similarity"], "floor": floor, "differing_content_words": differing,
            "max_differing": rewording.MAX_DIFFERING, "only_when_differs": when,
            "fired": rewording.fires(differing, when)}


def _apply_supersessions(conn: Any, ctx: WriteContext, memory_id: str, plan: dict[str, Any]) -> None:
    """Sequential facts: the older is marked superseded. Overlapping open-ended facts the
    rules decided (``replaced``): the earlier one's interval is also closed where the later
    one starts, whichever of the two is the new memory."""
    subjects, replaced = plan.get("subjects") or {}, plan.get("replaced") or {}

    def evidence(other: str) -> dict[str, Any]:
        """How the supersession was decided; for a closed interval, what it was before (open),
        so that removing the link restores it."""
        how = replaced.get(other)
        rule = {"rule": conflict.RULE_SEQUENTIAL} if not how else {
            "rule": conflict.RULE_REPLACED, "rules_verdict": how["rule"],
            "interval": {"previous_valid_until": None, "closed": True, "valid_until": how["valid_until"]}}
        return {**rule, "classifier_calls": 0, "job_id": ctx.job_id, "subject": subjects.get(other)}

    for older in plan.get("supersedes", []):
        if older in replaced:
            memories.set_status_and_valid_until(conn, ctx.org_id, older, "superseded",
                                                datetime.fromisoformat(replaced[older]["valid_until"]))
        else:
            memories.mark_superseded(conn, ctx.org_id, older)
        relationships.insert(conn, ctx.org_id, memory_id, older, "supersedes", evidence(older), DECIDED_BY)
    ends = [datetime.fromisoformat(replaced[n]["valid_until"]) for n in plan.get("superseded_by", []) if n in replaced]
    if ends:  # the earliest of the later facts ends the new one
        memories.set_status_and_valid_until(conn, ctx.org_id, memory_id, "superseded", min(ends))
    for newer in plan.get("superseded_by", []):
        relationships.insert(conn, ctx.org_id, newer, memory_id, "supersedes", evidence(newer), DECIDED_BY)


def _escalate(conn: Any, ctx: WriteContext, memory_id: str, plan: dict[str, Any]) -> list[str]:
    similarity = {c["memory_id"]: c["similarity"] for c in ctx.near_duplicates}
    by_aspect = set(plan.get("same_aspect") or ())
    ids = []
    for item in plan.get("escalations", []):
        evidence = {"similarity": similarity.get(item["candidate_id"]), "reason": item["reason"], "job_id": ctx.job_id,
                    "candidate": "same_aspect" if item["candidate_id"] in by_aspect else "near_duplicate"}
        escalation_id = escalations.insert(
            conn, org_id=ctx.org_id, agent_id=ctx.agent_id, memory_id=memory_id, candidate_id=item["candidate_id"],
            reason=item["reason"], evidence=evidence, job_id=ctx.job_id)
        if escalation_id:
            ids.append(escalation_id)
    return ids
