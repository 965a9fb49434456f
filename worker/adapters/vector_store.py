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
With ``corpus`` (the agent's corpus version, at least its count of memories) from
``buckets_from`` on, it reads only the embedding buckets nearest the query (``probes`` of
them, when its model has centroids); one such search in ``audit_every`` also runs the whole-agent search and counts whether
the buckets missed a candidate above the threshold they answer for (``audit_at``, the embedding threshold,
whatever lower floor the search asks for; ``ibex_near_dedup_bucket_audits_total``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from ibex_worker.adapters.centroids import BUCKETS
from ibex_worker.metrics import get_metrics
from ibex_worker.store import vectors

log = structlog.get_logger("ibex.vector_store")


@dataclass(frozen=True)
class Candidate:
    memory_id: str
    similarity: float


class VectorStore(Protocol):
    def search(self, conn: Any, org_id: str, agent_id: str, vector: Sequence[float], *, model: str,
               min_similarity: float, limit: int, since: int | None = None,
               corpus: int | None = None) -> list[Candidate]: ...


class PgVectorStore:
    def __init__(self, coarse: int = 64, *, probes: int = 0, buckets_from: int = 0, audit_every: int = 0,
                 audit_at: float = 0.0) -> None:
        self.coarse, self.probes, self.buckets_from, self.audit_every = coarse, probes, buckets_from, audit_every
        self.audit_at = audit_at  # the similarity the buckets answer for (the embedding threshold)
        self._bucketed = 0

    def search(self, conn: Any, org_id: str, agent_id: str, vector: Sequence[float], *, model: str,
               min_similarity: float, limit: int, since: int | None = None,
               corpus: int | None = None) -> list[Candidate]:
        coarse = max(self.coarse, limit)
        if since is not None:
            rows = vectors.nearest_since(conn, org_id, agent_id, vector, model=model, since=since, limit=limit)
        elif self.probes and corpus is not None and corpus >= self.buckets_from \
                and (buckets := BUCKETS.probes(conn, model, vector, self.probes)) is not None:
            rows = vectors.nearest_in_buckets(conn, org_id, agent_id, vector, model=model, buckets=buckets,
                                              coarse=coarse, limit=limit)
            self._bucketed += 1
            if self.audit_every and self._bucketed % self.audit_every == 0:
                _audit(rows, vectors.nearest(conn, org_id, agent_id, vector, model=model, coarse=coarse, limit=limit),
                       max(min_similarity, self.audit_at))
        else:
            rows = vectors.nearest(conn, org_id, agent_id, vector, model=model, coarse=coarse, limit=limit)
        found = [Candidate(str(row.id), float(row.similarity)) for row in rows]
        return [c for c in found if c.similarity >= min_similarity]


def _audit(bucketed: Sequence[Any], whole: Sequence[Any], min_similarity: float) -> None:
    """Count one comparison of a bucketed search with the whole-agent search: ``missed`` when the
    whole search found a candidate at or above ``min_similarity`` that the buckets did not."""
    found = {str(row.id) for row in bucketed}
    missed = [row for row in whole if float(row.similarity) >= min_similarity and str(row.id) not in found]
    get_metrics().bucket_audit(bool(missed))
    if missed:
        log.warning("near_dedup_bucket_missed", candidates=len(missed))
