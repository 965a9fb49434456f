"""The conflict rules: what two stored statements of one agent mean to each other, decided
without a model. Pure: same facts, same verdict.

``rules_verdict`` compares two redacted texts (and the keyed tags of their placeholders,
``ibex_worker.redaction_tags``); ``RulesClassifier`` adds time: two open-ended dated facts
about one subject and aspect, the newer starting later, where the newer cannot hold beside
the older or replaces one value of it, are a supersession (ADR-0056: "prefers Python" in
March, "prefers Go" in June). The escalation worker runs them as its default classifier,
and the pipeline's conflict stage runs the supersession part on such pairs itself, so they
never wait in the queue.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from ibex_worker import identifiers, redaction_tags
from ibex_worker.conflict_rules import edits

OUTCOMES = ("supersedes", "contradicts", "compatible", "needs_review")


@dataclass(frozen=True)
class MemoryFact:
    memory_id: str
    content: str                     # redacted content, as stored in memories.content
    valid_from: datetime | None
    valid_until: datetime | None
    subject_key: str | None
    created_at: datetime
    subject_aspect: str | None = None  # the fact's "for" phrase ("for data work"), if any
    redaction_tags: tuple[str, ...] = ()  # keyed tag per placeholder, in order (ibex_worker.redaction_tags)


@dataclass(frozen=True)
class ConflictPair:
    older: MemoryFact
    newer: MemoryFact
    similarity: float | None
    escalation_reason: str           # overlapping_intervals | missing_valid_from


@dataclass(frozen=True)
class Verdict:
    outcome: str
    reason: str                      # why, in words a reviewer can check
    rule: str                        # which rule fired, or how a model's answer was read


def order_pair(a: MemoryFact, b: MemoryFact) -> tuple[MemoryFact, MemoryFact]:
    """(older, newer): the earlier ``valid_from``; if either is missing or they are equal,
    the earlier ``created_at``."""
    if a.valid_from is not None and b.valid_from is not None and a.valid_from != b.valid_from:
        return (a, b) if a.valid_from < b.valid_from else (b, a)
    return (a, b) if (a.created_at, a.memory_id) <= (b.created_at, b.memory_id) else (b, a)


RULES_VERSION = "5"

_NEGATIONS = frozenset({"not", "no", "never"})
_ANTONYMS = frozenset(frozenset(pair) for pair in (
    ("enabled", "disabled"), ("enable", "disable"), ("enables", "disables"), ("true", "false"),
    ("on", "off"), ("allow", "deny"), ("allows", "denies"), ("allowed", "denied"), ("open", "closed"),
    ("like", "dislike"), ("likes", "dislikes"), ("love", "hate"), ("loves", "hates"), ("always", "never"),
    ("increase", "decrease"), ("accept", "reject"), ("accepts", "rejects"), ("accepted", "rejected"),
    ("include", "exclude"), ("includes", "excludes"), ("included", "excluded"), ("before", "after"),
    ("above", "below"), ("more", "less"), ("higher", "lower"), ("maximum", "minimum"), ("public", "private"),
    ("active", "inactive"), ("available", "unavailable"), ("valid", "invalid"), ("required", "optional"),
    ("mandatory", "optional"), ("online", "offline"), ("success", "failure"), ("passed", "failed"),
    ("earlier", "later"), ("first", "last"), ("morning", "evening"), ("weekdays", "weekends"),
))
# Closed classes: two members are two values of one attribute, never both at once.
_VALUE_CLASSES = (
    frozenset({"january", "february", "march", "april", "may", "june", "july", "august", "september",
               "october", "november", "december"}),
    frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
               "mondays", "tuesdays", "wednesdays", "thursdays", "fridays", "saturdays", "sundays"}),
)
# A reordering around one of these reverses a relation ("tea over coffee" / "coffee over tea").
_ORDER_MARKERS = frozenset({"over", "than", "instead", "rather", "before", "after", "above", "below"})
_CONTRACTIONS = ((re.compile(r"\bcan't\b|\bcannot\b"), "can not"), (re.compile(r"\bwon't\b"), "will not"),
                 (re.compile(r"n't\b"), " not"))
_TOKEN = re.compile(r"\[[a-z_]+\??\]|\d+(?:[.,:]\d+)*|[a-z]+")
_NUMBER = re.compile(r"^\d")
_PLACEHOLDER = re.compile(r"^\[[a-z_]+\??\]$")


def tokens(content: str) -> list[str]:
    """Lower-case words, numbers (``9am`` -> ``9``, ``am``) and redaction placeholders."""
    text = content.lower().replace("\u2019", "'")
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return _TOKEN.findall(text)


def _same_except(a: list[str], b: list[str], keep: Callable[[str], bool]) -> bool:
    return [t for t in a if keep(t)] == [t for t in b if keep(t)]


def _single_substitution(a: list[str], b: list[str]) -> tuple[str, str] | None:
    if len(a) != len(b):
        return None
    diffs = [(x, y) for x, y in zip(a, b) if x != y]
    return diffs[0] if len(diffs) == 1 else None


def rules_verdict(a: str, b: str, tags_a: Sequence[str] = (), tags_b: Sequence[str] = ()) -> Verdict:
    """The rules, cheapest and most certain first. Pure: same texts and tags, same verdict.
    ``tags_a`` and ``tags_b`` are the keyed tags of each text's placeholders: with them,
    placeholders compare like the values they hide."""
    ta, tb = tokens(a), tokens(b)
    records = identifiers.distinct_records(identifiers.find(a), identifiers.find(b))
    if records:
        return Verdict("compatible", f"The statements are about different records ({', '.join(records)}): "
                                     "facts about two records can both hold.", "different_records")
    if any(_PLACEHOLDER.match(t) for t in ta + tb):
        tagged_a, tagged_b = redaction_tags.attach(ta, tags_a), redaction_tags.attach(tb, tags_b)
        if tagged_a is None or tagged_b is None or redaction_tags.relation(tags_a, tags_b) is None:
            return Verdict("needs_review", "The statements contain redacted values, which may differ: whether "
                                           "they are about the same thing cannot be told from the stored text.",
                           "redacted_values_unknown")
        if redaction_tags.relation(tags_a, tags_b) == "names_sound_alike":
            return Verdict("needs_review", "The statements name people whose names are spelt differently but "
                                           "sound alike: possibly one person, which a person should decide.",
                           "names_sound_alike")
        if redaction_tags.relation(tags_a, tags_b) == "different_people":
            return Verdict("compatible", "The statements name different people (their redacted names differ): "
                                         "facts about two people can both hold.", "different_people")
        ta, tb = tagged_a, tagged_b
    if ta == tb:
        return Verdict("compatible", "The statements say the same thing, apart from punctuation or case.",
                       "same_statement")
    if edits.small_edits_only(ta, tb):
        return Verdict("compatible", "The statements say the same thing, apart from misspelt words or spelling "
                                     "variants (colour, color).", "same_statement_small_edits")
    if _same_except(ta, tb, lambda t: t not in _NEGATIONS) and \
            sum(t in _NEGATIONS for t in ta) % 2 != sum(t in _NEGATIONS for t in tb) % 2:
        return Verdict("contradicts", "One statement negates the other: they are identical except for a "
                                      "negation.", "negation_flip")
    if _number_slots_align(ta, tb) and _same_except(ta, tb, lambda t: not _NUMBER.match(t)):
        return Verdict("contradicts", "The statements are identical except for their numbers: two values "
                                      "for the same attribute.", "different_numbers")
    swap = _single_substitution(ta, tb)
    if swap is not None and frozenset(swap) in _ANTONYMS:
        return Verdict("contradicts", "The statements are identical except for a pair of opposites.",
                       "antonym_pair")
    if _values_only_changed(ta, tb):
        return Verdict("contradicts", "The statements are identical except for values of closed sets (months, "
                                      "weekdays) or numbers: other values for the same attribute.",
                       "different_values")
    if Counter(ta) == Counter(tb) and _ORDER_MARKERS.intersection(ta):
        return Verdict("contradicts", "The statements use the same words in an order that reverses a "
                                      "comparison.", "order_reversed")
    return Verdict("needs_review", "No rule is conclusive for this pair; a person should decide.", "no_rule")


def _fixed(token: str) -> bool:
    """A token a replaced value may not hold: a negation, a placeholder (tagged or not) or a
    number."""
    return token in _NEGATIONS or redaction_tags.tagged(token) or bool(_PLACEHOLDER.match(token) or _NUMBER.match(token))


def replaced_later(pair: ConflictPair) -> bool:
    """Both facts are open-ended ("from then on"), the newer starts strictly later, and both
    have one subject key (subject and verb) and aspect, holding no placeholder. An older fact
    with an end of its own that the newer one overlaps is a claim about that overlap, and
    stays a contradiction; a newer fact with an end may be a temporary change."""
    older, newer = pair.older, pair.newer
    if older.valid_from is None or newer.valid_from is None or newer.valid_from <= older.valid_from:
        return False
    if older.valid_until is not None or newer.valid_until is not None:
        return False
    key = older.subject_key
    return (key is not None and key == newer.subject_key and "[" not in key
            and older.subject_aspect == newer.subject_aspect)


def _values_only_changed(a: list[str], b: list[str]) -> bool:
    """Same length, and every word that differs is a month or weekday swapped for another of
    its set, a redacted value for another of its type, or a number for a number, with at
    least one that is not a number among them (numbers alone are ``different_numbers``): a
    date, a day, a phone number or an address changed."""
    diffs = [(x, y) for x, y in zip(a, b) if x != y] if len(a) == len(b) else []
    return any(not _NUMBER.match(x) for x, _ in diffs) and all(
        (_NUMBER.match(x) and _NUMBER.match(y)) or any(x in cls and y in cls for cls in _VALUE_CLASSES)
        or redaction_tags.same_type(x, y) for x, y in diffs)


def _number_slots_align(a: list[str], b: list[str]) -> bool:
    """Both have numbers, at the same positions, and they differ: a value changed, not the wording."""
    return (len(a) == len(b) and any(_NUMBER.match(t) for t in a) and a != b
            and all(bool(_NUMBER.match(x)) == bool(_NUMBER.match(y)) for x, y in zip(a, b)))


def _words(fact: MemoryFact) -> list[str]:
    """The fact's tokens, placeholders carrying their tags when they can."""
    plain = tokens(fact.content)
    return redaction_tags.attach(plain, fact.redaction_tags) or plain


class RulesClassifier:
    """Deterministic and explainable; never calls a model and never guesses."""

    name = "rules"
    version = RULES_VERSION

    @property
    def decided_by(self) -> str:
        return f"classifier:{self.name}@{self.version}"

    def classify(self, pair: ConflictPair) -> Verdict:
        """``rules_verdict``, and then time: when both facts are open-ended, the newer starts
        later and both are about the same subject, verb and aspect, a statement that cannot
        hold beside the older one, or that only replaces one value of it, is the later state
        of the same attribute (ADR-0056: "prefers Python" in March, "prefers Go" in June).
        A subject key holding a placeholder never gets this far."""
        verdict = rules_verdict(pair.older.content, pair.newer.content, pair.older.redaction_tags,
                                pair.newer.redaction_tags)
        if not replaced_later(pair):
            return verdict
        if verdict.outcome == "contradicts":
            return Verdict("supersedes", f"{verdict.reason} The newer one starts later and is about the same "
                                         "subject: it replaces the older one from its start.",
                           f"later_{verdict.rule}")
        older, newer = _words(pair.older), _words(pair.newer)
        if verdict.rule == "no_rule" and edits.one_value_replaced(older, newer, _fixed):
            return Verdict("supersedes", "The newer statement, which starts later, is the older one with one value "
                                         "replaced, about the same subject and aspect: it replaces the older one "
                                         "from its start.", "later_value")
        return verdict

    def close(self) -> None:
        return None
