"""Vetoes on address anchors: the number or name an anchor found that context shows is no
door or place ("port 6432", "5 hour drive", "2018 Mexican model", "9090 Prometheus")."""

from __future__ import annotations

import re

from ibex_worker.pii.address_words import (ADDRESS_PARTICLES, AMBIGUOUS_PREFIXES, ENGLISH_JOINERS, FUNCTION_WORDS,
                                           NOT_PROSE, QUANTITIES, US_STATES)
from ibex_worker.pii.business import BUSINESS, RECORDS, record_compound
from ibex_worker.pii.context import words_before
from ibex_worker.pii.languages import function_words
from ibex_worker.pii.lexicon import capitalised_share, is_common, places
from ibex_worker.pii.vocab import DEMONYMS, NOT_A_PERSON

# "Take route 66 west": a numbered route is a road, not a door (rural routes are weak anchors).
HIGHWAY = re.compile(r"(?:route|rte|highway|hwy)\s+\d+", re.IGNORECASE)
# A motorway's or highway's number standing alone: I-95, A1(M), M25, US-101, E40.
ROAD_NUMBER = re.compile(r"(?:i|a|m|us|sr|e|n|b)-?\d{1,3}(?:\([a-z]\))?(?:\s+(?:north|south|east|west|"
                         r"[nsew]b))?", re.IGNORECASE)
# Vital signs in a clinical note: "HR 88, RR 16" is a heart and a respiratory rate.
VITALS = re.compile(r"\b(?:spo2|sats|bpm|mmhg|gcs|bp\s?\d{2,3}/\d{2,3}|resp(?:iratory)? rate|pulse)\b", re.IGNORECASE)
# Business words and company registers that name the number after them ("D-U-N-S
# 15-048-3782"; a block is an address's too, TX a state's). Not "PIN": India's postcode.
_COMPANY_REGISTERS = frozenset({"d-u-n-s", "duns", "lei", "hrb", "hra", "kvk", "krs", "regon", "vat", "naics", "sic",
                                "cage", "cro"})
RECORD_WORDS = (BUSINESS.words | _COMPANY_REGISTERS) - NOT_PROSE - {"block"} - set(US_STATES.split("|"))


# Business words that are also words of places and their parts ("Sector V", "Model Town").
_PLACE_LIKE_RECORD_WORDS = frozenset({"no", "#", "№", "zip", "postcode", "zipcode", "v", "well", "model", "part",
                                      "height", "table", "run", "track", "exit", "inc", "story", "span", "draw",
                                      "epic", "monitor", "member", "plate", "rule", "sample", "org", "record",
                                      "status", "loan", "project", "node", "issue", "shelf", "slot", "seat"})
_FIELD_RECORD_WORDS = RECORD_WORDS - _PLACE_LIKE_RECORD_WORDS


def record_number(text: str, start: int) -> bool:
    """A record's word right before the number ("port 6432", "Bon-Nr. 5612"), or before the
    code of its issuer ("flight LH 2417", "train TGV 6203")."""
    before = words_before(text, start, 2)
    if before and (before[-1] in RECORD_WORDS | _SERVICES or record_compound(before[-1])
                   and not before[-1].startswith(_DOORS)):
        return True
    # not "the invoice to 12 Elm St"
    return len(before) == 2 and before[0] in RECORD_WORDS | _SERVICES and _ISSUER_CODE.fullmatch(before[1]) \
        is not None and before[1] not in FUNCTION_WORDS and before[1] not in {"via", "c/o"}


# Services numbered by their operator ("train 9O 9014", "bus 73"); an issuer's code before the
# number is letters ("LH", "TGV") or an airline's letter and digit ("9O", "U2").
_SERVICES = frozenset({"train", "bus", "tram", "ferry", "coach", "vol", "flug", "vuelo", "voo", "volo", "zug",
                       "eurostar", "tgv", "ice", "thalys", "amtrak", "intercity"})
_ISSUER_CODE = re.compile(r"[^\W\d_]{1,3}|\d[^\W\d_]|[^\W\d_]\d")


_DOORS = ("haus", "huis", "house")  # "Hausnummer 12": the door's own number
# ISO 6346: a container's owner code (three letters and U, J or Z), six digits and a check digit.
CONTAINER = re.compile(r"[a-z]{3}[ujz]\s?\d{6}\s?\d(?!\d)", re.IGNORECASE)


def quantity(anchor: str) -> bool:
    words = [w.strip(".,").lower() for w in anchor.split()]
    return len(words) > 1 and words[1] in QUANTITIES


# German prefixes: their streets are named before the number ("Im Tal 5", "Zum Markt 3").
NAME_FIRST_PREFIXES = frozenset({"am", "im", "an der", "in der", "auf der", "zum", "zur"})


def street_name(prefix: str, name: str) -> bool:
    """The words between a prefix and the number name a street: no digits in them ("via eth1
    lease 86400"), no sentence's end ("via de website. Afspraaknummer 448") and no record's
    name; after a prefix that is an everyday word too, a name that is not plain English ("am
    18", "via the portal 3" are not streets; "Via Roma 12", "Am Markt 5" are)."""
    words = name.split()
    if any(ch.isdigit() for w in words for ch in w):
        return False
    if any(len(w) > 5 and w.endswith(".") for w in words) or any(record_compound(w.lower()) for w in words):
        return False
    if prefix.lower() not in AMBIGUOUS_PREFIXES:
        return True
    return any(not is_common(w.lower().strip(".,")) for w in words if w.lower() not in ADDRESS_PARTICLES)


def may_be_place(match: re.Match[str]) -> bool:
    """"Run 2024-117", "2024 release": a common word is no place, whatever its case; a word the
    lexicon knows only from a dictionary ("antwerpen", "milano") may be one. A three-digit code
    is too common a number to stand for a postcode before anything but a known place."""
    word = match.group("place")
    if "code" in match.groupdict() and tail_of_number(match.string, match.start()):
        return False
    place = word.lower()
    share = capitalised_share(place)
    if share is not None and share < 0.5 and not word[0].isupper():
        return False  # "meter reading 048213": an English word written as one
    if len(place) <= 2:
        return False  # "HD 172167", "8080 po": a catalogue's letters, a word; no place is named by two
    if place in places():
        return True
    if place in DEMONYMS or place in NOT_A_PERSON:
        return False  # "2018 Mexican model", "9090 Prometheus, 3000 Grafana": a people's name, a product
    if "code" in match.groupdict() and len(match.group("code")) == 3:
        return False
    if "code" in match.groupdict() and place in function_words():
        return False  # "für 2023 über ...", "oda 1204 için": another language's word after a number (a place
        # the lexicon knows, "2000 Antwerpen", "22100 Como", was taken above)
    return share is not None and share >= 0.5 or not is_common(place) and word[0].isupper()


def tail_of_number(text: str, start: int) -> bool:
    """"Contrat 4417 8820 1193 0047 renouvelé", "6.2.0.1143 ya", "771-204-5537 se": the
    last group of a longer number (two groups before it, the nearer of three digits or more,
    or a digit glued by a point, dash or slash) is no postcode; "huisnr 112 1017 AJ" is a
    door's number and a postcode."""
    return re.search(r"(?:\d[\s.\-]\d{3,}\s|\d[.\-/])$", text[max(0, start - 24):start]) is not None


# "near Atta Market", "behind SBI ATM", "opp. Civil Hospital": a landmark that an address
# names between its street and its town (India, Nigeria, Kenya, Pakistan ...).
_LANDMARK_LEAD = re.compile(r"(?:near|behind|opp\.?|opposite|beside|next to|adjacent to|off)\s+"
                            r"(?!(?:the|a|an|my|our|your|his|her|their|it|that|this|work|home)(?![\w]))(?=[^\W_])",
                            re.IGNORECASE)


def landmark_lead(part: str) -> int:
    """Length of the landmark's preposition that opens an address part, or 0."""
    lead = _LANDMARK_LEAD.match(part)
    return lead.end() if lead else 0


def plausible_anchor(value: str) -> bool:
    """``5 hour drive``, ``3 miles along the river walk`` are prose, not streets: a quantity
    after the number, or an English function word in the street's name. A Nordic door's
    staircase and flat after the number ("Hämeenkatu 31 A 8") are no words of prose."""
    value = re.sub(r"(?<=\d)\s+[a-h]\s+\d{1,4}$", "", value, flags=re.IGNORECASE)
    if value[:1].isdigit() and quantity(value):
        return False
    words = [w.strip(".,").lower() for w in value.split()]
    if len(words) == 3 and words[0][:1].isdigit() and words[1] == "the":
        words = [words[0], words[2]]  # "12 The Crescent"
    return not any(w in FUNCTION_WORDS and (w not in NOT_PROSE or w in ENGLISH_JOINERS) for w in words)


def plausible_start(text: str, start: int, end: int) -> int | None:
    """Where a weak anchor's plausible part starts: ``new address is Valiasr St`` is the street
    ``Valiasr St`` after prose; None when no tail of it is plausible."""
    for word in re.finditer(r"\S+", text[start:end]):
        if plausible_anchor(text[start + word.start():end]):
            return start + word.start()
    return None


# What follows a street's name when the street names a place that is not a door: "Oxford
# Street station", "Baker Street tube", "Great North Road bridge".
_LANDMARK_AFTER = re.compile(r"\s+(?:station|stn|tube|metro|underground|overground|stop|bridge|tunnel|car park|"
                             r"parking|branch|store|shop|stadium|bus|tram|exit)\b", re.IGNORECASE)
# A part that starts with a date ("30 Sep – 4 Oct", "4 March"): a time, not an address part.
DATE_PART = re.compile(r"\s*\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|"
                       r"january|february|march|april|june|july|august|september|october|november|december)\.?"
                       r"(?:\s*[–\-]|\s+\d{2,4}\b|\s*[.,;]|\s*$)", re.IGNORECASE)


def landmark_after(text: str, end: int) -> bool:
    return _LANDMARK_AFTER.match(text, end) is not None


# Record words that end an address where a part gives their number ("Auftragsnummer
# 7392048155", "order no. 5521"): a record's number, not an address part ("The Parcel Yard",
# "Case postale 12" are; so may "Parcel 12" and "Case 45" be, land and box numbers, so neither
# word ends one). A compound counts only when it is a record word itself ("Hausnummer" is the
# door's).
_PART_RECORDS = frozenset({"order", "orders", "invoice", "inv", "ticket", "tickets", "tracking", "booking",
                           "reservation", "confirmation", "transaction", "txn", "receipt", "policy", "claim",
                           "flight", "isbn", "sku", "serial", "account", "acct", "ref", "reference",
                           "referenz", "incident", "shipment", "awb", "pedido", "factura", "bestellung",
                           "rechnung", "commande", "facture"})
_RECORD_NUMBER = re.compile(r"(?P<word>[^\W\d_][\w\-]*)\.?\s*(?:(?:no|nr|n°|nº|#|number|num)\.?\s*)?:?\s*#?\d",
                            re.IGNORECASE)


def names_a_record(part: str) -> bool:
    return record_at(part) is not None


def record_at(part: str) -> int | None:
    """Where the first record's word and number of ``part`` start ("ME 04101 Invoice 2024/07/…":
    at "Invoice"), or None."""
    for match in _RECORD_NUMBER.finditer(part):
        word = match.group("word").lower()
        if word in _PART_RECORDS or word in RECORDS.words and _NUMBER_COMPOUND.search(word) \
                or word in _FIELD_RECORD_WORDS:
            return match.start()
    return None


_NUMBER_COMPOUND = re.compile(r"(?:nummer|nr)$")


_CAS = re.compile(r"(\d{2,7})-(\d{2})-(\d)")


def cas_number(text: str, value: str) -> bool:
    """``ethanol 64-17-5`` in a text that speaks of CAS numbers: a chemical's registry number
    (its check digit holds), not a block address written name-first."""
    match = _CAS.search(value)
    if match is None or not re.search(r"\bcas\b", text, re.IGNORECASE):
        return False
    digits = (match.group(1) + match.group(2))[::-1]
    return sum(int(d) * (i + 1) for i, d in enumerate(digits)) % 10 == int(match.group(3))


def scandinavian_by(prefix: str, words: str) -> bool:
    """"av" without its point before words with another language's function words ("för",
    "inom"; not the particles of street names, "de", "van"): the Scandinavian preposition."""
    return prefix.lower() == "av" and any(word.lower() in function_words() and word.lower() not in ADDRESS_PARTICLES
                                          for word in words.split())


def plain_english(words: str) -> bool:
    return all(is_common(word.lower()) for word in re.findall(r"[^\W\d_]+", words))


def names_a_place(span: str, postcodes: re.Pattern[str]) -> bool:
    """A word that is no common English word, a known place, a flat's or a suite's word, or a
    postcode: what tells a street named in English words ("Mill Lane, Bristol", "Church Road,
    unit 12") from prose ("second place")."""
    return any(not is_common(word) or word in places() or word in _DOOR_WORDS
               for word in (w.lower() for w in re.findall(r"[^\W\d_]+", span))) or postcodes.search(span) is not None


_DOOR_WORDS = frozenset({"flat", "apt", "apartment", "unit", "suite", "ste", "bldg"})  # never prose's words


# "block 112, row K, seats 14-15": a seat in a hall or a stadium; it vetoes weak anchors only.
SEATING = re.compile(r"(?<![\w])seats?\s+\d", re.IGNORECASE)


_AIR_TRAVEL = re.compile(r"\b(?:flight|flights|boards|boarding|airport|terminal|departs|departure|gate closes)\b",
                         re.IGNORECASE)


def boarding_gate(text: str, anchor: str) -> bool:
    """"Gatwick gate 14" in a text about a flight: a gate, not Norwegian "Karl Johans gate 1"."""
    return re.search(r"\sgate\s", anchor, re.IGNORECASE) is not None and _AIR_TRAVEL.search(text) is not None


# Words of journeys and venues near a name and a number ("Πύλη 12, πτήση A3 651": a gate and a flight):
# a train, a gate or a seat, not a door.
_TRAVEL = re.compile(r"→|->|(?<![\w])(?:train|flight|gate|platform|seat|coach|carriage|shinkansen|departs?|arrives?|"
                     r"πύλη|πτήση|θέση|αναχώρηση|αίθουσα|gleis|zug|flug|vol|vuelo|voo|tren|quai|andén|binario|"
                     r"terminal|boarding)(?![\w])", re.IGNORECASE)


def travel_near(text: str, start: int, end: int) -> bool:
    return _TRAVEL.search(text, max(0, start - 60), min(len(text), end + 60)) is not None
