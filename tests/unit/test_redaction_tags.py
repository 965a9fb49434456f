"""Keyed tags of redacted values: what a tag depends on, how two texts' tags compare, and the
conflict rules reading placeholders through them."""

from __future__ import annotations

import pytest

from ibex_worker import redaction_tags
from ibex_worker.conflict_rules.verdicts import rules_verdict, tokens
from ibex_worker.pii.policy import Finding, apply_placeholders, merge

KEY = "k" * 40


def tags_of(text: str, spans: list[tuple[str, str]], org: str = "org-a", key: str = KEY) -> tuple[str, list[str]]:
    """The redacted text and tags of ``text`` with each ``(type, value)`` masked."""
    findings = [Finding(etype, text.index(value), text.index(value) + len(value), 0.9) for etype, value in spans]
    regions = merge(findings)
    return apply_placeholders(text, findings), redaction_tags.make(key, org, text, regions)


def test_a_tag_names_its_type_and_never_holds_the_value():
    _, (tag,) = tags_of("Call Maria Lopez today.", [("PERSON", "Maria Lopez")])
    kind, _, digest = tag.partition(":")
    assert kind == "PERSON" and len(digest) == 16 and int(digest, 16) >= 0
    assert "maria" not in tag.lower() and "lopez" not in tag.lower()


def test_equal_values_get_one_tag_whatever_their_case_spacing_or_separators():
    _, a = tags_of("Call Maria Lopez today.", [("PERSON", "Maria Lopez")])
    _, b = tags_of("call MARIA   lopez today", [("PERSON", "MARIA   lopez")])
    _, c = tags_of("Ring +44 7700 900123.", [("PHONE_NUMBER", "+44 7700 900123")])
    _, d = tags_of("Ring +44-7700-900-123.", [("PHONE_NUMBER", "+44-7700-900-123")])
    assert a == b and c == d


def test_tags_differ_by_value_by_org_by_key_and_by_type():
    _, maria = tags_of("Call Maria today.", [("PERSON", "Maria")])
    assert tags_of("Call James today.", [("PERSON", "James")])[1] != maria
    assert tags_of("Call Maria today.", [("PERSON", "Maria")], org="org-b")[1] != maria
    assert tags_of("Call Maria today.", [("PERSON", "Maria")], key="j" * 40)[1] != maria
    assert tags_of("Call Maria today.", [("LOCATION", "Maria")])[1][0].partition(":")[2] != maria[0].partition(":")[2]


def test_no_key_makes_no_tags():
    assert tags_of("Call Maria today.", [("PERSON", "Maria")], key="")[1] == []


def test_tags_follow_the_placeholders_in_order():
    content, tags = tags_of("Maria called from +49 30 1234567 about Berlin.",
                            [("PHONE_NUMBER", "+49 30 1234567"), ("PERSON", "Maria")])
    assert content == "[PERSON] called from [PHONE_NUMBER] about Berlin."
    assert redaction_tags.types(tags) == ["PERSON", "PHONE_NUMBER"]


@pytest.mark.parametrize(("a", "b", "expected"), [
    (["PERSON:1", "PHONE_NUMBER:2"], ["PERSON:1", "PHONE_NUMBER:2"], "same"),
    (["PERSON:1", "PHONE_NUMBER:2"], ["PERSON:9", "PHONE_NUMBER:2"], "different_people"),
    (["PERSON:1", "PHONE_NUMBER:2"], ["PERSON:1", "PHONE_NUMBER:9"], "different_values"),
    (["PERSON:1", "PHONE_NUMBER:2"], ["PERSON:9", "PHONE_NUMBER:9"], "different_people"),
    (["PERSON:1"], ["PERSON:1", "PHONE_NUMBER:2"], None),
    (["PERSON:1", "PHONE_NUMBER:2"], ["PHONE_NUMBER:2", "PERSON:1"], None),
    ([], ["PERSON:1"], None),
    (None, ["PERSON:1"], None),
])
def test_relation(a, b, expected):
    assert redaction_tags.relation(a, b) == expected


def test_attach_needs_one_tag_per_placeholder_of_its_type():
    toks = tokens("Call [PERSON] on [PHONE_NUMBER?].")
    assert redaction_tags.attach(toks, ["PERSON:ab", "PHONE_NUMBER:cd"]) == ["call", "[person]#ab", "on",
                                                                             "[phone_number?]#cd"]
    assert redaction_tags.attach(toks, ["PERSON:ab"]) is None
    assert redaction_tags.attach(toks, ["PHONE_NUMBER:cd", "PERSON:ab"]) is None
    assert redaction_tags.attach(tokens("Call Maria."), []) is None


GUIDE = "The onboarding guide for [PERSON] is due on {day}, {date} March."


@pytest.mark.parametrize(("a", "tags_a", "b", "tags_b", "outcome", "rule"), [
    (GUIDE.format(day="Monday", date=3), ["PERSON:1"], GUIDE.format(day="Friday", date=7), ["PERSON:1"],
     "contradicts", "different_values"),
    (GUIDE.format(day="Monday", date=3), ["PERSON:1"], GUIDE.format(day="Friday", date=7), ["PERSON:2"],
     "compatible", "different_people"),
    (GUIDE.format(day="Monday", date=3), ["PERSON:1"], GUIDE.format(day="Friday", date=7), [],
     "needs_review", "redacted_values_unknown"),
    ("Call [PERSON] before 9am.", ["PERSON:1"], "Call [PERSON] before 10am.", ["PERSON:1"],
     "contradicts", "different_numbers"),
    ("[PERSON] is available.", ["PERSON:1"], "[PERSON] is not available.", ["PERSON:1"],
     "contradicts", "negation_flip"),
    ("Write to [EMAIL_ADDRESS] for access.", ["EMAIL_ADDRESS:1"], "Write to [EMAIL_ADDRESS] for access!",
     ["EMAIL_ADDRESS:1"], "compatible", "same_statement"),
    ("Write to [EMAIL_ADDRESS] for access.", ["EMAIL_ADDRESS:1"], "Write to [EMAIL_ADDRESS] for access.",
     ["EMAIL_ADDRESS:2"], "contradicts", "different_values"),
    ("[PERSON] can be reached on [PHONE_NUMBER].", ["PERSON:1", "PHONE_NUMBER:1"],
     "[PERSON] can be reached on [PHONE_NUMBER].", ["PERSON:1", "PHONE_NUMBER:2"], "contradicts", "different_values"),
    ("Email [EMAIL_ADDRESS] about [PERSON].", ["EMAIL_ADDRESS:1", "PERSON:1"],
     "Email [EMAIL_ADDRESS] about [PERSON].", ["EMAIL_ADDRESS:1", "PHONE_NUMBER:1"],
     "needs_review", "redacted_values_unknown"),
    ("The producer wrote [PERSON] itself.", [], "The producer wrote [PERSON] itself.", [],
     "needs_review", "redacted_values_unknown"),
])
def test_the_rules_read_placeholders_through_their_tags(a, tags_a, b, tags_b, outcome, rule):
    verdict = rules_verdict(a, b, tags_a, tags_b)
    assert (verdict.outcome, verdict.rule) == (outcome, rule)
    assert rules_verdict(b, a, tags_b, tags_a).outcome == outcome  # symmetric


def test_a_model_classifier_is_never_sent_the_tags():
    from datetime import datetime, timezone

    from ibex_worker.escalations.classifiers import ConflictPair, MemoryFact, build_request

    at = datetime(2024, 1, 1, tzinfo=timezone.utc)
    older = MemoryFact("1", "Call [PERSON] on Monday.", None, None, None, at, None, ("PERSON:0123456789abcdef",))
    newer = MemoryFact("2", "Call [PERSON] on Friday.", None, None, None, at, None, ("PERSON:fedcba9876543210",))
    body = str(build_request("m", ConflictPair(older, newer, 0.95, "missing_valid_from")))
    assert "0123456789abcdef" not in body and "fedcba9876543210" not in body
