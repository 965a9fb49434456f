"""The anchors of postal addresses: the street lines, boxes, postcodes and unit words that
``addresses`` grows into whole addresses, as regular expressions over the analysed view."""

from __future__ import annotations

import re

from ibex_worker.pii.address_words import (BOX_ABBREVIATIONS, BOXES, FOREIGN_PREFIXES, STREET_PREFIXES,
                                           QUANTITIES, STREET_SUFFIXES, STREET_TYPES, UNITS,
                                           US_STATES)

W = r"[^\W\d_][\w'’.\-]{0,60}"  # a word (letters first; may hold digits, dots, hyphens)
NUM = r"\d+(?:bis|ter|[a-z])?(?:\s1/2)?(?:[/\-]\d+[a-z]?)*"  # "112bis", "23 1/2", "12/3"

# Two-letter English words a Dutch postcode's letters must not be ("3296 of Windows").
_SHORT_WORDS = "(?:of|in|to|at|on|is|it|by|or|an|as|be|do|go|he|me|my|no|so|up|us|we|am|pm|if|ok)\\b"
STREET_TYPE_RE = "|".join(sorted((re.escape(t) for t in STREET_TYPES), key=len, reverse=True))
_PREFIX_RE = "|".join(sorted((re.escape(t) for t in STREET_PREFIXES), key=len, reverse=True))
_SUFFIX_RE = "|".join(sorted((re.escape(t) for t in STREET_SUFFIXES), key=len, reverse=True))
_BOX_RE = "|".join(sorted((re.escape(t) for t in BOXES if t not in BOX_ABBREVIATIONS), key=len, reverse=True))
# "BP 44", "CP 1520": a box abbreviation is followed by a space or a point ("cp310" is a build tag).
_BOX_ABBREVIATION_RE = "|".join(sorted((re.escape(t) for t in BOX_ABBREVIATIONS), key=len, reverse=True))
_FOREIGN_PREFIX_RE = "|".join(sorted((re.escape(t) for t in FOREIGN_PREFIXES), key=len, reverse=True))
DIRECTION = r"(?:\s+(?:n|s|e|w|ne|nw|se|sw|north|south|east|west|o|nord|sud|ouest)(?![\w])\.?)?"

# A number with a hyphenated group of five digits or more ("131-482117-24") numbers a record, not a door.
_NOT_A_DOOR = r"(?!\d+[/\-]\d{5,})"
# "14-01-2025" is a date, not a block address ("3-12-8 Jingumae").
_NOT_A_DATE = r"(?!\d{1,2}-\d{1,2}-(?:19|20)\d\d(?!\d))"
_STREET_NAME = rf"(?:(?:{W}|\d+(?:st|nd|rd|th))\s+){{1,4}}"
# 12 rue des Martyrs / 27 allée des Tilleuls ("via" is English too: only before a name)
NUMBER_FIRST = re.compile(
    rf"(?<![\w\-/:])(?!\d{{4}}-\d\d-\d\d){_NOT_A_DOOR}{NUM}(?:\s+(?:bis|ter|quater))?,?\s+(?P<prefix>{_PREFIX_RE})\s+"
    rf"(?P<name>(?:{W}\s+){{0,3}}{W})", re.IGNORECASE)
# Calle de Alcalá 214 / ul. Piotrkowska 120 / Jl. Kemang Raya No. 8
PREFIX_FIRST = re.compile(
    rf"(?<![\w])(?P<prefix>{_PREFIX_RE})\s+(?P<name>(?:{W}\s+){{0,4}})(?:no\.?\s*|nº\s*|n°\s*|#\s*|nr\.?\s*)?{NUM}"
    r"(?![\w]|[.:]\d)", re.IGNORECASE)
# Anchors that are addresses by themselves: a street line with its number, a box.
STRONG = [
    # 221b Baker Street / 3150 N Lake Shore Dr / 2118 W 4th Ave / 1205 - 88 Harbour St
    re.compile(rf"(?<![\w\-/])(?<!\d[.,])(?!(?:19|20)\d\d-(?:0[1-9]|1[0-2])(?!\d)){_NOT_A_DOOR}"
               rf"(?:(?:no\.?|nº|n°|#)\s*)?{NUM}(?:\s*-\s*\d+)?,?\s+{_STREET_NAME}"
               rf"(?:{STREET_TYPE_RE})(?![\w]|-\d){DIRECTION}",
               re.IGNORECASE),
    NUMBER_FIRST,
    PREFIX_FIRST,
    # Rua Augusta, 150 / C/ Mayor, 23 / ul. Tverskaya, d. 15
    re.compile(rf"(?<![\w])(?:{_FOREIGN_PREFIX_RE})\s*(?:{W}\s+){{0,3}}{W}[,،]\s*"
               rf"(?:no\.?\s*|nº\s*|n°\s*|d\.\s*|dom\s+|д\.\s*|nr\.?\s*|مبنى\s*|رقم\s*)?{NUM}(?![\w]|[,.]\d)",
               re.IGNORECASE),
    # 3517 W Armitage apt 2: a number, a direction and a street's name without its type, then a flat
    re.compile(rf"(?<![\w\-/.,]){NUM}\s+(?:n|s|e|w|north|south|east|west)\.?\s+{W}(?:\s+{W})?\s+"
               r"(?:apt|unit|suite|ste|#)\.?\s*[\w\-]*\d[\w\-]*(?![\w])", re.IGNORECASE),
    # 45 Haeundaehaebyeon-ro / 22 Teheran-ro 87-gil (Korean road names)
    re.compile(rf"(?<![\w\-/]){NUM}\s+{W}-(?:ro|gil|daero)(?:\s+\d+(?:beon)?-gil)?(?![\w])", re.IGNORECASE),
    # 〒150-0002 (a Japanese postcode, marked as one)
    re.compile(r"〒\s?\d{3}-?\d{4}(?!\d)"),
    # Kastanienallee 41 / Vasagatan 7 / Mariahilfer Straße 112/14 / Bağdat Caddesi No:245
    COMPOUND_STREET := re.compile(rf"(?<![\w])[^\W\d_][\w'’\-]{{0,60}}(?:{_SUFFIX_RE})\s+(?:no[.:]?\s*)?{NUM}"
                                   rf"(?:\s+[a-h]\s+\d{{1,4}})?(?![\w])", re.IGNORECASE),  # "Hämeenkatu 31 A 8"
    SPACED_SUFFIX_STREET := re.compile(rf"(?<![\w])(?:{W}|\d{{1,4}}\.)\s+(?:{_SUFFIX_RE})\s+(?:no[.:]?\s*)?{NUM}"
                                       r"(?![\w])", re.IGNORECASE),
    # PO Box 4412 / Postfach 210 / Caixa Postal 1520 / BP 44 / Private Bag X9
    re.compile(rf"(?<![\w])(?:(?:{_BOX_RE})\s*(?:[a-z]{{1,3}}\s?)?|(?:{_BOX_ABBREVIATION_RE})[\s.:]\s*)"
               r"\d+[a-z]?(?:-\d+)?"
               r"(?![\w]|[/.,]\d)", re.IGNORECASE),
    # 3-12-8 Jingumae (Japanese chome-ban-go)
    re.compile(rf"(?<![\w\-]){_NOT_A_DATE}\d{{1,2}}-\d{{1,3}}-\d{{1,3}}\s+{W}", re.IGNORECASE),
    # Blk 456 Ang Mo Kio Ave 10 / Plot 14 / House No. 5-9-22/1
    re.compile(rf"(?<![\w])(?:blk|plot|house\s+no\.?|h\.\s?no\.?|door\s+no\.?)\s*(?!\d{{6}})"
               rf"(?:{NUM}|[a-z]{{2}}-\d{{3,4}}-\d{{4}})(?![\w])"  # "House No. AK-039-5521": a Ghanaian digital address
               r"(?!\s*(?:m²|m2|sq|sqm|ft²|ft|acres?|ha|hectares?)(?![\w]))", re.IGNORECASE),
    # 123 Moo 4 / 99/45 หมู่ 5 (a Thai village's number after the house's)
    re.compile(r"(?<![\w\-/.,])\d{1,4}(?:/\d{1,4})?\s*(?:moo|หมู่(?:ที่)?|ม\.)\s*\d{1,2}(?![\w])", re.IGNORECASE),
    # SQS 308 Bloco G (a superquadra of Brasília)
    re.compile(r"(?<![\w])(?:sq[ns]w?|shis|shin|cln|cls|crn|crs)\s+\d{3}(?:\s+bloco\s+[a-z])?(?![\w])", re.IGNORECASE),
    # मकान नं. 27 / गली नं. 4 / फ्लैट 12 / বাড়ি ১৮ / রোড ৫ (house, lane, flat, road in Hindi and Bengali)
    re.compile(r"(?<![\w])(?:मकान|फ्लैट|प्लॉट|गली|बाड़ी|বাড়ি|বাসা|হোল্ডিং|ফ্ল্যাট|রোড|সড়ক)\s*"
               r"(?:नं\.?|नंबर|संख्या|নং|নম্বর)?\s*\d{1,5}(?:[/\-]\d{1,4})?(?![\w])"),
    # شقة ٥ / فيلا ٢٣ / زنقة 14 رقم 7 / پلاک ۱۲ / مکان نمبر 112 (flat, villa, building, alley, plate and house
    # numbers in Arabic, Persian and Urdu)
    re.compile(r"(?<![\w])(?:شقة|فيلا|عمارة|مبنى|منزل|زنقة|درب|پلاک|واحد|مکان\s+نمبر|گلی\s+نمبر|مکان|فلیٹ)\s*"
               r"(?:رقم\s*|نمبر\s*|نمبر:\s*)?\d{1,5}(?![\w])"),
    # 99/123 หมู่บ้าน... / 45/7 ซอยลาดพร้าว 101 (a Thai house's number before its village, lane or road)
    re.compile(r"(?<![\w\-/.,])\d{1,4}/\d{1,4}\s*(?:หมู่|ซอย|ซ\.|ถนน|ถ\.)"),
    # so 18 ngo 42 / hẻm 51 Lê Văn Sỹ (a Vietnamese house's number, alley and street)
    re.compile(r"(?:(?<=(?<![\w])số\s)|(?<=(?<![\w])so\s))\d{1,4}[a-z]?(?:/\d{1,4})*\s+"
               r"(?:ngõ|ngo|hẻm|hem|kiệt|kiet|ngách|ngach)"
               r"|(?<![\w])(?:ngõ|hẻm|hem|kiệt|ngách)\s+\d{1,4}(?:/\d{1,4})*\s+[^\W\d_]", re.IGNORECASE),
    # perum griya asri blok C2 no 17 (an Indonesian estate's block and house)
    re.compile(r"(?<![\w])blok\s+[a-z]{0,2}\d{0,3}[a-z]?\s+no\.?\s*\d{1,4}(?![\w])", re.IGNORECASE),
    # 45 एमजी रोड (a road named before its type in Hindi)
    re.compile(r"(?<![\w\-/])\d{1,5}\s+\S{1,20}(?:\s+\S{1,20})?\s+(?:रोड|मार्ग)(?![\w])"),
]
# British and Canadian postcodes name a handful of doors: an address with or without more parts.
CODES = re.compile(r"(?<![\w])(?:[a-z]{1,2}\d[a-z\d]?\s\d[a-z]{2}|[a-z]\d[a-z]\s\d[a-z]\d)(?![\w])", re.IGNORECASE)
# Anchors that only count when address parts follow or precede them: a street without a
# number (``Ngong Road, Kilimani``), a postcode (``..., Kolkata 700091``), an Indian layout.
WEAK = [
    # Route 9 / RR 2 / County Road 12 (rural routes)
    re.compile(r"(?<![\w])(?:rural route|county road|state route|route|rte|rr|hwy|highway|farm road|fm)\s+\d+"
               r"(?![\w]|[,.]\d)", re.IGNORECASE),
    # Box 212 / 21B Street / Shibuya 2-21-1 (a bare box, a numbered street, a block address name-first)
    re.compile(r"(?<![\w])box\s*\d+(?![\w]|[,.]\d)", re.IGNORECASE),
    re.compile(r"(?<![\w\-/])\d+[a-z]?\s+(?:street|road)(?![\w])", re.IGNORECASE),
    re.compile(rf"(?<![\w])[^\W\d_][\w'’.\-]{{2,60}}\s+{_NOT_A_DATE}\d{{1,2}}-\d{{1,3}}-\d{{1,3}}(?![\w\-])",
               re.IGNORECASE),
    # Villa 114, Mirador La Coleccion 1, Arabian Ranches, Dubai (a house numbered with no street: kept
    # only when the address names a known place)
    UNIT_LED := re.compile(r"(?<![\w])(?:villa|casa|house|nyumba|holding|flat|building|bldg)\s+"
                           r"(?:no\.?\s*|n[°º]\s*|na\.\s*)?"
                           r"\d{1,4}[a-z]?(?![\w]|[.,]\d)", re.IGNORECASE),
    # Ward 6, District 3 (Vietnamese wards and districts, numbered)
    re.compile(r"(?<![\w])(?:ward|phường)\s+\d{1,2},\s*(?:district|quận)\s+\d{1,2}(?![\w])", re.IGNORECASE),
    # Co. Leitrim / County Durham (not "Co. Ltd")
    re.compile(r"(?<![\w])(?:co\.|county)\s+(?!ltd|limited|inc|kg|llc|plc|pte|kgaa|ag)(?P<place>[^\W\d_]+)",
               re.IGNORECASE),
    NAMED_STREET := re.compile(rf"(?<![\w]){_STREET_NAME}(?:{STREET_TYPE_RE})(?![\w]|-\d){DIRECTION}",
                                re.IGNORECASE),
    re.compile(r"(?<![\w])\d+(?:st|nd|rd|th)\s+(?:main|cross|block|stage|phase|sector|avenue|street|road)"
               r"(?:\s+road)?(?![\w])", re.IGNORECASE),
    re.compile(r"(?<![\w])(?:sector|phase|pocket|block)\s+\d{1,4}[a-z]?(?![\w]|[,.]\d)", re.IGNORECASE),
    re.compile(rf"(?<![\w])(?:[a-z]\d{{2}}\s(?=[a-z]*\d)(?=\d*[a-z])[a-z\d]{{4}}|[1-9]\d{{3}}\s(?!{_SHORT_WORDS})"
               rf"(?P<letters>[a-z]{{2}})|(?:{US_STATES})\s\d{{5}}(?:-\d{{4}})?)(?![\w])", re.IGNORECASE),
    # 10961 Berlin / 100 00 Praha / 31-609 Kraków / 1100-053 Lisboa: a postcode before a place name
    re.compile(r"(?<![\w\-.,/:#])(?P<code>\d{5}|\d{4}|\d{3}\s\d{2}|\d{2}-\d{3}|\d{4}-\d{3}|\d{3})\s+"
               r"(?P<place>[^\W\d_][\w\-]*)"),
    # Kolkata 700091 / São Paulo 01426-001: a place name (capitalised in the view) and a postcode
    re.compile(r"(?<![\w])(?P<place>[^\W\d_]+)\s+(?:\d{5,6}|\d{5}-\d{3}|\d{4}-\d{3}|\d{3}-\d{4}|\d{2}-\d{3})"
               r"(?![\w\-]|[.,]\d)"),
]
# A unit word, whole ("po" is no unit in "postal").
UNIT_WORDS_RE = "(?:" + "|".join(sorted((re.escape(u) for u in UNITS), key=len, reverse=True)) + \
    r")(?:(?<=[.#])|(?![^\W\d_]))"
UNIT_RE = re.compile(
    rf"^(?:(?:{UNIT_WORDS_RE})\s*[:#]?\s*[\w\-/]+|"
    rf"[a-z]?-?\d+[a-z]?(?:[/\-]\d+)?[a-z]?)(?:\s+{W}){{0,3}}$", re.IGNORECASE)
POSTCODE = re.compile(
    r"\b(?:\d{5}(?:-\d{4})?|\d{3}\s?\d{2}|\d{4,6}|\d{2}-\d{3}|\d{4}-\d{3}|\d{5}-\d{3}|\d{3}-\d{4}|"
    r"[a-z]{1,2}\d[a-z\d]?\s*\d[a-z]{2}|[a-z]\d[a-z]\s?\d[a-z]\d|\d{4}\s?[a-z]{2}|[a-z]\d{2}\s?[a-z\d]{4})\b",
    re.IGNORECASE)

# Anchors whose first words may be prose ("it's Elm Grove no. 23"): the street starts at the
# first word from which the rest reads as a street (``address_vetoes.plausible_start``).
_DOOR_AFTER_TYPES = "street|st|road|rd|avenue|ave|drive|grove|crescent|terrace|boulevard|blvd|close|gardens|mews"
_QUANTITY_AFTER = "|".join(sorted((re.escape(q) for q in QUANTITIES), key=len, reverse=True))
# Elm Grove no. 23 / Harcourt Road number 58: a street, then its door's number
NUMBER_AFTER_TYPE = re.compile(
    rf"(?<![\w])(?P<street>{_STREET_NAME}(?:{_DOOR_AFTER_TYPES}))\.?\s+(?:number|no\.?|nr\.?|n[°º]|#)\s*"
    r"\d{1,5}[a-z]?(?![\w]|[.,:/]\d)", re.IGNORECASE)
# Cihangir Mah. Akarsu Yokuşu No: 22 D: 5 (a Turkish neighbourhood, its streets, door and flat)
NEIGHBOURHOOD_FIRST = re.compile(
    rf"(?<![\w])(?P<street>(?:{W}\s+){{1,3}})(?:mah\.?|mahallesi)\s+(?:[\w'’.\-]+\s+){{0,8}}?"
    r"no\s*[:.]?\s*\d+[a-z]?(?:\s*/\s*\d+)?(?:\s+(?:d|daire|kat)\s*[:.]?\s*\d+)?(?![\w])", re.IGNORECASE)
# Los Militares 5890, depto 1102 / Gorriti 4870 3° B / Ilica 128, 3. kat: a door, then a flat or floor
DOOR_THEN_FLAT = re.compile(
    rf"(?<![\w])(?P<street>(?:{W}\s+){{0,3}}{W})\s+\d{{1,5}}[a-z]?"
    r"(?:(?:,\s*|\s+)(?:depto|dpto|apto|apt|piso|int|oficina|whg|wohnung|кв|квартира|офис|оф)\.?\s*"
    r"\d{1,4}[a-z]?(?![\w])"
    r"|,?\s+\d{1,2}\.\s*kat(?![\w])|\s+\d{1,2}°(?!c(?![\w])|\s*[fk](?![\w]))\s*(?:piso\s*)?[a-z]?(?![\w]))",
    re.IGNORECASE)
# Kenyatta Avenue 44: a street named by no English word, then its door's number
TYPE_THEN_NUMBER = re.compile(
    rf"(?<![\w])(?P<street>{_STREET_NAME}(?:{_DOOR_AFTER_TYPES}))\s+\d{{1,3}}[a-z]?(?![\w]|[.,:/]\d)"
    rf"(?!\s*(?:{_QUANTITY_AFTER})(?![\w]))", re.IGNORECASE)
NAMED_FIRST = (NUMBER_AFTER_TYPE, NEIGHBOURHOOD_FIRST, DOOR_THEN_FLAT, TYPE_THEN_NUMBER)
# Σόλωνος 102, Αθήνα 106 80 (a Greek street in the genitive, its door's number, then the town)
GREEK_STREET = re.compile(r"(?<![\w])[\u0370-\u03ff\u1f00-\u1fff]{3,}(?:\s+[\u0370-\u03ff\u1f00-\u1fff]{2,})?\s+"
                          r"\d{1,3}[α-ω]?,\s*[\u0370-\u03ff\u1f00-\u1fff]{3,}")
