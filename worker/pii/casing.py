"""The canonical view a text is analysed in: whitespace collapsed, case folded, then truecased.

Redaction must not depend on how a producer happened to type a text: ``THE CUSTOMER
RENEWS THE ATLAS CONTRACT`` and its lower-case twin must get the same placeholders, or the
exact-duplicate promise (the hash ignores case and spacing) breaks, and a name typed in
lower case in a chat must still be seen as a name. So analysis never looks at the
producer's casing or spacing: it runs on a view built only from the case-folded,
whitespace-collapsed text, in which words are given the case English text usually gives
them. A word is kept in lower case when the lexicon knows it as a common word ("grace",
"will", "python"); any other word is capitalised (names, places, products), as is the
first word of a sentence and the word after a title ("dr. young" -> "Dr. Young").

The view has exactly one character per character of the collapsed text, so a span found
in it maps back to the original text through :meth:`View.to_original`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ibex_worker.pii.lexicon import is_common

# A word: letters (apostrophes and hyphens inside), not glued to digits or underscores (ids stay
# as typed). A hyphenated compound is cased as one word: ``min-jun`` -> ``Min-Jun``.
_WORD = re.compile(r"(?<![\w\-])[^\W\d_]+(?:['’\-][^\W\d_]+)*(?![\w\-])")
_SENTENCE_END = re.compile(r"[.!?]['\")\]]*\s+$|^\s*$|[\n:;|•]\s*$")
_TITLES = frozenset({"mr", "mrs", "ms", "mx", "miss", "dr", "prof", "sir", "dame", "madam", "mme", "mlle",
                     "herr", "frau", "sr", "sra", "srta", "dona", "don", "rev", "fr", "capt", "sgt", "lt"})


@dataclass(frozen=True)
class View:
    """``text``: the analysed view; ``folded``: the same characters case-folded; ``offsets``:
    for each view position, its index in the original text."""

    original: str
    text: str
    folded: str
    offsets: tuple[int, ...]

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the view span ``[start, end)`` (``end > start``)."""
        return self.offsets[start], self.offsets[end - 1] + 1

    def across_columns(self, start: int, end: int) -> bool:
        """Whether the view span ``[start, end)`` crosses a tab (written or escaped) in the
        original: cells of a table, never one value. (A line break may wrap a long line inside
        a value, and spaces are as many as a careless writer types.)"""
        return _COLUMN_GAP.search(self.original, *self.to_original(start, end)) is not None


# A line break or tab written as an escape (``Best,\nMarc``, ``amount,order\nbc1q…``: a text
# encoded twice on its way here) reads as whitespace, except inside a Windows path, where it
# begins a folder's name (``C:\Users\nadia``, ``C:\nadia``: the word before it starts with a
# drive's letter or holds a backslash that is no escape), and after an escaped backslash (``\\n``).
_ESCAPED_BREAK = re.compile(r"(?<!\\)\\[nrt]")
_COLUMN_GAP = re.compile(r"\t|(?<!\\)\\t")
_PATH_BEFORE = re.compile(r"\\(?![nrt])|^[A-Za-z]:")


def _unescape_breaks(text: str) -> str:
    def blank(match: re.Match[str]) -> str:
        word_before = re.split(r"\s", text[max(0, match.start() - 200):match.start()])[-1]
        return match.group(0) if _PATH_BEFORE.search(word_before) else "  "
    return _ESCAPED_BREAK.sub(blank, text)


def canonical_view(text: str) -> View:
    collapsed, offsets = _collapse_whitespace(_unescape_breaks(text))
    folded = "".join(_fold(ch) for ch in collapsed)
    return View(text, truecase(folded), folded, tuple(offsets))


def _collapse_whitespace(text: str) -> tuple[str, list[int]]:
    chars: list[str] = []
    offsets: list[int] = []
    for index, ch in enumerate(text):
        if ch.isspace():
            if not chars or chars[-1] == " ":
                continue
            ch = " "
        chars.append(ch)
        offsets.append(index)
    if chars and chars[-1] == " ":
        chars.pop()
        offsets.pop()
    return "".join(chars), offsets


# Capitals whose lower case is two characters or that ``re``'s case-insensitive matching equates
# with an ASCII letter: the view holds that letter ("SOSYAL GÜVENLİK" -> "sosyal güvenlik"). The
# dotless "ı" of Turkish words stays as typed, a letter of its own to the name finders.
_ASCII_FOLDS = {"\u0130": "i", "\u017f": "s", "\u212a": "k"}


def _fold(ch: str) -> str:
    if ch in _ASCII_FOLDS:
        return _ASCII_FOLDS[ch]
    lowered = ch.lower()
    return lowered if len(lowered) == 1 else ch  # keep one character per character


def matched_key(word: str) -> str:
    """A word of a list as ``re`` compares it ignoring case, for looking up what a
    case-insensitive pattern matched: there "ı" matches "i" ("adi" for the cue "adı")."""
    return word.lower().replace("ı", "i")


def _upper(ch: str) -> str:
    upper = ch.upper()
    return upper if len(upper) == 1 else ch  # "ß", "ﬁ": one character per character


# How much of the text before a word decides its case: the end of a sentence or a title (a
# longer look back would make the view cost the square of the text's length).
_BEFORE_REACH = 40


def truecase(folded: str) -> str:
    """Give each word of a case-folded text its usual English case (same length)."""
    out = list(folded)
    previous = ""
    for match in _WORD.finditer(folded):
        word = match.group(0)
        start = match.start()
        if _capitalise(word, folded[max(0, start - _BEFORE_REACH):start], previous,
                       folded[match.end():match.end() + 1]):
            out[start] = _upper(folded[start])
            if not is_common(word.replace("’", "'")):
                _capitalise_parts(out, match)
        previous = word
    return "".join(out)


def _capitalise(word: str, before: str, previous: str, after: str = "") -> bool:
    if word == "i" or len(word) == 1 and after.startswith("."):
        return True  # "I", and initials: "j. r. okonkwo" -> "J. R. Okonkwo"
    if _SENTENCE_END.search(before):
        return True
    if previous in _TITLES and before.rstrip().endswith((previous, previous + ".")):
        return True
    word = word.replace("’", "'")
    if is_common(word):
        return False
    return "-" not in word or not all(is_common(part) for part in word.split("-") if part)


def _capitalise_parts(out: list[str], match: re.Match[str]) -> None:
    """``o'brien`` -> ``O'Brien``: a one-letter prefix before an apostrophe is a name particle;
    each part of a hyphenated name is capitalised (``anne-marie`` -> ``Anne-Marie``)."""
    word = match.group(0)
    if len(word) > 3 and word[1] in "'’":
        out[match.start() + 2] = _upper(word[2])
    for part in re.finditer(r"-([^\W\d_])", word):
        out[match.start() + part.start(1)] = _upper(part.group(1))
