"""Stage 6 rules as a truth table (ADR-0056): half-open validity, open-ended NULL until,
missing valid_from, same vs different subject keys, arrival order."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from ibex_worker.pipeline.conflict import Fact, overlaps, plan

JAN = datetime(2024, 1, 1, tzinfo=timezone.utc)
MAR = datetime(2024, 3, 1, tzinfo=timezone.utc)
JUN = datetime(2024, 6, 1, tzinfo=timezone.utc)
SEP = datetime(2024, 9, 1, tzinfo=timezone.utc)
SUBJECT = "staging server|use"
OTHER_SUBJECT = "backend team|use"


def fact(memory_id: str, valid_from: datetime | None, valid_until: datetime | None = None,
         subject_key: str | None = SUBJECT, entity_id: str | None = None) -> Fact:
    return Fact(memory_id, valid_from, valid_until, subject_key, entity_id)


@pytest.mark.parametrize(("a", "b", "expected"), [
    pytest.param((JAN, JUN), (JUN, None), False, id="touching endpoints do not overlap (half-open)"),
    pytest.param((JAN, JUN), (JUN, SEP), False, id="adjacent closed intervals do not overlap"),
    pytest.param((JAN, MAR), (JUN, SEP), False, id="disjoint intervals with a gap do not overlap"),
    pytest.param((JAN, JUN), (MAR, SEP), True, id="partly overlapping intervals overlap"),
    pytest.param((JAN, SEP), (MAR, JUN), True, id="an interval inside another overlaps"),
    pytest.param((JAN, JUN), (JAN, JUN), True, id="identical intervals overlap"),
    pytest.param((JAN, None), (JUN, None), True, id="two open-ended intervals always overlap"),
    pytest.param((JAN, None), (JUN, SEP), True, id="an open-ended interval overlaps any later one"),
    pytest.param((JUN, None), (JAN, JUN), False, id="an open-ended interval starting at the other's end does not"),
    pytest.param((JUN, None), (JAN, JUN - timedelta(microseconds=1)), False, id="one microsecond before is disjoint"),
    pytest.param((JUN, None), (JAN, JUN + timedelta(microseconds=1)), True, id="one microsecond past overlaps"),
])
def test_overlap_follows_half_open_intervals_with_null_until_as_infinity(a, b, expected):
    first, second = fact("a", *a), fact("b", *b)
    assert overlaps(first, second) is expected
    assert overlaps(second, first) is expected, "overlap must be symmetric"


def test_a_newer_sequential_fact_with_the_same_subject_supersedes_the_older_one():
    result = plan(fact("new", JUN), [fact("old", JAN, JUN)])
    assert result == {"supersedes": ["old"], "superseded_by": [], "escalations": [], "subjects": {"old": "subject_key"}, "replaced": {}}


def test_a_late_arriving_older_fact_is_superseded_by_the_newer_one_already_stored():
    result = plan(fact("late-old", JAN, JUN), [fact("stored-new", JUN)])
    assert result == {"supersedes": [], "superseded_by": ["stored-new"], "escalations": [],
                      "subjects": {"stored-new": "subject_key"}, "replaced": {}}


def test_the_decision_does_not_depend_on_arrival_order():
    older, newer = fact("older", JAN, JUN), fact("newer", JUN, SEP)
    forward = plan(newer, [older])
    backward = plan(older, [newer])
    # Either way: newer supersedes older.
    assert forward["supersedes"] == ["older"] and backward["superseded_by"] == ["newer"]
    assert forward["escalations"] == backward["escalations"] == []


@pytest.mark.parametrize(("new", "old"), [
    pytest.param(fact("new", JUN), fact("old", JAN), id="older open-ended fact overlaps the newer one"),
    pytest.param(fact("new", MAR, SEP), fact("old", JAN, JUN), id="partial overlap"),
    pytest.param(fact("new", JAN, JUN), fact("old", JAN, JUN), id="same interval"),
    pytest.param(fact("new", JAN, JUN), fact("old", MAR), id="late older fact overlaps the stored open-ended one"),
])
def test_overlapping_intervals_escalate_instead_of_superseding(new, old):
    assert plan(new, [old]) == {"supersedes": [], "superseded_by": [], "subjects": {}, "replaced": {},
                                "escalations": [{"candidate_id": "old", "reason": "overlapping_intervals"}]}


def test_overlapping_intervals_escalate_even_when_subjects_differ():
    result = plan(fact("new", MAR, SEP), [fact("old", JAN, JUN, OTHER_SUBJECT)])
    assert result["escalations"] == [{"candidate_id": "old", "reason": "overlapping_intervals"}]
    assert result["supersedes"] == result["superseded_by"] == []


@pytest.mark.parametrize(("new", "old"), [
    pytest.param(fact("new", None), fact("old", JAN, JUN), id="new fact has no valid_from"),
    pytest.param(fact("new", JUN), fact("old", None), id="candidate has no valid_from"),
    pytest.param(fact("new", None), fact("old", None), id="neither has a valid_from"),
    pytest.param(fact("new", None, SEP), fact("old", JAN, MAR), id="a valid_until alone is not enough"),
    pytest.param(fact("new", None, subject_key=None), fact("old", None, subject_key=OTHER_SUBJECT),
                 id="missing valid_from escalates whatever the subjects"),
])
def test_a_missing_valid_from_on_either_side_escalates(new, old):
    assert plan(new, [old]) == {"supersedes": [], "superseded_by": [], "subjects": {}, "replaced": {},
                                "escalations": [{"candidate_id": "old", "reason": "missing_valid_from"}]}


@pytest.mark.parametrize(("new_subject", "old_subject"), [
    pytest.param("frontend team|use", "backend team|use", id="different subjects"),
    pytest.param(None, None, id="no subject on either side is not the same subject"),
    pytest.param(SUBJECT, None, id="candidate without a subject"),
    pytest.param(None, SUBJECT, id="new fact without a subject"),
])
def test_sequential_facts_without_a_shared_subject_are_no_conflict(new_subject, old_subject):
    result = plan(fact("new", JUN, subject_key=new_subject), [fact("old", JAN, JUN, old_subject)])
    assert result == {"supersedes": [], "superseded_by": [], "escalations": [], "subjects": {}, "replaced": {}}


def test_no_candidates_give_an_empty_plan():
    assert plan(fact("new", JUN), []) == {"supersedes": [], "superseded_by": [], "escalations": [], "subjects": {}, "replaced": {}}


def test_each_candidate_is_decided_on_its_own_rule():
    new = fact("new", JUN, SEP)
    candidates = [
        fact("before", JAN, JUN),                      # sequential, same subject -> superseded by new
        fact("after", SEP),                            # sequential, newer -> supersedes new
        fact("overlap", MAR, JUN + timedelta(days=1)),  # overlaps -> escalate
        fact("undated", None),                         # missing valid_from -> escalate
        fact("other", JAN, MAR, OTHER_SUBJECT),        # sequential, different subject -> nothing
    ]
    assert plan(new, candidates) == {
        "supersedes": ["before"],
        "superseded_by": ["after"],
        "escalations": [{"candidate_id": "overlap", "reason": "overlapping_intervals"},
                        {"candidate_id": "undated", "reason": "missing_valid_from"}],
        "subjects": {"before": "subject_key", "after": "subject_key"},
        "replaced": {},
    }


def _entity_fact(memory_id: str, valid_from: datetime, valid_until: datetime | None, subject_key: str,
                 entity_id: str | None, aspect: str | None = None) -> Fact:
    return Fact(memory_id, valid_from, valid_until, subject_key, entity_id, aspect)


NOTHING = {"supersedes": [], "superseded_by": [], "escalations": [], "subjects": {}, "replaced": {}}


@pytest.mark.parametrize(("new", "old", "outcome"), [
    pytest.param(_entity_fact("new", JUN, None, "project orion deadline|be", "e1"),
                 _entity_fact("old", JAN, JUN, "orion project deadline|be", "e1"),
                 {**NOTHING, "supersedes": ["old"], "subjects": {"old": "entity"}},
                 id="one entity spelt two ways, the same predicate"),
    pytest.param(_entity_fact("new", JUN, None, "user|switch", "e1", "for datum work"),
                 _entity_fact("old", JAN, JUN, "user|prefer", "e1", "for datum work"),
                 {**NOTHING, "supersedes": ["old"], "subjects": {"old": "entity_aspect"}},
                 id="one entity in one aspect, another predicate (ADR-0056: prefers Python, then switching to Go)"),
    pytest.param(_entity_fact("new", JUN, None, "user|work", "e1"), _entity_fact("old", JAN, JUN, "user|live", "e1"),
                 NOTHING, id="one entity, another predicate and no aspect: two facts (lived / worked in Lisbon)"),
    pytest.param(_entity_fact("new", JUN, None, "user|work", "e1", "for datum work"),
                 _entity_fact("old", JAN, JUN, "user|live", "e1", "for web work"),
                 NOTHING, id="one entity, another predicate and another aspect"),
    pytest.param(_entity_fact("new", JUN, None, "color scheme|be", "e2"),
                 _entity_fact("old", JAN, JUN, "colour scheme|be", "e1"),
                 NOTHING, id="two entities (a resemblance is not one entity)"),
    pytest.param(_entity_fact("new", JUN, None, "color scheme|be", None),
                 _entity_fact("old", JAN, JUN, "colour scheme|be", None),
                 NOTHING, id="no entity on either side and different keys"),
    pytest.param(fact("new", JUN, entity_id="e2"), fact("old", JAN, JUN, entity_id="e1"),
                 {**NOTHING, "supersedes": ["old"], "subjects": {"old": "subject_key"}, "replaced": {}},
                 id="the same subject key is one subject whatever the entities"),
])
def test_the_same_subject_is_the_same_key_or_one_entity(new, old, outcome):
    assert plan(new, [old]) == outcome


def test_timezone_offsets_are_compared_as_instants():
    # 2024-06-01T02:00+02:00 is 2024-06-01T00:00Z: touching, not overlapping.
    plus_two = datetime(2024, 6, 1, 2, tzinfo=timezone(timedelta(hours=2)))
    result = plan(fact("new", plus_two), [fact("old", JAN, JUN)])
    assert result == {"supersedes": ["old"], "superseded_by": [], "escalations": [], "subjects": {"old": "subject_key"}, "replaced": {}}


class _NoDatabase:
    """An engine that must not be used: the stage has nothing to read."""

    def begin(self):
        raise AssertionError("conflict opened a transaction with no candidate to look up")


@pytest.mark.parametrize(("quarantined", "enabled", "reason"), [
    pytest.param(False, True, "no_candidates", id="no near-duplicate"),
    pytest.param(True, True, "quarantined", id="quarantined"),
    pytest.param(False, False, "disabled", id="detection switched off"),
])
def test_a_write_with_nothing_to_compare_opens_no_transaction(quarantined, enabled, reason):
    from types import SimpleNamespace

    from tests.conftest import make_settings
    from ibex_worker.pipeline import conflict
    from ibex_worker.pipeline.context import WriteContext

    ctx = WriteContext(job_id="j", org_id="o", agent_id="a", request={})
    ctx.quarantine_reasons = ["pii"] if quarantined else []
    deps = SimpleNamespace(settings=make_settings(memory_conflict_detection_enabled=enabled), engine=_NoDatabase())
    conflict.run(ctx, deps)
    assert ctx.conflict == {}
    assert ctx.decisions[-1]["stage"] == "conflict" and ctx.decisions[-1]["result"] == "skipped"
    assert ctx.decisions[-1]["reason"] == reason


PYTHON = "The user prefers Python for data work."
GO = "The user prefers Go for data work."
PREFER = "user|prefer"


def _stated(memory_id: str, valid_from: datetime, content: str, valid_until: datetime | None = None,
            aspect: str | None = "for datum work") -> Fact:
    return Fact(memory_id, valid_from, valid_until, PREFER, "e1", aspect, content)


def test_an_open_ended_fact_replaced_later_by_the_rules_is_superseded_in_the_pipeline_and_its_interval_closed():
    forward = plan(_stated("new", JUN, GO), [_stated("old", MAR, PYTHON)])
    assert (forward["supersedes"], forward["escalations"]) == (["old"], [])
    assert forward["replaced"] == {"old": {"rule": "later_value", "valid_until": JUN.isoformat()}}
    backward = plan(_stated("late", MAR, PYTHON), [_stated("stored", JUN, GO)])
    assert (backward["superseded_by"], backward["escalations"]) == (["stored"], [])
    assert backward["replaced"] == {"stored": {"rule": "later_value", "valid_until": JUN.isoformat()}}


@pytest.mark.parametrize(("new", "old"), [
    pytest.param(_stated("new", JUN, GO), _stated("old", MAR, PYTHON, SEP), id="the older one has an end of its own"),
    pytest.param(_stated("new", JUN, GO, SEP), _stated("old", MAR, PYTHON), id="the newer one may be a temporary change"),
    pytest.param(_stated("new", JUN, GO, aspect="for web work"), _stated("old", MAR, PYTHON), id="another aspect"),
    pytest.param(_stated("new", MAR, GO), _stated("old", MAR, PYTHON), id="the same start"),
    pytest.param(_stated("new", JUN, PYTHON), _stated("old", MAR, PYTHON), id="the same statement again"),
    pytest.param(_stated("new", JUN, "The user prefers Go for data work and hates Python."),
                 _stated("old", MAR, PYTHON), id="more than one value changed"),
])
def test_overlapping_facts_the_rules_cannot_order_still_escalate(new, old):
    result = plan(new, [old])
    assert result["escalations"] == [{"candidate_id": "old", "reason": "overlapping_intervals"}]
    assert result["supersedes"] == result["superseded_by"] == [] and result["replaced"] == {}


def test_possibly_one_person_by_the_sound_of_the_name_is_never_superseded_without_a_person():
    # "Carl Jones works at the Berlin office" and "Carol Jones ...": other tags, one sound.
    carl, carol = ("PERSON:k1:aa11:s:50d",), ("PERSON:k1:bb22:s:50d",)
    older = Fact("old", JAN, JUN, SUBJECT, content="[PERSON] works at the Berlin office.", redaction_tags=carl)
    newer = Fact("new", JUN, None, SUBJECT, content="[PERSON] works at the Berlin office.", redaction_tags=carol)
    assert plan(newer, [older]) == {"supersedes": [], "superseded_by": [], "escalations": [], "subjects": {},
                                    "replaced": {}}
    overlapping = Fact("new", MAR, None, SUBJECT, content="[PERSON] works at the Berlin office.", redaction_tags=carol)
    assert plan(overlapping, [older])["escalations"] == [{"candidate_id": "old", "reason": "overlapping_intervals"}]
    same = Fact("new", JUN, None, SUBJECT, content="[PERSON] works at the Berlin office.", redaction_tags=carl)
    assert plan(same, [older])["supersedes"] == ["old"]
