"""Phone numbers, found by shape and decided by context (payment cards and wallet addresses
are in ``payments``, IBANs in ``ibans``, government identifiers in ``identifiers``), and the
``Hit`` and score scale every finder shares.

Each finder takes the analysed view (case folded and truecased, see ``casing``) and returns
``Hit``s with a score on the policy's scale: ``LIKELY`` and above are redacted, ``UNCERTAIN``
is masked and quarantines the memory (fail closed: a value shaped like personal data that
cannot be confirmed is hidden, not stored). A business number announced as such ("order",
"invoice", "ticket") is left alone unless the text also calls it personal.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass

from ibex_worker.pii import phone_vetoes, spoken, tables
from ibex_worker.pii.business import PRODUCT_RECORDS, RECORD_CONNECTORS, RECORDS, SSN_WORDS, ups_tracking_before
from ibex_worker.pii.card_networks import CARD_GROUPS, card_network
from ibex_worker.pii.context import words_before
from ibex_worker.pii.phone_words import PHONE_CUES, SHORT_NUMBER, WEAK_PHONE_CUES, after_zip, service_number

CERTAIN = 0.95
LIKELY = 0.85
UNCERTAIN = 0.5
NAMED = 0.9  # a value announced by its identifier's name outranks a same-span guess ("NHS number ...")


@dataclass(frozen=True)
class Hit:
    entity_type: str
    start: int
    end: int
    score: float


_SEP = r"[ .\-]"
# A letter of a script written without spaces (kana, CJK ideographs): a number glued to it
# ("電話番号は090-1234-5678です") starts and ends there all the same.
UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# Words that introduce an extension ("ext. 12", "Durchwahl 214", "DW 4820", "内線 305"), also in brackets.
_EXTENSION = (r"(?:x|ext\.?|extension|loc\.?|local|#|durchwahl|dw\.?|poste|interno|int\.|anexo|ramal|toestel|"
              r"tst\.|p\.|wewn?\.|dahili|доб\.|内線|内线|分机|轉|转|ต่อ)")
_PHONE = re.compile(
    rf"(?<![^\W{UNSPACED}])(?<![+@\\\-])(?:(?<!/)|(?=\+))(?<![\w.]\.(?=\d))"
    r"(?P<body>(?:(?:\+|00)\d{1,3}[ .\-]?)?(?:\(\d{1,5}\)[ .\-]?)?"
    r"\d(?:\d|[ .\-](?=\d)|[ .\-]?\((?=\d)|\)[ .\-]?(?=\d)){5,22}\d)"
    rf"(?P<ext>,?\s*{_EXTENSION}[:.]?\s*\d{{1,6}}|\s*\(\s*{_EXTENSION}[:.]?\s*\d{{1,6}}\s*\))?"
    rf"(?![^\W{UNSPACED}]|@|[.\-/:]\d)",
    re.IGNORECASE,
)
_DATE = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}")

# 1-800-FLOWERS: a toll-free number spelled in letters; "0800 OLD CARS", "1300 FLOWERS": the
# British, Irish and Australian freephone prefixes before six or seven letters and digits.
_VANITY = re.compile(r"(?<![\w\-])1[-. ]?8(?:00|88|77|66|55|44|33)[-. ](?=[\w\-]*[a-z])(?=(?:[a-z0-9]-?){6})"
                     r"[a-z0-9]+(?:-[a-z0-9]+){0,3}(?![\w\-])", re.IGNORECASE)
_SPACED_VANITY = re.compile(r"(?<![\w\-])(?:0800|0808|1800|1300)[ \-](?=(?:[a-z0-9][ \-]?){6,7}(?![\w\-]))"
                            r"(?=[a-z0-9 \-]*[a-z]{3})[a-z0-9]+(?:[ \-][a-z0-9]+){0,2}(?![\w\-])", re.IGNORECASE)


def _vanity(text: str) -> list[Hit]:
    """Numbers in letters: "1-800-FLOWERS" as written, "1800 bottles" or "0800 old cars" only
    where a phone word announces them."""
    return [Hit("PHONE_NUMBER", m.start(), m.end(), LIKELY) for pattern in (_VANITY, _SPACED_VANITY)
            for m in pattern.finditer(text) if not _SENTENCE_WORDS.intersection(m.group(0).lower().split())
            and (re.match(r"1[-. ]8", m.group(0)) or PHONE_CUES.found_in(
                [word for word in words_before(text, m.start(), 6) if word not in _PLACE_WORDS]))]


# "the 0800 number is free from mobiles": words of a sentence after a freephone prefix, no letters to dial.
_SENTENCE_WORDS = frozenset({"is", "are", "was", "a", "an", "the", "to", "for", "from", "and", "or", "of", "in", "on",
                             "at", "it", "be"})


# wa.me/447700900873: a WhatsApp click-to-chat link carries the number whole.
_CHAT_LINK = re.compile(r"(?<=wa\.me/)\+?\d{7,15}(?!\d)", re.IGNORECASE)

# 089/12345678, 0171/1234567-12: an area code written before a slash, the German way, also
# glued to its label ("Tel.089/...", "Fax089/...").
_AREA_SLASH = re.compile(r"(?<![\d/,:+\-])(?<!\d\.)0\d{1,4}/(?!(?:19|20)\d\d(?![\d\-]))\d{3,10}(?:-\d{1,5})?"
                         r"(?![\d/]|[.,]\d)")


def _glued_cue(text: str, start: int) -> bool:
    word = re.search(r"[^\W\d_]+(?:\.[^\W\d_]+)*\.?$", text[max(0, start - 20):start])
    return word is not None and any(part in PHONE_CUES.words for part in word.group(0).lower().split("."))


# "O77OO 9OO123", "5l2 345": a letter O typed for a zero, an l or I for a one, inside a run of digits.
_LETTER_ZERO_RUN = re.compile(r"(?<![^\W\d_])[\dOo](?:[\dOolI \-.()]*[\dOo])?(?![^\W\d_])")


def _zeros_typed_as_letters(text: str) -> str:
    """The text with each O inside a run of five digits or more read as 0, each l or I
    between two digits as 1 (same length)."""
    def zeros(match: re.Match[str]) -> str:
        run = match.group(0)
        if sum(ch.isdigit() for ch in run) < 5:
            return run
        return re.sub(r"(?<=[\dOo])[lI](?=[\dOo])", "1", re.sub(r"[Oo]", "0", run))
    return _LETTER_ZERO_RUN.sub(zeros, text)


def phones(text: str) -> list[Hit]:
    matches = (_PHONE.match(text, (s := after_zip(text, m.start())), tables.row_end(text, s, m.end())) or m
               for m in _PHONE.finditer(text))
    hits = [hit for match in matches if (hit := _phone(text, match)) is not None]
    read = _zeros_typed_as_letters(text)
    if read != text:
        hits += [hit for match in _PHONE.finditer(read) if "0" in match.group(0) and text[match.start():match.end()]
                 != match.group(0) and (hit := _phone(read, match)) is not None]
    hits += _vanity(text)
    hits += [Hit("PHONE_NUMBER", m.start(), m.end(), LIKELY) for m in SHORT_NUMBER.finditer(text)
             if service_number(text, m.start(), m.group(0))]
    hits += [Hit("PHONE_NUMBER", m.start(), m.end(), LIKELY) for m in _CHAT_LINK.finditer(text)]
    hits += [Hit("PHONE_NUMBER", m.start(), m.end(), LIKELY if _phone_cue(text, m.start())
                 or _glued_cue(text, m.start()) else UNCERTAIN) for m in _AREA_SLASH.finditer(text)
             if len(re.sub(r"\D", "", m.group(0))) >= 7 and phone_in_context(text, m.start(), m.group(0))]
    hits += [Hit("PHONE_NUMBER", start, end, LIKELY if _phone_cue(text, start) else UNCERTAIN)
             for start, end in spoken.spoken_spans(text) if spoken.spoken_phone(text[start:end])]
    return hits


def _phone(text: str, match: re.Match[str]) -> Hit | None:
    body = match.group("body")
    digits = re.sub(r"\D", "", body)
    if not 7 <= len(digits) <= 15 or _DATE.fullmatch(body) or _dotted_quad(body):
        return None
    start, end = match.start(), match.end()
    # "00" dials abroad only with a country code and a full number after it (11 digits or more).
    strong = (body.startswith(("+", "(")) or body.startswith("00") and len(digits) >= 11
              or match.group("ext") is not None or "(" in body)
    cue = _phone_cue(text, start)
    if not phone_in_context(text, start, body):
        return None
    if cue or strong:
        return Hit("PHONE_NUMBER", start, end, LIKELY)
    if _phone_grouping(body) and len(digits) >= 9 or _LOCAL_555.fullmatch(body) and text[end:end + 1] != "-" \
            or _UK_MOBILE.fullmatch(body):
        return Hit("PHONE_NUMBER", start, end, UNCERTAIN)  # grouped like a phone number, nothing says so
    return None  # a bare run of digits with no phone word is as likely an order or account number


# A North American local number on the 555 exchange ("555-0142", "555.0199"), the one films and
# examples use: written so, it is a phone number even with no phone word (not "555-0142-B", a part).
_LOCAL_555 = re.compile(r"555[ .\-]\d{4}")
# A British mobile as it is printed ("07700 900654"): nothing else is written in that shape.
_UK_MOBILE = re.compile(r"07\d{3} \d{6}")


def _phone_grouping(body: str) -> bool:
    """Digits in the groups phone numbers are written in (``415 555 0132``, ``06 12 34 56 78``,
    ``0917-555-2841``): three or more groups, none longer than five digits."""
    groups = re.findall(r"\d+", body)
    return len(groups) >= 3 and all(len(g) <= 5 for g in groups[1:])


# Weak cues that place or time a number ("at 1800 hours", "on 0800 ...") rather than name a phone.
_PLACE_WORDS = frozenset({"on", "at", "m", "t", "p", "o", "w", "h"})


def phone_in_context(text: str, start: int, value: str) -> bool:
    """Not a record's number (see ``_phone_alone``), nor the twin of one: a number no phone
    word announces, written like a record's number earlier in the text and starting with the
    same four digits ("Ticket 4471 2290 81 was merged into 4471 2290 12"), is that record's kind.
    A record after it says nothing of it ("Fahrer: 0157 3456 7890. Sendung 0157 3456 7891"), but
    one number of a range is no phone."""
    if not _phone_alone(text, start, value) \
            or phone_vetoes.described_after(text, start, value.strip(), PHONE_CUES.words - _PLACE_WORDS) \
            or phone_vetoes.record_named_after(text, start, value.strip(), PHONE_CUES.words):
        return False  # a twin is never judged by what the words after this number call it
    value = value.strip()
    digits = re.sub(r"\D", "", value)
    if _phone_cue(text, start) or len(digits) < 8:
        return True
    label = _OWN_LABEL.search(text[max(0, start - 30):start])
    if label and not RECORDS.found_in([label.group(1).lower()]) and label.group(1).lower() not in _NUMBER_WORDS:
        return True  # "job 0161 555 7720. Garage: 0161 496 0021": a label of its own, no record's, names it
    twin, upper = _shaped_like(re.sub(r"\d", r"\\d", re.escape(value)))
    ranged = upper.match(text, start + len(value))
    if ranged and re.sub(r"\D", "", ranged.group(1))[:4] == digits[:4]:
        return False  # "invoices numbered 2406-000001 to 2406-012448": a range of records
    twins = (m for m in twin.finditer(text, 0, start)
             if re.sub(r"\D", "", m.group(0))[:4] == digits[:4])
    return not any(not _phone_alone(text, m.start(), m.group(0)) for m in itertools.islice(twins, _MAX_TWINS))


@functools.lru_cache(maxsize=1024)
def _shaped_like(shape: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A number of ``shape`` standing alone, and one closing a range after a number."""
    return (re.compile(rf"(?<![\w\-]){shape}(?![\w]|-\d)"),
            re.compile(rf"\s*(?:to|through|thru|till|until|bis|à|a|al|[-–—~])\s*({shape})(?![\w]|-\d)", re.IGNORECASE))


_OWN_LABEL = re.compile(r"(?<![\w\-])([^\W\d_]{2,})\s?[:：]\s*$")
# The twins a number is compared with: a text listing more numbers of one shape and prefix is a
# table or a dump, and comparing each with all the others would cost the square of its length.
_MAX_TWINS = 8


def _phone_alone(text: str, start: int, value: str) -> bool:
    """Whatever found it, a "phone number" shaped like a date, a version, an ISBN or a
    year-numbered id, a bare run of digits no phone word announces, a number a business word
    names ("ticket 3318802", "order no. 4500182733"), or one a business word announces with
    no phone word near ("the order is 4500182733"), is not one."""
    value = value.strip()
    spelled = re.search(r"[^\W\d_]", value) is not None  # only a number in letters can be a vanity number
    if _CHAT_LINK.match(text, start) or spelled and any((hit.start, hit.end - hit.start) == (start, len(value))
                                                        for hit in _vanity(text)):
        return True  # "wa.me/4915205550144", "1-888-PAY-BILL": a chat link or a number in letters is a phone
    if service_number(text, start, value):
        return True  # "ring the Samaritans on 116 123": a short line a call word announces
    if len(re.sub(r"[\W_]", "", value)) < 7 or _DATE.fullmatch(value) or _NOT_A_PHONE.fullmatch(value) \
            or _VERSION_PART.search(value) and not value.startswith("+") or _card_shaped(value) \
            or value.count(".") >= 2 and phone_vetoes.VERSIONED.found_in(words_before(text, start, 1)):
        return False  # a short code or extension alone ("1647") reaches no one person; 1-800-FLOWERS does
    if value.startswith(("+0", "000")) or _CALENDAR_DATE.search(value):
        return False  # no country code is 0 ("+0000 2024" is a UTC offset, "000.482.193" a serial); a date inside
    if _DECIMAL.search(value) and not _phone_cue(text, start) and not _LOCAL_555.fullmatch(value):
        return False  # "41729.883", "load avg 1.42 0.98": numbers with a fraction, not a dialled number
    if phone_vetoes.UNIT_AFTER.match(text, start + len(value)):
        return False  # "peak 2147483648 bytes", "2 870 000 tonnes": a quantity in its unit
    if text[start + len(value):start + len(value) + 1] == "=" or _CODE_AFTER.match(text, start + len(value)):
        return False  # "40001=1234 40002=5678", "9200-9300/tcp": a value running into the next key, ports
    if value.isdigit() and (len(value) <= 8 or text[start - 1:start] == "=") and not _phone_cue(text, start):
        return False  # "sysUpTime 48213377 ticks", "uptime=447182931", "ts": 1714650127: a counter or a clock
    if _EPOCH.fullmatch(re.sub(r"\s*\(\d*$", "", value)) and not _phone_cue(text, start, strong_only=True):
        return False  # "assigned ... at 1710146537": "at" names a time as often as a number to call
    if re.fullmatch(r"\d\.", text[max(0, start - 2):start]) and not _phone_cue(text, start):
        return False  # "23793.38128 60000": the rest of a longer number, cut at its decimal point
    if (phone_vetoes.listed(text, start, value) or phone_vetoes.COUNTED_ITEM.search(text[max(0, start - 40):start])) \
            and not _phone_cue(text, start):
        return False  # "rows 4418-18234", "6-4 3-6 7-6", "1,440 units of 55-1010-88": a range, scores, a part
    lead = _THOUSANDS_LEAD.search(text[max(0, start - 5):start])
    grouped = f"{lead.group(1)} {value}" if lead else value
    counted = _THOUSANDS.fullmatch(grouped) and len(re.sub(r"\D", "", value)) <= 10
    if counted and not _phone_cue(text, start, strong_only=True) \
            or _CODE_BEFORE.search(text[max(0, start - 24):start]) and not _phone_cue(text, start) \
            or ups_tracking_before(text, start):
        return False  # "45 905 417 people", "listed at 1 290 000", "3SABC 1234 5678 90": a count, a code's rest
    if _CODE_TAIL.search(text[max(0, start - 12):start]) and not _glued_cue(text, start):
        return False  # "STM-2024-05-4417", "HOP-7731-0093": the digits of a code the letters before begin
    if phone_vetoes.asked_record(text, start):
        return False  # "the order number? Customer: 4417 2291 08": the answer to a record's question
    if _SLASHED_TAIL.search(text[max(0, start - 8):start]):
        return False  # "pedido nº 2024/031100871", "1874221/2024": the tail of a slashed id (area codes start with 0)
    if _URL_PATH.search(text[max(0, start - 120):start]):
        return False  # "dhl.de/t/4417829310": a path segment of a web address ("wa.me/..." is found on its own)
    before = words_before(text, start, 6)
    if phone_vetoes.vat_number(text, start, value) or phone_vetoes.postcode(text, start, value) \
            or phone_vetoes.named_kind(text, start, value) \
            or phone_vetoes.meeting_id(text, start) and not value.startswith("+") and not _phone_cue(text, start) \
            or not value.startswith("+") and phone_vetoes.named_record(text, start, start + len(value), before, _NUMBER_WORDS):
        return False  # "VAT Reg. GB 123 4567 89", a ZIP+4 code in a text about postal codes, "Номер заказа 916-427-18-55"
    if any(before[-len(phrase):] == list(phrase) for phrase in RECORDS.phrases if set(phrase) & PHONE_CUES.words):
        return False  # "call ID 7781-2241-09": the phone word is part of the record's name
    near = 1 if value.startswith(("+", "(")) else 6  # "+44 ..." is a phone unless labelled right before it
    unlabelled = ["" if _phone_label(before, i) or phone_vetoes.state_code(before, i) else word
                  for i, word in enumerate(before)]
    business = [i for i in range(len(before)) if RECORDS.found_in(unlabelled[i:]) and i >= len(before) - near]
    head = phone_vetoes.clause_head(text, start, _PHONE_HEADS)
    if head is not None:
        return head  # "Model number on the water heater is ...", "the contact number on the form is ..."
    if not business or _DIALLING_FORM.match(value):
        return True  # "the last part: +1 (416) 555-0135": a country code and an area code in brackets are dialled
    named_record = RECORDS.found_in([word for word in unlabelled if word not in _BARE_NUMBER_WORDS]) or any(
        _tail_has(unlabelled, phrase) for phrase in RECORDS.phrases if set(phrase) & _BARE_NUMBER_WORDS)
    if not named_record \
            or near == 1 and not RECORDS.found_in([word for word in unlabelled if word not in _NUMBER_WORDS]):
        return True  # "Montreal # 514 555-0174", "Alt. No.: +966 11 234 5678": no business word names a business number
    strong = PHONE_CUES.words - WEAK_PHONE_CUES
    between = before[business[-1] + 1:]
    if all(word in _NUMBER_WORDS for word in between):
        return False  # "calling about ticket 3318802": the business word names this number
    if phone_vetoes.another_s_number(text, start, between) \
            or len(before) >= 2 and before[-2] in _PHONE_HEADS and before[-1] in _BARE_NUMBER_WORDS:
        return True  # "Kundennummer 4471, Herr Weber 0171 2345678", "..., contact number 07700 900418"
    return any(word in strong for word in before) or _glued_phone_word(before)  # "my phone number for the order is ..."


def named_by_record(text: str, start: int, end: int) -> bool:
    """The clause names a record's number, not a phone's, or a record's word stands right before it or heads its
    list, no identifier's name near ("Lot 402-19-7734", "order #600-22-7781", "SKUs 330-18-4471 to 330-18-4480")."""
    before = [word for word in words_before(text, start, 4) if word not in RECORD_CONNECTORS]
    return phone_vetoes.clause_head(text, start, _PHONE_HEADS) is False or bool(before) and not SSN_WORDS.found_in(
        before) and (before[-1] in PRODUCT_RECORDS or phone_vetoes.records_listed(text, start, end, before, PRODUCT_RECORDS))


# A count grouped by thousands with a one- or two-digit lead ("5 330 000", "45 905 417"), ten
# digits at most: no numbering plan groups a number so (a Spanish 912 345 678 leads with
# three digits); eleven digits so grouped are a German tax id as often ("13 915 077 158").
_THOUSANDS = re.compile(r"[1-9]\d?(?:[ \u00a0\u202f]\d{3}){2,}")
# The lead of a count grouped by thousands, cut off before the match ("-2 147 483 648").
_THOUSANDS_LEAD = re.compile(r"(?<![\d ])-?(\d{1,2}) $")
# A protocol right after the number: "9200-9300/tcp" is a range of ports ("06 30 123 4567-es
# számon" is Hungarian's suffix on a phone number, so letters alone say nothing).
_CODE_AFTER = re.compile(r"/(?:tcp|udp|sctp)\b", re.IGNORECASE)
# A code of letters and digits right before, with only a space between ("3SABC 1234 5678 90",
# "MSKU 907032-3"), or a UPS tracking number's start: the number is its tail.
_CODE_BEFORE = re.compile(r"(?<![\w\-])(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z\d]{4,}\s$")

# Letters or digits glued right before, or a code's hyphen: the number continues a code.
_CODE_TAIL = re.compile(r"(?:[A-Za-z\d]-|[A-Za-z])$")
# The part of a slashed id before the number ("2024/0311...", "1874221/2024"): four digits or
# more not starting with 0, so no area code ("089/1234567" is one).
_SLASHED_TAIL = re.compile(r"(?<![\d/])[1-9]\d{3,}/$")
# Unix time in seconds or milliseconds (2001 to 2033): a bare run of ten digits starting with
# 1 is no North American number (area codes start at 2); only a phone word other than "at" or
# "on" makes it one.
_EPOCH = re.compile(r"1\d{9}|1\d{12}")
# A web address's path right before the number: a host with a dot, then "/" segments.
_URL_PATH = re.compile(r"(?<![\w.@])(?:https?://)?(?!wa\.me/)(?=[\w.\-]*[^\W\d_])[\w\-]+(?:\.[\w\-]+)+(?::\d+)?/"
                       r"(?:[^\s/]+/)*$", re.I)


# Shapes phone-number parsers accept that are something else: year and date ranges
# (2015–2019, 24.12.–02.01.), a page and its year (483 (1954)), a UPC-A as printed, versions
# with a one-digit part (124.0.6367.91), year-numbered ids (2024-0117, 2024-0311-087),
# ISBN-10 (0-306-40615-2), slashed triples (30/144/255).
_NOT_A_PHONE = re.compile(r"(?:19|20)\d\d\s?[–—\-]\s?(?:19|20)\d\d|\d{1,2}\.\d{1,2}\.?\s?[–—\-]\s?\d{1,2}\.\d{1,2}\.?|"
                          r"\d{1,4} \((?:1[6-9]|20)\d\d\)?|\d \d{5} \d{5} \d|(?:19|20)\d\d-\d{4}-\d{2,4}|"
                          r"(?:\d+\.)+\d+(?<=\.\d)|\d+(?:\.\d+)*\.\d\.\d+(?:\.\d+)*|(?:19|20)\d\d[-./]\d+(?:[-./]\d+)?|"
                          r"\d{1,5}-\d{2,7}-\d{2,7}-[\dx]|\d{1,3}/\d{1,3}/\d{1,3}|97[89]-?\d[\d\-]{9,15}", re.I)


def _phone_label(before: list[str], index: int) -> bool:
    """"Mobile No.", "Caller ID", "area code", "my #": the business-like word at ``index`` only
    says which phone word's number follows, or whose (after a possessive, "#" or "no." only)."""
    if index == 0:
        return False
    return (before[index] in _LABEL_NUMBER_WORDS and before[index - 1] in _PHONE_KINDS
            or before[index] in phone_vetoes.PHONE_NUMBER_WORDS and before[index - 1] in phone_vetoes.POSSESSIVES)


# A date in full inside a longer match: 2024-03-11, 21.03.2024, 03/11/2024.
_CALENDAR_DATE = re.compile(r"(?<!\d)(?:(?:19|20)\d\d[-./](?:0?[1-9]|1[0-2])[-./](?:0?[1-9]|[12]\d|3[01])"
                            r"|(?:0?[1-9]|[12]\d|3[01])[-./](?:0?[1-9]|1[0-2])[-./](?:19|20)\d\d)(?!\d)")
# A number with one decimal point and a fraction of three digits or more ("41729.883") or a
# short one after a single digit ("1.42"): a dialled number's dots separate groups, several.
_DECIMAL = re.compile(r"(?<![\d.])(?:[1-9]\d*|0)\.\d{3,}(?![\d.])|(?<![\d.])\d\.\d{2}(?![\d.])")


# Words that say which of someone's numbers follows: "Alt. No.", "home #", "area code", and the
# phone words themselves ("Mobile No.").
_PHONE_KINDS = PHONE_CUES.words | {"alt", "alternate", "alternative", "home", "private", "personal", "area",
                                   "country"}
# Words that make "<word> number" a phone's number.
_PHONE_HEADS = (_PHONE_KINDS - WEAK_PHONE_CUES - {"numero", "número", "numéro", "nummer"}) | {"contact"}


# Words between a business word and its number ("order no. 12", "ticket # 4", "case id: 7").
_NUMBER_WORDS = phone_vetoes.NUMBER_WORDS | {"n", "numéro", "número", "numero", "nummer", "numer", "numarası", "numarasıyla", "numaralı",
                                              "numarasi", "номер", "номера", "č", "nomor", "nombor"}
# Words that say "number" and nothing of what is numbered: alone they announce a phone as well as a record.
_BARE_NUMBER_WORDS = phone_vetoes.PHONE_NUMBER_WORDS | {"n", "nº", "№"}
# "+1 (416) 555-0135": a country code, then an area code in brackets, the way a number is written to be dialled.
_DIALLING_FORM = re.compile(r"(?:\+|00)\d{1,3}[ .\-]?\(\d{1,5}\)")
_LABEL_NUMBER_WORDS = _NUMBER_WORDS | {"code"}
# A one-digit part after a dot: "4.18.0-477.27.1" is a version ("1.800.555.0199" is not).
_VERSION_PART = re.compile(r"\.\d(?:[.\-]|$)")


def _card_shaped(value: str) -> bool:
    """``4907 4391 5000 8063`` passes for a German number without "+"; grouped as a card and
    starting like one, it is a card number (a valid one or a mistyped one)."""
    groups = tuple(len(g) for g in re.split(r"[ \-]", value))
    digits = re.sub(r"[ \-]", "", value)
    return digits.isdigit() and 13 <= len(digits) <= 19 and (groups in CARD_GROUPS or len(groups) == 1) \
        and card_network(digits)


def _phone_cue(text: str, start: int, *, strong_only: bool = False) -> bool:
    before = words_before(text, start, 5)
    strong = PHONE_CUES.words - WEAK_PHONE_CUES
    if any(word in strong for word in before) or any(
            _tail_has(before, phrase) for phrase in PHONE_CUES.phrases) or _glued_phone_word(before):
        return True
    return not strong_only and bool(before) and before[-1] in WEAK_PHONE_CUES


# "与客服电话 021-6258-7730": Chinese and Japanese glue the phone's word to the words before it.
_GLUED_CJK_PHONE = re.compile(r"(?:电话|手机|手机号|電話|電話番号|携帯|携帯番号|手機)[：:是为は]?$")


def _glued_phone_word(before: list[str]) -> bool:
    return bool(before) and _GLUED_CJK_PHONE.search(before[-1]) is not None


def _tail_has(words: list[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(tuple(words[i:i + n]) == phrase for i in range(len(words) - n + 1))


def _dotted_quad(body: str) -> bool:
    parts = body.split(".")
    return len(parts) == 4 and all(p.isdigit() and len(p) <= 3 for p in parts)
