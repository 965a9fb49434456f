"""Token-level comparisons for the rules classifier, pure: whether two words are one word
written twice (a misspelling or a British/American spelling variant), so that a
restatement with small edits ("custoemr", "colour" / "color") is told from a statement with
another value; and whether two statements differ in one value only.

A pair of words is a **misspelling** when they are at most one edit apart (an insertion, a
deletion, a substitution or two neighbouring letters swapped; two edits in words of eight
letters or more), both have at least four letters, and at least one of them is no word
the lists know (an English dictionary with inflections, place names, given and family
names, demonyms): "Kiel" / "Kiev" or "cold" / "gold" are two words, never a typo. A
**spelling variant** is the same word after the regular British/American endings are
made one (-our/-or, -ise/-ize, -yse/-yze, -tre/-ter, -ence/-ense, -ll-/-l-, -ogue/-og,
-amme/-am) or one of a short list of irregular pairs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from ibex_worker.pii import lexicon, vocab

MIN_LETTERS = 4
LONG_WORD = 8  # from this length, two edits are still a misspelling
MAX_EDITED_WORDS = 3
MAX_VALUE_WORDS = 3

_ENDINGS = (
    (re.compile(r"(?<=[a-z]{3})our(s|ed|ing|ite|ites|able|er|ers|ful|less)?$"), r"or\1"),
    (re.compile(r"(?<=[a-z]{3})is(e|es|ed|ing|er|ers|ation|ations)$"), r"iz\1"),
    (re.compile(r"(?<=[a-z]{3})ys(e|es|ed|ing)$"), r"yz\1"),
    (re.compile(r"(?<=[a-z]{2})([tb])re(s|d)?$"), r"\1er\2"),
    (re.compile(r"(?<=[a-z]{3})ence(s)?$"), r"ense\1"),
    (re.compile(r"(?<=[aeiou])ll(ed|ing|er|ers|or|ors)$"), r"l\1"),
    (re.compile(r"(?<=[a-z]{3})ogue(s)?$"), r"og\1"),
    (re.compile(r"(?<=[a-z]{3})amme(s)?$"), r"am\1"),
)
_IRREGULAR = {"grey": "gray", "greys": "grays", "tyre": "tire", "tyres": "tires", "mould": "mold",
              "aluminium": "aluminum", "judgement": "judgment", "ageing": "aging", "plough": "plow",
              "jewellery": "jewelry", "manoeuvre": "maneuver", "pyjamas": "pajamas", "sceptical": "skeptical",
              "moustache": "mustache", "yoghurt": "yogurt", "enrol": "enroll", "fulfil": "fulfill"}


def small_edits_only(a: list[str], b: list[str]) -> bool:
    """Two token lists of one length where at most ``MAX_EDITED_WORDS`` words differ, at
    least three are equal, and every differing pair is one word (``same_word``): numbers,
    placeholders and words the lexicons know on both sides never pass."""
    if len(a) != len(b):
        return False
    diffs = [(x, y) for x, y in zip(a, b) if x != y]
    return (0 < len(diffs) <= MAX_EDITED_WORDS and len(a) - len(diffs) >= 3
            and all(same_word(x, y) for x, y in diffs))


def one_value_replaced(a: list[str], b: list[str], fixed: Callable[[str], bool]) -> bool:
    """The token lists share a beginning and an end (two tokens at least) and differ in one
    run of at most ``MAX_VALUE_WORDS`` tokens on each side, none of them ``fixed``: one
    value of the same attribute ("prefers python for data work" / "prefers vs code for data
    work")."""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    ma, mb = a[start:len(a) - end], b[start:len(b) - end]
    return (start + end >= 2 and 0 < len(ma) <= MAX_VALUE_WORDS and 0 < len(mb) <= MAX_VALUE_WORDS
            and not any(fixed(t) for t in ma + mb))


def same_word(a: str, b: str) -> bool:
    """``a`` and ``b`` (lower case) are one word: equal, a spelling variant or a misspelling."""
    return a == b or spelling_variant(a, b) or misspelling(a, b)


def spelling_variant(a: str, b: str) -> bool:
    return a != b and a.isalpha() and b.isalpha() and _american(a) == _american(b)


def misspelling(a: str, b: str) -> bool:
    if not (a.isalpha() and b.isalpha()) or min(len(a), len(b)) < MIN_LETTERS:
        return False
    limit = 2 if min(len(a), len(b)) >= LONG_WORD else 1
    return 0 < distance(a, b) <= limit and not (_known(a) and _known(b))


def distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and swaps of
    two neighbouring letters, each one edit."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def _american(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    for pattern, replacement in _ENDINGS:
        word = pattern.sub(replacement, word)
    return word


def load() -> None:
    """Read the word lists now: a worker process does at start, so that the first write to
    meet a possible typo does not wait for them (half a second)."""
    _english()
    lexicon.places()
    lexicon.gazetteer()


def _known(word: str) -> bool:
    return word in _english() or word in lexicon.places() or word in lexicon.gazetteer() or word in vocab.DEMONYMS


@lru_cache(maxsize=1)
def _english() -> frozenset[str]:
    """pyspellchecker's English frequency dictionary (words of subtitles and books, with
    their inflections): unlike ``lexicon.common_words``, which holds corpus noise such as
    "prodution", it holds no common misspellings."""
    from spellchecker import SpellChecker

    return frozenset(SpellChecker(language="en", distance=1).word_frequency.dictionary)
