"""The word lists the PII stage reads: common English words (with how often each is
capitalised in running text), given and family names of many cultures,

and place names. All are built offline into ``worker/pii/data`` (``ops/pii/build_*.py``)
and loaded once per process.
"""

from __future__ import annotations

import gzip
from functools import lru_cache
from importlib import resources

_SUFFIXES = ("'s", "’s", "s", "es", "ed", "d", "ing", "ly", "er", "ers", "est", "ness", "ment", "ments", "ation",
             "able", "ful", "less", "ish", "ism", "ist", "ists")


def _table(name: str) -> dict[str, str]:
    data = resources.files("ibex_worker.pii").joinpath(f"data/{name}").read_bytes()
    table: dict[str, str] = {}
    for line in gzip.decompress(data).decode("utf-8").splitlines():
        word, _, value = line.partition("\t")
        table[word] = value
    return table


@lru_cache(maxsize=1)
def common_words() -> dict[str, float]:
    """English words usually written in lower case, each with the share of its occurrences
    that were capitalised."""
    return {word: float(share) for word, share in _table("common_words.txt.gz").items()}


@lru_cache(maxsize=1)
def gazetteer() -> dict[str, str]:
    """Given (``g``) and family (``s``) names of many cultures: ``{"kamau": "s", "lee": "gs"}``."""
    return _table("names.txt.gz")


@lru_cache(maxsize=1)
def places() -> frozenset[str]:
    """Cities, countries, continents and US states, lower case (``ops/pii/build_places.py``)."""
    data = resources.files("ibex_worker.pii").joinpath("data/places.txt.gz").read_bytes()
    return frozenset(gzip.decompress(data).decode("utf-8").splitlines())


def capitalised_share(word: str) -> float | None:
    """How often a common word is written capitalised (0.38 for "grace"); None when the word
    is not a common lower-case word at all."""
    return common_words().get(word)


# The share ``ops/pii/build_common_words.py`` gives a WordNet word its case counts never saw:
# a rare word, as often a proper noun ("zulu", "macleod", "hayek") as a common one.
UNSEEN_SHARE = 0.5


def rare(word: str) -> bool:
    """``word`` (lower case) is in the lexicon only through WordNet, never seen in running text."""
    return common_words().get(word) == UNSEEN_SHARE


def is_common(word: str) -> bool:
    """``word`` (lower case) is a common lower-case word, or a plain inflection of one; a known
    name counts only as itself (``huber`` is not an inflection of ``hub``)."""
    lexicon = common_words()
    if word in lexicon:
        return True
    if word in gazetteer():
        return False
    return any(stem in lexicon for stem in _stems(word))


def _stems(word: str) -> list[str]:
    """What the word may be an inflection of: ``shipped`` -> ship, ``cities`` -> city."""
    stems = []
    for suffix in _SUFFIXES:
        stem = word[:-len(suffix)]
        if word.endswith(suffix) and len(stem) >= 3:
            stems.append(stem)
            if len(stem) >= 4 and stem[-1] == stem[-2]:
                stems.append(stem[:-1])  # travelling -> travel
            if stem.endswith("i"):
                stems.append(stem[:-1] + "y")  # cities -> city
            stems.append(stem + "e")  # hoping -> hope
    return stems
