"""Stage 8, persist: the single durable effect of a write.

In one transaction: lock the agent's corpus row (serialising near-dup and conflict
decisions per org and agent), check the job still holds its lease (fencing), re-check the
exact duplicate against the partial unique index, recompute near-duplicates and conflicts
if the corpus changed since they were computed, then write the memory, its labels,
relationships, supersessions, escalations, the job's outcome and the idempotency claim's
final response. After commit, the read cache; its failure degrades reads, never the record.

Outcomes: ``created`` (201 body) or ``exact_duplicate`` (409 ``DUPLICATE_CONTENT`` body,
retrieval count bumped). A job whose exact twin vanished before persist (superseded in
between) and was never embedded is sent back to ``embed`` instead.

A reviewer's release (``ctx.release_of``) writes no new row: the quarantined memory becomes
active (``released``, 201), or, when an identical active memory exists, is retired as a
tombstone in its favour (``exact_duplicate``, 409); either way the decision is audited in
the same transaction. A memory no longer quarantined fails the release (``NOT_QUARANTINED``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text

from worker import corpus, jobs, review
from worker.adapters.embedder import EMBEDDING_DIM
from worker.db import tenant_tx
from worker.errors import LeaseLost, PermanentError
from worker.pipeline import conflict, near_dedup
from worker.pipeline.context import WriteContext
from worker.pipeline.exact_dedup import find_active_duplicate


@dataclass
class PersistOutcome:
    outcome: str | None          # created | exact_duplicate | None when rerouted
    memory_id: str | None = None
    reroute_to: str | None = None
    cache_entry: dict[str, Any] | None = None
    cache_evict: list[str] = field(default_factory=list)  # memories this write superseded


_BUMP_RETRIEVAL = text(
    "UPDATE memories SET retrieval_count = retrieval_count + 1, last_retrieved_at = now(), updated_at = now() "
    "WHERE org_id = :org_id AND id = :id RETURNING retrieval_count"
)
_INSERT_MEMORY = text(
    """
    INSERT INTO memories (org_id, agent_id, content, content_hash, source, status, valid_from, valid_until,
                          subject_key, embedding, embedding_model, pii_report, metadata, created_by_job)
    VALUES (:org_id, :agent_id, :content, :content_hash, :source, :status, :valid_from, :valid_until,
            :subject_key, :embedding, :embedding_model, CAST(:pii_report AS jsonb), CAST(:metadata AS jsonb),
            :job_id)
    ON CONFLICT (org_id, agent_id, content_hash) WHERE status = 'active' AND deleted_at IS NULL DO NOTHING
    RETURNING id
    """
).bindparams(bindparam("embedding", type_=Vector(EMBEDDING_DIM)))
_ACTIVATE = text(
    "UPDATE memories SET status = :status, content_hash = :content_hash, embedding = :embedding, "
    "embedding_model = :embedding_model, subject_key = :subject_key, updated_at = now() "
    "WHERE org_id = :org_id AND id = :id AND status = 'quarantined' AND deleted_at IS NULL RETURNING id"
).bindparams(bindparam("embedding", type_=Vector(EMBEDDING_DIM)))
_QUARANTINED = text(
    "SELECT id FROM memories WHERE org_id = :org_id AND id = :id AND status = 'quarantined' "
    "AND deleted_at IS NULL FOR UPDATE"
)
_INSERT_LABEL = text(
    "INSERT INTO memory_labels (org_id, memory_id, label, confidence) VALUES (:org_id, :memory_id, :label, :confidence)"
)
_INSERT_RELATIONSHIP = text(
    "INSERT INTO memory_relationships (org_id, source_memory_id, target_memory_id, relationship_type, evidence, decided_by) "
    "VALUES (:org_id, :source, :target, :type, CAST(:evidence AS jsonb), :decided_by) "
    "ON CONFLICT (org_id, source_memory_id, target_memory_id, relationship_type) DO NOTHING"
)
_MARK_SUPERSEDED = text(
    "UPDATE memories SET status = 'superseded', updated_at = now() "
    "WHERE org_id = :org_id AND id = :id AND status = 'active'"
)
_INSERT_ESCALATION = text(
    "INSERT INTO memory_conflict_escalations (org_id, agent_id, memory_id, candidate_id, reason, evidence, created_by_job) "
    "VALUES (:org_id, :agent_id, :memory_id, :candidate_id, :reason, CAST(:evidence AS jsonb), :job_id) "
    "ON CONFLICT (org_id, memory_id, candidate_id) DO NOTHING RETURNING id"
)


def run(ctx: WriteContext, deps: Any) -> PersistOutcome:
    ctx.timings_ms.pop("persist", None)
    started = time.perf_counter()
    with tenant_tx(deps.engine, ctx.org_id) as conn:
        version = corpus.lock(conn, ctx.org_id, ctx.agent_id)
        if not jobs.holds_lease(conn, ctx):
            raise LeaseLost("job lease lost before persist")
        if ctx.release_of and conn.execute(_QUARANTINED, {"org_id": ctx.org_id, "id": ctx.release_of}).first() is None:
            raise PermanentError("the memory is no longer quarantined", code="NOT_QUARANTINED")
        existing = None if ctx.quarantined else find_active_duplicate(conn, ctx.org_id, ctx.agent_id, ctx.content_hash)
        if existing:
            return _bump_duplicate(conn, ctx, existing, started)
        if not ctx.quarantined and ctx.embedding is None:
            return _reroute_to_embed(conn, ctx)
        if not ctx.quarantined and ctx.corpus_version != version:
            _recompute(conn, ctx, deps, version)
        return _create(conn, ctx, deps, started)


def _stamp(ctx: WriteContext, started: float) -> None:
    """Persist's own time, up to the final write (its commit cannot time itself)."""
    ctx.timings_ms["persist"] = round((time.perf_counter() - started) * 1000.0, 3)


def _bump_duplicate(conn: Any, ctx: WriteContext, existing: str, started: float) -> PersistOutcome:
    if ctx.release_of:  # the released text already lives in an active memory: retire this one
        review.erase(conn, ctx.org_id, ctx.release_of, ctx.reviewer or "system:release")
        _audit_release(conn, ctx, "exact_duplicate", existing)
    count = conn.execute(_BUMP_RETRIEVAL, {"org_id": ctx.org_id, "id": existing}).scalar_one()
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


def _recompute(conn: Any, ctx: WriteContext, deps: Any, version: int) -> None:
    """The corpus changed since near_dedup read it: decide again, now under the lock."""
    near_dedup.record(ctx, near_dedup.find(conn, ctx, deps), deps)
    conflict.decide(conn, ctx, deps)
    ctx.decide("persist", result="recomputed", read_version=ctx.corpus_version, current_version=version)
    ctx.corpus_version = version


def _create(conn: Any, ctx: WriteContext, deps: Any, started: float) -> PersistOutcome:
    plan = ctx.conflict or {}
    status = _status(ctx, plan)
    memory_id = _activate(conn, ctx, status) if ctx.release_of else _insert_memory(conn, ctx, status)
    if memory_id is None:  # unreachable under the corpus lock; mapped, not assumed
        return _bump_duplicate(conn, ctx, find_active_duplicate(conn, ctx.org_id, ctx.agent_id, ctx.content_hash),
                               started)
    outcome = "released" if ctx.release_of else "created"
    if ctx.release_of:
        _audit_release(conn, ctx, outcome, memory_id)
    else:
        for label in ctx.labels:
            conn.execute(_INSERT_LABEL, {"org_id": ctx.org_id, "memory_id": memory_id, **label})
    _link_near_duplicates(conn, ctx, memory_id, deps)
    _apply_supersessions(conn, ctx, memory_id, plan)
    escalation_ids = _escalate(conn, ctx, memory_id, plan)
    if status == "active" or plan.get("supersedes"):
        corpus.bump(conn, ctx.org_id, ctx.agent_id)
    body = {"job_id": ctx.job_id, "memory_id": memory_id, "status": status, "outcome": outcome,
            "near_duplicates": [{"memory_id": c["memory_id"], "similarity": c["similarity"]} for c in ctx.near_duplicates],
            "supersedes": list(plan.get("supersedes", [])), "superseded_by": list(plan.get("superseded_by", [])),
            "escalations": escalation_ids}
    ctx.decide("persist", result=outcome, memory_id=memory_id, status=status)
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


def _insert_memory(conn: Any, ctx: WriteContext, status: str) -> str | None:
    req = ctx.request
    row = conn.execute(_INSERT_MEMORY, {
        "org_id": ctx.org_id, "agent_id": ctx.agent_id, "content": ctx.content, "content_hash": ctx.content_hash,
        "source": req["source"], "status": status, "valid_from": req.get("valid_from"),
        "valid_until": req.get("valid_until"), "subject_key": ctx.subject_key,
        "embedding": ctx.embedding, "embedding_model": ctx.embedding_model,
        "pii_report": json.dumps(ctx.pii_report), "metadata": json.dumps(req.get("metadata") or {}),
        "job_id": ctx.job_id,
    }).first()
    return str(row.id) if row else None


def _activate(conn: Any, ctx: WriteContext, status: str) -> str | None:
    row = conn.execute(_ACTIVATE, {
        "org_id": ctx.org_id, "id": ctx.release_of, "status": status, "content_hash": ctx.content_hash,
        "embedding": ctx.embedding, "embedding_model": ctx.embedding_model, "subject_key": ctx.subject_key,
    }).first()
    return str(row.id) if row else None


def _audit_release(conn: Any, ctx: WriteContext, outcome: str, result_memory_id: str) -> None:
    conn.execute(review.AUDIT, {
        "org_id": ctx.org_id, "agent_id": ctx.agent_id, "memory_id": ctx.release_of, "action": "release",
        "outcome": outcome, "result_memory_id": result_memory_id, "decided_by": ctx.reviewer or "system:release",
        "note": ctx.request.get("note"), "job_id": ctx.job_id})


def _relate(conn: Any, org_id: str, source: str, target: str, kind: str, evidence: dict[str, Any]) -> None:
    conn.execute(_INSERT_RELATIONSHIP, {"org_id": org_id, "source": source, "target": target, "type": kind,
                                        "evidence": json.dumps(evidence), "decided_by": "pipeline"})


def _link_near_duplicates(conn: Any, ctx: WriteContext, memory_id: str, deps: Any) -> None:
    threshold = deps.settings.memory_near_duplicate_sim_threshold
    for cand in ctx.near_duplicates:
        _relate(conn, ctx.org_id, memory_id, cand["memory_id"], "near_duplicate_of",
                {"similarity": cand["similarity"], "threshold": threshold, "model": ctx.embedding_model,
                 "job_id": ctx.job_id})


def _apply_supersessions(conn: Any, ctx: WriteContext, memory_id: str, plan: dict[str, Any]) -> None:
    evidence = {"rule": conflict.RULE_SEQUENTIAL, "classifier_calls": 0, "job_id": ctx.job_id}
    for older in plan.get("supersedes", []):
        conn.execute(_MARK_SUPERSEDED, {"org_id": ctx.org_id, "id": older})
        _relate(conn, ctx.org_id, memory_id, older, "supersedes", evidence)
    for newer in plan.get("superseded_by", []):
        _relate(conn, ctx.org_id, newer, memory_id, "supersedes", evidence)


def _escalate(conn: Any, ctx: WriteContext, memory_id: str, plan: dict[str, Any]) -> list[str]:
    similarity = {c["memory_id"]: c["similarity"] for c in ctx.near_duplicates}
    ids = []
    for item in plan.get("escalations", []):
        evidence = {"similarity": similarity.get(item["candidate_id"]), "reason": item["reason"], "job_id": ctx.job_id}
        row = conn.execute(_INSERT_ESCALATION, {
            "org_id": ctx.org_id, "agent_id": ctx.agent_id, "memory_id": memory_id,
            "candidate_id": item["candidate_id"], "reason": item["reason"],
            "evidence": json.dumps(evidence), "job_id": ctx.job_id}).first()
        if row:
            ids.append(str(row.id))
    return ids
