"""Candidates of the lexical near-duplicate signal (``ibex_worker.lexical``), from the store:
an agent's active memories that share a MinHash band with a text (the GIN index on
``lexical_bands``; the bands already carry the org and agent) or its word-set fingerprint,
most shared bands first, with their content (for the exact similarity) and their embedding
similarity to the text's vector, when both have one of the same model.

A band's hash includes its position, so two texts share band ``i`` only at position ``i``:
the count of shared bands is a sum of ``BANDS`` equalities of array elements against
scalar parameters (half the cost of intersecting the two arrays row by row), and the
content and embedding similarity are read for the kept rows only. The count still runs over
every row that shares a band: on an agent of templated text that is a tenth of its corpus
(ops/bench/RESULTS.md, section 7)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, BIGINT, UUID

from ibex_worker.lexical import BANDS
from ibex_worker.store.vectors import EMBEDDING_DIM

_SHARED = " + ".join(f"coalesce((lexical_bands[{i + 1}] = :band_{i})::int, 0)" for i in range(BANDS))
_SELECT = """
    WITH ranked AS MATERIALIZED (
        SELECT id, %s AS shared FROM memories
         WHERE org_id = :org_id AND agent_id = :agent_id AND status = 'active' AND deleted_at IS NULL
           AND (lexical_bands && :bands OR lexical_fingerprint = :fingerprint) {since}
         ORDER BY shared DESC, id
         LIMIT :limit
    )
    SELECT m.id, m.content, m.content_hash, m.lexical_fingerprint, m.redaction_tags,
           CASE WHEN m.embedding_model = :model AND m.embedding IS NOT NULL
                THEN 1 - (m.embedding <=> :vector) END AS similarity
      FROM ranked r JOIN memories m ON m.id = r.id
     WHERE m.org_id = :org_id
     ORDER BY r.shared DESC, m.id
    """ % _SHARED
_TYPES = (bindparam("vector", type_=Vector(EMBEDDING_DIM)), bindparam("bands", type_=ARRAY(BIGINT)))
_CANDIDATES = text(_SELECT.format(since="")).bindparams(*_TYPES)
# Persist's re-check under the corpus lock: only what became searchable since (the
# memories_agent_searchable_since index), so its cost follows the writes that arrived meanwhile.
_CANDIDATES_SINCE = text(_SELECT.format(since="AND searchable_since > :since")).bindparams(*_TYPES)
_UNFILLED = text(
    "SELECT id, agent_id, content FROM memories WHERE org_id = :org_id AND lexical_bands IS NULL "
    "AND deleted_at IS NULL AND id > CAST(:after AS uuid) ORDER BY id LIMIT :limit FOR UPDATE SKIP LOCKED"
)
_UNFILLED_COUNT = text(
    "SELECT count(*) FROM memories WHERE org_id = :org_id AND lexical_bands IS NULL AND deleted_at IS NULL"
)
_FILL = text(
    "UPDATE memories SET lexical_fingerprint = :fingerprint, lexical_bands = CAST(:bands AS bigint[]) "
    "WHERE org_id = :org_id AND id = :id AND lexical_bands IS NULL"
)
_ROWS = text(
    "SELECT id, content, content_hash, lexical_fingerprint, redaction_tags FROM memories "
    "WHERE org_id = :org_id AND id = ANY(:ids)"
).bindparams(bindparam("ids", type_=ARRAY(UUID(as_uuid=False))))


def candidates(conn: Any, org_id: str, agent_id: str, bands: Sequence[int], fingerprint: str,
               vector: Sequence[float] | None, model: str | None, limit: int, since: int | None = None) -> list[Any]:
    """Up to ``limit`` rows (``id, content, content_hash, lexical_fingerprint, similarity``);
    with ``since``, among the memories that became searchable after that corpus version."""
    params = {"org_id": org_id, "agent_id": agent_id, "bands": list(bands), "fingerprint": fingerprint,
              "vector": vector, "model": model, "limit": limit,
              **{f"band_{i}": bands[i] if i < len(bands) else None for i in range(BANDS)}}
    if since is None:
        return conn.execute(_CANDIDATES, params).all()
    return conn.execute(_CANDIDATES_SINCE, {**params, "since": since}).all()


def rows(conn: Any, org_id: str, ids: Sequence[str]) -> dict[str, Any]:
    """``{id: row}`` (``id, content, content_hash, lexical_fingerprint``) of those of ``ids`` that exist."""
    return {str(r.id): r for r in conn.execute(_ROWS, {"org_id": org_id, "ids": list(ids)})}


def unfilled(conn: Any, org_id: str, after: str, limit: int) -> list[Any]:
    """Up to ``limit`` memories (``id, agent_id, content``) after ``after`` in id order whose
    lexical signal is not filled, locked (rows another transaction holds are skipped)."""
    return conn.execute(_UNFILLED, {"org_id": org_id, "after": after, "limit": limit}).all()


def unfilled_count(conn: Any, org_id: str) -> int:
    return int(conn.execute(_UNFILLED_COUNT, {"org_id": org_id}).scalar_one())


def fill(conn: Any, org_id: str, memory_id: str, profile: Any) -> None:
    """Store a memory's ``ibex_worker.lexical.Profile``, unless it is filled already."""
    conn.execute(_FILL, {"org_id": org_id, "id": memory_id, "fingerprint": profile.fingerprint,
                         "bands": profile.bands})
