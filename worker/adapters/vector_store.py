"""The ``VectorStore`` seam (ADR-0055: near-dup goes through ``search``, no vector SQL
elsewhere) and its pgvector implementation.

``search`` returns candidates with similarity >= ``min_similarity``, best first. The
pgvector implementation searches the writing agent's own active rows only, in two steps:

1. coarse: an index-only scan of ``memories_agent_active_sketch`` (key ``(org_id,
   agent_id)``, carrying each row's id and 384-bit sign sketch) ranks the agent's rows by
   Hamming distance and keeps the best ``coarse`` ids - no heap access, so the cost barely
   grows with the agent's corpus;
2. exact: those rows are re-ranked by true cosine distance and the top ``limit`` returned.

Near-duplicates (cosine > 0.9) differ in few sign bits, so they rank far inside the coarse
cut; with ``coarse`` >= the agent's corpus the search is exact. The global HNSW index is
never used here: its filtered search silently misses near-duplicates. The threshold is
applied after the top k, never in the WHERE clause (an iterative scan with a threshold runs
to its limit when nothing matches).
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


_SEARCH = text(
    """
    WITH coarse AS MATERIALIZED (
        SELECT id FROM memories
         WHERE org_id = :org_id AND agent_id = :agent_id AND status = 'active' AND deleted_at IS NULL
         ORDER BY embedding_bits <~> binary_quantize(CAST(:vector AS vector(384)))::bit(384)
         LIMIT :coarse
    )
    SELECT m.id, 1 - (m.embedding <=> :vector) AS similarity
      FROM memories m JOIN coarse c ON c.id = m.id
     WHERE m.org_id = :org_id AND m.embedding IS NOT NULL
     ORDER BY m.embedding <=> :vector, m.id
     LIMIT :limit
    """
).bindparams(bindparam("vector", type_=Vector(EMBEDDING_DIM)))


class PgVectorStore:
    def __init__(self, coarse: int = 64) -> None:
        self.coarse = coarse

    def search(self, conn: Any, org_id: str, agent_id: str, vector: Sequence[float], *,
               min_similarity: float, limit: int) -> list[Candidate]:
        rows = conn.execute(_SEARCH, {"org_id": org_id, "agent_id": agent_id, "vector": list(vector),
                                      "coarse": max(self.coarse, limit), "limit": limit})
        found = [Candidate(str(row.id), float(row.similarity)) for row in rows]
        return [c for c in found if c.similarity >= min_similarity]
