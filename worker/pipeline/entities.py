"""Entity resolution (issue 14; MemCastle ADR-025, "Entities"). A name resolves, per org,
in this order:

1. to the entity of the same key (``ibex_worker.entity_keys.key``): rule ``normalized``;
2. to the entity one of whose aliases has that key: rule ``alias``;
3. to the one entity whose key is one typo apart (``entity_keys.one_typo_apart``): rule
   ``typo``; the spelling becomes an alias of that entity, so it resolves by rule 2 from then
   on. A name one typo from two entities resolves to neither;
4. otherwise to a new entity. Every other entity whose key resembles the new one (trigram
   similarity at or above ``IBEX_ENTITY_SIMILARITY_THRESHOLD``) gets a ``possibly_same_as``
   relationship from the new entity, with the similarity and the threshold as evidence:
   rule ``new``. The names stay two entities: nothing merges, and a canonical name is never
   rewritten. A person settles a resemblance by recording an alias
   (``POST /v1/entities/{id}/aliases``), after which that spelling resolves to the entity.

With ``IBEX_ENTITY_FUZZY=false`` (``threshold`` None) only rules 1, 2 and 4 apply, and no
resemblance is recorded.

The write path resolves a memory's subject (``entity_keys.subject_name``) in its persist
transaction, right before the memory's insert, which records the entity (``recorded``); the
conflict stage reads it without creating one (``resolve``) and treats two facts whose
subjects resolve to one entity as facts about the same subject. Two transactions creating
the same name meet on the key's unique index: the second reads the first's entity.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import structlog
from sqlalchemy.exc import IntegrityError

from ibex_worker import entity_keys
from ibex_worker.errors import TransientError
from ibex_worker.store import entities as store

log = structlog.get_logger("ibex.entities")

PIPELINE = "system:pipeline"
NO_ENTITY = "00000000-0000-0000-0000-000000000000"  # excludes nothing from a resemblance query
ALIKE_CANDIDATES = 50
ATTACH_ATTEMPTS = 3

T = TypeVar("T")


@dataclass(frozen=True)
class Resolution:
    entity_id: str
    rule: str                                          # normalized, alias, typo or new
    possibly_same_as: list[dict[str, Any]] = field(default_factory=list)


def resolve(conn: Any, org_id: str, name: str, fuzzy: bool = True) -> Resolution | None:
    """The entity ``name`` resolves to without creating one, or None; with ``fuzzy``, also
    by the typo rule."""
    key = entity_keys.key(name)
    row = store.by_key(conn, org_id, key)
    if row is not None:
        return Resolution(str(row.id), row.rule)
    if not fuzzy:
        return None
    reach = entity_keys.reach(key, None, typo=True)
    near = [other for other in store.alike(conn, org_id, NO_ENTITY, entity_keys.trigrams(key), reach,
                                           ALIKE_CANDIDATES)
            if entity_keys.one_typo_apart(key, other.key)]
    return Resolution(str(near[0].id), "typo") if len(near) == 1 else None


def resolve_or_create(conn: Any, org_id: str, name: str, threshold: float | None) -> Resolution:
    """The entity ``name`` resolves to, created (with its resemblances) when there is none;
    ``threshold`` None turns fuzzy matching off. A spelling resolved by the typo rule is
    recorded as an alias. Another transaction may create the same key meanwhile (then it is
    read) and a third delete it again (then it is created again); ``TransientError`` when that
    repeats."""
    key = entity_keys.key(name)
    for _ in range(ATTACH_ATTEMPTS):
        found = resolve(conn, org_id, name, fuzzy=False)
        if found is not None:
            return found
        store.lock_names(conn, org_id, [key])  # from here to the insert, nobody else takes the key
        found = resolve(conn, org_id, name, threshold is not None)
        if found is not None and found.rule != "typo":
            return found  # created before the lock was granted
        if found is not None:
            if store.add_alias(conn, org_id, found.entity_id, name, key, PIPELINE):
                return found
            continue  # the spelling became an alias meanwhile: resolve it again
        row = store.insert(conn, org_id, name, key, "subject", entity_keys.trigrams(key), PIPELINE)
        if row is not None:
            links = [] if threshold is None else link_resemblances(conn, org_id, str(row.id), key, threshold,
                                                                   PIPELINE)
            return Resolution(str(row.id), "new", links)
    raise TransientError("an entity was created and deleted again while a write resolved it",
                         code="ENTITY_CONTENDED")


def link_resemblances(conn: Any, org_id: str, entity_id: str, key: str, threshold: float,
                       decided_by: str) -> list[dict[str, Any]]:
    links = []
    reach = entity_keys.reach(key, threshold, typo=False)
    for other in store.alike(conn, org_id, entity_id, entity_keys.trigrams(key), reach, ALIKE_CANDIDATES):
        score = entity_keys.resembles(key, other.key, threshold)
        if score is not None:
            evidence = {"rule": "trigram", "similarity": score, "threshold": threshold}
            store.link(conn, org_id, entity_id, str(other.id), evidence, decided_by)
            links.append({"entity_id": str(other.id), **evidence})
    return links


def recorded(conn: Any, org_id: str, name: str, threshold: float | None,
             write: Callable[[str], T]) -> tuple[T, Resolution]:
    """Resolve ``name`` (creating the entity when new) and run ``write(entity_id)``, the
    statement that records the entity on a memory, in one savepoint. An entity deleted by
    another transaction between the two (a person, or the erasure of its last memory) fails
    the write's foreign key; the name is then resolved again and the write repeated: the
    memory is never lost to it."""
    for _ in range(ATTACH_ATTEMPTS - 1):
        try:
            with conn.begin_nested():
                resolution = resolve_or_create(conn, org_id, name, threshold)
                return write(resolution.entity_id), resolution
        except IntegrityError:
            continue
    resolution = resolve_or_create(conn, org_id, name, threshold)
    return write(resolution.entity_id), resolution


def attach(conn: Any, org_id: str, memory_id: str, name: str, aspect: str | None,
           threshold: float | None) -> Resolution:
    """Resolve ``name`` and record it on a stored memory (the backfill)."""
    _, resolution = recorded(conn, org_id, name, threshold,
                             lambda entity_id: store.set_memory_entity(conn, org_id, memory_id, entity_id, aspect))
    return logged(org_id, memory_id, resolution)


def logged(org_id: str, memory_id: str, resolution: Resolution) -> Resolution:
    log.info("entity_resolved", org_id=org_id, memory_id=memory_id, entity_id=resolution.entity_id,
             rule=resolution.rule, possibly_same_as=len(resolution.possibly_same_as))
    return resolution


def fill_memory_entities(conn: Any, org_id: str, rows: Sequence[Any], threshold: float | None) -> int:
    """The entity of each ``(id, subject_key)`` row's subject, resolved and recorded (the
    backfill); how many got one."""
    filled = 0
    for row in rows:
        name = entity_keys.subject_name(row.subject_key)
        if name is not None:
            attach(conn, org_id, str(row.id), name, None, threshold)
            filled += 1
    return filled
