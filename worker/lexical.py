"""The lexical near-duplicate signal: no model, only the stored (redacted) text.

- **Similarity** is the Jaccard index of the character trigrams of the normalised text
  (Unicode NFC, lower case, every run of characters other than letters, digits and
  placeholder brackets one space, padded with a space at each end). A typo or a spelling
  variant breaks three trigrams out of dozens, so "colour"/"color" or "Jon Smyth"/"John
  Smith" stay close where an embedding may not; accents are not folded ("café" is not
  "cafe"). Texts under :data:`MIN_CHARS` normalised characters get no lexical similarity:
  one letter in a short phrase is another word ("cat" / "car").
- The **fingerprint** is a digest of the normalised text's set of words: the same words in
  any order, case, spacing or punctuation give the same fingerprint.
- **Bands** are what the store indexes to propose candidates without reading every text: a
  MinHash signature of the trigrams (:data:`BANDS` x :data:`ROWS` hash functions), cut into
  bands, each band hashed with the org and agent into one 64-bit value. Two texts share a
  band with probability ``1 - (1 - J**ROWS)**BANDS`` (J their trigram Jaccard): 0.98 at
  J = 0.6, 0.88 at J = 0.5; the exact similarity of every proposed text is then computed.
  The org and agent in the band keep one agent's candidates away from every other's.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

MIN_CHARS = 12
BANDS, ROWS = 16, 3
_PRIME = (1 << 61) - 1


def _coefficient(name: str, i: int, bits: int) -> int:
    return int.from_bytes(hashlib.blake2b(f"ibex-lexical-{name}-{i}".encode(), digest_size=8).digest(), "big") % (
        1 << bits)


# Hash functions h(x) = (a * x + b) mod p over 32-bit trigram hashes: a < 2**29 keeps a * x + b
# inside 64 bits. Derived from fixed strings, not a random generator whose stream may change
# with NumPy: stored bands must stay comparable with new ones across processes and releases.
_A = np.array([_coefficient("a", i, 29) | 1 for i in range(BANDS * ROWS)], dtype=np.uint64)[:, None]
_B = np.array([_coefficient("b", i, 61) for i in range(BANDS * ROWS)], dtype=np.uint64)[:, None]
_SEPARATORS = re.compile(r"[^\w\[\]]+|_", re.UNICODE)


@dataclass(frozen=True)
class Profile:
    """What the store keeps of a text for the lexical signal."""

    fingerprint: str
    bands: list[int]               # empty for a text too short for a lexical similarity


def normalise(text: str) -> str:
    return " ".join(_SEPARATORS.sub(" ", unicodedata.normalize("NFC", text).lower()).split())


# Near dedup compares a new text with up to ``IBEX_NEAR_DUPLICATE_COARSE_CANDIDATES`` stored
# texts and persist's re-check with the newest again; a busy agent's texts come back as
# candidates write after write, so a process keeps the trigrams of the texts it saw last
# (about 16 KB for a text of 200 characters), and a write's own profile for the three
# places that need it.
TRIGRAM_CACHE = 1024
PROFILE_CACHE = 256


@lru_cache(maxsize=TRIGRAM_CACHE)
def trigrams(text: str) -> frozenset[str]:
    """The character trigrams of the normalised text (empty under ``MIN_CHARS`` characters)."""
    norm = normalise(text)
    if len(norm) < MIN_CHARS:
        return frozenset()
    padded = f" {norm} "
    return frozenset(padded[i:i + 3] for i in range(len(padded) - 2))


def similarity(a: str, b: str) -> float | None:
    """Trigram Jaccard of two texts; None when either is too short to compare this way."""
    return jaccard(trigrams(a), trigrams(b))


def jaccard(ta: frozenset[str], tb: frozenset[str]) -> float | None:
    """Jaccard index of two texts' trigrams (``similarity`` with one side's computed once)."""
    if not ta or not tb:
        return None
    return len(ta & tb) / len(ta | tb)


def fingerprint(text: str) -> str:
    words = sorted(set(normalise(text).split()))
    return hashlib.blake2b("\x1f".join(words).encode(), digest_size=16).hexdigest()


@lru_cache(maxsize=PROFILE_CACHE)
def profile(text: str, org_id: str, agent_id: str) -> Profile:
    grams = trigrams(text)
    return Profile(fingerprint(text), _bands(grams, org_id, agent_id) if grams else [])


def _bands(grams: frozenset[str], org_id: str, agent_id: str) -> list[int]:
    x = np.fromiter((int.from_bytes(hashlib.blake2b(g.encode(), digest_size=4).digest(), "big") for g in grams),
                    dtype=np.uint64, count=len(grams))[None, :]
    mins = ((_A * x + _B) % np.uint64(_PRIME)).min(axis=1)
    scope = f"{org_id}\x00{agent_id}".encode()
    out = []
    for band in range(BANDS):
        rows = mins[band * ROWS:(band + 1) * ROWS].astype("<u8").tobytes()
        digest = hashlib.blake2b(scope + bytes([band]) + rows, digest_size=8).digest()
        out.append(int.from_bytes(digest, "big", signed=True))
    return out
