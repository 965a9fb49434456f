"""Vector search over an agent's active memories (pgvector), read only through
``ibex_worker.adapters.vector_store.PgVectorStore``. Two steps:

1. coarse: an index-only scan of ``memories_agent_bucket_sketch`` (key ``(org_id, agent_id,
   embedding_model, embedding_bucket)``, carrying each row's id and 384-bit sign sketch) ranks
   the agent's rows of the given embedding model by Hamming distance and keeps the best
   ``coarse`` ids, without heap access. ``nearest`` reads every row of the agent (its cost grows
   with the agent's corpus: about 19 ms at 100,000 rows on the benchmark machine);
   ``nearest_in_buckets`` only the rows filed under the given buckets (the centroids nearest
   the query, migration 000017, ``ibex_worker.adapters.centroids``) and the rows filed under none;
2. exact: those rows are re-ranked by true cosine distance and the top ``limit`` returned.

Vectors of another model are never compared (their similarities mean nothing against this
model's); ``ibex reembed`` brings them over. Near-duplicates (cosine > 0.9) differ in few
sign bits, so they rank far inside the coarse cut; with ``coarse`` >= the agent's corpus the
whole-agent search is exact. The bucketed search is approximate: a near duplicate filed under a
centroid farther from the query than the buckets searched is not read (docs/decisions.md,
"Embedding buckets", measures how often). The global HNSW index is never used here: its
filtered search silently misses near-duplicates. The query's sketch is a scalar subquery,
computed once per search: written inline, a prepared statement's generic plan computes it
again for every row it ranks (2.5 times the cost at 100,000 rows). No similarity threshold is
applied here (an iterative scan with a threshold runs to its limit when nothing matches); the
caller filters the top ``limit``.

``nearest_since`` is the exact search over the memories that became searchable after a
given corpus version (``searchable_since``): persist's re-check under the corpus lock, whose
cost follows the writes that arrived meanwhile, not the agent's corpus.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text

EMBEDDING_DIM = 384  # the schema's vector columns: every embedding model must produce this many

_AGENT_ROWS = ("org_id = :org_id AND agent_id = :agent_id AND embedding_model = :model "
               "AND status = 'active' AND deleted_at IS NULL")


def _shortlisted(rows: str) -> Any:
    """The search over ``rows`` (a query of ``id, embedding_bits``): the best ``:coarse`` of them
    by sketch, re-ranked by cosine, the top ``:limit``."""
    return text(
        f"""
        WITH filed AS ({rows}), coarse AS MATERIALIZED (
            SELECT id FROM filed
             ORDER BY embedding_bits <~> (SELECT binary_quantize(CAST(:vector AS vector(384)))::bit(384))
             LIMIT :coarse
        )
        SELECT m.id, 1 - (m.embedding <=> :vector) AS similarity
          FROM memories m JOIN coarse c ON c.id = m.id
         WHERE m.org_id = :org_id AND m.embedding IS NOT NULL
         ORDER BY m.embedding <=> :vector, m.id
         LIMIT :limit
        """
    ).bindparams(bindparam("vector", type_=Vector(EMBEDDING_DIM)))


_NEAREST = _shortlisted(f"SELECT id, embedding_bits FROM memories WHERE {_AGENT_ROWS}")
_NEAREST_IN_BUCKETS = _shortlisted(
    f"SELECT id, embedding_bits FROM memories WHERE {_AGENT_ROWS} AND embedding_bucket = ANY (CAST(:buckets AS smallint[])) "
    f"UNION ALL SELECT id, embedding_bits FROM memories WHERE {_AGENT_ROWS} AND embedding_bucket IS NULL")
_NEAREST_SINCE = text(
    """
    SELECT id, 1 - (embedding <=> :vector) AS similarity FROM memories
     WHERE org_id = :org_id AND agent_id = :agent_id AND searchable_since > :since
       AND status = 'active' AND deleted_at IS NULL AND embedding_model = :model AND embedding IS NOT NULL
     ORDER BY embedding <=> :vector, id
     LIMIT :limit
    """
).bindparams(bindparam("vector", type_=Vector(EMBEDDING_DIM)))

def nearest(conn: Any, org_id: str, agent_id: str, vector: Sequence[float], *, model: str, coarse: int,
            limit: int) -> list[Any]:
    """``(id, similarity)`` of up to ``limit`` of the agent's active memories embedded by
    ``model`` nearest ``vector`` (cosine similarity) among the ``coarse`` best by sketch,
    best first."""
    return conn.execute(_NEAREST, {"org_id": org_id, "agent_id": agent_id, "vector": list(vector), "model": model,
                                   "coarse": coarse, "limit": limit}).all()


def nearest_in_buckets(conn: Any, org_id: str, agent_id: str, vector: Sequence[float], *, model: str,
                       buckets: Sequence[int], coarse: int, limit: int) -> list[Any]:
    """As ``nearest``, among the rows filed under ``buckets`` and the rows filed under none."""
    return conn.execute(_NEAREST_IN_BUCKETS, {"org_id": org_id, "agent_id": agent_id, "vector": list(vector),
                                              "model": model, "buckets": list(buckets), "coarse": coarse,
                                              "limit": limit}).all()


def nearest_since(conn: Any, org_id: str, agent_id: str, vector: Sequence[float], *, model: str, since: int,
                  limit: int) -> list[Any]:
    """``(id, similarity)`` of up to ``limit`` of the agent's active memories embedded by
    ``model`` that became searchable after corpus version ``since``, nearest first (exact)."""
    return conn.execute(_NEAREST_SINCE, {"org_id": org_id, "agent_id": agent_id, "vector": list(vector),
                                         "model": model, "since": since, "limit": limit}).all()


# Memories of the org embedded by a model that has centroids, filed under none (stored before
# the centroids were loaded): ``ibex backfill`` files them, a batch at a time.
_UNFILED = (" FROM memories m WHERE m.org_id = :org_id AND m.embedding_bucket IS NULL AND m.embedding IS NOT NULL "
            "AND m.deleted_at IS NULL AND EXISTS (SELECT 1 FROM embedding_centroids c WHERE c.model = m.embedding_model)")
_UNFILLED = text("SELECT m.id" + _UNFILED + " AND m.id > CAST(:after AS uuid) ORDER BY m.id LIMIT :limit "
                 "FOR UPDATE OF m SKIP LOCKED")
_UNFILLED_COUNT = text("SELECT count(*)" + _UNFILED)
# Naming the model in the SET list runs the trigger that files the embedding (migration 000017).
_FILE = text("UPDATE memories SET embedding_model = embedding_model WHERE org_id = :org_id AND id = ANY(:ids)")


def unfilled(conn: Any, org_id: str, after: str, limit: int) -> list[Any]:
    """Up to ``limit`` memories (``id``) after ``after`` in id order whose embedding is filed
    under no bucket although its model has centroids, locked (rows another transaction holds
    are skipped)."""
    return conn.execute(_UNFILLED, {"org_id": org_id, "after": after, "limit": limit}).all()


def unfilled_count(conn: Any, org_id: str) -> int:
    return int(conn.execute(_UNFILLED_COUNT, {"org_id": org_id}).scalar_one())


def file_in_buckets(conn: Any, org_id: str, memory_ids: Sequence[str]) -> int:
    """File the embeddings of ``memory_ids`` under their nearest centroids; how many rows."""
    return int(conn.execute(_FILE, {"org_id": org_id, "ids": list(memory_ids)}).rowcount)
