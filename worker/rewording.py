"""The rewording signal of near dedup: a memory said again in other words.

Neither the embedding threshold nor trigrams see a free rewording ("The user would rather be
called than e-mailed" / "Calling works better for this user than e-mail"): MiniLM puts half of
the rewordings people write under 0.92, while it puts the same template about another subject
("The CFO wants ..." / "The CTO wants ...") above 0.85. What tells them apart is which words
differ. A rewording changes verbs, adverbs and function words, or adds or drops one word; a
fact about another thing swaps one content word for another. So a pair whose embedding
similarity is above a floor (``IBEX_MEMORY_NEAR_DUPLICATE_REWORDING_FLOOR``) is a near duplicate when
at most :data:`MAX_DIFFERING` of its content words (nouns, proper nouns, numbers, adjectives,
by lemma) stand on one side only: two texts that differ by one such swap already differ by two.
Or when every content word on one side only says when (a day, a month, a date, a time, a part of
the day: "on Wednesdays" / "on Mondays", "1 August" / "15 September"): the same fact with another
date, which conflict detection then decides like any other changed value.

Content words are read by a tagger (``Tagger``; spaCy's tagger and lemmatizer, no parse) on the
stored, redacted text; a placeholder ("[PERSON]") is one content word of its type, so two
texts whose values are redacted the same way do not differ there (the screens for other
people and other records still apply). Pure: the tagging is behind the protocol.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

CONTENT_POS = frozenset({"NOUN", "PROPN", "NUM", "ADJ"})
MAX_DIFFERING = 1
# A search tags at most this many candidates, the nearest by embedding that no other signal
# linked: a templated agent proposes dozens above the floor, and each costs a tagger's pass.
CANDIDATES_TAGGED = 3
PLACEHOLDER = re.compile(r"\[[A-Z_]+\??\]")
_NAMED_WHEN = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december morning afternoon evening night noon midnight weekend "
    "weekday".split())
_ORDINAL_WORDS = frozenset("first second third fourth fifth last next".split())
_DAY_OF_MONTH = re.compile(r"\d{1,2}(?:st|nd|rd|th)")
_WHEN_NUMBER = re.compile(r"\d{1,2}(?:[:.]\d{2})?(?:am|pm)?|(?:19|20)\d{2}")


class Tagger(Protocol):
    def terms(self, text: str) -> frozenset[tuple[str, str]]:
        """(lemma, part of speech) of the text's words that are neither stop words, punctuation
        nor space, placeholders as (``[type]``, "PROPN")."""


def terms_of(tokens: Iterable[tuple[int, int, str, str, bool]], text: str) -> frozenset[tuple[str, str]]:
    """The terms of a tagged ``text``: ``tokens`` are (start, end, lemma, part of speech, is a
    stop word or punctuation or space) in text order."""
    placeholders = [(m.start(), m.end()) for m in PLACEHOLDER.finditer(text)]
    out = {(f"[{text[s + 1:e].rstrip('?]').lower()}]", "PROPN") for s, e in placeholders}
    for start, end, lemma, pos, skipped in tokens:
        if not skipped and not any(s < end and start < e for s, e in placeholders):
            out.add((lemma.lower(), pos))
    return frozenset(out)


def says_when(lemma: str) -> str | None:
    """``"named"`` for a word that names a day, month or part of the day or is a day of the
    month ("Wednesdays", "15th"), ``"number"`` for a number that can be a day, an hour or a
    year ("15", "9:30", "2026") or a word that orders weeks and days ("second", "last"), else
    None."""
    word = lemma.lower().rstrip(".")
    if word in _NAMED_WHEN or word.removesuffix("s") in _NAMED_WHEN or _DAY_OF_MONTH.fullmatch(word):
        return "named"
    return "number" if word in _ORDINAL_WORDS or _WHEN_NUMBER.fullmatch(word) else None


def only_when_differs(words: list[str]) -> bool:
    """Whether the content words on one side only all say when, one of them by name (a number
    alone is as much a count or an amount as a date, "last" and "next" as much an order)."""
    kinds = [says_when(w) for w in words]
    return bool(kinds) and None not in kinds and "named" in kinds


def reworded(words: list[str]) -> bool:
    """The rewording signal's rule on the content words on one side only (``differing``)."""
    return fires(len(words), only_when_differs(words))


def fires(differing_count: int, only_when: bool) -> bool:
    """The same rule on what a link's evidence keeps of them: their count, and whether they all
    say when."""
    return differing_count <= MAX_DIFFERING or only_when


def differing(a: frozenset[tuple[str, str]], b: frozenset[tuple[str, str]]) -> list[str]:
    """The content words, by lemma, that stand on one side only, sorted."""
    lemmas_a, lemmas_b = {lemma for lemma, _ in a}, {lemma for lemma, _ in b}
    return sorted({lemma for lemma, pos in a if pos in CONTENT_POS and lemma not in lemmas_b}
                  | {lemma for lemma, pos in b if pos in CONTENT_POS and lemma not in lemmas_a})
