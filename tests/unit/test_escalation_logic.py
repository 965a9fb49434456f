"""Pure logic of the escalation worker: the rules classifier's truth table, reading a
model's answer, which memory is older, how an interval is closed, and the settings."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from tests.conftest import make_settings
from ibex_worker.conflict_rules import edits
from ibex_worker.conflict_rules.verdicts import (
    OUTCOMES, ConflictPair, MemoryFact, RulesClassifier, order_pair, rules_verdict, tokens,
)
from ibex_worker.escalations.apply import close_interval
from ibex_worker.escalations.classifiers import build_request, parse_answer


def at(month: int, day: int = 1) -> datetime:
    return datetime(2024, month, day, tzinfo=timezone.utc)


def fact(memory_id: str, valid_from: datetime | None, valid_until: datetime | None = None, *,
         created: datetime | None = None, content: str = "x") -> MemoryFact:
    return MemoryFact(memory_id, content, valid_from, valid_until, None, created or at(1))


# ---------------------------------------------------------------- rules

@pytest.mark.parametrize(("a", "b", "outcome", "rule"), [
    ("The staging server uses port 8080.", "The staging server uses port 8081.", "contradicts", "different_numbers"),
    ("The team standup is at 9am on Mondays.", "The team standup is at 10am on Mondays.",
     "contradicts", "different_numbers"),
    ("The refund limit is 50.00 EUR.", "The refund limit is 75.50 EUR.", "contradicts", "different_numbers"),
    ("Dark mode is enabled.", "Dark mode is not enabled.", "contradicts", "negation_flip"),
    ("The user can edit invoices.", "The user can't edit invoices.", "contradicts", "negation_flip"),
    ("The bot answers in German.", "The bot never answers in German.", "contradicts", "negation_flip"),
    ("The user does not like email.", "The user does not like email!", "compatible", "same_statement"),
    ("Dark mode is enabled.", "Dark mode is disabled.", "contradicts", "antonym_pair"),
    ("The API is public.", "The API is private.", "contradicts", "antonym_pair"),
    ("The project deadline is the end of March.", "The project deadline is the end of June.",
     "contradicts", "different_values"),
    ("Deploys happen on Tuesday.", "Deploys happen on Friday.", "contradicts", "different_values"),
    ("The vendor audit for Wonka is due on Monday, 27 September.",
     "The vendor audit for Wonka is due on Thursday, 3 March.", "contradicts", "different_values"),
    ("The vendor audit for Wonka is due on Monday, 27 September.",
     "The vendor audit for Acme is due on Thursday, 3 March.", "needs_review", "no_rule"),
    ("Deploys happen on Tuesday in March.", "Deploys happen on March in Tuesday.", "needs_review", "no_rule"),
    ("The onboarding guide for [PERSON] is due on Monday.", "The onboarding guide for [PERSON] is due on Friday.",
     "needs_review", "redacted_values_unknown"),
    ("Call [PERSON] before 9am.", "Call [PERSON] before 10am.", "needs_review", "redacted_values_unknown"),
    ("[PERSON] is available.", "[PERSON] is not available.", "needs_review", "redacted_values_unknown"),
    ("User prefers tea over coffee in the morning.", "User prefers coffee over tea in the morning.",
     "contradicts", "order_reversed"),
    ("The nightly backup runs at midnight.", "the nightly backup  runs at midnight!", "compatible", "same_statement"),
    ("Write to [EMAIL_ADDRESS] for access.", "Write to [EMAIL_ADDRESS] for access!", "needs_review",
     "redacted_values_unknown"),
    ("The team uses React for the dashboard.", "The team uses Vue for the dashboard.", "needs_review", "no_rule"),
    ("The frontend team uses React.", "The backend team uses React.", "needs_review", "no_rule"),
    ("Python and Go are used.", "Go and Python are used.", "needs_review", "no_rule"),
    ("The staging server uses port 8080.", "The production server uses port 8081.", "needs_review", "no_rule"),
    ("The limit is 5 requests.", "The limit is 5 requests per minute.", "needs_review", "no_rule"),
    ("The user likes Python.", "The user doesn't like Python.", "needs_review", "no_rule"),
    ("[PERSON] asked to be called back on [PHONE_NUMBER] regarding ticket 84898.",
     "[PERSON] asked to be called back on [PHONE_NUMBER] regarding ticket 78037.", "compatible", "different_records"),
    ("Invoices for account 919413 go to the finance team.", "Invoices for account 513692 go to the finance team.",
     "compatible", "different_records"),
    ("Order ORD-88213 ships on Monday.", "Order ORD-88214 ships on Tuesday.", "compatible", "different_records"),
    ("Ticket 84898 is closed.", "Ticket 84898 is not closed.", "contradicts", "negation_flip"),
    ("Ticket 84898 is due in 3 days.", "Ticket 84898 is due in 5 days.", "contradicts", "different_numbers"),
    ("Passwords are hashed with SHA-256.", "Passwords are hashed with SHA-512.", "contradicts", "different_numbers"),
    ("The customer prefers to be called in the afternoon, never before 2 pm.",
     "The custoemr prefers to be called in the afternono, nver before 2 pm.", "compatible",
     "same_statement_small_edits"),
    ("The team prefers the grey colour scheme for dashboards.", "The team prefers the gray color scheme for dashboards.",
     "compatible", "same_statement_small_edits"),
    ("The workshop is organised in the city centre.", "The workshop is organized in the city center.",
     "compatible", "same_statement_small_edits"),
    # Two words the lists know, one edit apart, are two values; so are numbers and short words.
    ("The new warehouse is in Kiel.", "The new warehouse is in Kiev.", "needs_review", "no_rule"),
    ("The user prefers cold drinks at lunch.", "The user prefers gold drinks at lunch.", "needs_review", "no_rule"),
    ("The warehouse ships orders placed before 4 pm.", "The warehouse sips orders placed before 4 pm.",
     "needs_review", "no_rule"),
    ("The stagng server uses port 8080.", "The staging server uses port 8081.", "needs_review", "no_rule"),
    ("The user has a cat at home.", "The user has a car at home.", "needs_review", "no_rule"),
    ("The onboarding guide for [PERSON] is due on Mnday.", "The onboarding guide for [PERSON] is due on Monday.",
     "needs_review", "redacted_values_unknown"),
    ("Our staging database is refreshed from production every Sunday.",
     "Our stagnig databse is refrehsed from prodution every Sunday.", "needs_review", "no_rule"),
])
def test_the_rules_classifier_truth_table(a, b, outcome, rule):
    verdict = rules_verdict(a, b)
    assert (verdict.outcome, verdict.rule) == (outcome, rule)
    assert rules_verdict(b, a).outcome == outcome  # symmetric
    assert verdict.reason and a not in verdict.reason and b not in verdict.reason


def test_the_rules_classifier_never_says_supersedes():
    """Overlapping or undated facts give no rule the certainty that one replaced the other."""
    pairs = [("The office opens at 9.", "The office opens at 10."), ("A is on.", "A is off."),
             ("Lunch is at noon.", "Lunch is at noon.")]
    assert {rules_verdict(a, b).outcome for a, b in pairs} <= set(OUTCOMES) - {"supersedes"}


def dated(memory_id: str, content: str, valid_from: datetime | None, valid_until: datetime | None = None, *,
          key: str | None = "user|prefer", aspect: str | None = "data work") -> MemoryFact:
    return MemoryFact(memory_id, content, valid_from, valid_until, key, at(1), aspect)


PYTHON, GO = "The user prefers Python for data work.", "The user prefers VS Code for data work."


@pytest.mark.parametrize(("older", "newer", "outcome", "rule"), [
    # ADR-0056: a sequential change of one value, both open-ended, is a supersession.
    (dated("a", PYTHON, at(3)), dated("b", GO, at(6)), "supersedes", "later_value"),
    (dated("a", "The staging server uses port 8080.", at(3), key="staging server|use", aspect=None),
     dated("b", "The staging server uses port 8081.", at(6), key="staging server|use", aspect=None),
     "supersedes", "later_different_numbers"),
    # Not the same attribute, or not a later state of it: the content rules decide.
    (dated("a", PYTHON, at(3), aspect="data work"), dated("b", GO, at(6), aspect="editing"), "needs_review", "no_rule"),
    (dated("a", PYTHON, at(3)), dated("b", "The user is switching to Go for data work.", at(6), key="user|switch"),
     "needs_review", "no_rule"),
    (dated("a", PYTHON, at(3)), dated("b", GO, at(3)), "needs_review", "no_rule"),
    (dated("a", PYTHON, None), dated("b", GO, at(6)), "needs_review", "no_rule"),
    (dated("a", PYTHON, at(3), at(9)), dated("b", GO, at(6)), "needs_review", "no_rule"),
    (dated("a", PYTHON, at(3)), dated("b", GO, at(6), at(8)), "needs_review", "no_rule"),
    (dated("a", "The staging server uses port 8080.", at(3), at(9), key="staging server|use", aspect=None),
     dated("b", "The staging server uses port 8081.", at(6), key="staging server|use", aspect=None),
     "contradicts", "different_numbers"),
    (dated("a", PYTHON, at(3), key=None), dated("b", GO, at(6), key=None), "needs_review", "no_rule"),
    (dated("a", PYTHON, at(3)), dated("b", "The user prefers Python and Go for data work.", at(6)),
     "needs_review", "no_rule"),
    (dated("a", PYTHON, at(3)), dated("b", "The user does not prefer Python for data work.", at(6)),
     "needs_review", "no_rule"),
    (dated("a", "[PERSON] prefers Python for data work.", at(3), key="[person]|prefer"),
     dated("b", "[PERSON] prefers Go for data work.", at(6), key="[person]|prefer"),
     "needs_review", "redacted_values_unknown"),
    (dated("a", PYTHON, at(3)), dated("b", "The user prefers Python for data work!", at(6)),
     "compatible", "same_statement"),
])
def test_the_rules_supersede_only_a_later_open_ended_value_of_the_same_attribute(older, newer, outcome, rule):
    verdict = RulesClassifier().classify(ConflictPair(older, newer, 0.9, "overlapping_intervals"))
    assert (verdict.outcome, verdict.rule) == (outcome, rule)
    assert verdict.reason and older.content not in verdict.reason and newer.content not in verdict.reason


def test_tokens_split_numbers_from_units_and_keep_placeholders():
    assert tokens("Standup at 9am; mail [EMAIL_ADDRESS], won't move") == \
        ["standup", "at", "9", "am", "mail", "[email_address]", "will", "not", "move"]


def test_the_rules_classifier_names_itself_with_its_version():
    assert RulesClassifier().decided_by == "classifier:rules@5"


# ---------------------------------------------------------------- reading a model's answer

def _response(content, **extra):
    return json.dumps({"choices": [{"finish_reason": extra.pop("finish_reason", "stop"),
                                    "message": {"role": "assistant", "content": content, **extra}}]})


@pytest.mark.parametrize("verdict", OUTCOMES)
def test_a_clean_json_verdict_is_taken_as_it_is(verdict):
    result = parse_answer(_response(json.dumps({"verdict": verdict, "reason": "  Both   hold. "})))
    assert (result.outcome, result.reason, result.rule) == (verdict, "Both hold.", "model")


def test_a_verdict_in_a_code_fence_is_read():
    assert parse_answer(_response('```json\n{"verdict": "compatible", "reason": "r"}\n```')).outcome == "compatible"


@pytest.mark.parametrize(("payload", "rule"), [
    pytest.param(b"<html>oops</html>", "malformed_answer", id="body is not JSON"),
    pytest.param(json.dumps({"choices": []}), "malformed_answer", id="no choices"),
    pytest.param(json.dumps({"error": {"message": "x"}}), "malformed_answer", id="an error object"),
    pytest.param(_response("I think they contradict."), "malformed_answer", id="prose"),
    pytest.param(_response('{"verdict": "merge", "reason": "r"}'), "malformed_answer", id="unknown verdict"),
    pytest.param(_response('{"verdict": "contradicts"}'), "malformed_answer", id="no reason"),
    pytest.param(_response('{"verdict": "contradicts", "reason": "  "}'), "malformed_answer", id="blank reason"),
    pytest.param(_response('["contradicts"]'), "malformed_answer", id="a JSON array"),
    pytest.param(_response(None), "malformed_answer", id="null content"),
    pytest.param(_response(None, refusal="I can't help with that."), "model_refused", id="refusal"),
    pytest.param(_response('{"verdict": "contradicts", "reason": "r"}', finish_reason="content_filter"),
                 "model_refused", id="content filter"),
])
def test_an_unusable_answer_becomes_needs_review_never_a_guess(payload, rule):
    result = parse_answer(payload)
    assert (result.outcome, result.rule) == ("needs_review", rule)


def test_a_long_reason_is_bounded():
    assert len(parse_answer(_response(json.dumps({"verdict": "compatible", "reason": "x" * 5000}))).reason) == 500


def test_the_request_holds_the_redacted_facts_and_nothing_that_identifies_the_tenant():
    older = fact("11111111-1111-1111-1111-111111111111", at(1), content="Mail [EMAIL_ADDRESS] on Mondays.")
    newer = fact("22222222-2222-2222-2222-222222222222", at(6), content="Mail [EMAIL_ADDRESS] on Fridays.")
    from ibex_worker.escalations.classifiers import ConflictPair

    body = build_request("m-1", ConflictPair(older, newer, 0.97, "overlapping_intervals"))
    assert body["model"] == "m-1" and body["temperature"] == 0
    sent = json.loads(body["messages"][-1]["content"])
    assert sent == {"older": {"content": older.content, "valid_from": "2024-01-01T00:00:00+00:00",
                              "valid_until": None, "subject_key": None},
                    "newer": {"content": newer.content, "valid_from": "2024-06-01T00:00:00+00:00",
                              "valid_until": None, "subject_key": None},
                    "similarity": 0.97, "why_escalated": "overlapping_intervals"}
    assert older.memory_id not in json.dumps(body)


# ---------------------------------------------------------------- older / newer and the interval

def test_the_older_memory_has_the_earlier_valid_from_whatever_was_written_first():
    early, late = fact("a", at(1), created=at(9)), fact("b", at(6), created=at(2))
    assert order_pair(late, early) == (early, late)


@pytest.mark.parametrize("missing", ["first", "second"])
def test_without_a_valid_from_the_earlier_created_at_is_older(missing):
    first = fact("a", None if missing == "first" else at(6), created=at(1))
    second = fact("b", None if missing == "second" else at(2), created=at(3))
    assert order_pair(second, first) == (first, second)


def test_closing_an_open_interval_ends_it_at_the_newer_valid_from():
    until, record = close_interval(fact("a", at(1)), fact("b", at(6)))
    assert until == at(6)
    assert record == {"previous_valid_until": None, "closed": True, "valid_until": at(6).isoformat()}


@pytest.mark.parametrize(("older", "newer", "why"), [
    (fact("a", at(1), at(3)), fact("b", at(6)), "already_ends_by_newer_valid_from"),
    (fact("a", at(6)), fact("b", at(6)), "would_leave_an_empty_interval"),
    (fact("a", at(1)), fact("b", None), "newer_has_no_valid_from"),
])
def test_an_interval_is_never_lengthened_or_emptied(older, newer, why):
    until, record = close_interval(older, newer)
    assert until == older.valid_until
    assert (record["closed"], record["why"]) == (False, why)


def test_an_undated_older_memory_is_closed_at_the_newer_valid_from():
    assert close_interval(fact("a", None), fact("b", at(6)))[0] == at(6)


# ---------------------------------------------------------------- settings

def test_the_openai_classifier_needs_a_base_url_and_a_model():
    with pytest.raises(ValueError, match="BASE_URL"):
        make_settings(escalation_classifier="openai", escalation_openai_model="m")
    with pytest.raises(ValueError, match="MODEL"):
        make_settings(escalation_classifier="openai", escalation_openai_base_url="http://127.0.0.1:1/v1")


def test_the_lease_must_outlast_one_classification_with_all_its_retries():
    with pytest.raises(ValueError, match="escalation_lease_seconds"):
        make_settings(escalation_classifier="openai", escalation_openai_base_url="http://h/v1",
                      escalation_openai_model="m", escalation_openai_timeout_seconds=30,
                      escalation_openai_retries=3, escalation_lease_seconds=120)


def test_idle_backoff_bounds_are_ordered():
    with pytest.raises(ValueError, match="idle_backoff"):
        make_settings(escalation_idle_backoff_min_seconds=5, escalation_idle_backoff_max_seconds=1)


def test_the_api_key_is_a_secret_never_printed(monkeypatch):
    monkeypatch.setenv("IBEX_ESCALATION_OPENAI_API_KEY", "sk-live-abc123")
    monkeypatch.setenv("IBEX_ESCALATION_ORG_IDS", "acme, globex")
    settings = make_settings()
    assert "sk-live-abc123" not in repr(settings) and "sk-live-abc123" not in str(settings.model_dump())
    assert settings.escalation_openai_api_key.get_secret_value() == "sk-live-abc123"
    assert settings.escalation_org_ids == ("acme", "globex")


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("kitten", "sitting", 3), ("customer", "custoemr", 1), ("never", "nver", 1), ("form", "from", 1),
    ("abc", "abc", 0), ("", "ab", 2), ("ca", "abc", 3),
])
def test_the_edit_distance_counts_a_swap_of_neighbours_as_one_edit(a, b, expected):
    assert edits.distance(a, b) == expected == edits.distance(b, a)
