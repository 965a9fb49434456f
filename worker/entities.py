"""The functions behind ``/v1/entities`` and ``/v1/entities/{id}/aliases`` (issue 14;
MemCastle ADR-025, "Entities"); how names resolve is ``ibex_worker.pipeline.entities``.

Names and aliases a person gives pass the write path's PII analysis first: any finding,
certain or not, refuses the name with ``PII_IN_FIELD`` naming the field, never the value,
and an analysis that cannot run refuses it too. A name whose key already names an entity
(its own key or an alias) is refused with that entity's id: nothing merges two entities.

Entities are org-wide, so these routes need a key that covers every agent of its org.
Another tenant's entity, an unknown id and a malformed id are the same 404.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import structlog
from ibex_worker import entity_keys, notes
from ibex_worker.cursor import page, page_start
from ibex_worker.db import tenant_tx
from ibex_worker.errors import FieldIssue, IbexError, ValidationFailed
from ibex_worker.limits import LIST_LIMIT_MAX
from ibex_worker.pipeline.entities import link_resemblances
from ibex_worker.pipeline.pii import PiiInField
from ibex_worker.review import MemoryNotFound, parse_id
from ibex_worker.store import entities as store

if TYPE_CHECKING:
    from ibex_worker.adapters.redactor import Redactor

log = structlog.get_logger("ibex.entities")

ALIASES_MAX = 20
_KIND = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


class EntityNotFound(IbexError):
    code = "NOT_FOUND"


class NameTaken(IbexError):
    """The name's key already names an entity (its own key or an alias): nothing changed."""

    code = "ENTITY_EXISTS"

    def __init__(self, entity_id: str | None, field_name: str) -> None:
        super().__init__(f"{field_name} names an existing entity already")
        self.entity_id = entity_id


def create(engine: Any, org_id: str, name: Any, kind: Any, aliases: Any, threshold: float | None, created_by: str,
           redactor: Callable[[], Redactor] | None) -> dict[str, Any]:
    """A person's entity, with its aliases; raises ``ValidationFailed``, ``PiiInField``,
    ``NameTaken`` or ``TransientError``."""
    kind = "subject" if kind is None else kind
    issues = _name_issues("name", name)
    if not isinstance(kind, str) or not _KIND.match(kind):
        issues.append(FieldIssue("kind", "must be 1 to 32 lower-case letters, digits or _, starting with a letter"))
    aliases = [] if aliases is None else aliases
    if not isinstance(aliases, list) or len(aliases) > ALIASES_MAX:
        issues.append(FieldIssue("aliases", f"must be a list of at most {ALIASES_MAX} names"))
        aliases = []
    for i, alias in enumerate(aliases):
        issues += _name_issues(f"aliases[{i}]", alias)
    if issues:
        raise ValidationFailed(issues)
    names = {"name": name, **{f"aliases[{i}]": alias for i, alias in enumerate(aliases)}}
    _refuse_personal_data({**names, "kind": kind.replace("_", " ")}, redactor)
    key = entity_keys.key(name)
    spellings = _distinct_spellings(key, aliases)
    with tenant_tx(engine, org_id) as conn:
        store.lock_names(conn, org_id, [entity_keys.key(text) for text in names.values()])
        for field_name, text in names.items():
            taken = store.by_key(conn, org_id, entity_keys.key(text))
            if taken is not None:
                raise NameTaken(str(taken.id), field_name)
        row = store.insert(conn, org_id, name, key, kind, entity_keys.trigrams(key), created_by)
        if row is None:  # created meanwhile by another transaction
            raise NameTaken(_existing_id(conn, org_id, key), "name")
        entity_id = str(row.id)
        for field_name, alias in spellings:
            if not store.add_alias(conn, org_id, entity_id, alias, entity_keys.key(alias), created_by):
                raise NameTaken(_existing_id(conn, org_id, entity_keys.key(alias)), field_name)
        if threshold is not None:  # fuzzy matching on: its resemblances are recorded
            link_resemblances(conn, org_id, entity_id, key, threshold, created_by)
        view = _view(conn, org_id, row)
    log.info("entity_created", org_id=org_id, entity_id=entity_id, aliases=len(aliases), decided_by=created_by)
    return view


def _distinct_spellings(key: str, aliases: list[str]) -> list[tuple[str, str]]:
    """``(field, alias)`` of the aliases to record: the first of each key, none of the name's."""
    seen, kept = {key}, []
    for i, alias in enumerate(aliases):
        if entity_keys.key(alias) not in seen:
            seen.add(entity_keys.key(alias))
            kept.append((f"aliases[{i}]", alias))
    return kept


def _existing_id(conn: Any, org_id: str, key: str) -> str | None:
    taken = store.by_key(conn, org_id, key)
    return str(taken.id) if taken is not None else None


def list_entities(engine: Any, org_id: str, limit: int, cursor: str | None) -> dict[str, Any]:
    after = page_start(limit, LIST_LIMIT_MAX, cursor)
    with tenant_tx(engine, org_id) as conn:
        rows = store.page(conn, org_id, after, limit + 1)
    return page(rows, limit, _summary)


def read(engine: Any, org_id: str, entity_id: str) -> dict[str, Any]:
    with tenant_tx(engine, org_id) as conn:
        return _view(conn, org_id, _row(conn, org_id, entity_id))


def delete(engine: Any, org_id: str, entity_id: str, decided_by: str) -> None:
    """The entity, its aliases and resemblances gone; its memories keep no entity (they are
    compared by subject key again until a new entity is resolved for them)."""
    with tenant_tx(engine, org_id) as conn:
        row = _row(conn, org_id, entity_id)
        memories = store.memory_count(conn, org_id, str(row.id))
        store.delete(conn, org_id, str(row.id))
    log.info("entity_deleted", org_id=org_id, entity_id=str(row.id), memories=memories, decided_by=decided_by)


def list_aliases(engine: Any, org_id: str, entity_id: str) -> list[dict[str, Any]]:
    with tenant_tx(engine, org_id) as conn:
        return [_alias(a) for a in store.aliases(conn, org_id, str(_row(conn, org_id, entity_id).id))]


def add_alias(engine: Any, org_id: str, entity_id: str, alias: Any, created_by: str,
              redactor: Callable[[], Redactor] | None) -> dict[str, Any]:
    """Record ``alias`` for the entity: later names of its key resolve to it (rule ``alias``)."""
    with tenant_tx(engine, org_id) as conn:
        target = str(_row(conn, org_id, entity_id).id)
    issues = _name_issues("alias", alias)
    if issues:
        raise ValidationFailed(issues)
    _refuse_personal_data({"alias": alias}, redactor)
    key = entity_keys.key(alias)
    with tenant_tx(engine, org_id) as conn:
        _row(conn, org_id, target)
        store.lock_names(conn, org_id, [key])
        taken = store.by_key(conn, org_id, key)
        if taken is not None or not store.add_alias(conn, org_id, target, alias, key, created_by):
            raise NameTaken(str(taken.id) if taken is not None else _existing_id(conn, org_id, key), "alias")
        created = next(a for a in store.aliases(conn, org_id, target) if a.key == key)
    log.info("entity_alias_added", org_id=org_id, entity_id=target, decided_by=created_by)
    return _alias(created)


def remove_alias(engine: Any, org_id: str, entity_id: str, alias: str, decided_by: str) -> None:
    """The alias of that key gone (names of it resolve as before it was recorded)."""
    with tenant_tx(engine, org_id) as conn:
        target = str(_row(conn, org_id, entity_id).id)
        if not store.delete_alias(conn, org_id, target, entity_keys.key(alias)):
            raise EntityNotFound("no such alias")
    log.info("entity_alias_removed", org_id=org_id, entity_id=target, decided_by=decided_by)


def _row(conn: Any, org_id: str, entity_id: str) -> Any:
    try:
        row = store.get(conn, org_id, parse_id(entity_id))
    except MemoryNotFound:
        row = None
    if row is None:
        raise EntityNotFound("no such entity")
    return row


def _name_issues(field_name: str, value: Any) -> list[FieldIssue]:
    if not isinstance(value, str) or not value.strip() or len(value) > entity_keys.NAME_MAX_CHARS \
            or "\x00" in value:
        return [FieldIssue(field_name, f"must be a name of 1 to {entity_keys.NAME_MAX_CHARS} characters")]
    if not entity_keys.key(value):
        return [FieldIssue(field_name, "must hold a letter or a digit")]
    return []


def _refuse_personal_data(names: dict[str, str], redactor: Callable[[], Redactor] | None) -> None:
    """Fail closed: a finding of any certainty, or no analysis, refuses the names."""
    outcomes = notes.analysed(list(names.values()), redactor, "entity name")
    refused = [FieldIssue(field_name, "holds personal data (" + ", ".join(sorted(
        {f.entity_type for f in outcome.findings})) + ")")
        for field_name, outcome in zip(names, outcomes, strict=True) if outcome.findings]
    if refused:
        raise PiiInField(refused)


def _summary(row: Any) -> dict[str, Any]:
    return {"id": str(row.id), "name": row.name, "key": row.key, "kind": row.kind, "created_by": row.created_by,
            "created_at": row.created_at.isoformat()}


def _alias(row: Any) -> dict[str, Any]:
    return {"alias": row.alias, "key": row.key, "created_by": row.created_by, "created_at": row.created_at.isoformat()}


def _view(conn: Any, org_id: str, row: Any) -> dict[str, Any]:
    entity_id = str(row.id)
    related = [{"entity_id": str(r.target_entity_id if str(r.source_entity_id) == entity_id else r.source_entity_id),
                "direction": "outgoing" if str(r.source_entity_id) == entity_id else "incoming",
                "type": r.relationship_type, "evidence": dict(r.evidence or {}), "decided_by": r.decided_by,
                "created_at": r.created_at.isoformat()} for r in store.related(conn, org_id, entity_id)]
    return {**_summary(row), "aliases": [_alias(a) for a in store.aliases(conn, org_id, entity_id)],
            "possibly_same_as": related, "memories": store.memory_count(conn, org_id, entity_id)}
