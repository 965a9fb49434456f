"""Whether a run of words reads as a part of a postal address (a unit, a postcode, a region
code, a short run of place words) or as prose, and the longest such run a part starts or ends
with."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ibex_worker.pii.address_words import CURRENCY_CODES, FUNCTION_WORDS, NOT_PROSE, QUANTITIES

PART_MAX_WORDS = 6


def address_like(part: str) -> bool:
    """A part of an address: a unit, postcode, region code or a short run of place words.
    Prose gives itself away by its function words ("update my info please", "next week")."""
    words = [w for w in part.split() if any(ch.isalnum() for ch in w)]  # " - " joins, it is no word
    if not words:
        return False
    has_digit = any(ch.isdigit() for ch in part)
    if len(words) > (PART_MAX_WORDS if has_digit else 4) or "@" in part or _PROSE_MARKS.search(part):
        return False
    province = _PROVINCE_AFTER.fullmatch(part.strip())
    if _STATE_ZIP.fullmatch(part.strip()) or province and (province.group("code").lower() in _PROVINCES_LIKE_WORDS
                                                            or province.group("code").lower() not in FUNCTION_WORDS):
        return True  # "OR 97215", "IN 46204", "10122 Torino TO": a state's or province's code that is an English word
    bare = [w.strip(".,()'’\"").lower() for w in words]
    return not any(b in FUNCTION_WORDS and b not in NOT_PROSE and not _unit_letter(bare, i)
                   for i, b in enumerate(bare))


def _unit_letter(bare: list[str], index: int) -> bool:
    """"Station A", "Block A", "Unit A": a one-letter designator after an address word."""
    return len(bare[index]) == 1 and index > 0 and bare[index - 1] in NOT_PROSE


_PROVINCE_AFTER = re.compile(r"\d{5}\s+[^\W\d_][\w'\-]*(?:\s+[^\W\d_][\w'\-]*)?\s+(?P<code>[a-z]{2})", re.IGNORECASE)
# Italian provinces whose codes are English words (Torino, Ancona, Asti, Isernia, Messina, Novara, Oristano, Sondrio).
_PROVINCES_LIKE_WORDS = frozenset({"to", "an", "at", "is", "me", "no", "or", "so"})
_STATE_ZIP = re.compile(r"[a-z]{2}\.?\s+(?:\d{5}(?:-\d{4})?|\d{6})", re.IGNORECASE)  # a US ZIP, an Indian PIN
_PROSE_MARKS = re.compile(r"\d{3}[ .\-]\d{3}[ .\-]\d{3,4}|https?:|[!?]|\b\d{1,2}:\d{2}\b|\d+\s*(?:am|pm)\b"
                          rf"|[£$€¥₹]\s?\d|\d\s?[£$€¥₹%]|\d+\.\d+\.\d+|[→⇒°′″]|->|\d\s?(?:{CURRENCY_CODES})(?![\w])",
                          re.I)


def address_prefix(part: str, allow_leading_space: bool = False) -> int:
    """Length of the longest prefix of ``part`` (whole words) that reads as an address part."""
    words, longest = _capped(re.finditer(r"\S+", part))
    if not allow_leading_space and words and words[0].start() > 0:
        return 0
    for count in range(longest, 0, -1):
        candidate = part[words[0].start():words[count - 1].end()]
        if count < len(words) and candidate[-1:].isdigit() and words[count].group(0).lower().strip(".,") in QUANTITIES:
            continue  # "birim fiyat 14,50 USD": a number cut from its unit
        trimmed = candidate if _ABBREVIATION_END.search(candidate) else re.sub(r"[.!?)\]]+$", "", candidate)
        if trimmed.count("(") > trimmed.count(")") and candidate[len(trimmed):].startswith(")"):
            trimmed += ")"  # "Milano (MI)": the bracket closes inside the part
        if trimmed and address_like(trimmed):
            return words[0].start() + len(trimmed)
    return 0


def _capped(words: Iterable[re.Match[str]]) -> tuple[list[re.Match[str]], int]:
    """The words taken up to one past the most ``address_like`` accepts (a text without commas
    is not read to its end), and how many of them a part may hold."""
    taken: list[re.Match[str]] = []
    counted = 0
    for word in words:
        taken.append(word)
        counted += any(ch.isalnum() for ch in word.group(0))
        if counted > PART_MAX_WORDS:
            return taken, len(taken) - 1
    return taken, len(taken)


_ABBREVIATION_END = re.compile(r"\b(?:co|jal|q|esq|izq|dcha|dto|st|ave|rd|dr|no|apt|ste|bldg|dist|sec|ln|aly)\.$",
                               re.IGNORECASE)


def address_suffix(part: str) -> int:
    """Length of the longest suffix of ``part`` (whole words) that reads as an address part."""
    words = list(re.finditer(r"\S+", part))
    for count in range(_capped(reversed(words))[1], 0, -1):
        candidate = part[words[-count].start():words[-1].end()]
        if count < len(words) and words[-count - 1].group(0)[-1:].isdigit() \
                and words[-count].group(0).lower().strip(".,") in QUANTITIES:
            continue  # "kart bedeli 245 TL": the unit of the number before it, cut from it
        if address_like(candidate):
            return len(part) - words[-count].start()
    return 0
