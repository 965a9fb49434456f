"""Words the name model takes for a name that their surroundings show are
something else: a date or time format's mask (``YYYY-MM-DD``), a part of a time zone's id
(``America/Sao_Paulo``), a weekday of a range of opening days (``Mo–Fr``, ``lun–ven``), digits
read out (``two-zero-two-four``), an invoice's heading (``Bill to:``), a possessive of another
language before a family word (``mia suocera``, ``mi hermana``: "Mia" and "Mi" are names too)."""

from __future__ import annotations

import re

from ibex_worker.pii import tables
from ibex_worker.pii.name_words import RELATIONS
from ibex_worker.pii.relations import FAMILY_WORDS

_MASK_PART = r"(?:y{2,4}|m{1,2}|d{1,2}|h{1,2}|s{1,2})"
_FORMAT_MASK = re.compile(rf"{_MASK_PART}(?:[-/.: ]{_MASK_PART})+", re.IGNORECASE)
_TIME_ZONE = re.compile(r"(?<![\w/])(?:Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc)"
                        r"/[A-Za-z_]+(?:/[A-Za-z_]+)?")
# Weekdays' short forms in English, German, French, Italian, Spanish, Portuguese and Dutch.
_WEEKDAYS = frozenset("""
mon tue wed thu fri sat sun mo di mi do fr sa so lun mar mer jeu ven sam dim gio sab dom mié jue vie sáb
seg ter qua qui sex ma wo vr za zo lu
""".split())
_RANGE = re.compile(r"\s*[-–—]\s*|\s+(?:to|bis|à|a|al|tot)\s+")
_DIGIT = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|double|triple)"
_SPELLED_DIGITS = re.compile(rf"{_DIGIT}(?:[-\s]+{_DIGIT})+", re.IGNORECASE)
_HEADING = re.compile(r"(?:bill|ship|sold|deliver)(?=\s+to\s*:)|invoice(?=\s*:)", re.IGNORECASE)


def not_a_name(text: str, start: int, end: int) -> bool:
    """A format's mask, digits read out, an invoice's heading ("Bill to:"), a part of a time
    zone's id, or a weekday that opens or closes a range of weekdays."""
    value = text[start:end]
    if _FORMAT_MASK.fullmatch(value) or _SPELLED_DIGITS.fullmatch(value) or end <= tables.header_end(text):
        return True  # ... or a CSV table's header ("name,price,stock")
    heading = _HEADING.match(text, start)
    if heading is not None and heading.end() == end:
        return True
    if any(m.start() <= start and end <= m.end() for m in _TIME_ZONE.finditer(text, max(0, start - 40),
                                                                               min(len(text), end + 40))):
        return True
    if value.lower() in _POSSESSIVES:
        after = re.match(r"\s+([^\W\d_]+)", text[end:end + 40])
        if after and (after.group(1).lower() in FAMILY_WORDS or after.group(1).lower() in _FAMILY_MORE
                      or after.group(1).lower() in RELATIONS):
            return True
    return value.lower().rstrip(".") in _WEEKDAYS and _weekday_range(text, start, end)


_POSSESSIVES = frozenset({"mia", "mio", "mi", "mis", "ma", "mon", "mes", "minha", "meu", "mein", "meine", "mijn",
                          "moja", "mój", "moj"})
# Parents, children and spouses, which ``relations`` leaves out as common words of another of its languages.
_FAMILY_MORE = frozenset({"madre", "padre", "sorella", "fratello", "figlia", "figlio", "moglie", "marito",
                          "mamma", "papà", "hermana", "hermano", "hija", "hijo", "esposa", "esposo", "mère", "père",
                          "sœur", "frère", "fille", "fils", "femme", "mari", "mãe", "pai", "filha", "filho",
                          "mutter", "vater", "tochter", "sohn", "frau", "mann", "moeder", "vader", "dochter",
                          "zoon", "vrouw", "matka", "ojciec", "córka", "syn", "żona", "mąż"})


def _weekday_range(text: str, start: int, end: int) -> bool:
    after = _RANGE.match(text, end + (text[end:end + 1] == "."))
    if after and _weekday_at(text, after.end()):
        return True
    before = re.search(rf"([^\W\d_]+)\.?(?:{_RANGE.pattern})$", text[max(0, start - 16):start])
    return bool(before and before.group(1).lower() in _WEEKDAYS)


def _weekday_at(text: str, cursor: int) -> bool:
    word = re.match(r"[^\W\d_]+", text[cursor:])
    return bool(word and word.group(0).lower() in _WEEKDAYS)
