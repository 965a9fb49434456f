"""Values beside other values: a phone number after a US address's state and ZIP code, a Turkish
identity number after its name in the accusative, card-shaped serials of one series."""

from __future__ import annotations

import pytest

from ibex_worker.pii import ibans, identifiers, numbers, payments
from ibex_worker.pii.casing import canonical_view


def _found(finder, text: str) -> list[str]:
    view = canonical_view(text).text
    return [view[hit.start:hit.end] for hit in finder(view)]


@pytest.mark.parametrize("text", [
    "Dana Kim\nKim Roofing LLC\n4410 Westheimer Rd, Houston, TX 77027\n713-555-2188",
    "Office: 88 Elm St, Austin, TX 78701, 512-555-3321",
])
def test_a_phone_number_after_a_state_and_its_zip_code_is_found(text):
    assert any(value.endswith(text[-4:]) for value in _found(numbers.phones, text))


def test_a_transaction_s_number_is_still_no_phone_number():
    assert _found(numbers.phones, "tx 44012 refunded, ref 713-555-2188") == []


@pytest.mark.parametrize("text, value", [
    ("Müşteri T.C. kimlik numarasını 10000000146 olarak verdi.", "10000000146"),
    ("kimlik numarası: 10000000078", "10000000078"),
])
def test_a_turkish_identity_number_after_its_name_in_any_case_is_found(text, value):
    assert _found(identifiers.named_ids, text) == [value]


@pytest.mark.parametrize("text", [
    "Serial numbers 4485-2231-0098-7712 through 4485-2231-0098-7799 were assigned.",
    "Serial 4532-7718-2291-0043 is the old terminal; its replacement is 4532-7718-2291-0044.",
    "Consignment 5502 3310 8841 2290 arrived damaged.",
])
def test_card_shaped_numbers_of_a_record_s_series_are_no_cards(text):
    assert _found(payments.cards, text) == []


def test_a_card_after_a_record_of_another_series_is_still_a_card():
    assert _found(payments.cards, "order 4485-2231-0098-7712 paid with card 4539 1488 0343 6467") == [
        "4539 1488 0343 6467"]


def test_a_card_its_word_announces_is_a_card_beside_a_record_of_its_prefix():
    text = "the refund (ref 3714 4963 5398) went back to your Amex 3714 496353 98431."
    assert _found(payments.cards, text) == ["3714 496353 98431"]


@pytest.mark.parametrize("finder, text", [
    (ibans.ibans, "número de seguimiento ES2024040212345; importe 89,95 €"),    # nine characters short of an IBAN
    (numbers.phones, "hata kodu 5012, işlem no 884120553, süre 00:02:14"),     # a transaction
    (payments.cards, "주문 번호 2024-0412-5512, 배송 조회 6012-3456-7890"),        # a parcel's tracking number
    (payments.cards, "الرقم الضريبي للشركة 300123456700003"),                  # a company's tax number
])
def test_records_of_more_languages_are_no_personal_values(finder, text):
    assert _found(finder, text) == []


def test_an_iban_two_characters_short_after_a_record_word_is_still_masked():
    assert _found(ibans.ibans, "refund ref ES91 2100 0418 4502 0005 13") != []


def test_a_card_its_word_announces_before_a_booking_s_word_is_still_a_card():
    assert _found(payments.cards, "voici ma carte bleue pour la réservation : 4249.0807.5165.6146") != []
