"""Entity identity as a pure policy (MemCastle ADR-025, "Entities"): the key a name is
resolved by, and when two keys read alike enough to be recorded as ``possibly_same_as``.

- The **key** of a name: Unicode NFC, lower case; letters and digits kept, ``+`` and ``#``
  kept (C++ is not C, C# is not C); dots and apostrophes dropped (Node.js is nodejs, O'Brien
  is obrien); any other run of characters one space. Accents are not folded: café is not
  cafe. Names of the same key are one entity.
- Two keys **resemble** each other when the Jaccard index of their character trigrams (each
  key padded with a space at both ends) reaches the threshold and they are not equal. A
  resemblance is recorded, never acted on: "colour scheme" and "color scheme" stay two
  entities until a person records one as an alias of the other.
- Two keys are **one typo apart** (rule ``typo``, ADR-025 rule 4) when they have the same
  words but one, that one a misspelling or a British/American spelling of the other
  (``conflict_rules.edits.same_word``: one edit, two in words of eight letters or more, both
  words at least four letters and not both dictionary words), and both keys have at least
  six characters: "atlas suport contract" is "atlas support contract", while "server a" /
  "server b", "kiel office" / "kiev office" and "c++" / "c#" are not.
- The entities worth comparing with a key (``reach``) share at least so many of its trigrams:
  a key of similarity ``t`` shares at least ``t`` times as many trigrams as the key has (the
  Jaccard index is at most shared / len(key's trigrams)), and a key one typo apart loses at
  most ``TYPO_LOST_TRIGRAMS`` of them (an edit touches the trigrams over its letters: three
  for a substitution or a deletion, two for an insertion, four for two letters swapped; a
  misspelling is at most two edits, and the spelling variants change no more). So an entity
  sharing none of the key's ``len - shared + 1`` rarest trigrams can be neither, and
  is never read (``store.entities.alike``); nor is one whose own count of trigrams is out of
  reach.
- A subject key's **subject** (``"atlas support contract|renew"`` -> ``"atlas support
  contract"``) names an entity only when it holds no placeholder: a redacted value cannot be
  compared, and ``[PERSON]`` is not one person.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from ibex_worker.conflict_rules import edits

NAME_MAX_CHARS = 200
_DROPPED = re.compile(r"[.'’]")
_SEPARATORS = re.compile(r"[^\w+#]+|_", re.UNICODE)


def key(name: str) -> str:
    """The key ``name`` is resolved by ("" for a name of no letter or digit)."""
    folded = _DROPPED.sub("", unicodedata.normalize("NFC", name).lower())
    return " ".join(_SEPARATORS.sub(" ", folded).split())


def trigrams(entity_key: str) -> frozenset[str]:
    padded = f" {entity_key} "
    return frozenset(padded[i:i + 3] for i in range(len(padded) - 2))


TYPO_LOST_TRIGRAMS = 8
TYPO_LENGTH_CHANGE = 2  # a misspelling's two edits, or a spelling variant ("programme", "program")


@dataclass(frozen=True)
class Reach:
    """What another key needs to be compared with a key: at least ``shared`` of the key's
    trigrams, and between ``fewest`` and ``most`` trigrams of its own."""

    shared: int
    most: int

    @property
    def fewest(self) -> int:
        return self.shared  # a key cannot share more trigrams than it has


def reach(entity_key: str, threshold: float | None, typo: bool) -> Reach | None:
    """The keys that can resemble ``entity_key`` at ``threshold`` (None: not asked) or, with
    ``typo``, be one typo apart from it; None when neither can hold (nothing to compare).
    A key resembling it shares at least ``t * n`` of its ``n`` trigrams and has between
    ``t * n`` and ``n / t`` (the Jaccard index is at most the smaller count over the larger);
    a key one typo apart shares all but ``TYPO_LOST_TRIGRAMS`` and is at most
    ``TYPO_LENGTH_CHANGE`` characters longer (a key has no more trigrams than characters)."""
    n = len(trigrams(entity_key))
    reaches = []
    if threshold is not None:
        reaches.append(Reach(max(1, math.ceil(threshold * n - 1e-9)), math.floor(n / threshold + 1e-9)))
    if typo and len(entity_key) >= TYPO_MIN_CHARS:
        reaches.append(Reach(max(1, n - TYPO_LOST_TRIGRAMS), len(entity_key) + TYPO_LENGTH_CHANGE))
    if not reaches:
        return None
    return Reach(min(r.shared for r in reaches), max(r.most for r in reaches))


def similarity(a: str, b: str) -> float:
    """Jaccard index of the two keys' trigrams."""
    ta, tb = trigrams(a), trigrams(b)
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


def resembles(a: str, b: str, threshold: float) -> float | None:
    """The similarity of two different keys when it reaches ``threshold``, else None."""
    if a == b:
        return None
    score = similarity(a, b)
    return round(score, 4) if score >= threshold else None


TYPO_MIN_CHARS = 6


def one_typo_apart(a: str, b: str) -> bool:
    """Two different keys that are one name with one word misspelt (see the module's notes)."""
    if a == b or min(len(a), len(b)) < TYPO_MIN_CHARS:
        return False
    wa, wb = a.split(), b.split()
    if len(wa) != len(wb):
        return False
    differing = [(x, y) for x, y in zip(wa, wb) if x != y]
    return len(differing) == 1 and edits.same_word(*differing[0])


def subject_name(subject_key: str | None) -> str | None:
    """The entity name a subject key's subject part gives, or None (no subject, a redacted
    one, or a name without a letter or digit)."""
    if not subject_key or "|" not in subject_key:
        return None
    subject = subject_key.split("|", 1)[0].strip()
    if not subject or "[" in subject or not key(subject):
        return None
    return subject[:NAME_MAX_CHARS]
