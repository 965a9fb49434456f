"""Stage 6, conflict: decide what the near-duplicates mean in time (ADR-0056).

Half-open validity ``[valid_from, valid_until)``, NULL ``valid_until`` = +inf; two facts
overlap iff ``a_from < b_until and b_from < a_until``. For each near-duplicate candidate:

- ``valid_from`` missing on either side -> escalate (``missing_valid_from``);
- intervals overlap -> escalate (``overlapping_intervals``), unless both are open-ended,
  one starts later, both have one subject key and aspect, and the later one contradicts the
  earlier or replaces one value of it (``ibex_worker.conflict_rules``, the escalation
  worker's own rules): then the later supersedes the earlier from its start, whose interval
  is closed there (``RULE_REPLACED``; "prefers Python" from March, "prefers Go" from June);
- no overlap, same subject -> the one with the newer ``valid_from`` supersedes the
  other (no classifier call), whichever arrived first: a late older fact ends up
  superseded by the newer one already stored. Two facts have the same subject when their
  subject keys are equal, or when their subjects resolve to one entity
  (``ibex_worker.pipeline.entities``: same key or a recorded alias, never a mere
  resemblance) and they share the predicate or the aspect (:func:`same_subject`), so
  "The user prefers Python for data work" and "The user is switching to Go for data work"
  (``user|prefer``, ``user|switch``, both ``for datum work``) are about one subject;
- no overlap, different subjects -> no conflict.

The candidates are the near duplicates, and, for a dated fact with an aspect (its "for"
phrase, ``adapters.subjects``), the agent's active dated facts about the same entity in the
same aspect: "The user prefers Python for data work" and "The user is switching to Go for
data work" read too differently to be near duplicates (embedding 0.6, trigram 0.4) but are
one subject in one respect. These are decided by the same rules and never linked as near
duplicates; facts naming different records of one kind, or different people, are not
candidates.

Guarantees: ``ctx.conflict`` holds ``supersedes`` (ids the new memory supersedes),
``superseded_by`` (ids that supersede it), ``escalations`` ({candidate_id, reason}),
``subjects`` (how each supersession's subjects matched: ``subject_key``, ``entity`` or
``entity_aspect``), ``replaced`` (for a supersession of overlapping open-ended facts: the
rule that decided it and the end given to the earlier fact, keyed by the other memory's id)
and ``same_aspect`` (the candidates found by entity and aspect, not as near duplicates);
the decision is a pure function of the facts (``plan``). Escalations become durable rows in
the persist transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ibex_worker import entity_keys, identifiers, redaction_tags
from ibex_worker.conflict_rules.verdicts import ConflictPair, MemoryFact, RulesClassifier
from ibex_worker.db import tenant_tx
from ibex_worker.pipeline import entities
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.store import entities as entity_store
from ibex_worker.store import memories

RULE_SEQUENTIAL = "non_overlapping_same_subject_newer_valid_from"
RULE_REPLACED = "open_ended_same_subject_later_value"


@dataclass(frozen=True)
class Fact:
    memory_id: str
    valid_from: datetime | None
    valid_until: datetime | None
    subject_key: str | None
    entity_id: str | None = None
    aspect: str | None = None
    content: str = ""                      # redacted, as stored
    redaction_tags: tuple[str, ...] = ()


def same_subject(a: Fact, b: Fact) -> str | None:
    """How the two facts' subjects match, or None: the same subject key (``subject_key``);
    one entity, spelt two ways, with the same predicate (``entity``); one entity in the same
    aspect, whatever the predicate (``entity_aspect``: "prefers Python for data work",
    "is switching to Go for data work"). One entity alone is not enough: "The user lived in
    Lisbon" and "The user worked in Lisbon" are two facts about the user."""
    if a.subject_key is not None and a.subject_key == b.subject_key:
        return "subject_key"
    if a.entity_id is None or a.entity_id != b.entity_id:
        return None
    if _predicate(a) is not None and _predicate(a) == _predicate(b):
        return "entity"
    return "entity_aspect" if a.aspect is not None and a.aspect == b.aspect else None


def _predicate(fact: Fact) -> str | None:
    _, separator, predicate = (fact.subject_key or "").partition("|")
    return predicate if separator and predicate else None


def overlaps(a: Fact, b: Fact) -> bool:
    assert a.valid_from is not None and b.valid_from is not None
    a_until_after_b_from = a.valid_until is None or b.valid_from < a.valid_until
    b_until_after_a_from = b.valid_until is None or a.valid_from < b.valid_until
    return a_until_after_b_from and b_until_after_a_from


def replacement(a: Fact, b: Fact) -> str | None:
    """The rule by which the later of two overlapping dated facts replaces the earlier, as the
    rules classifier would decide it, or None (``conflict_rules.verdicts.replaced_later``)."""
    assert a.valid_from is not None and b.valid_from is not None
    if a.valid_until is not None or b.valid_until is not None or a.subject_key != b.subject_key:
        return None  # the rules' own first conditions, checked before any tokenising
    older, newer = (a, b) if a.valid_from < b.valid_from else (b, a)
    verdict = RulesClassifier().classify(ConflictPair(_memory_fact(older), _memory_fact(newer), None,
                                                      "overlapping_intervals"))
    return verdict.rule if verdict.outcome == "supersedes" else None


def _memory_fact(fact: Fact) -> MemoryFact:
    """The rules' view of a fact (``created_at`` orders undated pairs only; these are dated)."""
    assert fact.valid_from is not None
    return MemoryFact(fact.memory_id, fact.content, fact.valid_from, fact.valid_until, fact.subject_key,
                      fact.valid_from, fact.aspect, fact.redaction_tags)


def plan(new: Fact, candidates: Sequence[Fact]) -> dict[str, Any]:
    result: dict[str, Any] = {"supersedes": [], "superseded_by": [], "escalations": [], "subjects": {},
                              "replaced": {}}
    for old in candidates:
        # Names spelt two ways that sound alike are possibly one person: never superseded
        # without a person; an overlap goes to them, sequential facts stay linked only.
        alike = redaction_tags.relation(new.redaction_tags, old.redaction_tags) == "names_sound_alike"
        if new.valid_from is None or old.valid_from is None:
            result["escalations"].append({"candidate_id": old.memory_id, "reason": "missing_valid_from"})
        elif overlaps(new, old):
            rule = None if alike else replacement(new, old)
            if rule is None:
                result["escalations"].append({"candidate_id": old.memory_id, "reason": "overlapping_intervals"})
                continue
            newer_first = new.valid_from > old.valid_from
            result["supersedes" if newer_first else "superseded_by"].append(old.memory_id)
            result["subjects"][old.memory_id] = "subject_key"
            result["replaced"][old.memory_id] = {
                "rule": rule, "valid_until": (new if newer_first else old).valid_from.isoformat()}
        elif not alike and (match := same_subject(new, old)) is not None:
            key = "supersedes" if new.valid_from > old.valid_from else "superseded_by"
            result[key].append(old.memory_id)
            result["subjects"][old.memory_id] = match
    return result


def load_facts(conn: Any, org_id: str, ids: Sequence[str]) -> list[Fact]:
    """The facts of those of ``ids`` still active, in the order of ``ids``."""
    if not ids:
        return []
    rows = memories.active_facts(conn, org_id, ids)
    by_id = {str(r.id): Fact(str(r.id), r.valid_from, r.valid_until, r.subject_key,
                             str(r.subject_entity_id) if r.subject_entity_id else None, r.subject_aspect,
                             r.content, tuple(r.redaction_tags or ()))
             for r in rows}
    return [by_id[i] for i in ids if i in by_id]


def new_fact(conn: Any, ctx: WriteContext, deps: StageDeps) -> Fact:
    """The new memory's fact; its subject's entity as it resolves now (None for a subject no
    entity has yet: persist creates it)."""
    name = entity_keys.subject_name(ctx.subject_key)
    resolved = (entities.resolve(conn, ctx.org_id, name, deps.settings.entity_fuzzy)
                if name is not None else None)
    return Fact(ctx.job_id, _time(ctx.request.get("valid_from")), _time(ctx.request.get("valid_until")),
                ctx.subject_key, resolved.entity_id if resolved is not None else None, ctx.subject_aspect,
                ctx.content or "", tuple(ctx.redaction_tags))


def _may_share_an_aspect(ctx: WriteContext) -> bool:
    """Whether the new fact can have candidates that are not near duplicates: it is dated,
    has an aspect and a subject that names an entity."""
    return bool(ctx.request.get("valid_from") and ctx.subject_aspect and entity_keys.subject_name(ctx.subject_key))


def _skip_reason(ctx: WriteContext, deps: StageDeps) -> str | None:
    if ctx.quarantined:
        return "quarantined"
    if not deps.settings.memory_conflict_detection_enabled:
        return "disabled"
    return None if ctx.near_duplicates or _may_share_an_aspect(ctx) else "no_candidates"


def same_aspect_facts(conn: Any, ctx: WriteContext, deps: StageDeps, new: Fact, near: Sequence[str]) -> list[Fact]:
    """The agent's active dated facts about the new fact's entity in its aspect that are not
    near duplicates already, nor about another record of the same kind or another person."""
    if new.entity_id is None or new.valid_from is None or not ctx.subject_aspect:
        return []
    rows = entity_store.same_aspect(conn, ctx.org_id, ctx.agent_id, new.entity_id, ctx.subject_aspect,
                                    deps.settings.near_duplicate_candidate_limit)
    mine = identifiers.find(ctx.content or "")
    return [Fact(str(r.id), r.valid_from, r.valid_until, r.subject_key, str(r.subject_entity_id), r.subject_aspect,
                 r.content, tuple(r.redaction_tags or ()))
            for r in rows
            if str(r.id) not in near and not identifiers.distinct_records(mine, identifiers.find(r.content))
            and redaction_tags.relation(ctx.redaction_tags, r.redaction_tags) != "different_people"]


def decide(conn: Any, ctx: WriteContext, deps: StageDeps) -> None:
    reason = _skip_reason(ctx, deps)
    if reason is None:
        near = [c["memory_id"] for c in ctx.near_duplicates]
        new = new_fact(conn, ctx, deps)
        aspect = same_aspect_facts(conn, ctx, deps, new, near)
        reason = None if near or aspect else "no_candidates"
    if reason is not None:
        ctx.conflict = {}
        ctx.decide("conflict", result="skipped", reason=reason)
        return
    ctx.conflict = {**plan(new, load_facts(conn, ctx.org_id, near) + aspect),
                    "same_aspect": [f.memory_id for f in aspect]}
    outcome = ("supersedes" if ctx.conflict["supersedes"] else
               "superseded" if ctx.conflict["superseded_by"] else
               "escalated" if ctx.conflict["escalations"] else "no_conflict")
    ctx.decide("conflict", result=outcome, rule=_rule(ctx.conflict) if outcome in ("supersedes", "superseded") else None,
               supersedes=ctx.conflict["supersedes"], superseded_by=ctx.conflict["superseded_by"],
               escalations=ctx.conflict["escalations"], subjects=ctx.conflict["subjects"],
               replaced={i: r["rule"] for i, r in ctx.conflict["replaced"].items()},
               same_aspect=ctx.conflict["same_aspect"], classifier_calls=0)


def _rule(planned: dict[str, Any]) -> str:
    settled = planned["supersedes"] + planned["superseded_by"]
    return RULE_REPLACED if all(i in planned["replaced"] for i in settled) else RULE_SEQUENTIAL


def run(ctx: WriteContext, deps: StageDeps) -> WriteContext:
    if _skip_reason(ctx, deps) is not None:  # nothing to read: no transaction (most writes)
        decide(None, ctx, deps)
        return ctx
    with tenant_tx(deps.engine, ctx.org_id) as conn:
        decide(conn, ctx, deps)
    return ctx


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
