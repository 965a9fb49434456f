"""Embedding buckets (migration 000017, ``ibex_worker.adapters.centroids``): the shipped centroids are
loaded by the migrations, every stored embedding is filed under its nearest centroid (by the
writer or by the trigger), and a large agent's search reads only the buckets nearest the query,
the rows filed under none, its own org and agent, through the covering index."""

from __future__ import annotations

import hashlib
import io
import re

import numpy as np
import pytest
from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text

from tests.conftest import new_scope
from ibex_worker import backfill
from ibex_worker.adapters import centroids
from ibex_worker.adapters.vector_store import PgVectorStore
from ibex_worker.adapters.centroids import BUCKETS
from ibex_worker.db import tenant_tx
from ibex_worker.store import vectors

MODEL = "all-MiniLM-L6-v2"  # the model the package ships centroids for
_INSERT = text(
    "INSERT INTO memories (org_id, agent_id, content, content_hash, source, embedding, embedding_model, "
    "embedding_bucket) VALUES (:org, :agent, :content, :hash, 'test', :embedding, :model, :bucket) RETURNING id"
).bindparams(bindparam("embedding", type_=Vector(384)))


@pytest.fixture(scope="module")
def shipped():
    return centroids.shipped()[MODEL]


def _unit(v):
    return (v / np.linalg.norm(v)).astype(np.float32)


def _store(engine, org, agent, vector, bucket=None, model=MODEL):
    content = f"row {np.random.default_rng().integers(1 << 60)}"
    with tenant_tx(engine, org) as conn:
        return str(conn.execute(_INSERT, {"org": org, "agent": agent, "content": content, "model": model,
                                          "hash": hashlib.sha256(content.encode()).hexdigest(),
                                          "embedding": vector.tolist(), "bucket": bucket}).scalar_one())


def _bucket(engine, org, memory_id):
    with tenant_tx(engine, org) as conn:
        return conn.execute(text("SELECT embedding_bucket FROM memories WHERE id = :id"), {"id": memory_id}).scalar()


def _search(engine, org, agent, vector, probes=16, corpus=1_000_000, audit_every=0, min_similarity=0.92,
            audit_at=0.0):
    with tenant_tx(engine, org) as conn:
        return [c.memory_id for c in PgVectorStore(coarse=64, probes=probes, buckets_from=1000,
                                                   audit_every=audit_every, audit_at=audit_at).search(
            conn, org, agent, vector.tolist(), model=MODEL, min_similarity=min_similarity, limit=10, corpus=corpus)]


def test_the_migrations_load_the_shipped_centroids_as_they_are(engine, shipped):
    with tenant_tx(engine, new_scope()) as conn:
        stored = BUCKETS.matrix(conn, MODEL)
    assert stored.shape == shipped.shape == (len(shipped), 384)
    assert np.abs(stored - shipped).max() < 1e-6


def test_every_embedding_is_filed_under_its_nearest_centroid_by_the_writer_or_the_trigger(engine, shipped):
    rng = np.random.default_rng(3)
    org, agent = new_scope(), new_scope("agent")
    for _ in range(20):
        vector = _unit(rng.normal(size=384))
        nearest = int(np.argmax(shipped @ vector))
        with tenant_tx(engine, org) as conn:
            assert BUCKETS.nearest(conn, MODEL, vector) == nearest
        assert _bucket(engine, org, _store(engine, org, agent, vector)) == nearest  # the trigger
    memory_id = _store(engine, org, agent, _unit(rng.normal(size=384)))
    moved = _unit(rng.normal(size=384))
    with tenant_tx(engine, org) as conn:  # a new embedding with the bucket left as it was: filed again
        conn.execute(text("UPDATE memories SET embedding = :v WHERE id = :id").bindparams(
            bindparam("v", type_=Vector(384))), {"v": moved.tolist(), "id": memory_id})
    assert _bucket(engine, org, memory_id) == int(np.argmax(shipped @ moved))
    assert _bucket(engine, org, _store(engine, org, agent, moved, model="a-model-without-centroids")) is None


def test_a_large_agent_is_searched_in_the_buckets_nearest_the_query_only(engine, shipped):
    rng = np.random.default_rng(5)
    org, agent = new_scope(), new_scope("agent")
    probe = _unit(rng.normal(size=384))
    twin = _unit(probe + rng.normal(scale=0.012, size=384))  # cosine ~0.97
    twin_id = _store(engine, org, agent, twin)
    with tenant_tx(engine, org) as conn:
        near = BUCKETS.probes(conn, MODEL, probe, 16)
    far = int(np.argmin(shipped @ probe))
    assert _bucket(engine, org, twin_id) in near and far not in near
    misfiled = _store(engine, org, agent, twin, bucket=far)  # the same vector, filed where no probe looks
    assert _search(engine, org, agent, probe) == [twin_id]
    assert sorted(_search(engine, org, agent, probe, probes=0)) == sorted([twin_id, misfiled])  # whole agent
    assert sorted(_search(engine, org, agent, probe, corpus=999)) == sorted([twin_id, misfiled])  # a small agent


def test_rows_filed_under_no_bucket_are_read_by_every_search_until_the_backfill_files_them(engine, shipped):
    rng = np.random.default_rng(7)
    org, agent = new_scope(), new_scope("agent")
    probe = _unit(rng.normal(size=384))
    twin = _unit(probe + rng.normal(scale=0.012, size=384))
    unfiled = _store(engine, org, agent, twin)
    with tenant_tx(engine, org) as conn:  # as if stored before the centroids were loaded
        conn.execute(text("UPDATE memories SET embedding_bucket = NULL WHERE id = :id"), {"id": unfiled})
        assert vectors.unfilled_count(conn, org) == 1
    assert _search(engine, org, agent, probe) == [unfiled]
    result = backfill.run(engine, org, batch=10, out=io.StringIO())
    assert (result["buckets_filled"], result["buckets_left"]) == (1, 0)
    assert _bucket(engine, org, unfiled) == int(np.argmax(shipped @ twin))
    assert _search(engine, org, agent, probe) == [unfiled]


def test_a_bucketed_search_sees_only_its_own_org_and_agent(engine):
    rng = np.random.default_rng(11)
    org, agent = new_scope(), new_scope("agent")
    probe = _unit(rng.normal(size=384))
    twin = _unit(probe + rng.normal(scale=0.012, size=384))
    _store(engine, new_scope(), agent, twin)
    _store(engine, org, new_scope("agent"), twin)
    assert _search(engine, org, agent, probe) == []


def test_a_sampled_audit_counts_what_the_buckets_missed(engine, shipped):
    from ibex_worker.metrics import get_metrics

    rng = np.random.default_rng(13)
    org, agent = new_scope(), new_scope("agent")
    probe = _unit(rng.normal(size=384))
    _store(engine, org, agent, _unit(probe + rng.normal(scale=0.012, size=384)),
           bucket=int(np.argmin(shipped @ probe)))
    missed = get_metrics().bucket_audits.labels(outcome="missed")
    before = missed._value.get()
    assert _search(engine, org, agent, probe, audit_every=1) == []
    assert missed._value.get() == before + 1


def test_the_audit_counts_only_what_the_buckets_missed_above_the_threshold_they_answer_for(engine, shipped):
    """The search asks for candidates down to the rewording floor (0.70), but the buckets are
    chosen for pairs above the embedding threshold: a rewording's partner at 0.8 outside them is
    no miss of theirs."""
    from ibex_worker.metrics import get_metrics

    rng = np.random.default_rng(19)
    org, agent = new_scope(), new_scope("agent")
    probe = _unit(rng.normal(size=384))
    far = _unit(probe + rng.normal(scale=0.038, size=384))
    assert 0.75 < float(far @ probe) < 0.85
    _store(engine, org, agent, far, bucket=int(np.argmin(shipped @ probe)))
    missed = get_metrics().bucket_audits.labels(outcome="missed")
    before = missed._value.get()
    assert _search(engine, org, agent, probe, audit_every=1, min_similarity=0.70, audit_at=0.92) == []
    assert missed._value.get() == before
    assert _search(engine, org, agent, probe, audit_every=1, min_similarity=0.70) == []
    assert missed._value.get() == before + 1


def test_the_bucketed_shortlist_comes_from_index_only_scans_of_the_bucket_index(engine, shipped):
    """On an agent large enough to be searched in buckets (the planner's estimate for a handful of
    rows is one row, for which any index of the agent's rows ties). The rows filed under none may
    be read by a bitmap scan of the same index when the table's other rows hold many NULLs."""
    org, agent = new_scope(), new_scope("agent")
    rng = np.random.default_rng(17)
    rows = rng.normal(size=(3000, 384)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    filed = (rows @ shipped.T).argmax(axis=1)
    with tenant_tx(engine, org) as conn:
        conn.execute(_INSERT, [{"org": org, "agent": agent, "content": f"row {i}", "model": MODEL,
                                "hash": hashlib.sha256(f"{org} row {i}".encode()).hexdigest(),
                                "embedding": row.tolist(), "bucket": int(bucket)}
                               for i, (row, bucket) in enumerate(zip(rows, filed))])
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM (ANALYZE) memories"))
        plan = "\n".join(row[0] for row in conn.execute(
            text("EXPLAIN " + str(vectors._NEAREST_IN_BUCKETS)).bindparams(bindparam("vector", type_=Vector(384))),
            {"org_id": org, "agent_id": agent, "model": MODEL, "buckets": [int(b) for b in filed[:3]], "coarse": 64,
             "limit": 10, "vector": rows[0].tolist()}))
    probed = re.search(r"Index Only Scan using memories_agent_bucket_sketch on memories\s.*\n.*Index Cond: .*"
                       r"embedding_bucket = ANY", plan)
    unfiled = re.search(r"(?:Index Only Scan using|Bitmap Index Scan on) memories_agent_bucket_sketch.*\n.*"
                        r"Index Cond: .*embedding_bucket IS NULL", plan)
    assert probed and unfiled and "Seq Scan" not in plan, plan  # the rows filed under none: few, by the same index
