"""The ``VectorStore`` seam (ADR-0055: near-dup goes through ``search``; its only vector SQL
is ``ibex_worker.store.vectors``, behind the pgvector implementation here).

``search`` returns candidates with similarity >= ``min_similarity``, best first, among
vectors of the same embedding ``model`` only. The pgvector implementation searches the
writing agent's own active rows only: the best
``coarse`` by sign sketch, re-ranked by cosine (``ibex_worker.store.vectors`` says how and why).
The threshold is applied after the top k, never in the WHERE clause (an iterative scan with
a threshold runs to its limit when nothing matches).

With ``since`` (a corpus version), ``search`` looks only at the memories that became
searchable after it, exactly: persist's re-check of what arrived since its unlocked search.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ibex_worker.store import vectors


@dataclass(frozen=True)
class Candidate:
    memory_id: str
    similarity: float


class VectorStore(Protocol):
    def search(self, conn: Any, org_id: str, agent_id: str, vector: Sequence[float], *, model: str,
               min_similarity: float, limit: int, since: int | None = None) -> list[Candidate]: ...


class PgVectorStore:
    def __init__(self, coarse: int = 64) -> None:
        self.coarse = coarse

    def search(self, conn: Any, org_id: str, agent_id: str, vector: Sequence[float], *, model: str,
               min_similarity: float, limit: int, since: int | None = None) -> list[Candidate]:
        if since is not None:
            rows = vectors.nearest_since(conn, org_id, agent_id, vector, model=model, since=since, limit=limit)
        else:
            rows = vectors.nearest(conn, org_id, agent_id, vector, model=model, coarse=max(self.coarse, limit),
                                   limit=limit)
        found = [Candidate(str(row.id), float(row.similarity)) for row in rows]
        return [c for c in found if c.similarity >= min_similarity]
