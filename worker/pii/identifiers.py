"""Government identifiers: a value announced by its identifier's name ("NHS number 401 023
7236", "mi DNI es 48392017V", "Steuer-ID 61058392743"), and the few formats distinctive enough
to stand alone. Presidio's recognizers confirm the checksummed national formats.
"""

from __future__ import annotations

import itertools
import re

from ibex_worker.pii import tables
from ibex_worker.pii.checksums import cn_resident_id_valid, creditor_reference_valid, es_dni_valid, tr_identity_valid
from ibex_worker.pii.context import words_before
from ibex_worker.pii.business import BUSINESS, record_compound, ups_tracking_before
from ibex_worker.pii.casing import matched_key
from ibex_worker.pii.phone_words import PHONE_CUES, WEAK_PHONE_CUES
from ibex_worker.pii.numbers import LIKELY, NAMED, Hit, named_by_record

# keyword -> entity type. The value follows the keyword (and "number", "no", ":" ...).
ID_KEYWORDS: dict[str, str] = {
    **dict.fromkeys(["ssn", "social security", "social security number", "social security no", "ss#", "ss no"],
                    "US_SSN"),
    **dict.fromkeys(["itin", "taxpayer id", "taxpayer identification"], "US_ITIN"),
    **dict.fromkeys([
        "passport", "passport no", "passport number", "passport#", "reisepass", "reisepass-nr", "reisepassnummer",
        "pasaporte", "passeport", "passaporto", "passaporte", "paspoort", "paszport",
        "driver license", "driver licence", "drivers license", "drivers licence", "driver's license",
        "driver's licence", "driving licence", "driving license", "dl", "dl#", "licence number", "license number",
        "dvla", "dvla licence", "drivers licence no", "driving licence no", "licence", "license",
        "licence no", "license no", "führerschein", "permis de conduire", "licencia", "carteira de motorista",
        "cnh", "state id", "id card", "identity card", "national id", "national identity", "id number",
        "identity number", "citizen id", "personal id", "personalausweis", "ausweis", "carta d'identità",
        "cédula", "cedula", "dni", "nie", "nif", "nuss", "codice fiscale", "cf", "insee", "nir",
        "sécurité sociale", "securite sociale", "numéro de sécu", "numero de secu", "sécu", "secu",
        "steuer-id", "steuerid", "steuer id", "steueridentifikationsnummer", "identifikationsnummer",
        "steuernummer", "tax id", "tax number", "tin", "tax file number", "tfn", "cpf", "rg", "nric", "fin",
        "ic", "curp", "rfc", "pesel", "bsn", "burgerservicenummer", "personnummer", "personal number",
        "henkilötunnus", "hetu", "cpr", "fødselsnummer", "kennitala", "amka", "egn", "oib", "jmbg", "tckn",
        "tc kimlik", "kimlik", "nin", "national insurance", "national insurance number", "ni number", "ni no",
        "nino", "nhs", "nhs number", "nhs no", "chi number", "aadhaar", "aadhar", "uidai", "pan", "pan card",
        "pan number", "epic", "voter id", "sin", "social insurance", "social insurance number", "health card",
        "medicare", "medicare number", "ird", "ird number", "hkid", "my number", "mynumber", "rrn",
        "resident registration", "emirates id", "رقم الهوية", "الهوية الوطنية", "رقم الهوية الوطنية",
        "iqama", "nid", "cnic", "ktp", "nik", "philsys", "sss", "umid",
        "ghana card", "bvn", "sa id", "id no", "id#", "identification number", "alien number", "a-number",
        "green card", "work permit", "visa number", "residence permit", "permit number", "rut", "cuil",
        "cuit", "mykad", "ppsn", "pps number", "pps no", "ahv", "ahv-nr", "avs", "numéro fiscal", "rodné číslo",
        "id no.", "id nr", "id-nr", "ausweisnummer", "personalausweisnummer", "dni nº", "nº dni",
        "passport #", "licence #", "license #", "identity document", "id document", "document number",
        "documento", "documento de identidad", "carte d'identité", "numéro d'identité", "sozialversicherungsnummer",
        "svnr", "steueridentifikationsnummer", "national id number", "tax identification number",
        "rijksregisternummer", "rijksregister", "registre national", "insz", "versichertennummer",
        "krankenversichertennummer", "kvnr", "kitambulisho", "namba ya kitambulisho",
        "паспорт", "паспорта", "загранпаспорт", "инн", "снилс", "паспорт рф", "ідентифікаційний код", "рнокпп",
        "iin", "иин",
    ], "NATIONAL_ID"),
}
_CONNECTORS = frozenset({"number", "numbers", "no", "nr", "num", "n°", "nº", "#", "is", "es", "è", "é", "ist",
                         "est", "c'est", "to", "was", "of", "de", "do", "da", "del", "on", "reads", "now",
                         "card", "id", "code", "(de)", "(uk)", "(us)", "(in)", "(fr)", "-nr", "nummer", "numéro",
                         "numero", "número", "is:", "updated", "corrected", "new", "old", "my", "his", "her",
                         "their", "our", "the", "a", "un", "una", "le", "la", "il", "el", "o", "meu", "minha",
                         "mi", "mon", "ma", "mein", "meine", "mijn", "min", "mój", "moja", "jest", "to:",
                         "numarası", "numarasını", "numaram", "numaranız", "numarasi", "numarasini"})
_KEYWORD_RE = re.compile(
    r"(?<![\w])(" + "|".join(sorted((re.escape(k) for k in ID_KEYWORDS), key=len, reverse=True)) + r")(?![\w])",
    re.IGNORECASE)
_VALUE_TOKEN = re.compile(r"[^\W_]+|[^\w\s]", re.UNICODE)


_KEYWORD_BY_FOLD = {matched_key(keyword): keyword for keyword in ID_KEYWORDS}


def named_ids(text: str) -> list[Hit]:
    """A value right after an identifier's name ("NHS number 401 023 7236", "mi DNI es
    48392017V"): digits and letters in groups, with at least four digits; or, for a name that
    names nothing else, further on in its clause (``_later_in_clause``: "PESEL do umowy:
    85031204567", "身份证号（张伟）：110105199003071234")."""
    hits = []
    keyed = text.replace("_", " ")  # a key's words joined by underscores ("id_number", "nhs_no"), same offsets
    header = tables.header_end(text)  # a CSV header's id names its column's cells, not what follows it
    keywords = [(_KEYWORD_BY_FOLD[matched_key(m.group(1))], m.end()) for m in _KEYWORD_RE.finditer(keyed, header)] \
        + [("national id", m.end()) for m in _CJK_KEYWORD_RE.finditer(text)]
    for keyword, end in keywords:
        dotted = end + 1 if text[end:end + 1] == "." and keyword.endswith((" no", " nr")) else end  # "Passport no."
        span = _id_value(text, end) or (_later_in_clause(text, dotted) if keyword in _ID_NAMES else None)
        if span is None or _not_a_person_s(keyword, text[span[0]:span[1]]) \
                or _COMPANY_AFTER.match(text, span[1]) or format_mask(text[span[0]:span[1]]):
            continue
        hits.append(Hit(_kind(keyword, text[span[0]:span[1]]), span[0], span[1], NAMED))
    for start, column in tables.cells(text):
        keyword = _KEYWORD_BY_FOLD.get(matched_key(column.replace("_", " ")))
        span = _value_groups(text, start + (text[start:start + 1] == '"')) if keyword else None
        if span is not None and not _not_a_person_s(keyword, text[span[0]:span[1]]):
            hits.append(Hit(ID_KEYWORDS[keyword], span[0], span[1], NAMED))  # "nhs_no" column: "943 476 5919"
    return hits


# The names that name nothing but a person's identifier: only they announce a value further on
# in their clause ("nie", "sin", "tin", "pan", "licence", "NHS" are words, services or fees too).
_ID_NAMES = frozenset({
    "passport", "passport no", "passport number", "reisepass", "reisepassnummer", "pasaporte", "passeport",
    "passaporto", "passaporte", "paspoort", "paszport", "pesel", "cpf", "dni", "curp", "codice fiscale",
    "steuer-id", "steuerid", "steuer id", "steueridentifikationsnummer", "identifikationsnummer", "personalausweis",
    "ausweisnummer", "personalausweisnummer", "aadhaar", "aadhar", "cnic", "nric", "mykad", "hkid", "bvn", "ssn",
    "social security", "social security number", "driver license", "driver licence", "drivers license",
    "drivers licence", "driver's license", "driver's licence", "driving licence", "driving license", "führerschein",
    "national id", "national identity", "national id number", "id card", "identity card", "tax id", "tckn",
    "tc kimlik", "kimlik", "personnummer", "henkilötunnus", "hetu", "fødselsnummer", "kennitala", "amka", "oib",
    "jmbg", "egn", "rodné číslo", "insz", "rijksregisternummer", "burgerservicenummer", "versichertennummer",
    "krankenversichertennummer", "sozialversicherungsnummer", "emirates id", "iqama", "nhs number",
    "national insurance number", "ppsn", "ahv", "ahv-nr", "cédula", "cedula", "documento de identidad",
    "carte d'identité", "numéro d'identité", "tax identification number", "resident registration", "ktp", "nik",
    "rrn", "bsn", "pps number", "pps no", "social insurance number", "national insurance no", "ni number",
    "kitambulisho", "namba ya kitambulisho",
})
# Identifiers' names in scripts written without spaces, glued to the words around them.
_CJK_KEYWORD_RE = re.compile(r"주민등록번호|주민번호|외국인등록번호|身份证号码|身份证号|身份证|身分證字號|身分證|"
                             r"マイナンバー|個人番号|在留カード番号")
_CLAUSE_END = re.compile(r"[;|\n。]|\.\s")
_LATER_VALUE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{0,6}\d")


# A company's own number: "Steuernummer der GmbH 143/815/08154", "NIF de la sociedad B-86519320".
_COMPANY_WORDS = frozenset({"gmbh", "ag", "kg", "sociedad", "empresa", "société", "societe", "entreprise", "società",
                            "company", "companies", "firma", "unternehmen", "unternehmens", "betrieb", "betriebs",
                            "arbeitgeber", "arbeitgebers", "employer", "employers",
                            "ltd", "inc", "llc", "corp", "sa", "sl", "sarl", "bv", "nv", "plc"})
_DATE_VALUE = re.compile(r"(?:\d{1,2}[./\-]\d{1,2}[./\-](?:19|20)?\d\d|(?:19|20)\d\d[./\-]\d{1,2}[./\-]\d{1,2}|"
                         r"(?:19|20)\d\d[/\-](?:19|20)?\d\d|(?:19|20)\d\d[01]\d[0-3]\d)(?!\d)")
_DOTTED_QUAD = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}(?![\d.])")


def _dated(value: str) -> bool:
    """A date, not a number that starts with a birth date ("19850312-1234": a Swedish personnummer)."""
    date = _DATE_VALUE.match(value)
    return date is not None and re.fullmatch(r"[-+]?\d{4}", value[date.end():]) is None


def _later_in_clause(text: str, cursor: int) -> tuple[int, int] | None:
    """The first value of six digits or more after an identifier's name in its clause, past
    dates and hosts' addresses; none when an amount, a short number right after the name
    ("RFC 3339"), or a company's, phone's or record's word on the way says it is another's."""
    if re.match(r"\s*\d{1,5}(?![\w.\-/])", text[cursor:]):
        return None  # "RFC 3339 says ...": the name numbers something else
    if not re.match(r"[\s:：（(]|$", text[cursor:cursor + 1]) and not _CJK_KEYWORD_RE.search(text, max(0, cursor - 8),
                                                                                           cursor):
        return None  # "cf-ray=862f4a1c...": the name glued into another word
    end = _CLAUSE_END.search(text, cursor, cursor + 100)
    clause_end = end.start() if end else min(len(text), cursor + 100)
    past = cursor
    for value in list(_LATER_VALUE.finditer(text, cursor, clause_end))[:6]:
        span = _value_groups(text, value.start()) if value.start() >= past else None
        if span is None or _dated(text[span[0]:span[1]]) or _DOTTED_QUAD.match(text, span[0]):
            past = max(past, span[1] if span else value.end())
            continue  # "passport ... valid until 22/11/2024, number C01X00T47": past the date
        if sum(ch.isdigit() for ch in text[span[0]:span[1]]) < 6 or span[1] > clause_end \
                or _AMOUNT_AROUND.search(text, max(0, span[0] - 2), span[0]) or _AMOUNT_AFTER.match(text, span[1]):
            return None
        words = re.findall(r"[^\W\d_]+", text[cursor:span[0]].lower())
        shaped = any(pattern.fullmatch(text[span[0]:span[1]]) for pattern, _ in _ID_SHAPES)
        if set(words) & _COMPANY_WORDS or set(words) & _PHONE_WORDS or any(record_compound(w) for w in words) \
                or _CJK_PHONE.search(text, cursor, span[0]) \
                or not shaped and BUSINESS.found_in(words_before(text, span[0], 2, reach=span[0] - cursor)):
            return None  # a company's tax number, a phone or a record named on the way; "order 4417 2290"
        return span
    return None


# Words of phones (not the number words they share with ids: "Nummer", "número").
_PHONE_WORDS = PHONE_CUES.words - WEAK_PHONE_CUES - {"nummer", "numero", "número", "numéro", "nomor", "nombor"}
_CJK_PHONE = re.compile("電話|携帯|电话|手机|手機|전화|휴대폰|핸드폰|연락처")
# An amount: a currency's sign before the value, or a currency or unit after it ("1250000 VND").
_AMOUNT_AROUND = re.compile(r"[£€$¥₹₩]\s*$")
_AMOUNT_AFTER = re.compile(r"\s*(?:[a-z]{0,2}[€$£¥₹₩]|eur|euro|euros|usd|gbp|chf|pln|zł|zl|vnd|idr|rupiah|rupees|"
                           r"pesos|dollars|pounds|yen|won|yuan|rmb|units|pcs|people|km|kg|%)(?![\w])", re.IGNORECASE)


# "Steuernummer 21/815/08150 (Betrieb)", "NIF 503504564 (empresa)": the tax number of a business.
_COMPANY_AFTER = re.compile(r"\s*\(?\s*(?:betrieb|firma|unternehmen|gewerbe|empresa|entreprise|société|societe|"
                            r"società|company|business|gmbh|ltd|inc|llc)\b", re.IGNORECASE)
# "expected AA999999A", "XXX-XX-XXXX": a format's mask, every digit the same placeholder.
_FORMAT_MASK = re.compile(r"[a-z\s.\-/]*(?:(?P<d>\d)(?:[\s.\-/]*(?P=d)){5,})[a-z\s.\-/]*", re.IGNORECASE)


def format_mask(value: str) -> bool:
    return _FORMAT_MASK.fullmatch(value) is not None


def _kind(keyword: str, value: str) -> str:
    """The entity a name announces; "my number" is Japan's My Number with its 12 digits, and
    what English says of a phone number with any other count ("My number is 07700 900123")."""
    if keyword in ("my number", "mynumber") and len(re.sub(r"\D", "", value)) != 12:
        return "PHONE_NUMBER"
    return ID_KEYWORDS[keyword]


def _not_a_person_s(keyword: str, value: str) -> bool:
    """An Argentine CUIT of 30, 33 or 34 is a legal entity's; a Portuguese NIF (NIPC) of 5, 6 or 9
    a company's, a public body's or a fund's; an "RRN" of other than 13 digits a payment's
    retrieval reference, not a Korean resident registration number."""
    digits = re.sub(r"\D", "", value)
    if keyword == "rrn":
        return len(digits) != 13  # a Korean resident registration number has 13 digits; a payment's RRN 12
    if keyword in ("cuit", "cuil"):
        return len(digits) == 11 and digits[:2] in ("30", "33", "34")
    return keyword == "nif" and len(digits) == 9 and digits[0] in "569" and not re.search(r"[a-z]", value, re.I)


def _id_value(text: str, cursor: int) -> tuple[int, int] | None:
    """Skip connectors and punctuation after a keyword ("number", "no.", "(DE):", "es"),
    then take the value's groups."""
    for token in list(re.finditer(r"\S+", text[cursor:cursor + 80]))[:7]:
        bare = token.group(0).strip("()[]:.,=#-–\"'“”‘’<>").lower()
        if bare and (bare not in _CONNECTORS or _has_digits(bare)):
            start = cursor + token.start() + (len(token.group(0)) - len(token.group(0).lstrip("([:#=\"'“‘<>")))
            return _value_groups(text, start)
    return None


def _value_groups(text: str, pos: int) -> tuple[int, int] | None:
    """Groups of digits and letters: a letters-only group belongs to the value when glued to
    it (``71504826-B``) or a final check letter (``AB 12 34 56 C``), not a next word."""
    groups = re.compile(r"[a-z0-9](?:[a-z0-9]|[ .\-/](?=[a-z0-9])){3,30}", re.IGNORECASE).match(text, pos)
    if groups is None:
        return None
    parts = list(re.finditer(r"[a-z0-9]+", groups.group(0), re.IGNORECASE))
    end = pos
    digits = 0
    for index, part in enumerate(parts):
        token = part.group(0)
        if not _has_digits(token):
            spaced = index > 0 and groups.group(0)[parts[index - 1].end():part.start()] == " "
            following = parts[index + 1].group(0) if index + 1 < len(parts) else None
            check_letter = len(token) == 1 and digits >= 6 and (following is None or following.isalpha()
                                                                 and len(following) > 2)
            if len(token) > 2 or spaced and not check_letter:
                break
        end = pos + part.end()
        digits += sum(ch.isdigit() for ch in token)
    value = text[pos:end]
    if digits < 4 or sum(ch.isalnum() for ch in value) < 6 or _ISO_DATE.fullmatch(value):
        return None  # "wygasa za 7 dni (2024-03-19)": a date after a word that is also an id's name
    return pos, end


_ISO_DATE = re.compile(r"(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])")


def _has_digits(token: str) -> bool:
    return any(ch.isdigit() for ch in token)


# Formats distinctive enough to stand alone (an SKU can look like a PAN or a DNI; nothing looks
# like a codice fiscale). Presidio's recognizers confirm the checksummed formats (a valid one
# scores 1.0) and the identifier finder takes any format its name announces.
_ID_SHAPES = [
    (re.compile(r"(?<![\w])[a-z]{6}\d{2}[a-z]\d{2}[a-z]\d{3}[a-z](?![\w])", re.I), LIKELY),      # codice fiscale
    (re.compile(r"(?<![\w])[a-z]{4}\d{6}[hm][a-z]{5}[a-z0-9]\d(?![\w])", re.I), LIKELY),         # CURP
    (re.compile(r"(?<![\w.])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\w])"), LIKELY),                       # CPF
    # spaced like a UK National Insurance number (AB 12 34 56 C): the spacing is its own
    (re.compile(r"(?<![\w])[a-ceghj-pr-tw-z]{2} \d{2} \d{2} \d{2} [a-d](?![\w])", re.I), LIKELY),
]


# Formats whose check digit or letter confirms them, with no name needed: a Chinese resident
# identity number (a birth date and a check character: whatever word comes before it), a
# Spanish DNI or NIE (one number in 23 passes: not after a business word, "pedido 12345678Z").
_CHECKED_SHAPES = [
    (re.compile(r"(?<![\w\-])\d{17}[\dx](?![\w\-])", re.I), cn_resident_id_valid, False),
    (re.compile(r"(?<![\w\-])(?:\d{8}|[xyz]-?\d{7})-?[a-z](?![\w\-])", re.I), es_dni_valid, True),
]


# "TC 10000000078", "T.C. 10000000078": the republic's letters before a Turkish identity number.
_TR_IDENTITY = re.compile(r"(?<![\w.])T\.?C\.?:?\s{0,2}(?P<value>[1-9]\d{10})(?![\w\-])", re.IGNORECASE)


def id_shapes(text: str) -> list[Hit]:
    hits = [Hit("NATIONAL_ID", m.start("value"), m.end("value"), LIKELY) for m in _TR_IDENTITY.finditer(text)
            if tr_identity_valid(m.group("value"))]
    for pattern, score in _ID_SHAPES:
        for match in pattern.finditer(text):
            if not BUSINESS.found_in(words_before(text, match.start(), 2)):
                hits.append(Hit("NATIONAL_ID", match.start(), match.end(), score))
    for pattern, valid, vetoed in _CHECKED_SHAPES:
        hits.extend(Hit("NATIONAL_ID", m.start(), m.end(), LIKELY) for m in pattern.finditer(text)
                    if valid(m.group(0)) and not (vetoed and BUSINESS.found_in(words_before(text, m.start(), 2))))
    return hits


# "RF" and two check digits, then groups of letters and digits (ISO 11649, at most 21 after the check).
_CREDITOR_REFERENCE = re.compile(r"(?<![\w])RF\d{2}(?:[ ]?[A-Z\d]{1,4}){1,6}", re.IGNORECASE)


def creditor_references(text: str) -> list[tuple[int, int]]:
    """Spans of valid ISO 11649 creditor references ("SEPA ref RF18 5390 0754 7034"): a
    payment's reference, whose digits are no card or phone number. Each match is cut back a
    group at a time until its check digits hold, since a word of four letters after it looks
    like one more group; a reference with digits right after it is left out (where it ends is
    unclear, and the digits may be somebody's number)."""
    spans = []
    for match in _CREDITOR_REFERENCE.finditer(text):
        groups = re.findall(r" ?[A-Za-z\d]+", match.group(0)[4:])
        for n in range(len(groups), 0, -1):
            value = match.group(0)[:4] + "".join(groups[:n])
            if creditor_reference_valid(value.replace(" ", "")):
                if not re.match(r"\s?\d", text[match.start() + len(value):]):  # digits after it: unclear where it ends
                    spans.append((match.start(), match.start() + len(value)))
                break
    return spans


# Letters glued before with a hyphen, or a hyphen and more after ("WC-778-21-0093",
# "318-40-6672-B"): the number is part of a longer code.
_CODE_AROUND = re.compile(r"[A-Za-z]-$|^-\w")


def inside_code(text: str, start: int, end: int) -> bool:
    """The value continues a code of letters and hyphens on either side, or a UPS tracking number."""
    return bool(_CODE_AROUND.search(text[max(0, start - 2):start]) or _CODE_AROUND.search(text[end:end + 2])
                or ups_tracking_before(text, start))


def filed_as_record(text: str, start: int, end: int) -> bool:
    """An SSN-shaped number a record's word names, inside a longer code, or one of a series of
    records (the caller asks only where no SSN word is in the text)."""
    return named_by_record(text, start, end) or inside_code(text, start, end) or one_of_a_series(text, start, end)


_SSN_SHAPED = re.compile(r"(?<![\w\-])(\d{3})([ \-]?)(\d{2})\2\d{4}(?![\w\-])")


def one_of_a_series(text: str, start: int, end: int) -> bool:
    """Another number of the SSN's shape in the text with the same first five digits ("case
    600-41-2287; the previous case 600-41-2279", a CSV column 412-55-0983, 412-55-0984): records
    numbered in a series."""
    value = _SSN_SHAPED.fullmatch(text, start, end)
    return value is not None and any(
        other.start() != start and (other.group(1), other.group(3)) == (value.group(1), value.group(3))
        for other in itertools.islice(_SSN_SHAPED.finditer(text), _MAX_SERIES))


# Numbers of the SSN's shape compared with: a dump listing more is a table of records anyway.
_MAX_SERIES = 32
