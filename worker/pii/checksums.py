"""Check-digit algorithms of the identifiers the PII stage looks for (pure functions)."""

from __future__ import annotations

_VERHOEFF_D = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 4, 0, 6, 7, 8, 9, 5), (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7), (4, 0, 1, 2, 3, 9, 5, 6, 7, 8), (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2), (7, 6, 5, 9, 8, 2, 1, 0, 4, 3), (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
)
_VERHOEFF_P = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 5, 7, 6, 2, 8, 3, 0, 9, 4), (5, 8, 0, 3, 7, 9, 6, 1, 4, 2),
    (8, 9, 1, 6, 0, 4, 3, 5, 2, 7), (9, 4, 5, 3, 1, 2, 8, 7, 0, 6), (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
    (2, 7, 9, 3, 8, 0, 6, 4, 1, 5), (7, 0, 4, 6, 9, 1, 3, 2, 5, 8),
)


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, ch in enumerate(reversed(digits)):
        value = int(ch)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def gtin_valid(digits: str) -> bool:
    """GS1 check digit of a barcode number (EAN-13, UPC-A, EAN-8): weights 3 and 1 from the right."""
    body, check = digits[:-1], int(digits[-1])
    total = sum(int(ch) * (3 if index % 2 == 0 else 1) for index, ch in enumerate(reversed(body)))
    return (10 - total % 10) % 10 == check


def iban_valid(compact: str) -> bool:
    """ISO 13616 mod-97 over an IBAN without separators (any case)."""
    text = compact.upper()
    if len(text) < 15 or not text[:2].isalpha() or not text[2:4].isdigit() or not text.isalnum():
        return False
    rearranged = text[4:] + text[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def creditor_reference_valid(compact: str) -> bool:
    """ISO 11649 structured creditor reference ("RF18 5390 0754 7034"): RF, two check digits
    and up to 21 letters or digits, mod 97 over the rearranged value (as an IBAN's)."""
    text = compact.upper()
    if not (5 <= len(text) <= 25 and text.startswith("RF") and text[2:4].isdigit() and text.isalnum()):
        return False
    rearranged = text[4:] + text[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def verhoeff_valid(digits: str) -> bool:
    check = 0
    for index, ch in enumerate(reversed(digits)):
        check = _VERHOEFF_D[check][_VERHOEFF_P[index % 8][int(ch)]]
    return check == 0


def nhs_valid(digits: str) -> bool:
    if len(digits) != 10:
        return False
    total = sum(int(d) * (10 - i) for i, d in enumerate(digits[:9]))
    check = 11 - total % 11
    check = 0 if check == 11 else check
    return check != 10 and check == int(digits[9])


_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def cn_resident_id_valid(value: str) -> bool:
    """An 18-character Chinese resident identity number: a birth date (YYYYMMDD) at 7-14 and
    the GB 11643 check character (ISO 7064 MOD 11-2)."""
    if len(value) != 18 or not value[:17].isdigit():
        return False
    year, month, day = int(value[6:10]), int(value[10:12]), int(value[12:14])
    if not (1900 <= year <= 2099 and 1 <= month <= 12 and 1 <= day <= 31):
        return False
    check = (12 - sum(int(d) * w for d, w in zip(value[:17], _CN_WEIGHTS)) % 11) % 11
    return value[17].upper() == ("X" if check == 10 else str(check))


_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def es_dni_valid(value: str) -> bool:
    """A Spanish DNI (8 digits) or NIE (X, Y or Z and 7 digits) and its check letter, any
    separator between them."""
    compact = value.replace("-", "").replace(" ", "").replace(".", "").upper()
    if len(compact) != 9 or not compact[-1].isalpha():
        return False
    body = compact[:-1]
    if body[0] in "XYZ":
        body = str("XYZ".index(body[0])) + body[1:]
    return body.isdigit() and _DNI_LETTERS[int(body) % 23] == compact[-1]


def tr_identity_valid(digits: str) -> bool:
    """A Turkish identity number (T.C. Kimlik No): eleven digits, not starting with 0, whose last
    two are check digits."""
    if len(digits) != 11 or not digits.isdigit() or digits[0] == "0":
        return False
    d = [int(ch) for ch in digits]
    tenth = (7 * sum(d[0:9:2]) - sum(d[1:8:2])) % 10
    return d[9] == tenth and d[10] == sum(d[:10]) % 10
