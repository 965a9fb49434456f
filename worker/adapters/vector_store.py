"""The ``VectorStore`` seam (ADR-0055: near-dup goes through ``search``, no vector SQL
elsewhere) and its pgvector implementation.

``search`` returns candidates with similarity >= ``min_similarity``, best first. The
pgvector implementation scans the writing agent's own active rows exactly (a btree on
``(org_id, agent_id)`` narrows the scan; the MATERIALIZED CTE keeps the planner from
answering through the global HNSW index, whose filtered search silently misses
near-duplicates). It takes the top k first and applies the threshold afterwards: a
threshold in the WHERE clause makes an iterative scan run to its limit when nothing
matches. Cost follows the agent's corpus; recall is that of an exact search.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text

from worker.adapters.embedder import EMBEDDING_DIM


@dataclass(frozen=True)
class Candidate:
    memory_id: str
    similarity: float


class VectorStore(Protocol):
    def search(self, conn: Any, org_id: str, agent_id: str, vector: Sequence[float], *,
               min_similarity: float, limit: int) -> list[Candidate]: ...


_EXACT_SCAN = text(
    """
    WITH scoped AS MATERIALIZED (
        SELECT id, embedding FROM memories
         WHERE org_id = :org_id AND agent_id = :agent_id
           AND status = 'active' AND deleted_at IS NULL AND embedding IS NOT NULL
    )
    SELECT id, 1 - (embedding <=> :vector) AS similarity
      FROM scoped
     ORDER BY embedding <=> :vector, id
     LIMIT :limit
    """
).bindparams(bindparam("vector", type_=Vector(EMBEDDING_DIM)))


class PgVectorStore:
    def search(self, conn: Any, org_id: str, agent_id: str, vector: Sequence[float], *,
               min_similarity: float, limit: int) -> list[Candidate]:
        rows = conn.execute(_EXACT_SCAN, {"org_id": org_id, "agent_id": agent_id,
                                          "vector": list(vector), "limit": limit})
        found = [Candidate(str(row.id), float(row.similarity)) for row in rows]
        return [c for c in found if c.similarity >= min_similarity]
