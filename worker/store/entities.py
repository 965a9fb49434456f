"""Entities, their aliases and their ``possibly_same_as`` relationships (``entities``,
``entity_aliases``, ``entity_relationships``), and the entity a memory's subject resolved to
(``memories.subject_entity_id``). Queries only: the matching policy is
``ibex_worker.entity_keys`` and ``ibex_worker.entities``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, UUID
from sqlalchemy.types import Text

if TYPE_CHECKING:
    from ibex_worker.entity_keys import Reach

_COLUMNS = "id, name, key, kind, created_by, created_at"
_BY_KEY = (
    "SELECT id, CASE WHEN key = :key THEN 'normalized' ELSE 'alias' END AS rule FROM entities "
    "WHERE org_id = :org_id AND (key = :key OR id = (SELECT entity_id FROM entity_aliases "
    "WHERE org_id = :org_id AND key = :key)) ORDER BY key = :key DESC LIMIT 1"
)
_READ_BY_KEY = text(_BY_KEY)
# A pipeline-made entity no memory names any more goes with the last one: its name came
# from a memory's text, and a deleted memory leaves nothing derived from it behind.
_DROP_ORPHANS = text(
    "DELETE FROM entities e WHERE e.org_id = :org_id AND e.id = ANY(:ids) AND e.created_by = 'system:pipeline' "
    "AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.org_id = e.org_id AND m.subject_entity_id = e.id)"
).bindparams(bindparam("ids", type_=ARRAY(UUID(as_uuid=False))))
# A spelling the typo rule recorded (its alias is the subject as a memory wrote it) goes with
# the last memory that wrote it, like a pipeline-made entity.
_DROP_WRITTEN_ALIASES = text(
    "DELETE FROM entity_aliases a WHERE a.org_id = :org_id AND a.created_by = 'system:pipeline' "
    "AND a.alias IN (SELECT btrim(split_part(subject_key, '|', 1)) FROM memories "
    "WHERE org_id = :org_id AND id = ANY(:ids) AND subject_key IS NOT NULL) "
    "AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.org_id = a.org_id AND m.subject_entity_id = a.entity_id "
    "AND m.id <> ALL(:ids) AND m.deleted_at IS NULL AND btrim(split_part(m.subject_key, '|', 1)) = a.alias)"
).bindparams(bindparam("ids", type_=ARRAY(UUID(as_uuid=False))))
_OF_MEMORIES = text(
    "SELECT DISTINCT subject_entity_id FROM memories WHERE org_id = :org_id AND id = ANY(:ids) "
    "AND subject_entity_id IS NOT NULL"
).bindparams(bindparam("ids", type_=ARRAY(UUID(as_uuid=False))))
_INSERT = text(
    "INSERT INTO entities (org_id, name, key, kind, key_trigrams, created_by) "
    "VALUES (:org_id, :name, :key, :kind, :trigrams, :created_by) "
    "ON CONFLICT (org_id, key) DO NOTHING RETURNING " + _COLUMNS
).bindparams(bindparam("trigrams", type_=ARRAY(Text)))
# The entities sharing one of the key's ``probe`` rarest trigrams whose own count of trigrams
# is in reach (each trigram's rows counted up to ``cap``), through the primary key of
# entity_trigrams, whose `=` and range are leakproof and so serve the tenant role under
# row-level security, the most similar first (the Jaccard index of the two keys' trigrams, as
# ``entity_keys.similarity``).
_ALIKE = text(
    """
    WITH sized AS MATERIALIZED (
        SELECT q.trigram, (SELECT count(*) FROM (SELECT 1 FROM entity_trigrams t
                                                  WHERE t.org_id = :org_id AND t.trigram = q.trigram
                                                    AND t.size BETWEEN :fewest AND :most
                                                  LIMIT :cap) c) AS n
          FROM unnest(CAST(:trigrams AS text[])) AS q(trigram)
    ), probed AS MATERIALIZED (
        SELECT trigram FROM sized ORDER BY n, trigram LIMIT :probe
    ), found AS MATERIALIZED (
        SELECT DISTINCT t.entity_id FROM entity_trigrams t JOIN probed p ON t.trigram = p.trigram
         WHERE t.org_id = :org_id AND t.size BETWEEN :fewest AND :most AND t.entity_id <> :id
    )
    SELECT e.id, e.key FROM entities e
     CROSS JOIN LATERAL (SELECT cardinality(ARRAY(SELECT unnest(e.key_trigrams)
                                                  INTERSECT SELECT unnest(CAST(:trigrams AS text[])))) AS n) shared
     WHERE e.org_id = :org_id AND e.id = ANY(ARRAY(SELECT entity_id FROM found))
     ORDER BY shared.n::float8 / (cardinality(e.key_trigrams) + :count - shared.n) DESC, e.created_at, e.id
     LIMIT :limit
    """
).bindparams(bindparam("trigrams", type_=ARRAY(Text)))
RARITY_CAP = 1000  # rows counted per trigram to tell a rare one from a common one
_LINK = text(
    "INSERT INTO entity_relationships (org_id, source_entity_id, target_entity_id, evidence, decided_by) "
    "VALUES (:org_id, :source, :target, CAST(:evidence AS jsonb), :decided_by) ON CONFLICT DO NOTHING"
)
_GET = text(f"SELECT {_COLUMNS} FROM entities WHERE org_id = :org_id AND id = :id")
_PAGE = text(
    f"SELECT {_COLUMNS} FROM entities WHERE org_id = :org_id "
    "AND (CAST(:after_at AS timestamptz) IS NULL OR (created_at, id) > (:after_at, CAST(:after_id AS uuid))) "
    "ORDER BY created_at, id LIMIT :limit"
)
_DELETE = text("DELETE FROM entities WHERE org_id = :org_id AND id = :id")
_ALIASES = text(
    "SELECT alias, key, created_by, created_at FROM entity_aliases WHERE org_id = :org_id AND entity_id = :id "
    "ORDER BY created_at, key"
)
_ADD_ALIAS = text(
    "INSERT INTO entity_aliases (org_id, entity_id, alias, key, created_by) "
    "VALUES (:org_id, :id, :alias, :key, :created_by) ON CONFLICT (org_id, key) DO NOTHING"
)
# Entity keys and alias keys live in two tables, each unique on its own; a name checked
# absent from both and then inserted into one holds this lock on it, so two transactions
# cannot make one key an entity's and another entity's alias.
_LOCK_NAME = text("SELECT pg_advisory_xact_lock(hashtext(:org_id), hashtext(:key))")
_DELETE_ALIAS = text("DELETE FROM entity_aliases WHERE org_id = :org_id AND entity_id = :id AND key = :key")
_RELATED = text(
    "SELECT source_entity_id, target_entity_id, relationship_type, evidence, decided_by, created_at "
    "FROM entity_relationships WHERE org_id = :org_id AND (source_entity_id = :id OR target_entity_id = :id) "
    "ORDER BY created_at, source_entity_id, target_entity_id"
)
_MEMORY_COUNT = text("SELECT count(*) FROM memories WHERE org_id = :org_id AND subject_entity_id = :id "
                     "AND deleted_at IS NULL")
_SET_MEMORY = text("UPDATE memories SET subject_entity_id = :entity_id, "
                   "subject_aspect = COALESCE(:aspect, subject_aspect) WHERE org_id = :org_id AND id = :id")
_SAME_ASPECT = text(
    "SELECT id, content, valid_from, valid_until, subject_key, subject_entity_id, subject_aspect, redaction_tags "
    "FROM memories WHERE org_id = :org_id AND agent_id = :agent_id AND subject_entity_id = :entity_id "
    "AND subject_aspect = :aspect "
    "AND status = 'active' AND deleted_at IS NULL AND subject_aspect IS NOT NULL AND valid_from IS NOT NULL "
    "ORDER BY valid_from DESC, id LIMIT :limit"
)
# Memories whose subject names an entity (not empty, no placeholder) and have none yet.
_UNFILLED_WHERE = ("org_id = :org_id AND subject_entity_id IS NULL AND subject_key IS NOT NULL AND deleted_at IS NULL "
                   "AND status <> 'quarantined' AND split_part(subject_key, '|', 1) <> '' AND strpos(split_part(subject_key, '|', 1), '[') = 0")
_UNFILLED = text(
    f"SELECT id, subject_key FROM memories WHERE {_UNFILLED_WHERE} "
    "AND id > CAST(:after AS uuid) ORDER BY id LIMIT :limit FOR UPDATE SKIP LOCKED"
)
_UNFILLED_COUNT = text(f"SELECT count(*) FROM memories WHERE {_UNFILLED_WHERE}")


def lock_names(conn: Any, org_id: str, keys: Sequence[str]) -> None:
    """Hold each key against other writers of entity names until the transaction ends (in
    sorted order, so two writers of several keys cannot deadlock)."""
    for name_key in sorted(set(keys)):
        conn.execute(_LOCK_NAME, {"org_id": org_id, "key": name_key})


def by_key(conn: Any, org_id: str, key: str) -> Any:
    """``id, rule`` of the entity ``key`` names (its own key first, then an alias), or None."""
    return conn.execute(_READ_BY_KEY, {"org_id": org_id, "key": key}).first()


def of_memories(conn: Any, org_id: str, memory_ids: Sequence[str]) -> list[str]:
    """The entities those memories' subjects resolved to."""
    return [str(r.subject_entity_id) for r in conn.execute(_OF_MEMORIES, {"org_id": org_id,
                                                                          "ids": list(memory_ids)})]


def drop_written_aliases(conn: Any, org_id: str, memory_ids: Sequence[str]) -> int:
    """Before those memories go: delete the aliases the pipeline recorded from their subjects
    that no other memory wrote; how many."""
    return conn.execute(_DROP_WRITTEN_ALIASES, {"org_id": org_id, "ids": list(memory_ids)}).rowcount


def drop_orphans(conn: Any, org_id: str, entity_ids: Sequence[str]) -> int:
    """Delete those of the entities the pipeline made that no memory names; how many."""
    if not entity_ids:
        return 0
    return conn.execute(_DROP_ORPHANS, {"org_id": org_id, "ids": list(entity_ids)}).rowcount


def insert(conn: Any, org_id: str, name: str, key: str, kind: str, trigrams: Sequence[str],
           created_by: str) -> Any:
    """The new entity's row, or None when an entity of that key exists already."""
    return conn.execute(_INSERT, {"org_id": org_id, "name": name, "key": key, "kind": kind,
                                  "trigrams": sorted(trigrams), "created_by": created_by}).first()


def alike(conn: Any, org_id: str, entity_id: str, trigrams: Sequence[str], reach: Reach | None,
          limit: int) -> list[Any]:
    """``id, key`` of at most ``limit`` other entities among those in ``reach`` of a key of
    these ``trigrams`` (every one in reach is read: it shares one of the ``len - shared + 1``
    rarest), most similar first; none when ``reach`` is None."""
    distinct = sorted(set(trigrams))
    if reach is None or not distinct:
        return []
    return conn.execute(_ALIKE, {"org_id": org_id, "id": entity_id, "trigrams": distinct,
                                 "probe": max(1, len(distinct) - reach.shared + 1), "fewest": reach.fewest,
                                 "most": reach.most, "cap": RARITY_CAP, "count": len(distinct),
                                 "limit": limit}).all()


def link(conn: Any, org_id: str, source: str, target: str, evidence: dict[str, Any], decided_by: str) -> None:
    conn.execute(_LINK, {"org_id": org_id, "source": source, "target": target,
                         "evidence": json.dumps(evidence), "decided_by": decided_by})


def get(conn: Any, org_id: str, entity_id: str) -> Any:
    return conn.execute(_GET, {"org_id": org_id, "id": entity_id}).first()


def page(conn: Any, org_id: str, after: tuple[Any, Any], limit: int) -> list[Any]:
    """``limit`` entities after ``(created_at, id)``, oldest first."""
    return conn.execute(_PAGE, {"org_id": org_id, "after_at": after[0], "after_id": after[1],
                                "limit": limit}).all()


def delete(conn: Any, org_id: str, entity_id: str) -> bool:
    """The entity gone with its aliases and relationships; memories keep no entity."""
    return conn.execute(_DELETE, {"org_id": org_id, "id": entity_id}).rowcount == 1


def aliases(conn: Any, org_id: str, entity_id: str) -> list[Any]:
    return conn.execute(_ALIASES, {"org_id": org_id, "id": entity_id}).all()


def add_alias(conn: Any, org_id: str, entity_id: str, alias: str, key: str, created_by: str) -> bool:
    """False when an alias of that key exists already (of this entity or another)."""
    return conn.execute(_ADD_ALIAS, {"org_id": org_id, "id": entity_id, "alias": alias, "key": key,
                                     "created_by": created_by}).rowcount == 1


def delete_alias(conn: Any, org_id: str, entity_id: str, key: str) -> bool:
    return conn.execute(_DELETE_ALIAS, {"org_id": org_id, "id": entity_id, "key": key}).rowcount == 1


def related(conn: Any, org_id: str, entity_id: str) -> list[Any]:
    return conn.execute(_RELATED, {"org_id": org_id, "id": entity_id}).all()


def memory_count(conn: Any, org_id: str, entity_id: str) -> int:
    return int(conn.execute(_MEMORY_COUNT, {"org_id": org_id, "id": entity_id}).scalar_one())


def set_memory_entity(conn: Any, org_id: str, memory_id: str, entity_id: str | None,
                      aspect: str | None = None) -> None:
    """The memory's entity; its aspect too when one is given (the backfill keeps the stored one)."""
    conn.execute(_SET_MEMORY, {"org_id": org_id, "id": memory_id, "entity_id": entity_id, "aspect": aspect})


def same_aspect(conn: Any, org_id: str, agent_id: str, entity_id: str, aspect: str, limit: int) -> list[Any]:
    """The agent's active dated memories about that entity in that aspect, newest first:
    ``id, content, valid_from, valid_until, subject_key, subject_entity_id, subject_aspect,
    redaction_tags``."""
    return conn.execute(_SAME_ASPECT, {"org_id": org_id, "agent_id": agent_id, "entity_id": entity_id,
                                       "aspect": aspect, "limit": limit}).all()


def unfilled(conn: Any, org_id: str, after: str, limit: int) -> list[Any]:
    """``id, subject_key`` of memories whose subject names an entity and that have none yet, by id."""
    return conn.execute(_UNFILLED, {"org_id": org_id, "after": after, "limit": limit}).all()


def unfilled_count(conn: Any, org_id: str) -> int:
    return int(conn.execute(_UNFILLED_COUNT, {"org_id": org_id}).scalar_one())
