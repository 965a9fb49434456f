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
    kind, kid, digest, mark, sound = tag.split(":")
    assert kind == "PERSON" and len(kid) == 8 and mark == ""
    assert all(len(h) == 16 and int(h, 16) >= 0 for h in (digest, sound))
    assert "maria" not in tag.lower() and "lopez" not in tag.lower()
    assert redaction_tags.sound_key("Maria Lopez") not in tag


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
    assert tags_of("Call Maria today.", [("LOCATION", "Maria")])[1][0].split(":")[2] != maria[0].split(":")[2]


def test_no_key_makes_no_tags():
    assert tags_of("Call Maria today.", [("PERSON", "Maria")], key="")[1] == []


def test_tags_follow_the_placeholders_in_order():
    content, tags = tags_of("Maria called from +49 30 1234567 about Berlin.",
                            [("PHONE_NUMBER", "+49 30 1234567"), ("PERSON", "Maria")])
    assert content == "[PERSON] called from [PHONE_NUMBER] about Berlin."
    assert redaction_tags.types(tags) == ["PERSON", "PHONE_NUMBER"]


def t(etype: str, value: str, mark: str = "", kid: str = "k1") -> str:
    """A tag of the stored shape, with a readable value part; ``mark`` "s" (subject) or "v"
    (the verb's complement)."""
    return f"{etype}:{kid}:{value}" + (f":{mark}" if mark else "")


@pytest.mark.parametrize(("a", "b", "expected"), [
    ([t("PERSON", "1", "s"), t("PHONE_NUMBER", "2")], [t("PERSON", "1", "s"), t("PHONE_NUMBER", "2")], "same"),
    ([t("PERSON", "1", "s"), t("PHONE_NUMBER", "2")], [t("PERSON", "9", "s"), t("PHONE_NUMBER", "2")],
     "different_people"),
    ([t("PERSON", "1", "s"), t("PHONE_NUMBER", "2")], [t("PERSON", "1", "s"), t("PHONE_NUMBER", "9")],
     "different_values"),
    ([t("PERSON", "1", "s"), t("PHONE_NUMBER", "2")], [t("PERSON", "9", "s"), t("PHONE_NUMBER", "9")],
     "different_people"),
    ([t("PERSON", "1", "v")], [t("PERSON", "9", "v")], "different_values"),
    ([t("PERSON", "1")], [t("PERSON", "9")], None),
    ([t("PERSON", "1", "s")], [t("PERSON", "9")], None),
    ([t("PERSON", "1", "s")], [t("PERSON", "9", "v")], None),
    ([t("PERSON", "1")], [t("PERSON", "1", "v")], "same"),
    ([t("PERSON", "1")], [t("PERSON", "1", kid="k2")], None),
    ([t("PERSON", "1")], [t("PERSON", "1"), t("PHONE_NUMBER", "2")], None),
    ([t("PERSON", "1"), t("PHONE_NUMBER", "2")], [t("PHONE_NUMBER", "2"), t("PERSON", "1")], None),
    (["PERSON:1"], ["PERSON:1"], None),
    ([], [t("PERSON", "1")], None),
    (None, [t("PERSON", "1")], None),
])
def test_relation(a, b, expected):
    assert redaction_tags.relation(a, b) == expected


def test_a_name_is_marked_by_where_it_stands_and_only_a_name():
    text = "The guide for Maria Lopez is due to Omar Haddad; call +1 415 555 0100 or Ann."
    regions = [(14, 25, "PERSON", True), (36, 47, "PERSON", True), (54, 69, "PHONE_NUMBER", True),
               (73, 76, "PERSON", True)]
    plain = redaction_tags.make(KEY, "org-a", text, regions)
    marked = redaction_tags.make(KEY, "org-a", text, regions, subject=(0, 25), value=(29, 70))
    assert [tag.count(":") for tag in plain] == [4, 4, 2, 2]   # full names have a sound; "Ann" is too short
    assert [tag.split(":")[3:4] for tag in marked] == [["s"], ["v"], [], []]
    assert [tag.split(":")[3:4] for tag in plain] == [[""], [""], [], []]
    assert [tag.split(":")[:3] + tag.split(":")[4:] for tag in marked] == \
        [tag.split(":")[:3] + tag.split(":")[4:] for tag in plain]


@pytest.mark.parametrize(("etype", "a", "b", "equal"), [
    ("EMAIL_ADDRESS", "Jane.Doe@Example.com", "jane.doe@example.com", True),
    ("EMAIL_ADDRESS", "jane.doe@example.com", "jane_doe@example.com", False),
    ("EMAIL_ADDRESS", "jane.doe@example.com", "jane-doe@example.com", False),
    ("IP_ADDRESS", "10.0.0.1", "10.0.01", False),
    ("CRYPTO", "1BoatSLRHtKNngkdXEeobR76b53LETtpyT", "1boatslrhtknngkdxeeobr76b53lettpyt", False),
    ("PERSON", "O'Brien, Pat", "o brien pat", True),
    ("PHONE_NUMBER", "+44 (20) 7946-0958", "+442079460958", True),
    ("CREDIT_CARD", "4111 1111 1111 1111", "4111-1111-1111-1111", True),
    ("IBAN_CODE", "DE89 3704 0044 0532 0130 00", "de89370400440532013000", True),
])
def test_values_are_normalised_by_their_type(etype, a, b, equal):
    assert (redaction_tags.normalise(etype, a) == redaction_tags.normalise(etype, b)) is equal


def test_attach_needs_one_tag_per_placeholder_of_its_type():
    toks = tokens("Call [PERSON] on [PHONE_NUMBER?].")
    tags = [t("PERSON", "ab", "s"), t("PHONE_NUMBER", "cd")]
    assert redaction_tags.attach(toks, tags) == ["call", "[person]#ab", "on", "[phone_number?]#cd"]
    assert redaction_tags.attach(toks, tags[:1]) is None
    assert redaction_tags.attach(toks, tags[::-1]) is None
    assert redaction_tags.attach(tokens("Call Maria."), []) is None


GUIDE = "The onboarding guide for [PERSON] is due on {day}, {date} March."
CLIENT, OTHER_CLIENT = t("PERSON", "1", "s"), t("PERSON", "2", "s")


@pytest.mark.parametrize(("a", "tags_a", "b", "tags_b", "outcome", "rule"), [
    (GUIDE.format(day="Monday", date=3), [CLIENT], GUIDE.format(day="Friday", date=7), [CLIENT],
     "contradicts", "different_values"),
    (GUIDE.format(day="Monday", date=3), [CLIENT], GUIDE.format(day="Friday", date=7), [OTHER_CLIENT],
     "compatible", "different_people"),
    (GUIDE.format(day="Monday", date=3), [CLIENT], GUIDE.format(day="Friday", date=7), [],
     "needs_review", "redacted_values_unknown"),
    (GUIDE.format(day="Monday", date=3), [CLIENT + ":77"], GUIDE.format(day="Friday", date=7), [OTHER_CLIENT + ":77"],
     "needs_review", "names_sound_alike"),           # "Jon Smyth" and "John Smith": possibly one person
    ("Call [PERSON] before 9am.", [CLIENT], "Call [PERSON] before 10am.", [CLIENT], "contradicts", "different_numbers"),
    ("[PERSON] is available.", [CLIENT], "[PERSON] is not available.", [CLIENT], "contradicts", "negation_flip"),
    ("The user's manager is [PERSON].", [t("PERSON", "1", "v")], "The user's manager is [PERSON].",
     [t("PERSON", "2", "v")], "contradicts", "different_values"),
    ("Remind the team that [PERSON] is on leave.", [t("PERSON", "1")], "Remind the team that [PERSON] is on leave.",
     [t("PERSON", "2")], "needs_review", "redacted_values_unknown"),
    ("Write to [EMAIL_ADDRESS] for access.", [t("EMAIL_ADDRESS", "1")], "Write to [EMAIL_ADDRESS] for access!",
     [t("EMAIL_ADDRESS", "1")], "compatible", "same_statement"),
    ("Write to [EMAIL_ADDRESS] for access.", [t("EMAIL_ADDRESS", "1")], "Write to [EMAIL_ADDRESS] for access.",
     [t("EMAIL_ADDRESS", "2")], "contradicts", "different_values"),
    ("[PERSON] can be reached on [PHONE_NUMBER].", [CLIENT, t("PHONE_NUMBER", "1")],
     "[PERSON] can be reached on [PHONE_NUMBER].", [CLIENT, t("PHONE_NUMBER", "2")], "contradicts", "different_values"),
    ("Email [EMAIL_ADDRESS] about [PERSON].", [t("EMAIL_ADDRESS", "1"), t("PERSON", "1")],
     "Email [EMAIL_ADDRESS] about [PERSON].", [t("EMAIL_ADDRESS", "1"), t("PHONE_NUMBER", "1")],
     "needs_review", "redacted_values_unknown"),
    ("Call [PERSON] today.", [t("PERSON", "1")], "Call [PERSON] today.", [t("PERSON", "1", kid="k2")],
     "needs_review", "redacted_values_unknown"),
    ("The producer wrote [PERSON] itself.", [], "The producer wrote [PERSON] itself.", [],
     "needs_review", "redacted_values_unknown"),
])
def test_the_rules_read_placeholders_through_their_tags(a, tags_a, b, tags_b, outcome, rule):
    verdict = rules_verdict(a, b, tags_a, tags_b)
    assert (verdict.outcome, verdict.rule) == (outcome, rule)
    assert rules_verdict(b, a, tags_b, tags_a).outcome == outcome  # symmetric


def test_a_later_value_never_hides_a_second_changed_value_behind_a_placeholder():
    from datetime import datetime, timezone

    from ibex_worker.conflict_rules.verdicts import ConflictPair, MemoryFact, RulesClassifier

    jan, mar = datetime(2024, 1, 1, tzinfo=timezone.utc), datetime(2024, 3, 1, tzinfo=timezone.utc)

    def fact(memory_id, content, start, phone):
        return MemoryFact(memory_id, content, start, None, "user|take", start, None, (t("PHONE_NUMBER", phone),))

    both = ConflictPair(fact("1", "The user takes calls at [PHONE_NUMBER] on weekdays.", jan, "a"),
                        fact("2", "The user takes calls at [PHONE_NUMBER] on holidays.", mar, "b"), None, "x")
    one = ConflictPair(fact("1", "The user takes calls at [PHONE_NUMBER] on weekdays.", jan, "a"),
                       fact("2", "The user takes calls at [PHONE_NUMBER] on holidays.", mar, "a"), None, "x")
    assert RulesClassifier().classify(both).outcome == "needs_review"
    assert (RulesClassifier().classify(one).outcome, RulesClassifier().classify(one).rule) == ("supersedes",
                                                                                                "later_value")


def test_a_model_classifier_is_never_sent_the_tags():
    from datetime import datetime, timezone

    from ibex_worker.escalations.classifiers import ConflictPair, MemoryFact, build_request

    at = datetime(2024, 1, 1, tzinfo=timezone.utc)
    older = MemoryFact("1", "Call [PERSON] on Monday.", None, None, None, at, None, ("PERSON:k1:0123456789abcdef",))
    newer = MemoryFact("2", "Call [PERSON] on Friday.", None, None, None, at, None, ("PERSON:k1:fedcba9876543210",))
    body = str(build_request("m", ConflictPair(older, newer, 0.95, "missing_valid_from")))
    assert "0123456789abcdef" not in body and "fedcba9876543210" not in body


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Jon Smyth", "John Smith", True),
    ("Katherine Olsen", "Catherine Olson", True),
    ("Steven Marsh", "Stephen Marsh", True),
    ("Mohammed Rahman", "Muhammad Rahman", True),
    ("José Pérez", "Jose Perez", True),
    ("John Smith", "Jane Smith", False),        # another first vowel
    ("Maria Rossi", "Mario Rossi", False),      # another last vowel
    ("Daniel Cohen", "Daniela Cohen", False),
    ("Tim Walsh", "Tom Walsh", False),
    ("Peter Novak", "Paul Novak", False),
])
def test_two_spellings_of_a_name_sound_alike_and_two_names_do_not(a, b, alike):
    assert (redaction_tags.sound_key(a) == redaction_tags.sound_key(b)) is alike


@pytest.mark.parametrize("name", ["Tim Lee", "Ann", "王芳", "Анна Петрова", ""])
def test_a_short_name_or_one_of_another_script_has_no_sound(name):
    assert redaction_tags.sound_key(name) is None


def test_names_spelt_two_ways_are_possibly_one_person_and_other_values_still_count():
    _, smyth = tags_of("Jon Smyth asked for a call back.", [("PERSON", "Jon Smyth")])
    _, smith = tags_of("John Smith asked for a call back.", [("PERSON", "John Smith")])
    _, jane = tags_of("Jane Smith asked for a call back.", [("PERSON", "Jane Smith")])
    def mark(tags: list[str]) -> list[str]:  # as the subject of their sentence (the parse marks it in the pipeline)
        return [":".join(t.split(":")[:3] + ["s"] + t.split(":")[4:]) for t in tags]

    assert redaction_tags.relation(mark(smyth), mark(smith)) == "names_sound_alike"
    assert redaction_tags.relation(mark(smith), mark(jane)) == "different_people"
    assert redaction_tags.relation(smyth, smith) == "names_sound_alike"
    legacy = [":".join(t.split(":")[:3]) + ":s" for t in smyth], [":".join(t.split(":")[:3]) + ":s" for t in smith]
    assert redaction_tags.relation(*legacy) == "different_people"   # tags stored before sounds were kept


def test_a_text_hashes_as_it_did_before_names_had_a_sound():
    from ibex_worker.pipeline.exact_dedup import content_hash

    _, (tag,) = tags_of("Call Maria Lopez today.", [("PERSON", "Maria Lopez")])
    kind, kid, value, mark, sound = tag.split(":")
    assert sound and redaction_tags.identity(tag) == f"{kind}:{kid}:{value}"
    stored_before = [f"{kind}:{kid}:{value}"]
    assert content_hash("Call [PERSON] today.", [tag]) == content_hash("Call [PERSON] today.", stored_before)
    marked = f"{kind}:{kid}:{value}:s:{sound}"
    assert redaction_tags.identity(marked) == f"{kind}:{kid}:{value}:s"
    assert redaction_tags.identity("PERSON:1") == "PERSON:1"
