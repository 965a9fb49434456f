"""Phone-shaped numbers the sentence names as something else: a tax number after its
country's letters, a record's number the clause is about ("Model number on the water heater
is ..."), a ZIP+4 code in a text about postal codes, ranges, lists, scores and part numbers.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from ibex_worker.pii.address_words import US_STATES
from ibex_worker.pii.business import (ORDERS_BESIDE_NUMBER_WORD, ORDERS_RIGHT_BEFORE, RECORDS, RECORDS_RIGHT_BEFORE,
                                      record_compound)
from ibex_worker.pii import tables
from ibex_worker.pii.context import Cues, words_before
from ibex_worker.pii.phone_words import PHONE_CUES

# The country prefixes of EU and UK VAT numbers, and the words that name such a number.
_VAT_COUNTRIES = frozenset("at be bg cy cz de dk ee el es fi fr gb hr hu ie it lt lu lv mt nl pl pt ro se si sk "
                           "xi".split())
_VAT_PREFIX = re.compile(r"\b(?:vat|tva|iva|ust|ust-idnr|ust-id|btw|moms|mwst|p\.?\s?iva|nif|cif)\b[\w.: \-]{0,12}?"
                         r"\b(?P<country>[a-z]{2})\s*$", re.IGNORECASE)

# Words a record's number is called by ("model number", "hold no.", "meter ID").
NUMBER_WORDS = frozenset({"#", "no", "nr", "num", "number", "id", "ref", "nº", "n°", "№"})
# Things numbered that are not business records elsewhere: only right before a number word
# do they name the number ("the library hold number", "the gas meter number").
_NUMBERED_THINGS = frozenset({"hold", "meter", "locker", "pallet", "cheque", "check", "docket", "waybill",
                              "manifest", "chassis", "engine", "bay",
                              "platform", "gate", "unit", "warranty", "appliance", "product", "catalogue",
                              "catalog", "stock", "article", "artikel", "reading", "consumer"})
# Words that name a dotted number a version ("firmware 3.14.159.26", "Reader 24.001.20643").
VERSIONED = Cues.of(["version", "ver", "firmware", "fw", "build", "release", "bios", "driver", "drivers", "kernel"])
# "my #", "her no.": after a possessive, only these say a phone's number follows ("my ID", "our ref" do not).
POSSESSIVES = frozenset({"my", "your", "his", "her", "our", "their"})
PHONE_NUMBER_WORDS = frozenset({"#", "no", "nr", "num", "number"})
# Calls that are visits or meetings, not a number to dial ("service call", "conference call").
_VISITS = frozenset({"service", "sales", "house", "site", "conference"})
# What stands between a record's number word and its value when the clause says what it is.
_COPULAS = frozenset({"is", "was", "are", "were", "reads", "read", "shows", "says", "ist", "war", "est", "était",
                      "es", "era", "è", "é", "equals", "="})


# A unit of measure or a counted thing right after the number.
# Not "lines" or "messages": "0800 123 4567 lines open 9-5", "07700 900123 messages only".
# "holds 1,440 units of 55-1010-88": an article counted in stock, named by its number.
COUNTED_ITEM = re.compile(r"\d[\d,.]*\s+(?:units?|pcs|pieces|boxes|cases|pallets|cartons|rolls|packs|bags|crates|"
                          r"reels)\s+of\s+$", re.IGNORECASE)
UNIT_AFTER = re.compile(r"\s?(?:bytes?|[kmgtp]i?b|ms|ns|µs|rows|records|requests|reqs|tokens|events|entries|ops|iops|"
                        r"packets|tonnes|tons|kg|km|people|users|visitors|votes|ticks|cycles)\b", re.IGNORECASE)


def vat_number(text: str, start: int, value: str) -> bool:
    """``VAT Reg. GB 123 4567 89``: a tax number after its country's letters; a Belgian
    enterprise number in its own dotted form (``0417.497.106``)."""
    vat = _VAT_PREFIX.search(text[max(0, start - 40):start])
    return vat is not None and vat.group("country").lower() in _VAT_COUNTRIES or bool(_BE_ENTERPRISE.fullmatch(value))


_BE_ENTERPRISE = re.compile(r"[01]\d{3}\.\d{3}\.\d{3}")


def clause_head(text: str, start: int, phone_words: Collection[str]) -> bool | None:
    """Whose number the clause ``start`` completes says, when its subject is a number word
    and a copula comes right before the number: True for a phone's ("The contact number on the
    booking form is ..."), False for a record's (``Model number on the water heater is
    442-81-0093``, ``the library hold number is 4417 8293``), None when it says neither or a
    phone word stands between them."""
    clause = words_before(text, start, 12, reach=120)
    if not clause or clause[-1] not in _COPULAS:
        return None
    i = len(clause) - 2
    while i > 0 and clause[i] not in NUMBER_WORDS:
        if clause[i] in phone_words:
            return None
        i -= 1
    while i > 0 and clause[i - 1] in NUMBER_WORDS:
        i -= 1  # "caller ID number", "tax ID number": the word before them says whose number it is
    if i <= 0 or clause[i] not in NUMBER_WORDS:
        return None
    head = clause[i - 1]
    if head == "call" and i >= 2 and clause[i - 2] in _VISITS:
        return False  # "the service call ID is 0417-8829-3310": a visit's number
    if head in POSSESSIVES:
        return True if set(clause[i:-1]) <= PHONE_NUMBER_WORDS else None  # "my number is", not "my ID is"
    if head in phone_words:
        return True
    return False if head in _NUMBERED_THINGS or RECORDS.found_in([head]) else None


_ZIP_PLUS_FOUR = re.compile(r"\d{5}-\d{4}")
# A Brazilian postcode after its word ("CEP 01310-100"); Turkish "cep" is a mobile ("cep +90 532 ...").
_CEP = re.compile(r"(?<![\w])cep\s*:?\s*$", re.IGNORECASE)


_POSTAL_WORDS = re.compile(r"\b(?:zip|zips|zipcode|zip\+4|postal|postcode|postcodes)\b", re.IGNORECASE)


def postcode(text: str, start: int, value: str) -> bool:
    """A ZIP+4 code in a text about postal codes, or ``CEP 01310-100``: a Brazilian postcode,
    eight digits, after its word, or anywhere hyphenated 5-3 as only a CEP is."""
    return _zip_plus_four(text, value) or re.fullmatch(r"\d{5}-\d{3}", value) is not None or _CEP.search(
        text[max(0, start - 8):start]) is not None and re.fullmatch(r"\d{5}\d{3}", value) is not None


def _zip_plus_four(text: str, value: str) -> bool:
    """``60614-2210`` in a text that speaks of ZIP or postal codes (a column of a table headed
    "zip"): a ZIP+4 code."""
    return _ZIP_PLUS_FOUR.fullmatch(value) is not None and _POSTAL_WORDS.search(text) is not None


def listed(text: str, start: int, value: str) -> bool:
    """Numbers side by side that no numbering plan writes so: alternatives or a run with a
    slash (only an area code starting with 0 is written before one, ``089/12345678``), a
    range rising to a longer bound (``4418-18234``), game scores (``6-4 3-6``), six or more
    rising pairs (lottery picks), three hyphenated groups ending in two digits (a part's number)."""
    groups = re.findall(r"\d+", value)
    if "/" in value and (value.count("/") > 1 or not value.lstrip("(").startswith(("0", "+"))
                         or re.search(r"\d/\s*$", text[max(0, start - 2):start])):
        return True
    if re.fullmatch(r"[1-9]\d*(?:-|\s?[–—]\s?)\d+", value) and int(groups[0]) < int(groups[1]) and (len(groups[0]), len(
            groups[1])) != (3, 4) and (len(groups[0]) < len(groups[1]) or "-" not in value):
        return True  # a range ("2221–2720": a dash of ranges, not a hyphen, joins equal lengths); "555-1234" is a local number
    rising = len(groups) >= 6 and all(len(g) <= 2 for g in groups) and groups == sorted(groups, key=int) \
        and len(set(groups)) == len(groups)
    return rising or bool(_SCORES.fullmatch(value) or _PART_NUMBER.fullmatch(value))


_SCORES = re.compile(r"\d-\d(?:[ ,;()]+\d-\d)+\)?")
# Three hyphenated groups ending in two digits (4-4-2, 3-4-2): a part's or a product's number;
# no numbering plan ends a number so.
_PART_NUMBER = re.compile(r"\d{3,4}-\d{3,4}-\d{2}")


# "numéro de commande", "número de póliza", "numero d'ordine", "número do pedido", "numer
# przesyłki", "codice cliente": a number's or a code's word and the kind of thing numbered,
# then only a copula, an article or a colon before the value.
_NUMBER_OF = re.compile(r"(?:num[ée]ro|n[úu]mero|numer|codice|c[óo]digo)\s+"
                        r"(?:(?P<of>de|di|do|da|del|della|du|des)\s+|(?P<elided>d['’])\s*)?"
                        r"(?!(?:est|es|é|è|ist|is|jest|to|era|était|was|le|la|el|o|il)\b)"
                        r"(?P<kind>[^\W\d_]+)\s*(?:[:=]|\b(?:est|es|é|è|ist|is|jest|to)\b)?\s*(?:le|la|el|o|il)?\s*$",
                        re.IGNORECASE)
# "0033 1442 8871 est son numéro de contrat": the clause after the value says what it is.
_IS_NUMBER_OF = re.compile(r"\s*(?:est|es|é|è|jest|to)\s+(?:\w+\s+)?(?:num[ée]ro|n[úu]mero|numer)\s+"
                           r"(?:(?P<of>de|di|do|da|del|du)\s+|(?P<elided>d['’])\s*)(?P<kind>[^\W\d_]+)", re.IGNORECASE)
# Turkish names the kind after the number, before its word for number ("… takip numarasıyla").
_TURKISH_NUMBER_OF = re.compile(r"\s+(?P<kind>[^\W\d_]+)\s+numara(?:sı|si|sıyla|siyla|sını|sini|lı|li)\b",
                                re.IGNORECASE)
# "… 4402 1187 3390 numaralı siparişiniz": Turkish calls a record "numbered" before naming it.
_TURKISH_NUMBERED = re.compile(r"\s+numaral[ıi]\s+(?:sipari[şs]|g[öo]nderi|kargo|fatura|ba[şs]vuru|dosya|poli[çc]e|"
                               r"s[öo]zle[şs]me|talep|[şs]ikayet|bilet|rezervasyon)", re.IGNORECASE)
# Japanese and Chinese: the kind glued before 番号 ("number") or ID ("会員番号", "会議ID").
_CJK_NUMBER_OF = re.compile(r"(?P<kind>[\u3040-\u306d\u306f-\u30ff\u4e00-\u9fff]{1,4})(?:番号|ＩＤ|[Ii][Dd])\s*"
                            r"(?:は|：|:|为|是)?\s*$")
# Kinds of records in Japanese and Chinese (member, tracking, order, reception, slip, booking,
# management, meeting, contract, policy, serial), glued to 番号 or ID: "予約者の番号" (the
# booker's number) and "お客様の新しい番号" (the customer's new number) are people's.
_CJK_RECORD_KINDS = re.compile(r"(?:会員|追跡|注文|受付|伝票|予約|管理|整理|問い合わせ|会議|契約|保険|証券|製造|案件|メーター|"
                               r"シリアル|郵便|订单|运单|会员|合同|保单|会议|邮政)$")

# Korean kinds glued before 번호 ("number"): contract, order, reception, booking, waybill, serial, coupon (a
# customer's, a member's or a subscriber's number is often their phone number).
_KOREAN_RECORD_KINDS = frozenset({"계약", "주문", "접수", "예약", "운송장", "송장", "일련", "쿠폰"})
# Phone words inside a Japanese or Chinese kind ("お客様の携帯番号": the customer's mobile).
_CJK_PHONE_KINDS = re.compile(r"電話|携帯|連絡|ファックス|FAX|ＦＡＸ|电话|手机|联系")
# A customer's or subscriber's number: a record word only after a number word ("Cliente:" alone
# is a speaker in a call's transcript).
_CUSTOMERS = frozenset({"cliente", "client", "clienti", "abonné", "abonne", "abonado", "assinante", "socio", "sócio"})


def named_kind(text: str, start: int, value: str) -> bool:
    """A number word says what kind of record the number is: "Votre numéro de commande est le
    01 45 22 87 19", "会員番号 4401-2287-6650", "0033 1442 8871 est son numéro de contrat". Only
    a record's kind counts ("numero di casa", "número de mi tía", "新しい番号" stay phones)."""
    window = text[max(0, start - 60):start]
    latin = [m for m in (_NUMBER_OF.search(window), _IS_NUMBER_OF.match(text, start + len(value))) if m]
    cjk = _CJK_NUMBER_OF.search(window)
    turkish = _TURKISH_NUMBER_OF.match(text, start + len(value))
    kind = turkish.group("kind").lower() if turkish else ""
    return any(_record_kind(m) for m in latin) or _TURKISH_NUMBERED.match(text, start + len(value)) is not None \
        or bool(turkish and (RECORDS.found_in([kind]) or kind in ORDERS_BESIDE_NUMBER_WORD)) \
        or bool(cjk and _CJK_RECORD_KINDS.search(cjk.group("kind")) and not _CJK_PHONE_KINDS.search(cjk.group("kind")))


def _record_kind(match: re.Match[str]) -> bool:
    """A record's word; a customer's only without an article ("numéro client", "número de
    cliente" are records, "numéro du client", "numero del cliente" the client's own number)."""
    kind = match.group("kind").lower()
    bare = (match.group("of") or "de").lower() in ("de", "di")
    return RECORDS.found_in([kind]) or kind in _NUMBERED_KINDS or kind in _CUSTOMERS and bare


# Kinds a number word names that are no record's word alone ("numer umowy", "numer polisy": a
# contract's, a policy's; "PESEL do umowy: …" is a person's id for a contract).
_NUMBERED_KINDS = frozenset({"umowy", "polisy"})


# A video meeting's word right before the number: its id ("Zoom 891 2345 6780", "Webex meeting
# 2634 118 9920", "Teams 344 118 229 802 1", "腾讯会议号 138 0013 8000"); a dial-in number is
# written with a phone word or a "+".
_MEETING_BEFORE = re.compile(r"(?:(?<![\w])(?:zoom|webex|teams)(?:[\s-]+(?:meeting|besprechungs?|réunion|reunión|riunione|"
                             r"reunião|toplantı))?(?:[\s-]+id(?:\s+is)?)?|(?<![\w])(?:besprechungs|konferenz|toplantı|"
                             r"réunion|reunión|reunião|riunione)[\s-]*id|腾讯会议号?|会议号)\s*[:#：]?\s*$", re.IGNORECASE)


def meeting_id(text: str, start: int) -> bool:
    """"Zoom 891 2345 6780": the number right after a video meeting's name (the caller checks
    that no phone word and no "+" make it a dial-in number)."""
    return _MEETING_BEFORE.search(text, max(0, start - 24), start) is not None


# What follows a number when the sentence says what record it is: "the 0412 889 301 thing is
# my booking ref btw", "0117 2290, is the boiler's service code", "0412 778 903 but that's the
# member number right?": a copula, a determiner, at most three words and a record's word
# ending the phrase (before its number word, if any, and a clause's end).
_DESCRIBED_AFTER = re.compile(
    r"(?:\s+(?:thing|one|i\s+sent(?:\s+earlier)?|you\s+(?:have|saw|mean)))?\s*,?\s*(?:but\s+)?"
    r"(?:that['’]s|that\s+(?:is|was)|which\s+(?:is|was)|it['’]s|is|was)\s+(?:just\s+|only\s+|actually\s+)?"
    r"(?:the|my|our|your|his|her|their|a|an)\s+(?P<words>(?:[^\W\d_][\w'’\-]*\s+){0,3}?)"
    r"(?P<kind>[^\W\d_][\w\-]*)(?:\s+(?:number|no\.?|nr\.?|#|id|ref))?"
    r"(?=\s*(?:$|[.,;:!?)]|(?:btw|right|not|and|but|for|from|so|though|lol|instead)\b))", re.IGNORECASE)


# Records a phone number is used as, or that name a person: "07700 900123 is my Revolut
# account", "… is her member ID", "… is the tenant".
_PERSONAL_KINDS = frozenset({"account", "acct", "member", "membership", "tenant", "customer", "client", "user",
                             "login", "username", "subscriber", "loyalty", "contact"})


def described_after(text: str, start: int, value: str, phone_words: frozenset[str]) -> bool:
    """The words after the number call it a record ("... is my booking ref"), and none of
    them is a phone's word or "number" before the record's ("is the number on the order");
    no phone word comes before the number and no "+" or bracket dials it."""
    match = _DESCRIBED_AFTER.match(text, start + len(value))
    if match is None or value.startswith(("+", "(")) or phone_words.intersection(words_before(text, start, 6)):
        return False
    words = [re.sub(r"['’]s$", "", w.lower()) for w in match.group("words").split()]
    kind = match.group("kind").lower()
    return kind not in NUMBER_WORDS and kind not in _PERSONAL_KINDS and RECORDS.found_in([kind]) \
        and not any(w in phone_words or w in NUMBER_WORDS for w in words)


# "the 212 555 0199 batch failed QA": a number between "the" and a record's word is that record's.
_RECORD_RIGHT_AFTER = re.compile(r"\s+(?P<kind>[^\W\d_][\w\-]*)\b")


def record_named_after(text: str, start: int, value: str, phone_words: frozenset[str]) -> bool:
    """A determiner right before the number and a record's word right after it."""
    match = _RECORD_RIGHT_AFTER.match(text, start + len(value))
    if match is None or words_before(text, start, 1) not in (["the"], ["this"], ["that"], ["each"]):
        return False
    kind = match.group("kind").lower()
    return kind not in phone_words and kind not in NUMBER_WORDS and kind not in _PERSONAL_KINDS \
        and RECORDS.found_in([kind])


def another_s_number(text: str, start: int, between: list[str]) -> bool:
    """Between a record's word and the number: the record's own number, then a person's title or
    a name the view capitalises ("Kundennummer 4471, Herr Weber ...", "Employee ID E5521 - Sarah
    Khan, ..."): the record is numbered already, and the number is the person's."""
    if not any(re.search(r"\d", word) for word in between):
        return False
    tail = re.split(r"\S*\d\S*", text[max(0, start - 80):start])[-1]
    return bool(set(between) & _TITLES) or re.search(r"\b[A-Z][a-z]{2,} [A-Za-z]{2,}\b", tail) is not None


_TITLES = frozenset({"mr", "mrs", "ms", "dr", "herr", "frau", "mme", "sr", "sra", "pan", "pani"})


# Phone words that name nothing alone: one-letter labels and prepositions ("m:", "at").
_NAMING_NOTHING = frozenset({"on", "at", "m", "t", "p", "o", "w", "h", "number"})


def record_right_before(before: list[str], number_words: frozenset[str]) -> bool:
    """A document's or an order's word of another language right before the number or its
    number word, or a shipment's word beside a number word, with no phone word earlier in the
    clause.
    ``number_words``: the words that say "number" in the languages the finder reads."""
    numbered_by = number_words | {"رقم", "ورقم", "संख्या", "नंबर", "नम्बर", "आईडी"}
    before = _after_last_number(before)
    if any(word in PHONE_CUES.words and word not in numbered_by and word not in _NAMING_NOTHING for word in before):
        return False  # "Handynummer für die Lieferung 0176 ...", "Tél. livraison 06 12 ..."
    words = list(before)
    numbered = False
    while words and words[-1] in numbered_by:
        words.pop()
        numbered = True
    if not words:
        return False
    if words[-1] in RECORDS_RIGHT_BEFORE.words or words[-1] in ORDERS_RIGHT_BEFORE or any(
            tuple(words[-len(phrase):]) == phrase for phrase in RECORDS_RIGHT_BEFORE.phrases):
        return True
    return words[-1] in ORDERS_BESIDE_NUMBER_WORD and (
        numbered or len(words) >= 2 and words[-2] in numbered_by)


def _after_last_number(words: list[str]) -> list[str]:
    """The words after the last number of five digits or more (its groups counted together): a
    phone word before another number ("телефон +7 916 555-01-47, номер договора 0471-223-8812")
    announced that number; a count or a time ("телефон 2 раза не отвечал") announces nothing."""
    i = len(words) - 1
    while i >= 0:
        j = i
        while j >= 0 and any(ch.isdigit() for ch in words[j]):
            j -= 1
        if sum(ch.isdigit() for word in words[j + 1:i + 1] for ch in word) >= 5:
            return words[i + 1:]
        i = j - 1
    return words


# Words that join the numbers of a list ("claims 512-90-3378 and 512-90-3401", "pedidos ... y ...").
_LIST_JOINS = frozenset({"and", "or", "to", "&", "y", "o", "e", "et", "ou", "und", "oder", "en", "of", "och", "eller",
                         "og", "i", "lub", "и", "или"})
_LISTED_NUMBER = re.compile(r"\d[\d\s./-]{3,}\d")


def records_listed(text: str, start: int, end: int, before: list[str], kinds: Collection[str] = RECORDS.words) -> bool:
    """A list of numbers that a record's word in the plural heads ("claims 512-90-3378 and
    512-90-3401", "SKUs 330-18-4471 to 330-18-4480", "pedidos 0412 778 903 y 0412 779 115",
    "backup codes: 4417 2290, 8831 0062"): a department's single line ("Bookings 1300 123 456",
    "Accounts: 0161 496 0420") is no list, and a phone word in the clause keeps it a phone.
    ``kinds``: the record words that may head the list, in the singular."""
    if any(word in PHONE_CUES.words for word in before):
        return False
    words = list(before)
    numbers_before = 0
    while words and (words[-1] in _LIST_JOINS or words[-1][:1].isdigit()):
        numbers_before += words.pop()[:1].isdigit()
    if not words or len(words[-1]) < 4 or not words[-1].endswith("s") or (
            words[-1][:-1] not in kinds and not (words[-1].endswith("ies") and words[-1][:-3] + "y" in kinds)):
        return False  # "claims", "policies"
    after = re.match(r"\s*(?:[,;]|\b(?:" + "|".join(map(re.escape, sorted(_LIST_JOINS))) + r")\b)\s*",
                     text[end:end + 12], re.IGNORECASE)
    return numbers_before > 0 or after is not None and _LISTED_NUMBER.match(text, end + after.end()) is not None


def named_record(text: str, start: int, end: int, before: list[str], number_words: frozenset[str]) -> bool:
    """A record's word of another language right before the number, a list of records, or a
    table's column of records ("numero_cliente,telefono_contatto / 04 4417 2290,...")."""
    return record_right_before(before, number_words) or records_listed(text, start, end, before) \
        or record_column(text, start)


_PHONE_COLUMN = re.compile(r"tel|phone|mobil|cell|fax|handy|телеф|моб|電話|电话|手机|携帯|전화|휴대", re.IGNORECASE)


def record_column(text: str, start: int) -> bool:
    """The value stands in a table's column whose name is a record's and no phone's
    ("numero_cliente", "номер_договора", "contract_no"; never "telefono_contatto")."""
    name = tables.column_name(text, start)
    if name is None or _PHONE_COLUMN.search(name):
        return False
    parts = [part for part in re.split(r"[_\s\-./]+", name) if part]
    return RECORDS.found_in(parts) or any(part in RECORDS_RIGHT_BEFORE.words or part in ORDERS_BESIDE_NUMBER_WORD
                                          or part in _CUSTOMERS for part in parts)


# A turn that asks for a record's number, then, after a speaker's label, at most a few words
# before the answer: "the order number? Customer: 4417 2291 08", "enter your account number.",
# "Wie lautet Ihre Vorgangsnummer? Kunde: …", "votre numéro de contrat ? Client : …",
# "nomor tiketnya? Pelanggan: …", "ご契約番号をお願いします。お客様：…", "계약번호 말씀해 주세요. 고객: …".
_ASKED = re.compile(
    r"(?:\b(?P<kind>[^\W\d_]+)\s+(?:number|no\.?|#|id)"
    r"|\b(?:num[ée]ro|n[úu]mero|numer|nomor|номер)\s+(?:(?:de|di|do|da|del|della|dello|du|des)\s+|d['’]\s*)?"
    r"(?P<of>[^\W\d_]+)"
    r"|(?<![^\W\d_])(?P<glued>[^\W\d_]+?(?:nummer|nr|番号|번호|号)))"
    r"(?:[,\s]*(?:please|bitte|por\s+favor|per\s+favore|proszę|をお願いします|をお願いいたします|말씀해\s*주세요))?"
    r"\s*[?.？。]\s*(?:\[[\d:.]+\]\s*)?(?:[^\W\d_]+\s*[:：]\s*)"
    r"(?P<answer>(?:[^\W\d_’']+[’']?[^\W\d_]*[ ,]+){0,3})$", re.IGNORECASE)


def asked_record(text: str, start: int) -> bool:
    """The number answers a question for a record's number in the turn before it, and no phone
    word is among the answer's words before it (a record's kind asked for, not a phone's)."""
    asked = _ASKED.search(text, max(0, start - 120), start)
    if asked is None or PHONE_CUES.found_in(words_before(asked.group("answer"), len(asked.group("answer")), 3)):
        return False
    if asked.group("kind"):
        kind = asked.group("kind").lower()
        return RECORDS.found_in([kind]) and kind not in PHONE_CUES.words
    if asked.group("of"):
        kind = re.sub(r"nya$", "", asked.group("of").lower())  # Indonesian "nomor tiketnya": its ticket's number
        return (RECORDS.found_in([kind]) or kind in ORDERS_BESIDE_NUMBER_WORD or kind in RECORDS_RIGHT_BEFORE.words
                or kind in _NUMBERED_KINDS) and kind not in PHONE_CUES.words
    glued = asked.group("glued").lower()
    stem = re.sub(r"(?:nummer|nr|番号|번호|号)$", "", glued)
    named = glued in RECORDS.words or stem.rstrip("s-") in RECORDS.words or stem.rstrip("s-") in ORDERS_BESIDE_NUMBER_WORD
    return named and record_compound(glued) or bool(_CJK_RECORD_KINDS.search(stem)) \
        and not _CJK_PHONE_KINDS.search(stem) or stem in _KOREAN_RECORD_KINDS


def state_code(words: list[str], index: int) -> bool:
    """"Houston, TX 77036, 713-555-2188": a US state's code before its ZIP code (not "tx", a transaction)."""
    return words[index] in _US_STATES and index + 1 < len(words) and re.fullmatch(r"\d{5}", words[index + 1]) \
        is not None


_US_STATES = frozenset(US_STATES.split("|"))
