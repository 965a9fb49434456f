"""The labelled pair set of the embedding-equivalence check: seeded, every kind present for
most base facts, and each variant changed in the way its kind says (pure logic)."""

from __future__ import annotations

import difflib
from collections import Counter

from ops.bench.pairs import BASES, generate


def test_the_pairs_are_the_same_for_a_seed_and_differ_between_seeds():
    assert generate(11) == generate(11)
    assert generate(11) != generate(12)


def test_every_kind_is_there_and_labelled_as_its_kind_says():
    pairs = generate(11)
    kinds = Counter(p.kind for p in pairs)
    assert set(kinds) == {"same_words_case", "typo", "spelling", "paraphrase", "number", "negation",
                          "other_subject", "unrelated"}
    assert kinds["typo"] == 3 * len(BASES) and kinds["unrelated"] == 4 * len(BASES)
    near = {"same_words_case", "typo", "spelling", "paraphrase"}
    assert all(p.near_duplicate == (p.kind in near) for p in pairs)


def test_each_variant_changes_what_its_kind_says_and_no_more():
    for p in generate(11):
        if p.kind == "same_words_case":
            assert " ".join(p.a.lower().split()) == " ".join(p.b.lower().split())
        elif p.kind == "typo":
            assert p.a != p.b and difflib.SequenceMatcher(None, p.a, p.b).ratio() > 0.9
        elif p.kind == "number":
            assert p.a != p.b and [c for c in p.a if not c.isdigit()] == [c for c in p.b if not c.isdigit()]
        elif p.kind == "negation":
            assert p.b.count("not ") == p.a.count("not ") + 1
        elif p.kind == "unrelated":
            assert p.a in BASES and p.b in BASES and p.a != p.b
        else:
            assert p.a != p.b and p.a in BASES
