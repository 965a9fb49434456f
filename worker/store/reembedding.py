"""Re-embedding after an embedding-model change: which memories still carry a vector of
another model, and replacing a memory's vector (guarded on its content hash, so a vector is
only ever stored for the text it was computed from)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, UUID

from ibex_worker.store.vectors import EMBEDDING_DIM

_STALE = ("org_id = :org_id AND embedding IS NOT NULL AND deleted_at IS NULL "
          "AND embedding_model IS DISTINCT FROM :model")
_AGENT = "(CAST(:agent_id AS text) IS NULL OR agent_id = :agent_id)"
_COUNT_STALE = text(f"SELECT count(*) FROM memories WHERE {_STALE} AND {_AGENT}")
_NEXT_STALE = text(
    f"SELECT id FROM memories WHERE {_STALE} AND {_AGENT} "
    "AND (CAST(:after AS uuid) IS NULL OR id > CAST(:after AS uuid)) ORDER BY id LIMIT :limit"
)
_STALE_AMONG = text(
    f"SELECT id, agent_id, content, content_hash FROM memories WHERE {_STALE} AND id = ANY(:ids) ORDER BY id"
).bindparams(bindparam("ids", type_=ARRAY(UUID(as_uuid=False))))
_COUNT_STALE_AMONG = text(f"SELECT count(*) FROM memories WHERE {_STALE} AND id = ANY(:ids)").bindparams(
    bindparam("ids", type_=ARRAY(UUID(as_uuid=False))))
_SET_VECTOR = text(
    f"UPDATE memories SET embedding = :embedding, embedding_model = :model, searchable_since = :searchable_since, "
    f"updated_at = now() "
    f"WHERE {_STALE} AND id = :id AND content_hash = :content_hash"
).bindparams(bindparam("embedding", type_=Vector(EMBEDDING_DIM)))


def count_stale(conn: Any, org_id: str, model: str, agent_id: str | None = None) -> int:
    """How many of the org's (or agent's) memories hold a vector of another model than ``model``."""
    return int(conn.execute(_COUNT_STALE, {"org_id": org_id, "model": model, "agent_id": agent_id}).scalar_one())


def next_stale(conn: Any, org_id: str, model: str, agent_id: str | None, after: str | None, limit: int) -> list[str]:
    """Up to ``limit`` ids of such memories after ``after``, in id order."""
    return [str(r.id) for r in conn.execute(_NEXT_STALE, {"org_id": org_id, "model": model, "agent_id": agent_id,
                                                          "after": after, "limit": limit})]


def stale_among(conn: Any, org_id: str, model: str, memory_ids: Sequence[str]) -> list[Any]:
    """Those of ``memory_ids`` still holding another model's vector: id, agent_id, content, content_hash."""
    return list(conn.execute(_STALE_AMONG, {"org_id": org_id, "model": model, "ids": list(memory_ids)}))


def count_stale_among(conn: Any, org_id: str, model: str, memory_ids: Sequence[str]) -> int:
    return int(conn.execute(_COUNT_STALE_AMONG, {"org_id": org_id, "model": model, "ids": list(memory_ids)}).scalar_one())


def set_vector(conn: Any, org_id: str, memory_id: str, content_hash: str, vector: Sequence[float], model: str,
               searchable_since: int) -> bool:
    """Store ``model``'s vector of the memory, unless it changed or was deleted meanwhile;
    ``searchable_since`` is the corpus version the caller's bump gives the agent."""
    return conn.execute(_SET_VECTOR, {"org_id": org_id, "id": memory_id, "content_hash": content_hash,
                                      "embedding": list(vector), "model": model,
                                      "searchable_since": searchable_since}).rowcount == 1
