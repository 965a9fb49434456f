"""The words that announce a phone number, and the short numbers they announce: helplines and
service lines of three to six digits ("ring the Samaritans on 116 123", "text or call 988",
"the claims line is 13 22 44"). A number that short is somebody's line only where a call word
comes right before it and no noun after it ("call 3 times", "error on line 4412" are none),
and an emergency number reaches a service, not a person."""

from __future__ import annotations

import re

from ibex_worker.pii.address_words import US_STATES
from ibex_worker.pii.context import Cues, words_before

PHONE_CUES = Cues.of([
    "phone", "phones", "tel", "telephone", "mobile", "mob", "cell", "cellphone", "call", "calls", "called",
    "calling", "ring", "text", "txt", "sms", "whatsapp", "signal", "telegram", "viber", "wechat", "fax",
    "landline", "hotline", "dial", "reach", "reached", "contact", "number", "ph", "m", "t", "p", "o", "w", "h",
    "direct", "switchboard", "voicemail", "ext", "extension", "móvil", "movil", "teléfono", "telefono", "tlf",
    "handy", "telefon", "tél", "téléphone", "portable", "celular", "cel", "telefone", "zap", "emergency", "cep",
    "phone number", "call me", "call back", "callback", "call-back", "back on", "reach me", "on", "at",
    "caller", "area code", "sími", "simi", "puhelin", "puh", "telefonnummer", "tlf.", "telefonu", "telefonos",
    "τηλ", "τηλέφωνο", "тел", "телефон", "sđt", "hp", "no hp", "nomor", "nombor", "telp", "telpon", "numero",
    "número", "numéro", "nummer", "rufnummer", "mobil", "mobile no", "gsm", "portátil", "cellulare",
    "llámame", "llámeme", "llamame", "llameme", "llamar", "llámenos", "rappelle", "rappelez", "rappeler",
    "appelle", "appelez", "appeler", "anrufen", "rückruf", "ligue", "ligar", "chiamami", "chiamare",
    "richiamami", "terugbellen", "rappelle-moi", "rappelez-moi", "appelle-moi", "appelez-moi", "bel", "bellen",
    "belt", "ruf", "ruft", "anruf", "llame", "chiama", "richiama", "ligue-me", "msisdn", "hubungi", "telepon",
    "zadzwoń", "zadzwon", "dzwonić", "dzwonic", "dzwoń", "dzwon", "arayın", "arayin", "aradı", "aradi", "arayacak",
    "arasın", "numarası", "numarasi", "rufen", "telefonisch", "telefónicamente", "telefonicamente",
    "позвони", "позвоните", "звоните", "звони", "номер", "liga", "chiamate", "rückrufnummer", "rueckrufnummer",
    "handynummer", "mobilnummer", "faxnummer", "festnetznummer", "kontaktnummer", "durchwahl",
    "전화", "전화번호", "휴대폰", "휴대전화", "핸드폰", "연락처", "폰", "电话", "手机", "手机号", "電話", "手機", "携帯",
    "電話番号", "携帯番号", "連絡先", "联系电话", "聯絡電話", "هاتف", "جوال", "الهاتف", "الجوال", "موبايل", "טלפון", "נייד",
    "मोबाइल", "फोन", "फ़ोन", "richiamato", "richiamata", "richiamarlo", "richiamarla", "tumawag", "tawagan", "문의",
])

# Cue words that count only right before the number ("reach me at", "m: ", "number 0917...").
WEAK_PHONE_CUES = frozenset({"on", "at", "m", "t", "p", "o", "w", "h", "ph", "number", "contact"})

SHORT_NUMBER = re.compile(r"(?<![\w.,\-/:+#])(?:\d{2,4}(?: \d{2,3}){1,2}|\d{3,6})(?![\w\-/:%]|[.,]\d)")
_CALL_WORDS = frozenset({"call", "ring", "dial", "text", "phone", "hotline", "helpline", "freephone", "ruf", "anrufen",
                         "llama", "llame", "llamar", "appelez", "appelle", "appeler", "chiama", "chiamare", "ligue"})
# Words between the call word and the number ("call the helpline on 116 123", "the line is 1737").
_LEAD_WORDS = _CALL_WORDS | {"on", "is", "number", "no"}
_AFTER = re.compile(r"\s*(?:$|[.,;!?)(]|(?:and|or|if|for|free|anytime|now|any|from|instead|too|then|today|"
                    r"tonight|tomorrow|asap|please|pls|24/7)\b)", re.IGNORECASE)


# Emergency numbers reach a service, not somebody ("just call 911", "dial 112 for the police").
_EMERGENCY = frozenset({"000", "100", "101", "102", "108", "110", "112", "119", "190", "192", "193", "911", "999"})


def service_number(text: str, start: int, value: str) -> bool:
    digits = re.sub(r"\D", "", value)
    if not 3 <= len(digits) <= 6 or digits in _EMERGENCY:
        return False
    before = words_before(text, start, 4)
    if not before or before[-1] not in _LEAD_WORDS:
        return False
    called = any(word in _CALL_WORDS for word in before) or before[-1] == "is" and "line" in before
    return called and _AFTER.match(text, start + len(value)) is not None \
        and not _CELLS.search(text, max(0, start - 40), start)


# "id,name,email,phone\n1042,...": a table's header row, its last cell a phone's word, then the
# first cell of a row; in the analysed view the line break between them is a space.
_CELLS = re.compile(r"[^\W\d_],[^\W\d_]+\s+$")


_STATE_AND_ZIP = re.compile(rf"(?<![\w])(?:{US_STATES})\.?\s+$", re.IGNORECASE)
_ZIP_THEN_NUMBER = re.compile(r"\d{5}\s+(?=[+(\d])")


def after_zip(text: str, start: int) -> int:
    """Where a number starting at ``start`` really starts when a US state's ZIP code runs into it
    ("Houston, TX 77027 713-555-2188": a signature's lines joined by a space)."""
    zip_code = _ZIP_THEN_NUMBER.match(text, start)
    if zip_code is None or _STATE_AND_ZIP.search(text, max(0, start - 8), start) is None:
        return start
    return zip_code.end()
