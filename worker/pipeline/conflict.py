"""Stage 6, conflict: decide what the near-duplicates mean in time (ADR-0056).

Half-open validity ``[valid_from, valid_until)``, NULL ``valid_until`` = +inf; two facts
overlap iff ``a_from < b_until and b_from < a_until``. For each near-duplicate candidate:

- ``valid_from`` missing on either side -> escalate (``missing_valid_from``);
- intervals overlap -> escalate (``overlapping_intervals``);
- no overlap, same subject key -> the one with the newer ``valid_from`` supersedes the
  other (no classifier call), whichever arrived first: a late older fact ends up
  superseded by the newer one already stored;
- no overlap, different subjects -> no conflict.

Guarantees: ``ctx.conflict`` holds ``supersedes`` (ids the new memory supersedes),
``superseded_by`` (ids that supersede it) and ``escalations`` ({candidate_id, reason});
the decision is a pure function of the facts (``plan``). Escalations become durable rows in
the persist transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ibex_worker.db import tenant_tx
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.store import memories

RULE_SEQUENTIAL = "non_overlapping_same_subject_newer_valid_from"


@dataclass(frozen=True)
class Fact:
    memory_id: str
    valid_from: datetime | None
    valid_until: datetime | None
    subject_key: str | None


def overlaps(a: Fact, b: Fact) -> bool:
    assert a.valid_from is not None and b.valid_from is not None
    a_until_after_b_from = a.valid_until is None or b.valid_from < a.valid_until
    b_until_after_a_from = b.valid_until is None or a.valid_from < b.valid_until
    return a_until_after_b_from and b_until_after_a_from


def plan(new: Fact, candidates: Sequence[Fact]) -> dict[str, list[Any]]:
    result: dict[str, list[Any]] = {"supersedes": [], "superseded_by": [], "escalations": []}
    for old in candidates:
        if new.valid_from is None or old.valid_from is None:
            result["escalations"].append({"candidate_id": old.memory_id, "reason": "missing_valid_from"})
        elif overlaps(new, old):
            result["escalations"].append({"candidate_id": old.memory_id, "reason": "overlapping_intervals"})
        elif new.subject_key is not None and new.subject_key == old.subject_key:
            key = "supersedes" if new.valid_from > old.valid_from else "superseded_by"
            result[key].append(old.memory_id)
    return result


def load_facts(conn: Any, org_id: str, ids: Sequence[str]) -> list[Fact]:
    """The facts of those of ``ids`` still active, in the order of ``ids``."""
    if not ids:
        return []
    rows = memories.active_facts(conn, org_id, ids)
    by_id = {str(r.id): Fact(str(r.id), r.valid_from, r.valid_until, r.subject_key) for r in rows}
    return [by_id[i] for i in ids if i in by_id]


def new_fact(ctx: WriteContext) -> Fact:
    return Fact(ctx.job_id, _time(ctx.request.get("valid_from")), _time(ctx.request.get("valid_until")),
                ctx.subject_key)


def _skip_reason(ctx: WriteContext, deps: StageDeps) -> str | None:
    if ctx.quarantined:
        return "quarantined"
    if not deps.settings.memory_conflict_detection_enabled:
        return "disabled"
    return None if ctx.near_duplicates else "no_candidates"


def decide(conn: Any, ctx: WriteContext, deps: StageDeps) -> None:
    reason = _skip_reason(ctx, deps)
    if reason is not None:
        ctx.conflict = {}
        ctx.decide("conflict", result="skipped", reason=reason)
        return
    facts = load_facts(conn, ctx.org_id, [c["memory_id"] for c in ctx.near_duplicates])
    ctx.conflict = plan(new_fact(ctx), facts)
    outcome = ("supersedes" if ctx.conflict["supersedes"] else
               "superseded" if ctx.conflict["superseded_by"] else
               "escalated" if ctx.conflict["escalations"] else "no_conflict")
    ctx.decide("conflict", result=outcome, rule=RULE_SEQUENTIAL if outcome in ("supersedes", "superseded") else None,
               supersedes=ctx.conflict["supersedes"], superseded_by=ctx.conflict["superseded_by"],
               escalations=ctx.conflict["escalations"], classifier_calls=0)


def run(ctx: WriteContext, deps: StageDeps) -> WriteContext:
    if _skip_reason(ctx, deps) is not None:  # nothing to read: no transaction (most writes)
        decide(None, ctx, deps)
        return ctx
    with tenant_tx(deps.engine, ctx.org_id) as conn:
        decide(conn, ctx, deps)
    return ctx


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
