"""Keyed tags of redacted values: whether two stored statements name the same person, phone
or address, told without storing the value.

The PII stage gives every region it masks a tag, ``TYPE:KEY:VALUE`` or ``TYPE:KEY:VALUE:s``:

- ``VALUE`` is the first 64 bits (hex) of HMAC-SHA256, under the org's key, of the type and
  the value normalised by type: an e-mail address, IP address or wallet is only trimmed
  (and, but for a wallet, case folded), since its punctuation is part of it; a phone number
  is its digits; a card or IBAN its letters and digits, case folded; anything else (names,
  addresses) is Unicode NFKC, case folded, with every run of characters other than letters
  and digits one space.
- The org's key is HMAC-SHA256 of the org id under the deployment's ``IBEX_PII_TAG_KEY``,
  so equal values of two orgs get unrelated tags; ``KEY`` (8 hex) names the deployment key,
  so tags made under another key compare as unknown, never as different.
- ``:s`` marks a name inside the subject of the text's first sentence ("[PERSON] asked for a
  call back", "The guide for [PERSON] is due"): another name there is another subject.
  ``:v`` marks a name that is the complement of that sentence's verb ("The user's manager
  is [PERSON]"): another one is another value of the same attribute. Any other name (an
  object, a later clause or sentence) is unmarked: whether another one is another subject
  or another value cannot be told, so it is neither.

A name written in Latin letters with four consonants or more also gets ``:SOUND`` after its
mark (the mark empty when it has none): the same HMAC over how the name sounds (``sound_key``:
each word's consonants, with the spellings that sound alike folded, after its first vowel and
before the vowel it ends in), so that two spellings of one name ("Jon Smyth", "John Smith")
are told apart from two people ("Jane Smith"): ``names_sound_alike``, possibly one person,
linked as near duplicates and left to a person by the rules. A shorter name has no sound:
"Tim Lee" and "Tom Lee" say too little. Two people whose names sound alike by this key are
possibly one: a link a person can remove, never a merge. Tags made before sounds were kept
have none, and compare as before.

Without the key a tag cannot be tested against a guessed value; with it (the deployment's
secret, never stored in the database) a guess can be, as with any keyed pseudonym. So tags
are pseudonymous personal data: kept with their memory and its running job, cleared with the
content, never logged and never returned by the API. With no key configured no tags are made,
and placeholders stay unknown to the rules (a person decides such pairs). Tags compare exact
values and sounds only: "Maria Lopez" and "Maria" are two tags.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from collections.abc import Iterable, Sequence

# Names: another one in the subject is another subject; every other type is a value stated
# about the subject (a phone, an address), so a different one is another value.
SUBJECT_TYPES = frozenset({"PERSON"})
SUBJECT_MARK, VALUE_MARK = "s", "v"
_VERBATIM = frozenset({"EMAIL_ADDRESS", "IP_ADDRESS", "CRYPTO"})
_CASE_KEPT = frozenset({"CRYPTO"})  # base58 and bech32 addresses: case is part of the value
_ALPHANUMERIC = frozenset({"IBAN_CODE", "CREDIT_CARD"})  # grouping is presentation, not value
_TAG_HEX, _KEY_HEX = 16, 8
_NOT_WORD = re.compile(r"[\W_]+")
_NOT_DIGIT = re.compile(r"\D+")
_PLACEHOLDER = re.compile(r"^\[([a-z_]+)\??\]$")  # a placeholder token of the conflict rules, "[person]"
_TAGGED = "#"  # a placeholder token with its value's tag: "[person]#<tag>", a word like any other


def org_key(key: str, org_id: str) -> bytes:
    return hmac.new(key.encode("utf-8"), b"ibex-redaction-tag:" + org_id.encode("utf-8"), hashlib.sha256).digest()


def key_id(key: str) -> str:
    return hmac.new(key.encode("utf-8"), b"ibex-redaction-tag-key-id", hashlib.sha256).hexdigest()[:_KEY_HEX]


def normalise(entity_type: str, value: str) -> str:
    text = unicodedata.normalize("NFKC", value).strip()
    if entity_type in _VERBATIM:
        return text if entity_type in _CASE_KEPT else text.casefold()
    if entity_type == "PHONE_NUMBER":
        return _NOT_DIGIT.sub("", text)
    if entity_type in _ALPHANUMERIC:
        return _NOT_WORD.sub("", text.casefold())
    return _NOT_WORD.sub(" ", text.casefold()).strip()


# Spellings that sound alike, folded in this order: letters that sound the same, then letters
# that are silent ("gh", "h" before a consonant, "w" after a vowel, a "y" that ends a vowel),
# then doubled letters.
_SOUNDS = [(re.compile(a), b) for a, b in (
    (r"^kn", "n"), (r"^wr", "r"), (r"ph", "f"), (r"gh", ""), (r"th", "t"), (r"ck", "k"), (r"qu", "kw"), (r"q", "k"),
    (r"x", "ks"), (r"sch", "x"), (r"ch(?=[rl])|(?<=[aeiouy])ch(?=[aeiouy])", "k"), (r"ch", "x"), (r"sh", "x"),
    (r"c(?=[eiy])", "s"), (r"c", "k"), (r"g(?=[eiy])", "j"), (r"z", "s"), (r"v", "f"), (r"(?<=[aeiou])y$", ""),
    (r"y", "i"), (r"h(?![aeiou])", ""), (r"(?<=[aeiou])w", ""), (r"(.)\1+", r"\1"))]
_VOWELS = re.compile(r"[aeiou]")
# A word's first vowel and the vowel it ends in tell names apart ("John" and "Jane", "Maria" and
# "Mario", "Daniel" and "Daniela"); those in between are spelt every way ("Olsen", "Olson").
# Vowels that spellings swap are one class ("Kelly", "Kelley"; "Mohammed", "Muhammad").
_VOWEL_CLASS = {"a": "a", "e": "e", "i": "e", "o": "o", "u": "o"}
_SOUND_CONSONANTS = 4
SOUND_TYPES = frozenset({"PERSON"})


def sound_key(value: str) -> str | None:
    """How a name in Latin letters sounds: each word's consonants, after its first vowel and
    before the vowel it ends in ("Jon Smyth" and "John Smith" -> ``ojn esmt``; "Jane Smith" is
    ``ajne esmt``); None for a name of another script or with fewer than four consonants."""
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", value) if not unicodedata.combining(ch))
    words = _NOT_WORD.sub(" ", plain.casefold()).split()
    if not words or not all(word.isascii() and word.isalpha() for word in words):
        return None
    keys, consonants = [], 0
    for word in words:
        for pattern, replacement in _SOUNDS:
            word = pattern.sub(replacement, word)
        vowels = _VOWELS.findall(word)
        skeleton = _VOWELS.sub("", word)
        consonants += len(skeleton)
        first = _VOWEL_CLASS[vowels[0]] if vowels else ""
        final = _VOWEL_CLASS[word[-1]] if word and word[-1] in _VOWEL_CLASS else ""
        keys.append(f"{first}{skeleton}{final}")
    return " ".join(keys) if consonants >= _SOUND_CONSONANTS else None


def make(key: str, org_id: str, text: str, regions: Iterable[tuple[int, int, str, bool]],
         subject: tuple[int, int] | None = None, value: tuple[int, int] | None = None) -> list[str]:
    """The tags of ``text``'s masked ``regions`` (``pii.policy.merge``: start, end, type,
    certain), in their order; a name overlapping ``subject`` (the subject phrase's extent in
    ``text``) or ``value`` (the verb's complement) is marked so. None without a key."""
    if not key:
        return []
    secret, kid = org_key(key, org_id), key_id(key)
    tags = []
    for start, end, etype, _ in regions:
        message = f"{etype}\x00{normalise(etype, text[start:end])}".encode("utf-8")
        tag = f"{etype}:{kid}:{hmac.new(secret, message, hashlib.sha256).hexdigest()[:_TAG_HEX]}"
        mark = next((m for m, span in ((SUBJECT_MARK, subject), (VALUE_MARK, value))
                     if etype in SUBJECT_TYPES and span is not None and start < span[1] and span[0] < end), None)
        sound = sound_key(text[start:end]) if etype in SOUND_TYPES else None
        if sound:
            heard = hmac.new(secret, f"{etype}\x00sound\x00{sound}".encode("utf-8"), hashlib.sha256).hexdigest()
            tags.append(f"{tag}:{mark or ''}:{heard[:_TAG_HEX]}")
        else:
            tags.append(f"{tag}:{mark}" if mark else tag)
    return tags


def _parts(tag: str) -> tuple[str, str, str, str, str]:
    """(type, key id, value, mark: "s", "v" or "", sound or ""); a tag of another shape has no
    key id."""
    parts = tag.split(":")
    if len(parts) < 3:
        return parts[0], "", parts[-1], "", ""
    return (parts[0], parts[1], parts[2], parts[3] if len(parts) >= 4 else "",
            parts[4] if len(parts) == 5 else "")


def identity(tag: str) -> str:
    """The tag without its sound: what a value's identity is hashed by (``exact_dedup``), so
    that a text stored before sounds were kept hashes as it did."""
    kind, kid, value, mark, _ = _parts(tag)
    if not kid:
        return tag
    return f"{kind}:{kid}:{value}" + (f":{mark}" if mark else "")


def types(tags: Sequence[str]) -> list[str]:
    return [t.partition(":")[0] for t in tags]


def relation(a: Sequence[str] | None, b: Sequence[str] | None) -> str | None:
    """How the redacted values of two statements compare, when it can be told: both tagged
    under one key, with placeholders of the same types in the same order. ``same`` (every
    value equal), ``names_sound_alike`` (every differing value a name spelt another way that
    sounds the same: possibly one person), ``different_people`` (a name in the subject of
    both differs, and not only in spelling: two people, so two facts), ``different_values``
    (a value differs: a name that is the verb's complement on both sides, or another type);
    None when it cannot be told, which includes a differing name marked otherwise and a
    name that may only be spelt otherwise beside another differing value."""
    if not a or not b or types(a) != types(b):
        return None
    pa, pb = [_parts(t) for t in a], [_parts(t) for t in b]
    if len({kid for _, kid, _, _, _ in pa + pb}) != 1 or not pa[0][1]:
        return None
    differing = [(x, y) for x, y in zip(pa, pb) if x[2] != y[2]]
    if not differing:
        return "same"
    alike = [(x, y) for x, y in differing if x[0] in SOUND_TYPES and x[4] and x[4] == y[4]]
    if len(alike) == len(differing):
        return "names_sound_alike"
    names = [(x[3], y[3]) for x, y in differing if x[0] in SUBJECT_TYPES and (x, y) not in alike]
    if any(marks == (SUBJECT_MARK, SUBJECT_MARK) for marks in names):
        return "different_people"
    return "different_values" if not alike and all(marks == (VALUE_MARK, VALUE_MARK) for marks in names) else None


def attach(tokens: Sequence[str], tags: Sequence[str]) -> list[str] | None:
    """Lower-case ``tokens`` with each placeholder ("[person]") carrying its value's tag, or
    None when the tags do not match the placeholders one to one (a text stored without
    tags, or a producer's own "[PERSON]")."""
    holders = [m.group(1).upper() for m in map(_PLACEHOLDER.match, tokens) if m]
    if not holders or holders != types(tags):
        return None
    given = iter(tags)
    return [f"{t}{_TAGGED}{_parts(next(given))[2]}" if _PLACEHOLDER.match(t) else t for t in tokens]


def tagged(token: str) -> bool:
    """A placeholder token that carries its value's tag."""
    return _TAGGED in token


def same_type(a: str, b: str) -> bool:
    """Two tagged placeholder tokens of one type (two values of one kind)."""
    return tagged(a) and tagged(b) and a.partition(_TAGGED)[0] == b.partition(_TAGGED)[0]
