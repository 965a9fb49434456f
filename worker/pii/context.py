"""Context around a candidate span: the words just before it, in the analysed view.

Recognizers decide with context words ("call me on", "order #"), looked for in the few
words before a candidate within the same clause (a ``|``, ``;``, newline or sentence end
closes a clause). Words are compared in lower case.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# A point ends a clause before a capital, except after the abbreviations of a number's label
# ("Alt. No.: 020 2553 1190", "Tel. Mob. 0412 ...", "art. no. 714.882.03"): the view capitalises the
# word after them.
_LABEL_ABBREVIATIONS = ("no", "nr", "alt", "tel", "mob", "ph", "ext", "ref", "fax", "num", "art")
_CLAUSE_BREAK = re.compile(r"[|;\n•]|" + "".join(rf"(?<!\b(?i:{a})\.)" for a in _LABEL_ABBREVIATIONS)
                           + r"(?<=[.!?])(?=\s+[A-Z])")
# A word's letters and the marks that belong to them (vowel signs, viramas, points: "नंबर", "ऑर्डर"
# are one word each, not three).
_LETTER = r"(?:[^\W_]|[\u0300-\u036f\u0591-\u05c7\u064b-\u065f\u0670\u0900-\u0dff\u0e31\u0e34-\u0e3a\u0e47-\u0e4e])"
_TOKEN = re.compile(rf"[#№]|{_LETTER}+(?:['’.-]{_LETTER}+)*\.?", re.UNICODE)


def words_before(text: str, start: int, count: int = 4, reach: int = 80) -> list[str]:
    """Up to ``count`` lower-case words (and ``#``) in the ``reach`` characters before
    ``start``, nearest last, not reaching back over a clause break; a possessive counts as
    its word ("mobile's")."""
    window = text[max(0, start - reach):start]
    breaks = list(_CLAUSE_BREAK.finditer(window))
    if breaks:
        window = window[breaks[-1].end():]
    return [re.sub(r"['’]s$", "", t.lower().rstrip(".")) for t in _TOKEN.findall(window)][-count:]


@dataclass(frozen=True)
class Cues:
    """Single words and multi-word phrases, matched against the words before a span."""

    words: frozenset[str]
    phrases: tuple[tuple[str, ...], ...] = ()
    _by_first: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict, init=False, repr=False,
                                                                compare=False)

    def __post_init__(self) -> None:
        by_first: dict[str, list[tuple[str, ...]]] = {}
        for phrase in self.phrases:
            by_first.setdefault(phrase[0], []).append(phrase)
        self._by_first.update({first: tuple(found) for first, found in by_first.items()})

    @classmethod
    def of(cls, items: Iterable[str]) -> "Cues":
        words, phrases = set(), []
        for item in items:
            parts = tuple(item.split())
            if len(parts) == 1:
                words.add(parts[0])
            else:
                phrases.append(parts)
        return cls(frozenset(words), tuple(phrases))

    def found_in(self, words: list[str]) -> bool:
        """A word of the cues among ``words``, or a phrase of them as consecutive words (only
        the phrases that start with one of the words are compared)."""
        if any(word in self.words for word in words):
            return True
        return any(tuple(words[i:i + len(phrase)]) == phrase
                   for i, word in enumerate(words) for phrase in self._by_first.get(word, ()))
