"""Record identifiers a memory names: ticket, order, account, invoice numbers and the like.

Two memories that name the same kind of record by different identifiers are about two
records: "ticket 84898 was escalated to billing" and "ticket 78037 was escalated to billing"
read alike, but both hold. Conflict detection and the rules classifier use this to tell
distinct facts from competing ones (:func:`distinct_records`).

An identifier is found two ways, in the redacted content:

- a record noun followed by a value holding a digit, with an optional "no.", "number",
  "id", "#" or ":" between them ("order #A-7731", "Invoice No. 2024-118", "account: 919413");
  the kind is the noun;
- a self-describing code, two to six capital letters, an optional dash and at least four
  digits ("ORD-88213", "INC0012345"), or a dash and three digits as issue trackers key their
  issues ("PAY-219"); the kind is the letters.

Values are compared case-insensitively. Placeholders (``[PHONE_NUMBER]``) are never
identifiers: a redacted value cannot be compared. The finder is conservative on purpose: a
missed identifier leaves the pair to the usual rules (escalated when in doubt), while a
wrong one would hide a real conflict. So these are not taken: values of one or two
characters; amounts and quantities (a number followed by a unit or a currency, a decimal
number, a bare number under five digits after a noun that also counts things, such as
"quote 1200 for the roof" or "order 500"); codes with fewer than three digits, or three without a dash ("GPT4", "COVID-19");
codes of standards and algorithms (``ISO-9001``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

RECORD_NOUNS = (
    "account", "application", "booking", "bug", "case", "change request", "claim", "confirmation", "contract",
    "customer", "incident", "invoice", "issue", "lease", "loan", "member", "merge request", "order", "parcel",
    "patient", "payment", "policy", "pull request", "purchase order", "quote", "receipt", "refund", "reservation",
    "rma", "serial", "shipment", "subscription", "ticket", "tracking", "transaction", "work order",
)
_NOUN = "|".join(sorted((re.escape(n).replace(r"\ ", r"\s+") for n in RECORD_NOUNS), key=len, reverse=True))
_ONE = r"#?(?=[A-Za-z0-9_/.-]*\d)[A-Za-z0-9]+(?:[-_/.][A-Za-z0-9]+)*"  # holds a digit
_VALUES = rf"(?P<values>{_ONE}(?:\s*(?:,|&|\band\b|\bor\b)\s*{_ONE})*)"
_MARKER = r"(?P<marker>(?:\s+(?:no\.?|nr\.?|number|num\.?|id|ref\.?|code))?\s*(?:[:#]\s*)?)"
_BY_NOUN = re.compile(rf"(?<![\w\[])(?P<kind>{_NOUN})(?:e?s)?\b{_MARKER}{_VALUES}(?![\w\]])", re.IGNORECASE)
_CODE = re.compile(r"(?<![\w\[-])(?P<kind>[A-Z]{2,6})(?:-(?P<keyed>\d{3})|-?(?P<value>\d{4,}(?:-\d+)*))(?![\w\]-])")
# A number followed by one of these is an amount or a quantity ("order 500 units", "payment
# 250 EUR"), and a decimal number is one too: a value of the record, not its identifier.
_AMOUNT_AFTER = re.compile(r"\s*(?:[%€$£¥]|(?:units?|pcs|pieces?|items?|boxes|pallets?|copies|seats|licen[cs]es|"
                           r"eur|euros?|usd|dollars?|gbp|pounds?|chf|jpy|yen|kg|g|lbs?|tons?|tonnes?|km|miles?|"
                           r"days?|weeks?|months?|years?|hours?|minutes?|times|per|x)\b)", re.IGNORECASE)
_DECIMAL = re.compile(r"^\d+[.,]\d+$")
# Nouns that also count things: a short bare number after them ("quote 1200 for the roof") is
# taken as an identifier only with a marker ("quote #1200", "quote no. 1200") or five digits.
_AMOUNT_PRONE = frozenset({"order", "payment", "quote", "receipt", "refund", "transaction", "loan", "invoice"})
_SHORT_BARE = 5
# A verb right after the number makes the record the sentence's subject ("Invoice 9043 was paid
# in full"): a record named, not an amount.
_STATED_ABOUT = re.compile(r"\s+(?:was|is|has|had|were|are|will|needs|got|remains|stays)\b", re.IGNORECASE)
# Standards and algorithms are named by codes too, but two of them are two values of one
# setting ("certified to ISO-9001" / "ISO-27001"), not two records.
_NOT_RECORD_CODES = frozenset({"iso", "iec", "rfc", "en", "din", "ieee", "ansi", "utf", "pep", "sha", "aes", "md", "rs",
                               "es", "hs", "ps", "mil", "pci", "soc", "ecma", "itu", "etsi", "astm", "bs", "jis", "gb"})
_ONE_VALUE = re.compile(_ONE)
_MIN_VALUE_CHARS = 3


def find(content: str) -> dict[str, frozenset[str]]:
    """The record identifiers ``content`` names: ``{kind: {value, ...}}``, lower-case."""
    found: dict[str, set[str]] = {}
    for match in _BY_NOUN.finditer(content):
        if _AMOUNT_AFTER.match(content, match.end()):
            continue
        kind = " ".join(match.group("kind").lower().split())
        marked = bool(match.group("marker").strip())
        for raw in _ONE_VALUE.findall(match.group("values")):
            value = raw.lstrip("#").lower()
            bare_short = value.isdigit() and len(value) < _SHORT_BARE and not marked and not raw.startswith("#") \
                and not _STATED_ABOUT.match(content, match.end())
            if len(value) >= _MIN_VALUE_CHARS and not _DECIMAL.match(value) and not (
                    kind in _AMOUNT_PRONE and bare_short):
                found.setdefault(kind, set()).add(value)
    for match in _CODE.finditer(content):
        if match.group("kind").lower() not in _NOT_RECORD_CODES:
            found.setdefault(match.group("kind").lower(), set()).add(match.group("value") or match.group("keyed"))
    return {kind: frozenset(values) for kind, values in found.items()}


def distinct_records(a: Mapping[str, frozenset[str]], b: Mapping[str, frozenset[str]]) -> list[str]:
    """The kinds of record both name with no identifier in common, sorted: when any, the two
    memories are about different records."""
    return sorted(kind for kind in a.keys() & b.keys() if not a[kind] & b[kind])
