"""IBANs, valid or mistyped, told apart from the hex identifiers that share their shape.

The finder takes the analysed view (see ``casing``) and returns ``numbers.Hit``s: a valid IBAN
is ``CERTAIN``; any other IBAN-shaped value of a country that has IBANs is a mistyped one,
``UNCERTAIN`` (masked, and the memory quarantined).
"""

from __future__ import annotations

import re

from ibex_worker.pii.business import BUSINESS
from ibex_worker.pii.checksums import iban_valid
from ibex_worker.pii.context import words_before
from ibex_worker.pii.numbers import CERTAIN, UNCERTAIN, Hit

# Length of a complete IBAN per country (ISO 13616 registry).
IBAN_LENGTHS = {
    "ad": 24, "ae": 23, "al": 28, "at": 20, "az": 28, "ba": 20, "be": 16, "bg": 22, "bh": 22, "br": 29, "by": 28,
    "ch": 21, "cr": 22, "cy": 28, "cz": 24, "de": 22, "dk": 18, "do": 28, "ee": 20, "eg": 29, "es": 24, "fi": 18,
    "fo": 18, "fr": 27, "gb": 22, "ge": 22, "gi": 23, "gl": 18, "gr": 27, "gt": 28, "hr": 21, "hu": 28, "ie": 22,
    "il": 23, "iq": 23, "is": 26, "it": 27, "jo": 30, "kw": 30, "kz": 20, "lb": 28, "lc": 32, "li": 21, "lt": 20,
    "lu": 20, "lv": 21, "ly": 25, "mc": 27, "md": 24, "me": 22, "mk": 19, "mr": 27, "mt": 31, "mu": 30, "nl": 18,
    "no": 15, "pk": 24, "pl": 28, "ps": 29, "pt": 25, "qa": 29, "ro": 24, "rs": 22, "ru": 33, "sa": 24, "sc": 31,
    "sd": 18, "se": 24, "si": 19, "sk": 24, "sm": 27, "so": 23, "st": 25, "sv": 28, "tl": 23, "tn": 24, "tr": 26,
    "ua": 29, "va": 22, "vg": 24, "xk": 20, "ye": 30,
}
# How many characters after the check digits are digits in every IBAN of the country: bank and
# branch codes, or the whole account part where accounts are digits only (in practice too, as in
# Andorra). Hex digits with a letter among those, or with any letter where the length is not the
# country's give or take one, are a digest or an object id ("ae34be4a-2025-...",
# "ad1215bd52bf43fb..."). "ZZZ" after the check digits: a SEPA creditor identifier
# ("DE98ZZZ09999999999"), a company's.
_LEADING_DIGITS = {
    **dict.fromkeys("ae at ba be cr cz de dk ee eg es fi fo gl hr hu il is lt ly me no pl pt rs sd se si sk so "
                    "st tl tn xk".split(), 34),
    "ad": 20, "al": 8, "ch": 5, "cy": 8, "fr": 10, "gr": 7, "kz": 3, "li": 5, "lu": 3, "mc": 10, "mk": 3,
    "sa": 2, "tr": 5, "ua": 6,
}
_HEX = re.compile(r"[0-9a-f]+", re.IGNORECASE)
# Groups of four, parted or not, and a short last group.
_IBAN = re.compile(r"(?<![\w\-./])[a-z]{2}\d{2}(?:[ \-]?[a-z0-9]{4}){2,7}(?:[ \-]?[a-z0-9]{1,3})?(?![\w])",
                   re.IGNORECASE)
# A word the groups took in after the number: "... 7716 added", "... 0000 la".
_TRAILING_WORD = re.compile(r"[ \-][^\W\d_]+$")


def ibans(text: str) -> list[Hit]:
    """IBAN-shaped strings of a country that has IBANs: valid ones are left to Presidio's
    recognizer (they score ``CERTAIN`` here too); a failed check digit or a wrong length is a
    mistyped IBAN, masked as uncertain."""
    hits = []
    for match in _IBAN.finditer(text):
        readings = [match.group(0)]
        while word := _TRAILING_WORD.search(readings[-1]):
            readings.append(readings[-1][:word.start()])  # "... 1052 and" drops "and"; "... 000M UR" keeps "UR"
        value = max(readings, key=_iban_rank)
        if _record_of_another_length(text, match.start(), value):
            continue  # "número de seguimiento ES2024040212345": a tracking number, no IBAN that lost nine characters
        if not _identifier(readings[-1]) and (score := _iban_score(value)):
            hits.append(Hit("IBAN_CODE", match.start(), match.start() + len(value), score))
    return hits


def _record_of_another_length(text: str, start: int, value: str) -> bool:
    """A record's word before a value more than two characters off its country's IBAN length."""
    compact = _compact(value)
    expected = IBAN_LENGTHS.get(compact[:2].lower())
    return expected is not None and abs(len(compact) - expected) > 2 and BUSINESS.found_in(words_before(text, start, 3))


def _compact(value: str) -> str:
    return re.sub(r"[ \-]", "", value)


def _iban_rank(reading: str) -> tuple[bool, int, int]:
    """A valid reading first, then the one nearest the country's IBAN length, then the shortest."""
    compact = _compact(reading)
    expected = IBAN_LENGTHS.get(compact[:2].lower(), 0)
    return len(compact) == expected and iban_valid(compact), -abs(len(compact) - expected), -len(reading)


def _iban_score(value: str) -> float:
    compact = _compact(value)
    country, bban = compact[:2].lower(), compact[4:]
    if country not in IBAN_LENGTHS or not 15 <= len(compact) <= 34 or sum(ch.isdigit() for ch in bban) < 8:
        return 0.0
    return CERTAIN if len(compact) == IBAN_LENGTHS[country] and iban_valid(compact) else UNCERTAIN


def _identifier(value: str) -> bool:
    compact = _compact(value)
    country, bban = compact[:2].lower(), compact[4:]
    if country not in IBAN_LENGTHS or (len(compact) == IBAN_LENGTHS[country] and iban_valid(compact)):
        return False
    if bban[:3].lower() == "zzz":
        return True
    if not _HEX.fullmatch(bban):
        return False
    leading = bban[:_LEADING_DIGITS.get(country, 0)]
    return (bool(leading) and not leading.isdigit()) \
        or (abs(len(compact) - IBAN_LENGTHS[country]) > 1 and not bban.isdigit())
