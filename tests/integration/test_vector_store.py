"""The pgvector ``VectorStore``: scoped to one org and agent's active rows, exact ranking of a
sketch-ranked shortlist, and a plan that reads the covering index only."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text

from tests.conftest import new_scope
from ibex_worker.adapters.vector_store import PgVectorStore
from ibex_worker.db import tenant_tx

_INSERT = text(
    "INSERT INTO memories (org_id, agent_id, content, content_hash, source, status, embedding, embedding_model) "
    "VALUES (:org, :agent, :content, :hash, 'test', :status, :embedding, :model) RETURNING id"
).bindparams(bindparam("embedding", type_=Vector(384)))
MODEL = "test-model"


def _unit(v):
    return (v / np.linalg.norm(v)).astype(np.float32)


def _store(engine, org, agent, vector, status="active", model=MODEL):
    content = f"row {np.random.default_rng().integers(1 << 60)}"
    with tenant_tx(engine, org) as conn:
        return str(conn.execute(_INSERT, {"org": org, "agent": agent, "content": content, "status": status,
                                          "hash": hashlib.sha256(content.encode()).hexdigest(),
                                          "embedding": vector.tolist(), "model": model}).scalar_one())


@pytest.fixture
def corpus(engine):
    rng = np.random.default_rng(42)
    org, agent = new_scope(), new_scope("agent")
    probe = _unit(rng.normal(size=384))
    twin = _unit(probe + rng.normal(scale=0.012, size=384))  # cosine ~0.97 to the probe
    for _ in range(300):
        _store(engine, org, agent, _unit(rng.normal(size=384)))
    twin_id = _store(engine, org, agent, twin)
    return org, agent, probe, twin, twin_id


def test_a_near_duplicate_is_found_even_when_the_shortlist_is_far_smaller_than_the_corpus(engine, corpus):
    org, agent, probe, twin, twin_id = corpus
    with tenant_tx(engine, org) as conn:
        found = PgVectorStore(coarse=16).search(conn, org, agent, probe.tolist(), model=MODEL,
                                                 min_similarity=0.92, limit=10)
    assert [c.memory_id for c in found] == [twin_id]
    assert found[0].similarity == pytest.approx(float(np.dot(probe, twin)), abs=1e-5)


def test_search_sees_only_active_rows_of_its_own_org_agent_and_embedding_model(engine, corpus):
    org, agent, probe, twin, twin_id = corpus
    other_org, other_agent = new_scope(), new_scope("agent")
    _store(engine, other_org, agent, twin)
    _store(engine, org, other_agent, twin)
    _store(engine, org, agent, twin, status="quarantined")
    _store(engine, org, agent, twin, status="superseded")
    _store(engine, org, agent, probe, model="another-model")  # identical vector, other model
    with tenant_tx(engine, org) as conn:
        found = PgVectorStore().search(conn, org, agent, probe.tolist(), model=MODEL, min_similarity=0.5, limit=10)
    assert [c.memory_id for c in found] == [twin_id]


def test_the_shortlist_comes_from_an_index_only_scan_of_the_agent_sketch_index(engine, corpus):
    org, agent, probe, _, _ = corpus
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM (ANALYZE) memories"))
        plan = "\n".join(row[0] for row in conn.execute(text(
            "EXPLAIN SELECT id FROM memories WHERE org_id = :o AND agent_id = :a AND embedding_model = :m "
            "AND status = 'active' AND deleted_at IS NULL "
            "ORDER BY embedding_bits <~> binary_quantize(CAST(:v AS vector(384)))::bit(384) "
            "LIMIT 64"), {"o": org, "a": agent, "m": MODEL, "v": str(probe.tolist())}))
    assert "Index Only Scan using memories_agent_bucket_sketch" in plan, plan
