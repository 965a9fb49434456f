"""Persist's re-check under the agent's corpus lock, on PostgreSQL: when the corpus changed
after near_dedup searched it, persist searches only the memories that became searchable
since (``scope: since``), keeps the earlier candidates that are still searchable, and runs
the whole search again only when a full candidate list lost one (``scope: full``).

The stage functions run on real job rows, claimed with a lease; the vectors are fixed so
the similarities are known."""

from __future__ import annotations

import json
import math
from typing import Any

from sqlalchemy import text

from tests.conftest import make_settings, new_scope, query
from ibex_worker import review
from ibex_worker.adapters.vector_store import PgVectorStore
from ibex_worker.db import tenant_tx
from ibex_worker.pipeline import near_dedup, persist
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.pipeline.exact_dedup import content_hash
from ibex_worker.store import jobs

MODEL = "stand-in"


def _vector(tilt: float) -> list[float]:
    """A unit vector at angle ``tilt`` (radians) from the first axis, towards the second."""
    v = [0.0] * 384
    v[0], v[1] = math.cos(tilt), math.sin(tilt)
    return v


def _job(engine: Any, org: str, agent: str, content: str, tilt: float) -> WriteContext:
    """A claimed job as embed leaves it: redacted content, hash and vector in its context."""
    with tenant_tx(engine, org) as conn:
        job_id = jobs.insert_job(conn, org, agent, content, {"source": "chat"}, None, queue="recheck.near_dedup")
        conn.execute(text("UPDATE memory_write_jobs SET stage = 'near_dedup', raw_content = NULL, "
                          "context = CAST(:c AS jsonb) WHERE id = :j"), {"j": job_id, "c": json.dumps({})})
        [row] = jobs.claim(conn, [job_id], "near_dedup", 60)
    ctx = WriteContext.from_row(row)
    ctx.content, ctx.content_hash = content, content_hash(content)
    ctx.embedding, ctx.embedding_model = _vector(tilt), MODEL
    return ctx


def _deps(infra: Any, engine: Any, **overrides: Any) -> StageDeps:
    return StageDeps(settings=make_settings(infra, **overrides), engine=engine, vector_store=PgVectorStore(64))


def _store(engine: Any, deps: StageDeps, org: str, agent: str, content: str, tilt: float) -> str:
    ctx = near_dedup.run(_job(engine, org, agent, content, tilt), deps)
    return persist.run(ctx, deps).memory_id


def _recheck(ctx: WriteContext) -> dict[str, Any]:
    [decision] = [d for d in ctx.decisions if d["stage"] == "persist" and d["result"] == "recomputed"]
    return decision


def _linked(engine: Any, org: str, memory_id: str) -> list[str]:
    rows = query(engine, "SELECT target_memory_id FROM memory_relationships WHERE org_id = :o "
                         "AND source_memory_id = :m AND relationship_type = 'near_duplicate_of'", o=org, m=memory_id)
    return sorted(str(r.target_memory_id) for r in rows)


def test_a_near_duplicate_stored_after_the_search_is_found_by_the_recheck_of_what_arrived(infra, engine):
    deps = _deps(infra, engine)
    org, agent = new_scope(), new_scope("agent")
    old = _store(engine, deps, org, agent, "The office closes at six.", 1.2)  # far from both below
    first = near_dedup.run(_job(engine, org, agent, "The build runs nightly at two.", 0.0), deps)
    second = near_dedup.run(_job(engine, org, agent, "The build runs nightly at 2am.", 0.05), deps)
    assert first.near_duplicates == [] and second.near_duplicates == []  # both searched before either stored

    first_id = persist.run(first, deps).memory_id
    second_id = persist.run(second, deps).memory_id

    decision = _recheck(second)
    assert decision["scope"] == "since" and decision["current_version"] > decision["read_version"]
    assert [c["memory_id"] for c in second.near_duplicates] == [first_id]
    assert second.near_duplicates[0]["similarity"] > 0.99
    assert _linked(engine, org, second_id) == [first_id] and old not in _linked(engine, org, second_id)


def test_a_candidate_deleted_after_the_search_is_dropped_without_searching_the_corpus_again(infra, engine):
    deps = _deps(infra, engine)
    org, agent = new_scope(), new_scope("agent")
    gone = _store(engine, deps, org, agent, "Invoices go out on the first.", 0.0)
    kept = _store(engine, deps, org, agent, "Invoices go out on the 1st.", 0.1)
    ctx = near_dedup.run(_job(engine, org, agent, "Invoices are sent on the first.", 0.05), deps)
    assert sorted(c["memory_id"] for c in ctx.near_duplicates) == sorted([gone, kept])

    assert review.delete(engine, org, gone, "cli:test")
    memory_id = persist.run(ctx, deps).memory_id

    assert _recheck(ctx)["scope"] == "since"
    assert [c["memory_id"] for c in ctx.near_duplicates] == [kept]
    assert _linked(engine, org, memory_id) == [kept]


def test_a_full_candidate_list_that_lost_one_is_searched_again_whole(infra, engine):
    deps = _deps(infra, engine, near_duplicate_candidate_limit=2)
    org, agent = new_scope(), new_scope("agent")
    nearest = _store(engine, deps, org, agent, "Backups run at midnight.", 0.0)
    second = _store(engine, deps, org, agent, "Backups run at 00:00.", 0.03)
    beyond = _store(engine, deps, org, agent, "Backups start at midnight.", 0.2)  # past the cut of two
    ctx = near_dedup.run(_job(engine, org, agent, "Backups run at 12 midnight.", 0.01), deps)
    assert [c["memory_id"] for c in ctx.near_duplicates] == [nearest, second]

    assert review.delete(engine, org, nearest, "cli:test")
    memory_id = persist.run(ctx, deps).memory_id

    assert _recheck(ctx)["scope"] == "full"
    assert [c["memory_id"] for c in ctx.near_duplicates] == [second, beyond]
    assert _linked(engine, org, memory_id) == sorted([second, beyond])


def test_the_recheck_sees_only_the_writing_agents_memories(infra, engine):
    deps = _deps(infra, engine)
    org, agent, other = new_scope(), new_scope("agent"), new_scope("agent")
    ctx = near_dedup.run(_job(engine, org, agent, "Deploys freeze on Fridays.", 0.0), deps)
    _store(engine, deps, org, other, "Deploys freeze on Friday.", 0.01)  # another agent's corpus
    own = _store(engine, deps, org, agent, "Deploys are frozen on Fridays.", 0.02)

    persist.run(ctx, deps)

    assert _recheck(ctx)["scope"] == "since"
    assert [c["memory_id"] for c in ctx.near_duplicates] == [own]
