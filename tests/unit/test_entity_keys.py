"""Entity keys and resemblances as pure rules (MemCastle ADR-025, "Entities")."""

from __future__ import annotations

import pytest
from ibex_worker.entity_keys import key, one_typo_apart, resembles, similarity, subject_name


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
