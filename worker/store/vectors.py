"""Vector search over an agent's active memories (pgvector), read only through
``ibex_worker.adapters.vector_store.PgVectorStore``. Two steps:

1. coarse: an index-only scan of ``memories_agent_active_sketch`` (key ``(org_id,
   agent_id, embedding_model)``, carrying each row's id and 384-bit sign sketch) ranks the
   agent's rows of the given embedding model by Hamming distance and keeps the best
   ``coarse`` ids, without heap access (its cost grows with the agent's corpus: about
   19 ms at 100,000 rows on the benchmark machine);
2. exact: those rows are re-ranked by true cosine distance and the top ``limit`` returned.

Vectors of another model are never compared (their similarities mean nothing against this
model's); ``ibex reembed`` brings them over. Near-duplicates (cosine > 0.9) differ in few
sign bits, so they rank far inside the coarse cut; with ``coarse`` >= the agent's corpus the
search is exact. The global HNSW index is never used here: its filtered search silently
misses near-duplicates. The query's sketch is a scalar subquery, computed once per search:
written inline, a prepared statement's generic plan computes it again for every row it
ranks (2.5 times the cost at 100,000 rows). No similarity threshold is applied here (an
iterative scan with a threshold runs to its limit when nothing matches); the caller
filters the top ``limit``.

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

_NEAREST = text(
    """
    WITH coarse AS MATERIALIZED (
        SELECT id FROM memories
         WHERE org_id = :org_id AND agent_id = :agent_id AND embedding_model = :model
           AND status = 'active' AND deleted_at IS NULL
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


def nearest_since(conn: Any, org_id: str, agent_id: str, vector: Sequence[float], *, model: str, since: int,
                  limit: int) -> list[Any]:
    """``(id, similarity)`` of up to ``limit`` of the agent's active memories embedded by
    ``model`` that became searchable after corpus version ``since``, nearest first (exact)."""
    return conn.execute(_NEAREST_SINCE, {"org_id": org_id, "agent_id": agent_id, "vector": list(vector),
                                         "model": model, "since": since, "limit": limit}).all()
