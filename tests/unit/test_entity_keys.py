"""Entity keys and resemblances as pure rules (MemCastle ADR-025, "Entities")."""

from __future__ import annotations

import random

import pytest

from ibex_worker.conflict_rules import edits
from ibex_worker.entity_keys import (TYPO_MIN_CHARS, key, one_typo_apart, reach, resembles, similarity, subject_name,
                                     trigrams)


@pytest.mark.parametrize(("name", "expected"), [
    pytest.param("Atlas Support  Contract", "atlas support contract", id="case and spacing"),
    pytest.param("Node.js", "nodejs", id="dots dropped"),
    pytest.param("O'Brien's team", "obriens team", id="apostrophes dropped"),
    pytest.param("C++ compiler", "c++ compiler", id="plus kept"),
    pytest.param("C# service", "c# service", id="hash kept"),
    pytest.param("billing-service / v2", "billing service v2", id="other punctuation one space"),
    pytest.param("snake_case_name", "snake case name", id="underscore is punctuation"),
    pytest.param("Café Lumière", "café lumière", id="accents kept"),
    pytest.param("--", "", id="no letter or digit"),
])
def test_a_key_keeps_what_tells_names_apart(name, expected):
    assert key(name) == expected


def test_c_plus_plus_is_not_c_and_cafe_is_not_café():
    assert key("C++") != key("C") and key("C#") != key("C")
    assert key("café") != key("cafe")


def test_a_key_is_stable_under_case_and_spacing():
    assert key("  the ORION   project ") == key("The Orion Project") == "the orion project"


@pytest.mark.parametrize(("a", "b", "threshold", "expected"), [
    pytest.param("colour scheme", "color scheme", 0.6, True, id="a spelling variant resembles"),
    pytest.param("billing service", "billing servce", 0.6, True, id="a typo in a long name resembles"),
    pytest.param("staging server", "production server", 0.6, False, id="another thing does not"),
    pytest.param("user", "customer", 0.6, False, id="unrelated short names do not"),
    pytest.param("colour scheme", "colour scheme", 0.1, False, id="the same key is not a resemblance"),
    pytest.param("colour scheme", "color scheme", 0.7, False, id="below the threshold in force"),
])
def test_resemblance_needs_the_threshold_and_two_different_keys(a, b, threshold, expected):
    score = resembles(a, b, threshold)
    assert (score is not None) is expected
    if expected:
        assert threshold <= score == round(similarity(a, b), 4) < 1.0


def test_similarity_is_symmetric_and_one_for_the_same_key():
    assert similarity("colour scheme", "color scheme") == similarity("color scheme", "colour scheme")
    assert similarity("orion", "orion") == 1.0
    assert similarity("", "orion") == 0.0


@pytest.mark.parametrize(("subject_key", "expected"), [
    pytest.param("atlas support contract|renew", "atlas support contract", id="the subject part"),
    pytest.param("user|prefer", "user", id="one word"),
    pytest.param("[PERSON]|call", None, id="a redacted subject names no entity"),
    pytest.param("[PERSON] account|close", None, id="a subject holding a placeholder names none"),
    pytest.param("|use", None, id="no subject"),
    pytest.param(None, None, id="no key"),
    pytest.param("no separator", None, id="not a subject key"),
])
def test_a_subject_key_names_an_entity_only_without_placeholders(subject_key, expected):
    assert subject_name(subject_key) == expected


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("atlas support contract", "atlas suport contract", True),
    ("atlas support contract", "atlas support contarct", True),
    ("colour scheme", "color scheme", True),
    ("server a", "server b", False),            # a one-letter word is another word, not a typo
    ("kiel office", "kiev office", False),      # two real names
    ("cold storage", "gold storage", False),    # two dictionary words
    ("port 8080 rule", "port 8081 rule", False),
    ("c++", "c#", False),
    ("zorbax", "zorbix", True),
    ("zorba", "zorbi", False),                  # under six characters
    ("atlas suport contrac", "atlas support contract", False),  # two words differ
    ("atlas support contract", "atlas support contract", False),
])
def test_one_typo_apart(a, b, expected):
    assert one_typo_apart(a, b) is expected
    assert one_typo_apart(b, a) is expected


def _shared(a: str, b: str) -> int:
    return len(trigrams(a) & trigrams(b))


def _misspelt(rng: random.Random, word: str) -> str:
    i = rng.randrange(len(word) - 1)
    return rng.choice([word[:i] + rng.choice("aeioubdkrst") + word[i + 1:], word[:i] + word[i + 1:],
                       word[:i] + rng.choice("aeioubdkrst") + word[i:], word[:i] + word[i + 1] + word[i] + word[i + 2:]])


def _in_reach(a: str, b: str, threshold: float | None, typo: bool) -> bool:
    bounds = reach(a, threshold, typo)
    return bounds is not None and _shared(a, b) >= bounds.shared > 0 and \
        bounds.fewest <= len(trigrams(b)) <= bounds.most


def test_a_key_one_typo_apart_is_in_reach_of_the_lookup():
    """``reach`` bounds what the lookup reads: only entities sharing one of the rarest
    ``len - shared + 1`` trigrams, with a count of trigrams in its range, so a key one typo
    apart outside it would never be compared. Misspellings of one and two edits and every spelling variant
    the rules know, in every position of keys of one to three words."""
    rng = random.Random(7)
    variants = [(british, american) for british, american in edits._IRREGULAR.items()] + [
        ("colour", "color"), ("organisation", "organization"), ("analysed", "analyzed"), ("centre", "center"),
        ("licence", "license"), ("travelled", "traveled"), ("catalogue", "catalog"), ("programme", "program")]
    pairs = []
    for british, american in variants:
        pairs += [(f"{british} desk", f"{american} desk"), (f"the {british}", f"the {american}"), (british, american)]
    words = ["scheduler", "contract", "pipeline", "warehouse", "gateway", "kubernetes", "invoice", "dashboard"]
    for _ in range(2000):
        chosen = rng.sample(words, rng.randint(1, 3))
        at = rng.randrange(len(chosen))
        once = _misspelt(rng, chosen[at])
        twice = _misspelt(rng, once) if len(chosen[at]) >= 8 else once
        pairs.append((" ".join(chosen), " ".join(chosen[:at] + [twice] + chosen[at + 1:])))
    checked = 0
    for a, b in pairs:
        if one_typo_apart(a, b):
            checked += 1
            assert _in_reach(a, b, None, typo=True), (a, b)
    assert checked >= 1000


def test_a_key_resembling_at_the_threshold_is_in_reach_of_the_lookup():
    rng = random.Random(11)
    checked = 0
    for _ in range(3000):
        a = "".join(rng.choice("abcde ") for _ in range(rng.randint(4, 24))).strip() or "abcd"
        b = a
        for _ in range(rng.randint(1, 6)):
            b = _misspelt(rng, b) if len(b) > 1 else b + "x"
        a, b = key(a), key(b)
        for threshold in (0.3, 0.6, 0.9):
            if resembles(a, b, threshold) is not None:
                checked += 1
                assert _in_reach(a, b, threshold, typo=False), (a, b, threshold)
    assert checked >= 500


def test_nothing_needs_comparing_when_no_rule_can_hold_and_both_rules_reach_as_far_as_either():
    assert reach("a" * (TYPO_MIN_CHARS - 1), None, typo=True) is None
    assert reach("atlas support contract", None, typo=False) is None
    both = reach("atlas support contract", 0.6, typo=True)
    typo, alike = reach("atlas support contract", None, typo=True), reach("atlas support contract", 0.6, typo=False)
    assert both.shared == min(typo.shared, alike.shared) and both.fewest == min(typo.fewest, alike.fewest)
    assert both.most == max(typo.most, alike.most)
    assert (alike.fewest, alike.most) == (14, 36)  # 22 trigrams: 0.6 x 22 = 13.2 rounded up, 22 / 0.6 = 36.7 down
