"""Keyed tags of redacted values: whether two stored statements name the same person, phone
or address, told without storing the value.

The PII stage gives every region it masks a tag, ``TYPE:<16 hex>``: the entity type and the
first 64 bits of HMAC-SHA256, under the org's key, of the type and the value normalised
(Unicode NFKC, case folded, every run of characters other than letters and digits one space;
a phone number's digits only). The org's key is HMAC-SHA256 of the org id under the
deployment's ``IBEX_PII_TAG_KEY``: equal values of two orgs get unrelated tags. Without the
key a tag cannot be tested against a guessed value; with it (the deployment's secret, never
stored in the database) a guess can be, as with any keyed pseudonym. So tags are
pseudonymous personal data: kept with their memory and job row, deleted with them, never
logged and never returned by the API. With no key configured no tags are made, and
placeholders stay unknown to the rules (a person decides such pairs).

Tags compare exact values only: "Maria Lopez" and "Maria" are two tags.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from collections.abc import Iterable, Sequence

# Types whose value names who a statement is about; any other type is a value stated about
# it (a phone, an address), so a different one there is another value, not another subject.
SUBJECT_TYPES = frozenset({"PERSON"})
_TAG_HEX = 16
_NOT_WORD = re.compile(r"[\W_]+")
_NOT_DIGIT = re.compile(r"\D+")
_PLACEHOLDER = re.compile(r"^\[([a-z_]+)\??\]$")  # a placeholder token of the conflict rules, "[person]"
_TAGGED = "#"  # a placeholder token with its value's tag: "[person]#<tag>", a word like any other


def org_key(key: str, org_id: str) -> bytes:
    return hmac.new(key.encode("utf-8"), b"ibex-redaction-tag:" + org_id.encode("utf-8"), hashlib.sha256).digest()


def normalise(entity_type: str, value: str) -> str:
    folded = unicodedata.normalize("NFKC", value).casefold()
    if entity_type == "PHONE_NUMBER":
        return _NOT_DIGIT.sub("", folded)
    return _NOT_WORD.sub(" ", folded).strip()


def tag(key: bytes, entity_type: str, value: str) -> str:
    message = f"{entity_type}\x00{normalise(entity_type, value)}".encode("utf-8")
    return f"{entity_type}:{hmac.new(key, message, hashlib.sha256).hexdigest()[:_TAG_HEX]}"


def make(key: str, org_id: str, text: str, regions: Iterable[tuple[int, int, str, bool]]) -> list[str]:
    """The tags of ``text``'s masked ``regions`` (``pii.policy.merge``: start, end, type,
    certain), in their order; none without a key."""
    if not key:
        return []
    secret = org_key(key, org_id)
    return [tag(secret, etype, text[start:end]) for start, end, etype, _ in regions]


def types(tags: Sequence[str]) -> list[str]:
    return [t.partition(":")[0] for t in tags]


def relation(a: Sequence[str] | None, b: Sequence[str] | None) -> str | None:
    """How the redacted values of two statements compare, when it can be told: both tagged,
    with placeholders of the same types in the same order. ``same`` (every value equal),
    ``different_people`` (a name differs: two people, so two facts), ``different_values``
    (names equal, another value differs); None when it cannot be told."""
    if not a or not b or types(a) != types(b):
        return None
    differing = [x.partition(":")[0] for x, y in zip(a, b) if x != y]
    if not differing:
        return "same"
    return "different_people" if SUBJECT_TYPES.intersection(differing) else "different_values"


def attach(tokens: Sequence[str], tags: Sequence[str]) -> list[str] | None:
    """Lower-case ``tokens`` with each placeholder ("[person]") carrying its value's tag, or
    None when the tags do not match the placeholders one to one (a text stored without
    tags, or a producer's own "[PERSON]")."""
    holders = [m.group(1).upper() for m in map(_PLACEHOLDER.match, tokens) if m]
    if not holders or holders != types(tags):
        return None
    given = iter(tags)
    return [f"{t}{_TAGGED}{next(given).partition(':')[2]}" if _PLACEHOLDER.match(t) else t for t in tokens]


def same_type(a: str, b: str) -> bool:
    """Two tagged placeholder tokens of one type (two values of one kind)."""
    return _TAGGED in a and _TAGGED in b and a.partition(_TAGGED)[0] == b.partition(_TAGGED)[0]
