"""Numbers that identify a person: phone numbers, payment cards, IBANs, wallet addresses and
government identifiers, found by shape and decided by checksum and context.

Each finder takes the analysed view (case folded and truecased, see ``casing``) and returns
``Hit``s with a score on the policy's scale: ``LIKELY`` and above are redacted, ``UNCERTAIN``
is masked and quarantines the memory (fail closed: a value shaped like personal data that
cannot be confirmed is hidden, not stored). A business number announced as such ("order",
"invoice", "ticket") is left alone unless the text also calls it personal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from worker.pii.checksums import iban_valid, luhn_valid
from worker.pii.context import Cues, words_after, words_before

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


# Words that announce a business number, not a person's.
BUSINESS = Cues.of([
    "order", "orders", "invoice", "inv", "ticket", "tickets", "case", "incident", "inc", "ref", "reference",
    "tracking", "track", "shipment", "parcel", "awb", "isbn", "sku", "part", "item", "model", "serial", "sn",
    "batch", "lot", "build", "version", "ver", "v", "release", "rev", "revision", "po", "purchase",
    "confirmation", "booking", "reservation", "receipt", "transaction", "txn", "tx", "job", "run", "pipeline",
    "commit", "pr", "issue", "bug", "story", "epic", "task", "request", "req", "trace", "span", "session",
    "build", "port", "pid", "uid", "gid", "error", "code", "status", "http", "exit", "errno", "kb",
    "customer id", "account id", "tenant", "org", "workspace", "project", "cluster", "node", "instance",
    "policy", "claim", "quote", "contract", "member", "membership", "loyalty", "voucher", "coupon", "promo",
    "gift card", "flight", "seat", "room", "table", "container", "asset", "license key", "product key",
    "checksum", "hash", "sha", "md5", "digest", "etag", "nonce", "block", "height", "id", "no", "#", "№",
    "account", "acct", "timestamp", "epoch", "unix", "rgb", "hex", "isbn-10", "isbn-13", "ein", "ean", "upc",
    "pedido", "factura", "bestellung", "rechnung", "commande", "facture", "ordine", "fattura", "pedido nº",
    "manuscript", "doi", "pmid", "arxiv", "rule", "cve", "sample", "plate", "well", "lane", "slot", "shelf",
])

PHONE_CUES = Cues.of([
    "phone", "phones", "tel", "telephone", "mobile", "mob", "cell", "cellphone", "call", "calls", "called",
    "calling", "ring", "text", "txt", "sms", "whatsapp", "signal", "telegram", "viber", "wechat", "fax",
    "landline", "hotline", "dial", "reach", "reached", "contact", "number", "ph", "m", "t", "p", "o", "w", "h",
    "direct", "switchboard", "voicemail", "ext", "extension", "móvil", "movil", "teléfono", "telefono", "tlf",
    "handy", "telefon", "tél", "téléphone", "portable", "celular", "cel", "telefone", "zap", "emergency",
    "phone number", "call me", "call back", "callback", "call-back", "back on", "reach me", "on", "at",
])

CARD_CUES = Cues.of([
    "card", "cards", "credit", "debit", "visa", "mastercard", "mc", "amex", "american express", "discover",
    "jcb", "diners", "maestro", "unionpay", "rupay", "mir", "cc", "ccn", "pan", "payment", "paid", "pay",
    "charged", "charge", "refund", "billing", "cardholder", "expiry", "exp", "cvv", "cvc",
])

CRYPTO_CUES = Cues.of([
    "wallet", "btc", "bitcoin", "eth", "ether", "ethereum", "crypto", "usdt", "usdc", "tether", "address",
    "addr", "send", "sent", "deposit", "withdraw", "withdrawal", "payout", "to", "from",
])

_SEP = r"[ .\-]"
_PHONE = re.compile(
    r"(?<![\w+@/\\\-])(?<![\w.]\.(?=\d))"
    r"(?P<body>(?:(?:\+|00)\d{1,3}[ .\-]?)?(?:\(\d{1,5}\)[ .\-]?)?\d(?:\d|[ .\-](?=\d)|[ .\-]?\((?=\d)|\)[ .\-]?(?=\d)){5,22}\d)"
    r"(?P<ext>\s*(?:x|ext\.?|extension|#)\s*\d{1,6})?"
    r"(?![\w@]|[.\-/:]\d)"
)
_DATE = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}")
_DIGIT_WORDS = {"zero": "0", "oh": "0", "o": "0", "one": "1", "two": "2", "three": "3", "four": "4",
                "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9"}
_SPOKEN = re.compile(
    r"(?<![\w])(?:(?:double|triple)\s+)?(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
    r"(?:[\s,\-]+(?:(?:double|triple)\s+)?(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)){6,}(?![\w])",
    re.IGNORECASE)


def phones(text: str) -> list[Hit]:
    hits = [hit for match in _PHONE.finditer(text) if (hit := _phone(text, match)) is not None]
    hits += [Hit("PHONE_NUMBER", m.start(), m.end(), LIKELY if _phone_cue(text, m.start()) else UNCERTAIN)
             for m in _SPOKEN.finditer(text)]
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
    if _phone_grouping(body) and len(digits) >= 9:
        return Hit("PHONE_NUMBER", start, end, UNCERTAIN)  # grouped like a phone number, nothing says so
    return None  # a bare run of digits with no phone word is as likely an order or account number


def _phone_grouping(body: str) -> bool:
    """Digits in the groups phone numbers are written in (``415 555 0132``, ``06 12 34 56 78``,
    ``0917-555-2841``): three or more groups, none longer than five digits."""
    groups = re.findall(r"\d+", body)
    return len(groups) >= 3 and all(len(g) <= 5 for g in groups[1:])


# Cue words that count only right before the number ("reach me at", "m: ", "number 0917...").
_WEAK_PHONE = frozenset({"on", "at", "m", "t", "p", "o", "w", "h", "ph", "number", "contact"})


def phone_in_context(text: str, start: int, value: str) -> bool:
    """Whatever found it, a "phone number" shaped like a date, a version, an ISBN or a
    year-numbered id, or announced as a business number ("order 4500182733") unless a phone
    word stands closer to it, is not one."""
    value = value.strip()
    if _DATE.fullmatch(value) or _NOT_A_PHONE.fullmatch(value):
        return False
    before = words_before(text, start, 6)
    near = 1 if value.startswith(("+", "(")) else 6  # "+44 ..." is a phone unless labelled right before it
    if not BUSINESS.found_in(before[-near:]):
        return True
    return any(word in PHONE_CUES.words - _WEAK_PHONE for word in before)  # a phone word anywhere near wins


# Shapes phone-number parsers accept that are something else: versions with a one-digit
# part (124.0.6367.91), year-numbered ids (2024-0117), ISBN-10 (0-306-40615-2), slashed
# triples (30/144/255).
_NOT_A_PHONE = re.compile(r"(?:\d+\.)+\d+(?<=\.\d)|\d+(?:\.\d+)*\.\d\.\d+(?:\.\d+)*|(?:19|20)\d\d[-./]\d+|"
                          r"\d{1,5}-\d{2,7}-\d{2,7}-[\dx]|\d{1,3}/\d{1,3}/\d{1,3}|97[89]-?\d[\d\-]{9,15}", re.I)


def _phone_cue(text: str, start: int) -> bool:
    before = words_before(text, start, 5)
    strong = PHONE_CUES.words - _WEAK_PHONE
    if any(word in strong for word in before) or any(
            _tail_has(before, phrase) for phrase in PHONE_CUES.phrases):
        return True
    return bool(before) and before[-1] in _WEAK_PHONE


def _tail_has(words: list[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(tuple(words[i:i + n]) == phrase for i in range(len(words) - n + 1))


def _dotted_quad(body: str) -> bool:
    parts = body.split(".")
    return len(parts) == 4 and all(p.isdigit() and len(p) <= 3 for p in parts)


# ---------------------------------------------------------------- payment cards

_CARD = re.compile(r"(?<![\w.\-/])\d(?:\d|[ \-](?=\d)){11,22}(?![\w]|[.\-/:]\d)")
_CARD_GROUPS = {(4, 4, 4, 4), (4, 6, 5), (4, 6, 4), (4, 4, 4, 4, 3), (4, 4, 4, 2), (4, 4, 4, 3), (4, 4, 4, 1),
                (4, 4, 4), (4, 4, 5), (4, 4, 4, 4, 2), (4, 4, 4, 4, 1), (6, 13), (4, 4, 4, 6), (4, 4, 4, 5)}


def card_network(digits: str) -> bool:
    """The number starts like a card of some network and has that network's length."""
    n, first2, first4 = len(digits), int(digits[:2]), int(digits[:4])
    if digits[0] == "4":
        return n in (13, 16, 19)
    if 51 <= first2 <= 55 or 2221 <= first4 <= 2720:
        return n == 16
    if first2 in (34, 37):
        return n == 15
    if 300 <= int(digits[:3]) <= 305 or first2 in (36, 38, 39):
        return 14 <= n <= 19
    if 3528 <= first4 <= 3589:
        return 16 <= n <= 19
    if digits[0] == "6" or first2 in (50, 81, 82) or 2200 <= first4 <= 2204:
        return 12 <= n <= 19
    return 56 <= first2 <= 58 and 12 <= n <= 19


def cards(text: str) -> list[Hit]:
    hits = []
    for match in _CARD.finditer(text):
        raw = match.group(0)
        digits = re.sub(r"\D", "", raw)
        if not 12 <= len(digits) <= 19 or len(set(re.findall(r"[ \-]", raw))) > 1:
            continue
        score = _card_score(text, match.start(), raw, digits)
        if score:
            hits.append(Hit("CREDIT_CARD", match.start(), match.end(), score))
    return hits


def _card_score(text: str, start: int, raw: str, digits: str) -> float:
    before = words_before(text, start, 5)
    cue = CARD_CUES.found_in(before)
    network = card_network(digits)
    groups = tuple(len(g) for g in re.split(r"[ \-]", raw))
    card_shaped = network and (len(groups) == 1 or groups in _CARD_GROUPS)
    if BUSINESS.found_in(before[-2:]) and not cue:
        return 0.0
    if luhn_valid(digits) and card_shaped:
        return CERTAIN
    if cue and (network or luhn_valid(digits)):
        return LIKELY if luhn_valid(digits) else UNCERTAIN
    if card_shaped and len(groups) > 1:
        return UNCERTAIN  # grouped like a card, check digit wrong: a mistyped card is still a card
    return 0.0


# ---------------------------------------------------------------- IBAN with a wrong check digit

IBAN_COUNTRIES = frozenset("""
ad ae al at az ba be bg bh br by ch cr cy cz de dk do ee eg es fi fo fr gb ge gi gl gr gt hr hu ie il iq is it jo
kw kz lb lc li lt lu lv ly md me mk mr mt mu nl no pk pl ps pt qa ro rs ru sa sc sd se si sk sm so st sv tl tn tr
ua va vg xk ye
""".split())
_IBAN = re.compile(r"(?<![\w\-./])[a-z]{2}\d{2}(?:[ \-]?[a-z0-9]{4}){2,7}(?:[ \-]?[a-z0-9]{1,3})?(?![\w])", re.IGNORECASE)


def ibans(text: str) -> list[Hit]:
    """IBAN-shaped strings: valid ones are left to Presidio's recognizer (they score
    ``CERTAIN`` here too); a failed check digit is a mistyped IBAN, masked as uncertain."""
    hits = []
    for match in _IBAN.finditer(text):
        compact = re.sub(r"[ \-]", "", match.group(0))
        if (sum(ch.isdigit() for ch in compact[4:]) < 8 or not 15 <= len(compact) <= 34
                or compact[:2].lower() not in IBAN_COUNTRIES):
            continue
        hits.append(Hit("IBAN_CODE", match.start(), match.end(), CERTAIN if iban_valid(compact) else UNCERTAIN))
    return hits


# ---------------------------------------------------------------- cryptocurrency addresses

_CRYPTO = re.compile(r"(?<![\w])(?:bc1[ac-hj-np-z02-9]{25,62}|[13][1-9a-z]{25,34}|0x[0-9a-f]{40})(?![\w])",
                     re.IGNORECASE)


def wallets(text: str) -> list[Hit]:
    """Bitcoin (legacy, P2SH, bech32) and Ethereum addresses by shape: the view is case
    folded, so base58 check digits cannot be verified; the shape alone is distinctive."""
    hits = []
    for match in _CRYPTO.finditer(text):
        value = match.group(0).lower()
        if value[0] in "13" and (value.isdigit() or value.isalpha() or "0" in value):
            continue
        before = words_before(text, match.start(), 4)
        if BUSINESS.found_in(before[-2:]) and not CRYPTO_CUES.found_in(before):
            continue
        hits.append(Hit("CRYPTO", match.start(), match.end(), CERTAIN if CRYPTO_CUES.found_in(before) else LIKELY))
    return hits


# ---------------------------------------------------------------- identifiers named by a keyword

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
        "resident registration", "emirates id", "iqama", "nid", "cnic", "ktp", "nik", "philsys", "sss", "umid",
        "ghana card", "bvn", "sa id", "id no", "id#", "identification number", "alien number", "a-number",
        "green card", "work permit", "visa number", "residence permit", "permit number", "rut", "cuil",
        "cuit", "mykad", "ppsn", "pps number", "pps no", "ahv", "ahv-nr", "avs", "numéro fiscal", "rodné číslo",
        "id no.", "id nr", "id-nr", "ausweisnummer", "personalausweisnummer", "dni nº", "nº dni",
        "passport #", "licence #", "license #", "identity document", "id document", "document number",
        "documento", "documento de identidad", "carte d'identité", "numéro d'identité", "sozialversicherungsnummer",
        "svnr", "steueridentifikationsnummer", "national id number", "tax identification number",
    ], "NATIONAL_ID"),
}
_CONNECTORS = frozenset({"number", "numbers", "no", "nr", "num", "n°", "nº", "#", "is", "es", "è", "é", "ist",
                         "est", "c'est", "to", "was", "of", "de", "do", "da", "del", "on", "reads", "now",
                         "card", "id", "code", "(de)", "(uk)", "(us)", "(in)", "(fr)", "-nr", "nummer", "numéro",
                         "numero", "número", "is:", "updated", "corrected", "new", "old", "my", "his", "her",
                         "their", "our", "the", "a", "un", "una", "le", "la", "il", "el", "o", "meu", "minha",
                         "mi", "mon", "ma", "mein", "meine", "mijn", "min", "mój", "moja", "jest", "to:"})
_KEYWORD_RE = re.compile(
    r"(?<![\w])(" + "|".join(sorted((re.escape(k) for k in ID_KEYWORDS), key=len, reverse=True)) + r")(?![\w])",
    re.IGNORECASE)
_VALUE_TOKEN = re.compile(r"[^\W_]+|[^\w\s]", re.UNICODE)


def named_ids(text: str) -> list[Hit]:
    """A value right after an identifier's name ("NHS number 401 023 7236", "mi DNI es
    48392017V"): digits and letters in groups, with at least four digits."""
    hits = []
    for match in _KEYWORD_RE.finditer(text):
        span = _id_value(text, match.end())
        if span is not None:
            hits.append(Hit(ID_KEYWORDS[match.group(1).lower()], span[0], span[1], NAMED))
    return hits


def _id_value(text: str, cursor: int) -> tuple[int, int] | None:
    """Skip connectors and punctuation after a keyword ("number", "no.", "(DE):", "es"),
    then take the value's groups."""
    pos = cursor
    for token in list(re.finditer(r"\S+", text[cursor:cursor + 80]))[:7]:
        bare = token.group(0).strip("()[]:.,=#-–").lower()
        if bare and (bare not in _CONNECTORS or _has_digits(bare)):
            start = cursor + token.start() + (len(token.group(0)) - len(token.group(0).lstrip("([:#=")))
            return _value_groups(text, start)
        pos = cursor + token.end()
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
    if digits < 4 or sum(ch.isalnum() for ch in value) < 6:
        return None
    return pos, end


def _has_digits(token: str) -> bool:
    return any(ch.isdigit() for ch in token)


# ---------------------------------------------------------------- IPv6 written with a port

_IPV6_PORT = re.compile(r"(?<![\w:.])((?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}):(\d{1,5})(?![\w:])", re.IGNORECASE)


def ipv6_with_port(text: str) -> list[Hit]:
    """``2001:db8::200e:44321`` in a log line: not an address as written, but an address
    followed by a port. The address part is an IP address."""
    hits = []
    for match in _IPV6_PORT.finditer(text):
        if _is_ip(match.group(0)) or not _is_ip(match.group(1)):
            continue
        hits.append(Hit("IP_ADDRESS", match.start(1), match.end(1), LIKELY))
    return hits


def _is_ip(value: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------- national numbers by their shape

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


def id_shapes(text: str) -> list[Hit]:
    hits = []
    for pattern, score in _ID_SHAPES:
        for match in pattern.finditer(text):
            if not BUSINESS.found_in(words_before(text, match.start(), 2)):
                hits.append(Hit("NATIONAL_ID", match.start(), match.end(), score))
    return hits
