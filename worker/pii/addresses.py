"""Postal addresses: a street line (or a post-office box) anchors an address, which then
extends over the comma-separated parts that read like address parts (unit, building,
district, city, region, postcode, country) and stops at the first part that reads like
prose. Street lines of many countries are recognised: number-first (``221b Baker
Street``, ``12 rue des Martyrs``), name-first (``Calle de Alcalá 214``, ``ul. Piotrkowska
120``), compound (``Kastanienallee 41``, ``Vasagatan 7``) and block forms (``3-12-8
Jingumae``, ``Blk 456 Ang Mo Kio Ave 10``).

Works on the analysed view: words the lexicon does not know as common English words are
capitalised there, which is how a place name is told from prose.
"""

from __future__ import annotations

import re

from ibex_worker.pii import address_vetoes as vetoes
from ibex_worker.pii.address_anchors import (CODES, COMPOUND_STREET, DOOR_THEN_FLAT, GREEK_STREET, NAMED_FIRST,
                                             NAMED_STREET, NUMBER_AFTER_TYPE, NUMBER_FIRST, POSTCODE, PREFIX_FIRST,
                                             SPACED_SUFFIX_STREET, STRONG, TYPE_THEN_NUMBER, UNIT_LED, UNIT_RE,
                                             UNIT_WORDS_RE, WEAK)
from ibex_worker.pii.address_parts import address_like, address_prefix, address_suffix
from ibex_worker.pii.address_words import (BUILDINGS, ENGLISH_JOINERS, FUNCTION_WORDS, LOCALITY_PREFIXES,
                                           NOT_POSTCODE_LETTERS, NOT_PROSE, NUMBER_NAMES, REGION_WORDS, US_STATES)
from ibex_worker.pii.business import record_compound
from ibex_worker.pii.lexicon import capitalised_share, is_common, places
from ibex_worker.pii.vocab import NOT_A_PERSON
from ibex_worker.pii.numbers import LIKELY, Hit

# How far back a part before an anchor is read: no address part is longer, and reading a long text
# without commas back to its start for each anchor would cost the square of its length.
_REACH = 240
_OWN_PART = re.compile(r"[^,،|;·•\n:]*$")
_OWN_LEFT = re.compile(r"(?:(?!\s/\s)[^,،|;·•\n:])*$")
_SEPARATOR = r"(\s*[,،]\s*|\s+[-/]\s+|\s+)"
_PART_STOP = r"[^,،|;·•\n]+"


def addresses(text: str) -> list[Hit]:
    spans: list[tuple[int, int]] = []
    for anchor in STRONG:
        for match in anchor.finditer(text):
            if anchor in (PREFIX_FIRST, NUMBER_FIRST) and not vetoes.street_name(match.group("prefix"),
                                                                            match.group("name")):
                continue
            if anchor is PREFIX_FIRST and not match.group("name").strip() \
                    and not re.match(r"\s*(?:#|no\.?|n[°º])\s*\d", text[match.end():], re.IGNORECASE):
                span = _extend(text, match.start(), match.end(), weak=True)
                if span is not None:
                    spans.append(span)
                continue  # "Soi 11", "Quai 11": a prefix and a number alone name a lane or a platform
                # ("Carrera 7 # 71-21" numbers its door after the sign)
            if anchor is PREFIX_FIRST and vetoes.scandinavian_by(match.group("prefix"), match.group("name")):
                continue  # "prövas av nämnden för bygglov inom 6": Swedish "by", not "Av." (an avenue)
            if anchor is NUMBER_FIRST and match.group("prefix").lower() in vetoes.NAME_FIRST_PREFIXES:
                continue  # "2025 im Sekretariat": German streets are named before their number ("Im Tal 5")
            if anchor in (COMPOUND_STREET, SPACED_SUFFIX_STREET) and is_common(match.group(0).split()[0].lower()):
                continue  # "bring 70 mph gusts", "outside gate 3": an English word, not a street's name
            if anchor in (COMPOUND_STREET, SPACED_SUFFIX_STREET) and re.search(r"\s(?:no[.:]?\s*)?\d{4,}",
                                                                                  match.group(0), re.IGNORECASE):
                continue  # "REWE Markt 4417": a store's number; a street named first numbers its doors lower
            if match.group(0)[:1].isdigit() and vetoes.record_number(text, match.start()):
                continue  # "port 6432 via Pgbouncer": the number is a record's, not a door's
            if vetoes.plausible_anchor(match.group(0)) and not vetoes.HIGHWAY.fullmatch(match.group(0)):
                span = _extend(text, match.start(), match.end(), weak=False) or (match.start(), match.end())
                if anchor is SPACED_SUFFIX_STREET and vetoes.boarding_gate(text, match.group(0)) \
                        and not _place_like(text[match.end():span[1]]):
                    continue  # "flight BA 2490 from Gatwick gate 14, boards": a gate ("... gate 22, Oslo" is a street)
                if anchor is COMPOUND_STREET:
                    lead = _COMPOUND_LEAD.search(text, max(0, span[0] - 30), span[0])
                    span = (lead.start(), span[1]) if lead else span
                spans.append(span)
    for anchor in WEAK:
        for match in anchor.finditer(text):
            if "place" in anchor.groupindex and not vetoes.may_be_place(match) \
                    or vetoes.CONTAINER.match(text, match.start()):
                continue  # not a place's name; "MSCU 472819 6": a shipping container's number
            if anchor is NAMED_STREET and vetoes.landmark_after(text, match.end()):
                continue  # "Oxford Street station": a place named after the street
            if anchor is NAMED_STREET and re.search(r"\bav$", match.group(0), re.IGNORECASE) \
                    and vetoes.scandinavian_by("av", " ".join(text[match.end():].split()[:3])):
                continue  # "ärendet handläggs av enheten för ...": Swedish "by", not an avenue
            if match.groupdict().get("letters") and (match.group("letters").lower() in NOT_POSTCODE_LETTERS
                                                     or vetoes.tail_of_number(text, match.start())):
                continue  # "2024 de", "1000 IU", "6.2.0.1143 ya": a year, an amount, a number's tail
            if match.groupdict().get("letters") and not re.match(r"\s*,?\s*[^\W\d_]", text[match.end():]):
                continue  # "port 8080 po 30000 ms": a Dutch postcode is written before its town
            first = match.group(0).split()[0].lower().strip(".:#")
            if first == "rr" and vetoes.VITALS.search(text) or vetoes.cas_number(text, match.group(0)):
                continue  # "HR 88, RR 16, SpO2 97%", "ethanol 64-17-5": a respiratory rate, a chemical's number
            if first in NUMBER_NAMES or first in vetoes.RECORD_WORDS or record_compound(first):
                continue  # "ID 10637", "policy 55-813-2207": a number with its name, not "ID 83702" of Idaho
            if first[:1].isdigit() and (vetoes.record_number(text, match.start()) or vetoes.quantity(match.group(0))):
                continue  # "port 6432 via", "1000 Mbps full duplex": a record's number or an amount
            start = vetoes.plausible_start(text, match.start(), match.end())
            if anchor is NAMED_STREET and start is not None and len(text[start:match.end()].split()) < 2 \
                    and not re.match(r"\.?\s+[^\W\d_]", text[match.end():]):
                continue  # "row 14", "$25 per walk, keys ...": a street's type with no name before or after it
            span = _extend(text, start, match.end(), weak=True, alone=anchor is UNIT_LED) if start is not None else None
            if anchor is NAMED_STREET and span is not None and vetoes.plain_english(match.group(0)) \
                    and not vetoes.names_a_place(text[span[0]:span[1]], CODES):
                continue  # "second place out of 14 teams", "dead row versions": English words and numbers
            if anchor is UNIT_LED and span is not None and not any(
                    _known_place(word) for word in re.findall(r"[^\W\d_]+", text[span[0]:span[1]])):
                continue  # "house 3, the blue one": a house's number in a known place, or nothing
            if span is not None and vetoes.SEATING.search(text, span[0], span[1]):
                continue  # "block 112, row K, seats 14-15": a seat in a hall (a street line is found anyway)
            if span is not None:
                spans.append(span)
    spans.extend(_named_first(text))
    spans.extend(_extend(text, m.start(), m.end(), weak=False) or (m.start(), m.end())
                 for m in GREEK_STREET.finditer(text) if not vetoes.travel_near(text, m.start(), m.end()))
    for match in CODES.finditer(text):
        spans.append(_extend(text, match.start(), match.end(), weak=True, alone=True) or (match.start(), match.end()))
    return [Hit("STREET_ADDRESS", start, end, LIKELY) for start, end in _merge(spans)]


# "Eerste Helmersstraat 12", "van Woustraat 3", "Alte Gasse 4": words that begin a compound street's name.
_COMPOUND_LEAD = re.compile(r"(?<![\w])(?:(?:eerste|tweede|derde|vierde|oude|nieuwe|korte|lange|van|de|den|der|"
                            r"alte|neue|kleine|obere|untere|sankt)\s+){1,2}$", re.IGNORECASE)


def _named_first(text: str) -> list[tuple[int, int]]:
    """Streets named before their door's number whose first words may be prose: the street
    starts where the rest reads as one, and its last word must be no common English word
    unless a street's type ends it ("Elm Grove no. 23", not "paid 5890, apt 3")."""
    spans = []
    for anchor in NAMED_FIRST:
        for match in anchor.finditer(text):
            start = vetoes.plausible_start(text, match.start(), match.end("street"))
            if start is None:
                continue
            street = text[start:match.end("street")].split()
            if anchor in (NUMBER_AFTER_TYPE, TYPE_THEN_NUMBER) and len(street) < 2 \
                    or anchor is DOOR_THEN_FLAT and is_common(street[-1].lower()) \
                    or anchor is TYPE_THEN_NUMBER and is_common(street[-2].lower()):
                continue
            spans.append(_extend(text, start, match.end(), weak=False) or (start, match.end()))
    return spans


def _known_place(word: str) -> bool:
    """A city's or a country's name, not a word written more often in lower case ("best", "sale")."""
    bare = word.lower()
    share = capitalised_share(bare)
    return bare in places() and (share is None or share >= 0.5) and bare not in NOT_A_PERSON and bare not in _CALENDAR


_CALENDAR = frozenset("january february march april may june july august september october november december "
                      "monday tuesday wednesday thursday friday saturday sunday".split())


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + 2:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _extend(text: str, start: int, end: int, *, weak: bool, alone: bool = False) -> tuple[int, int] | None:
    """The anchor grown over the address parts around it; None for a weak anchor that has
    none (a street name or postcode mentioned alone) unless it may stand ``alone``."""
    within = _extend_within_part(text, end)
    right = _extend_right(text, within)
    left = _extend_left(text, start, general=weak)
    own_part = _OWN_PART.search(text, max(0, start - _REACH), start).group(0)
    before = text[left:max(left, start - len(own_part))]
    if weak and not alone and not _place_like(text[within:right]) and not _place_like(before):
        return None  # nothing that reads as a place beyond the anchor's own part: named in passing
    return left, right


def _place_like(parts: str) -> bool:
    """Address parts name places: a number, a name (capitalised in the view), a known place,
    a region or unit word. "lovely guy" after "Mill Lane" is a remark about the street."""
    for word in re.findall(r"[\w.\-']+", parts):
        bare = word.strip(".").lower()
        share = capitalised_share(bare)
        if share is not None and share < 0.5 and not word[0].isupper() and bare not in NOT_PROSE:
            continue  # an English word written as one ("nice stall"), whatever place shares its name
        if any(ch.isdigit() for ch in word) or word[0].isupper() or bare in places() or bare in NOT_PROSE \
                or share is not None:
            return True
    return False


def _extend_within_part(text: str, end: int) -> int:
    """The rest of the anchor's own part: ``3150 N Lake Shore Dr #1807``, ``Rua das Flores
    112 2º Esq.``: the longest address-like run of words before the next comma."""
    rest = re.match(_PART_STOP, text[end:])
    if rest is None:
        return end
    return end + address_prefix(rest.group(0), allow_leading_space=True)


def _extend_right(text: str, end: int) -> int:
    for _ in range(7):
        if text[end - 1:end].isalpha() and re.match(r"\.\s*,", text[end:]):
            end += 1  # "88 Bay St., Staten Island": the abbreviation's point, then the comma
        match = re.match(_SEPARATOR + "(" + _PART_STOP + ")", text[end:])
        if match is None:
            return end
        separator, part = match.group(1), match.group(2)
        if vetoes.DATE_PART.match(part) or (record := vetoes.record_at(part)) is not None and not part[:record].strip():
            return end  # "30 Sep – 4 Oct", "Auftragsnummer 7392048155": a time or a record's number
        part = part if record is None else part[:record]  # "ME 04101 Invoice 2024/07/00319": ends before it
        lead = vetoes.landmark_lead(part) if separator.strip() in (",", "،") else 0
        length = (lead + address_prefix(part[lead:])) if address_prefix(part[lead:]) else 0
        if vetoes.ROAD_NUMBER.fullmatch(part[:length].strip()):
            return end  # "Route 66, I-95 and A1(M)": another road, not a part of an address
        if length and separator.strip() == "" and not _postcode_start(part[:length]):
            length = _place_after_postcode(text[:end], part)
        if not length:
            return end
        end = end + match.start(2) + length
        if length < len(part.rstrip()):
            return end  # the part went on as prose: the address ends inside it
    return end


def _place_after_postcode(before: str, part: str) -> int:
    """Length of a known place that follows a postcode without a comma (``M5C 1S6 CANADA``)."""
    if not re.search(rf"(?:{POSTCODE.pattern})$", before, re.IGNORECASE):
        return 0
    words = list(re.finditer(r"[^\W\d_][\w\-]*", part))
    for count in (2, 1):
        if len(words) >= count and part[words[0].start():words[count - 1].end()].lower() in places() \
                and words[0].start() == 0:
            return words[count - 1].end()
    return 0


def _postcode_start(part: str) -> bool:
    """A part glued to the previous one without a comma continues it only if it starts with a
    postcode, a region code or a state and its ZIP (``Leeds LS6 2QJ``, ``Bondi NSW 2026``,
    ``Portland OR 97215``)."""
    first = part.split()[0]
    return bool(POSTCODE.match(part) or _STATE_AND_ZIP.match(part)) or first.lower().strip(".") in REGION_WORDS


_STATE_AND_ZIP = re.compile(rf"(?:{US_STATES})\.?\s+\d{{5}}(?:-\d{{4}})?(?!\d)", re.IGNORECASE)


# "Apt 5B 221 Baker St", "unit 9 / 40 Wattle St", "unit 4/12 Beach Rd" (the unit's number in the
# street's), "Sunnybrook Manor room 204 1180 W University Dr" (the building named before its room).
_UNIT_BEFORE = re.compile(
    rf"(?:^|(?<=\s))(?:[^\W\d_][\w'’\-]*\s+(?:{'|'.join(BUILDINGS)})\s+)?"
    r"(?:unit|apt\.?|apartment|flat|suite|ste\.?|room|office|house|villa|casa|level|floor|wohnung|zimmer|no\.?|số|so|#)"
    r"(?:\s+no\.?)?\s*(?:[\w\-/]*\d[\w\-/]*(?:,|\s/)?)?\s+$",
    re.IGNORECASE)
# A unit closing a part that began as prose: "send it to flat 3b, house 7, road 2", "she lives in 4b. 4b".
_UNIT_TAIL = re.compile(rf"(?:^|(?<=\s))(?:(?:{UNIT_WORDS_RE})\s*[:#]?\s*[\w\-/]*\d[\w\-/]*|\d{{1,4}}[a-z])$",
                        re.IGNORECASE)
# A part of the left context: up to a comma-like mark, or a slash between spaces ("Name: X / Villa 21").
_LEFT_PART = re.compile(r"(?:^|\s/\s|\s[—–]\s|[,،|;·•:\n()])\s*((?:(?!\s/\s|\s[—–]\s)[^,،|;·•:\n()])+?)\s*[,،]\s*$")


def _extend_left(text: str, start: int, *, general: bool) -> int:
    """Units and buildings before a street line (``Flat 4, 27 Hollybush Lane``, ``Apt 5B 221
    Baker St``); before a weak anchor, any address part (``Salt Lake Sector V, Kolkata 700091``)."""
    unit = _UNIT_BEFORE.search(text[max(0, start - 60):start])
    if unit is not None:
        start = start - (len(text[max(0, start - 60):start]) - unit.start())
    own = _OWN_LEFT.search(text, max(0, start - _REACH), start).group(0)
    if not general and own.strip() and UNIT_RE.match(own.strip()):
        start -= len(own.lstrip())  # "99/12 Moo 3, Soi Sukhumvit 71": the unit in the street's own part
    elif not general and (area := _AREA_BEFORE.search(own)) is not None:
        start -= len(own) - area.start()  # "Organize Sanayi Bölgesi 4. Cad. No: 18": the area the street is in
    if general:
        taken = 0 if own.split()[-1:] and own.split()[-1].lower() in ENGLISH_JOINERS else address_suffix(own)
        start -= taken
        if own[:len(own) - taken].strip():
            return start  # prose before the anchor in its own part
    for _ in range(6):
        match = _LEFT_PART.search(text, max(0, start - _REACH), start)
        if match is None or re.search(r"\d:$", text[:match.start(1)]) \
                or re.search(r"\d[.,]$", text[:match.start(1)]) and text[match.start(1):match.start(1) + 1].isdigit():
            return start  # "support act 19:45, block 112", "€ 62,40 per half jaar": a time's minutes, a fraction
        part = match.group(1)
        if general and vetoes.names_a_record(part):
            taken = address_suffix(part)  # "batch 118, STAN 004471": a record's field, not an address part
            return match.start(1) + len(part) - taken if taken and not vetoes.names_a_record(part[len(part) - taken:]) \
                else start
        lead = vetoes.landmark_lead(part.strip()) if general else 0
        if _unit_or_building(part.strip()) or general and address_like(part.strip()[lead:]):
            start = match.start(1) + len(part) - len(part.lstrip())
            general = general and not any(street.search(part) for street in STRONG)  # only units before a street
            continue
        tail = _UNIT_TAIL.search(part)
        taken = address_suffix(part) if general else len(part) - tail.start() if tail else _house_name(part)
        return match.start(1) + len(part) - taken if taken else start
    return start


_HOUSE_NAME = re.compile(r"(?:the\s+)?[^\W\d_][\w'’.\-]*(?:\s+[^\W\d_][\w'’.\-]*){0,2}$", re.IGNORECASE)


# A Turkish neighbourhood, estate or industrial zone named before its street in the same part.
_AREA_BEFORE = re.compile(r"(?:^|(?<=\s))(?:[^\W\d_][\w'’\-]*\s+){1,3}(?:bölgesi|mahallesi|mah\.|sitesi|köyü|osb)\s+$",
                          re.IGNORECASE)
# A care home's name ("Sunrise Senior Living, 9000 Kenwood Rd").
_CARE_HOME = re.compile(r"(?:^|(?<=\s))(?:[^\W\d_][\w'’\-]*\s+){0,2}(?:senior|assisted)\s+living$", re.IGNORECASE)
# What may stand before a house's name that begins with "the": "to The Laurels", not "under the mat".
_AFTER_THE = re.compile(r"(?:^|(?:^|\s)(?:to|at|for|from|c/o|care of|address|is)\s+)$", re.IGNORECASE)
# Words that make a name a house's or a building's ("Haus Lindenhof", "Hotel Krone", "Rose Cottage").
_HOUSE_WORDS = frozenset(BUILDINGS) | {"haus", "villa", "casa", "maison", "quinta", "hotel", "chalet", "farm", "hof"}


def _house_name(part: str) -> int:
    """Length of a house's name closing the part before a street line ("The Laurels, 2 Vicarage
    Road", "Haus Lindenhof, Am Mühlbach 9"): up to three words after "the", or a house's word
    with names (no common English words), or a care home's name; 0 when the part ends in prose
    or a person's name."""
    if (care_home := _CARE_HOME.search(part)) is not None:
        return len(part) - care_home.start()
    for word in re.finditer(r"(?:^|(?<=\s))\S", part):
        match = _HOUSE_NAME.match(part, word.start())
        if match is None:
            continue
        words = match.group(0).split()
        named = words[1:] if words[0].lower() == "the" else words
        if named and (words[0].lower() == "the" and _AFTER_THE.search(part, 0, match.start()) is not None
                      and not any(w.lower() in FUNCTION_WORDS for w in named)
                      or any(w.lower() in _HOUSE_WORDS for w in named)
                      and all(not is_common(w.lower().strip("'’")) or w.lower() in _HOUSE_WORDS for w in named)):
            return len(part) - match.start()
    return 0


def _unit_or_building(part: str) -> bool:
    words = part.split()
    if not words or len(words) > 5:
        return False
    if UNIT_RE.match(part):
        return True
    if words[0].lower() in LOCALITY_PREFIXES and len(words) <= 3:
        return True  # "г. Москва, ул. Профсоюзная, д. 43"
    named = words[-2] if len(words) > 1 and words[-1][:1].isdigit() else words[-1]
    return named.lower().rstrip(".") in BUILDINGS  # "Sakura Mansion 201"
