"""Whether a run of words reads as a part of a postal address (a unit, a postcode, a region
code, a short run of place words) or as prose."""

from __future__ import annotations

import re

from ibex_worker.pii.address_words import CURRENCY_CODES, FUNCTION_WORDS, NOT_PROSE

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
    if _STATE_ZIP.fullmatch(part.strip()):
        return True  # "OR 97215", "IN 46204": a state code that is also an English word
    bare = [w.strip(".,()'’\"").lower() for w in words]
    return not any(b in FUNCTION_WORDS and b not in NOT_PROSE and not _unit_letter(bare, i)
                   for i, b in enumerate(bare))


def _unit_letter(bare: list[str], index: int) -> bool:
    """"Station A", "Block A", "Unit A": a one-letter designator after an address word."""
    return len(bare[index]) == 1 and index > 0 and bare[index - 1] in NOT_PROSE


_STATE_ZIP = re.compile(r"[a-z]{2}\.?\s+(?:\d{5}(?:-\d{4})?|\d{6})", re.IGNORECASE)  # a US ZIP, an Indian PIN
_PROSE_MARKS = re.compile(r"\d{3}[ .\-]\d{3}[ .\-]\d{3,4}|https?:|[!?]|\b\d{1,2}:\d{2}\b|\d+\s*(?:am|pm)\b"
                          rf"|[£$€¥₹]\s?\d|\d\s?[£$€¥₹%]|\d+\.\d+\.\d+|[→⇒°′″]|->|\d\s?(?:{CURRENCY_CODES})(?![\w])",
                          re.I)
