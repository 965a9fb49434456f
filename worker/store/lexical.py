"""Candidates of the lexical near-duplicate signal (``ibex_worker.lexical``), from the store:
an agent's active memories that share a MinHash band with a text (the bands already carry
the org and agent) or its word-set fingerprint, most shared bands first, with their content
(for the exact similarity) and their embedding similarity to the text's vector, when both
have one of the same model.

A band's hash includes its position, so two texts share band ``i`` only at position ``i``:
rows are found position by position (one expression index per position, migration 000015:
``lexical_bands[i] = band`` is leakproof, so the index serves the tenant role under
row-level security, where the GIN index's ``&&`` cannot and the lookup read the whole
table), the count of shared bands is a sum of ``BANDS`` equalities, and the content and
embedding similarity are read for the kept rows only.

On an agent of templated text a band cut from the template is shared by thousands of rows
(a new text shares one with a tenth of a 100,000-row corpus). Such a band tells a near
duplicate from a sibling of the same template nothing, and reading all its rows made the
lookup follow the agent's corpus. So the rows are looked up by the text's *rare* bands
only: those carried by at most ``RARE_BAND_ROWS`` of the agent's active memories
(``memory_lexical_band_counts``, kept by a trigger; a band without a count reads as rare),
plus the same fingerprint; the rows found are still ranked by all the bands they share.
When every band is frequent, the rows of the two rarest are looked up, at most
``FALLBACK_ROWS``. The cost is bounded by ``BANDS * RARE_BAND_ROWS`` rows whatever the
corpus; candidate recall on the dev pairs and against today's full lookup: docs/decisions.md,
"A large agent". Persist's re-check (``since``) reads the few rows that arrived meanwhile,
every band."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, BIGINT, UUID

from ibex_worker.lexical import BANDS
from ibex_worker.store.vectors import EMBEDDING_DIM

RARE_BAND_ROWS = 1000   # a band carried by more of the agent's active memories is not looked up
FALLBACK_ROWS = 1000    # rows read from the two rarest bands when no band is rare

_SHARED = " + ".join(f"coalesce((lexical_bands[{i + 1}] = :band_{i})::int, 0)" for i in range(BANDS))
_ACTIVE = "org_id = :org_id AND agent_id = :agent_id AND status = 'active' AND deleted_at IS NULL"
_FINAL = """
    SELECT m.id, m.content, m.content_hash, m.lexical_fingerprint, m.redaction_tags,
           CASE WHEN m.embedding_model = :model AND m.embedding IS NOT NULL
                THEN 1 - (m.embedding <=> :vector) END AS similarity
      FROM ranked r JOIN memories m ON m.id = r.id
     WHERE m.org_id = :org_id
     ORDER BY r.shared DESC, m.id
    """
# A band's count is read by its key, one primary-key probe per band: a join of the bands
# with the org's counts was planned as a scan of all of them while the table's statistics
# were young (0.9 ms of a write at 2,400 counts, and growing with the org).
# Each of the text's bands that is rare, else NULL, by position ("rare" below); one
# expression index per position (migration 000015) serves ``lexical_bands[i] = band``, whose
# operators are leakproof, so the index is usable under row-level security (the GIN index's
# ``&&`` is not: as the tenant role that lookup read every row of the table). A NULL key
# matches nothing, so a frequent band costs one index descent.
_RARE_AT = " OR ".join(f"lexical_bands[{i + 1}] = (SELECT bands[{i + 1}] FROM rare)" for i in range(BANDS))
_FALLBACK_AT = " OR ".join(f"lexical_bands[{i + 1}] = (SELECT fallback[{i + 1}] FROM rare)" for i in range(BANDS))
_SELECT = f"""
    WITH counted AS MATERIALIZED (
        SELECT b.band, b.pos,
               coalesce((SELECT k.n FROM memory_lexical_band_counts k WHERE k.org_id = :org_id AND k.band = b.band),
                        0) AS n
          FROM unnest(:bands) WITH ORDINALITY AS b(band, pos)
    ), rare AS MATERIALIZED (
        SELECT array_agg(CASE WHEN n <= :rare_rows THEN band END ORDER BY pos) AS bands,
               array_agg(CASE WHEN pos IN (SELECT pos FROM counted ORDER BY n, pos LIMIT 2) THEN band END
                         ORDER BY pos) AS fallback,
               bool_or(n <= :rare_rows) AS any_rare
          FROM counted
    ), found AS (
        SELECT id, lexical_bands FROM memories
         WHERE {_ACTIVE} AND ({_RARE_AT} OR lexical_fingerprint = :fingerprint)
        UNION
        (SELECT id, lexical_bands FROM memories
          WHERE {_ACTIVE} AND NOT coalesce((SELECT any_rare FROM rare), true) AND ({_FALLBACK_AT})
          LIMIT :fallback_rows)
    ), ranked AS MATERIALIZED (
        SELECT id, {_SHARED} AS shared FROM found
         ORDER BY shared DESC, id
         LIMIT :limit
    )""" + _FINAL
# Persist's re-check under the corpus lock: only what became searchable since (the
# memories_agent_searchable_since index), so its cost follows the writes that arrived
# meanwhile; every band (there are few such rows).
_SELECT_SINCE = f"""
    WITH ranked AS MATERIALIZED (
        SELECT id, {_SHARED} AS shared FROM memories
         WHERE {_ACTIVE} AND (lexical_bands && :bands OR lexical_fingerprint = :fingerprint)
           AND searchable_since > :since
         ORDER BY shared DESC, id
         LIMIT :limit
    )""" + _FINAL
_TYPES = (bindparam("vector", type_=Vector(EMBEDDING_DIM)), bindparam("bands", type_=ARRAY(BIGINT)))
_CANDIDATES = text(_SELECT).bindparams(*_TYPES)
_CANDIDATES_SINCE = text(_SELECT_SINCE).bindparams(*_TYPES)
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
              "vector": vector, "model": model, "limit": limit, "rare_rows": RARE_BAND_ROWS,
              "fallback_rows": FALLBACK_ROWS,
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
