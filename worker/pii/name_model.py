"""A learned arbiter for person names: which words of a text are somebody's name.

The rule finders (``names``, spaCy's tagger, the refinement in ``adapters.recognizers``) each
see one kind of evidence; how much each deserves depends on the rest of the sentence. This
model weighs them together with the words around each word: two logistic regressions over
the features below (``NameModel``; the second also reads the first's verdict on the
neighbours), trained on the ``dev`` split of the labelled corpus
(``ops/pii/train_name_model.py``), whose weights ship in ``data/name_model.json.gz``.

Every feature is read from the canonical view (``casing``) and its parse, never from the
producer's casing, so the answer is the same for the same text in another case or spacing.
The features are:

- the word itself (lower case), its affixes, its shape in the view (the view capitalises a
  word the lexicon does not know as common English) and its length;
- what the word lists know of it: given name, family name, place, a common word and how
  often that word is capitalised in running text;
- spaCy's part of speech, dependency, entity label and the word it depends on;
- which finder reported a person over it before refinement, whether a person survived
  refinement there, and whether another type (an address, an e-mail) covers it;
- the same, more briefly, for the two words on either side.

Pure: the caller supplies the parse (any object with spaCy's token attributes) and spans.
"""

from __future__ import annotations

import bisect
import gzip
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from itertools import repeat
from typing import Any

from spacy.lang.en.stop_words import STOP_WORDS

from ibex_worker.pii.languages import function_words
from ibex_worker.pii.lexicon import capitalised_share, gazetteer, is_common, places, rare
from ibex_worker.pii.name_words import PARTICLES
from ibex_worker.pii.names import CUE_WORDS
from ibex_worker.pii.vocab import BRANDS, CALENDAR_WORDS, DEMONYMS, NOT_A_PERSON

# The sources of evidence a span can come from (the finder names refinement uses, and two
# summaries of what refinement made of them).
SOURCES = ("spacy", "cued", "known", "thing", "script", "kept", "other")
_LATIN = re.compile(r"^[\u0000-\u024f\u1e00-\u1eff'’\-.]+$")
_WINDOW = (-2, -1, 1, 2)


@dataclass(frozen=True)
class Evidence:
    """Spans (view coordinates) per source: ``{"spacy": [(start, end), ...], ...}``."""

    spans: Mapping[str, Sequence[tuple[int, int]]]

    def covering(self, start: int, end: int) -> list[str]:
        return [source for source in SOURCES
                if any(s < end and start < e for s, e in self.spans.get(source, ()))]


def _shape(word: str) -> str:
    out: list[str] = []
    for ch in word:
        kind = "X" if ch.isupper() else "x" if ch.isalpha() else "d" if ch.isdigit() else ch
        if not out or out[-1] != kind:
            out.append(kind)
    return "".join(out)[:5]


def _share_bucket(lower: str) -> str:
    share = capitalised_share(lower)
    if share is None:
        return "none"
    if rare(lower):
        return "rare"
    return next(label for limit, label in ((0.02, "0"), (0.08, "lo"), (0.2, "mid"), (0.5, "hi"), (2.0, "top"))
                if share < limit)


def _script(word: str) -> str:
    return "latin" if _LATIN.match(word) else "other"


@dataclass(frozen=True)
class Word:
    """A run of letters of the view (apostrophes and hyphens inside; a possessive ``'s``
    left out), with the spaCy token it lies in."""

    start: int
    end: int
    text: str
    token: Any

    @property
    def lower(self) -> str:
        return self.text.lower()


_WORD_RE = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)


def words_of(text: str, doc: Sequence[Any]) -> list[Word]:
    """The words of ``text`` (the view ``doc`` parses), in order."""
    starts = [token.idx for token in doc]
    words = []
    for match in _WORD_RE.finditer(text):
        value = _POSSESSIVE.sub("", match.group(0)) or match.group(0)
        index = max(0, bisect.bisect_right(starts, match.start()) - 1)
        words.append(Word(match.start(), match.start() + len(value), value, doc[index] if doc else None))
    return words


@lru_cache(maxsize=1 << 16)
def _lexical(text: str) -> tuple[str, ...]:
    """What a word is by itself (its letters in the view): its identity, shape and affixes,
    and what the word lists know of it. The shape comes second."""
    lower = text.lower()
    feats = [f"w={lower}", f"sh={_shape(text)}", f"suf3={lower[-3:]}", f"suf2={lower[-2:]}",
             f"pre2={lower[:2]}", f"len={min(len(lower), 9)}", f"cs={_share_bucket(lower)}",
             f"script={_script(text)}"]
    feats += [f"gz={kind}" for kind in gazetteer().get(lower, "")]
    for flag, present in (("place", lower in places()), ("common", is_common(lower)), ("stop", lower in STOP_WORDS),
                          ("fw", _foreign_word(lower)), ("cue", lower in CUE_WORDS),
                          ("particle", lower in PARTICLES)):
        if present:
            feats.append(flag)
    feats += [kind for kind, words in _WORD_LISTS if lower in words]
    return tuple(feats)


@lru_cache(maxsize=1 << 16)
def _lexical_at(offset: int, text: str) -> tuple[str, ...]:
    """The lexical features a neighbour ``offset`` words away contributes."""
    return tuple(f"{offset}:{f}" for f in _lexical(text) if f.startswith(_CONTEXT_KEEP))


def _contextual(word: Word, evidence: Evidence) -> list[str]:
    """What the parse and the finders say of a word where it stands."""
    feats = []
    token = word.token
    if token is not None:
        feats += [f"pos={token.pos_}", f"dep={token.dep_}", f"ent={token.ent_iob_}{token.ent_type_}"]
        if len(token.text) > len(word.text) + 2:
            feats.append("glued")  # part of a longer token: "1183,Lukas,Berger", "name=Ada"
    feats += [f"r={source}" for source in evidence.covering(word.start, word.end)]
    return feats


_BRAND_WORDS = frozenset(word for brand in BRANDS for word in brand.split())
_WORD_LISTS = (("product", NOT_A_PERSON), ("calendar", CALENDAR_WORDS), ("demonym", DEMONYMS),
               ("brand", _BRAND_WORDS))


def _foreign_word(lower: str) -> bool:
    return lower in function_words()


_CONTEXT_KEEP = ("w=", "sh=", "gz=", "r=", "pos=", "ent=", "cue", "place", "cs=", "fw", "product", "particle")


def _between(text: str, words: Sequence[Word], i: int, j: int) -> str:
    """What separates word ``i`` from word ``j`` (``i < j``), for context: a space, a comma..."""
    gap = text[words[i].end:words[j].start].strip()
    return gap[:2] if gap else "_"


def word_features(text: str, words: Sequence[Word], evidence: Evidence, *, foreign: bool) -> list[list[str]]:
    """The features of every word."""
    lexical = [_lexical(word.text) for word in words]
    contextual = [_contextual(word, evidence) for word in words]
    out = []
    for i, word in enumerate(words):
        own = [*lexical[i], *contextual[i]]
        feats = ["bias", *own]
        if i == 0 or re.search(r"[.!?:;\n]\s*$", text[words[i - 1].end:word.start]):
            feats.append("start")
        if foreign:
            feats.append("foreign")
        token = word.token
        if token is not None and token.head is not token:
            feats += [f"head={token.head.lower_}", f"headpos={token.head.pos_}"]
        shape = lexical[i][1]
        feats += [f"{shape}&{kind}" for kind in _SHAPED if kind in own]
        if i:
            feats.append(f"gap-1={_between(text, words, i - 1, i)}")
        if i + 1 < len(words):
            feats.append(f"gap+1={_between(text, words, i, i + 1)}")
        for offset in _WINDOW:
            j = i + offset
            if 0 <= j < len(words):
                feats += _lexical_at(offset, words[j].text)
                feats += [f"{offset}:{f}" for f in contextual[j] if f.startswith(_CONTEXT_KEEP)]
            else:
                feats.append(f"{offset}:none")
        out.append(feats)
    return out


_SHAPED = ("gz=g", "gz=s", "place", "r=kept", "r=spacy", "r=known", "r=cued")


_BUCKETS = (0.05, 0.15, 0.3, 0.5, 0.7)


def _bucket(p: float) -> int:
    return bisect.bisect_right(_BUCKETS, p)


def second_pass_features(words: Sequence[Word], first: Sequence[float]) -> list[list[str]]:
    """What the first pass thought of each word, its neighbours and its other occurrences:
    a name is seldom alone in being one (``Hope Adjovi``), and a word that is a name once
    in a text usually is everywhere in it."""
    best: dict[str, float] = {}
    for word, p in zip(words, first, strict=True):
        best[word.lower] = max(best.get(word.lower, 0.0), p)
    out = []
    for i, word in enumerate(words):
        feats = [f"p0={_bucket(first[i])}"]
        for offset in (-2, -1, 1, 2):
            j = i + offset
            feats.append(f"p{offset}={_bucket(first[j]) if 0 <= j < len(words) else 'none'}")
        feats.append(f"same={_bucket(best[word.lower])}")
        out.append(feats)
    return out


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


class NameModel:
    """Two logistic regressions: the first over the word features, the second over the same
    features and what the first made of the word's neighbours (``second_pass_features``)."""

    def __init__(self, first: Mapping[str, float], second: Mapping[str, float] | None = None, *,
                 threshold: float) -> None:
        self.first = dict(first)
        self.second = dict(second) if second is not None else None
        self.threshold = threshold

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NameModel:
        return cls(data["first"], data.get("second"), threshold=float(data["threshold"]))

    @staticmethod
    def _score(weights: Mapping[str, float], feats: Iterable[str]) -> float:
        return _sigmoid(sum(map(weights.get, feats, repeat(0.0))))

    def first_pass(self, feats: Sequence[Sequence[str]]) -> list[float]:
        return [self._score(self.first, f) for f in feats]

    def probabilities(self, text: str, words: Sequence[Word], evidence: Evidence, *, foreign: bool) -> list[float]:
        feats = word_features(text, words, evidence, foreign=foreign)
        first = self.first_pass(feats)
        if self.second is None:
            return first
        return [self._score(self.second, [*f, *g]) for f, g in zip(feats, second_pass_features(words, first),
                                                                     strict=True)]


@lru_cache(maxsize=1)
def shipped_model() -> NameModel:
    """The model trained by ``ops/pii/train_name_model.py``, from the package data."""
    data = resources.files("ibex_worker.pii").joinpath("data/name_model.json.gz").read_bytes()
    return NameModel.from_json(json.loads(gzip.decompress(data)))


GROW = 0.35  # a word beside a name joins it at this share of the threshold ("bin", "Op de")


def name_spans(text: str, words: Sequence[Word], probabilities: Sequence[float],
               threshold: float) -> list[tuple[int, int]]:
    """Names: a word at or above ``threshold`` seeds one, which grows over neighbouring
    words at or above ``GROW * threshold`` joined to it (see ``_joined``: ``Mohammed bin
    Rashid``, a particle the model doubts still belongs to the name), and so does every
    other occurrence of a seed's word in the text (``Hugo ... Hugo's inhaler``).
    ``(start, end)`` in view coordinates."""
    low = GROW * threshold
    possible = [not _lone_letter(text, w) for w in words]
    seeds = {w.lower for w, p, ok in zip(words, probabilities, possible, strict=True) if p >= threshold and ok}
    chosen = [ok and (p >= threshold or p >= low and w.lower in seeds and len(w.text) >= 3)
              for w, p, ok in zip(words, probabilities, possible, strict=True)]
    for _ in range(3):
        for i in range(len(words)):
            if not chosen[i] and possible[i] and probabilities[i] >= low:
                chosen[i] = (i > 0 and chosen[i - 1] and _joined(text, words, i - 1)
                             or i + 1 < len(words) and chosen[i + 1] and _joined(text, words, i))
    spans: list[tuple[int, int]] = []
    for i, word in enumerate(words):
        if not chosen[i]:
            continue
        if spans and i and chosen[i - 1] and _joined(text, words, i - 1):
            spans[-1] = (spans[-1][0], word.end)
        else:
            spans.append((word.start, word.end))
    return spans


def _lone_letter(text: str, word: Word) -> bool:
    """A single Latin letter without the dot of an initial ("r coming", "plan b") is no name."""
    return len(word.text) == 1 and word.text.isascii() and not text.startswith(".", word.end)


def _joined(text: str, words: Sequence[Word], i: int) -> bool:
    """Word ``i`` and the next are parts of one name: a space or a hyphen between them, or
    the dot of an initial (``M. J. Castellanos``, ``M.-L. Fontaine``)."""
    gap = text[words[i].end:words[i + 1].start]
    return gap in (" ", "-") or len(words[i].text) == 1 and gap in (". ", ".", ".-")
