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


def _at(text: str, value: str) -> tuple[str, int]:
    view = canonical_view(text).text
    return view, view.index(value)


@pytest.mark.parametrize("text, found", [
    ("Aylin Demir (TC 10000000078) cannot complete KYC", ["10000000078"]),
    ("T.C. 10000000146, doğum yeri İzmir", ["10000000146"]),
    ("TC 10000000079 is not a valid number", []),  # its check digits fail
    ("Test case TC 2024 ran 10000000078 times", []),
])
def test_a_turkish_identity_number_after_the_republic_s_letters_is_found_when_its_check_digits_hold(text, found):
    assert _found(identifiers.id_shapes, text) == found


def test_the_digits_of_a_ups_tracking_number_are_no_phone_or_ssn():
    text = "Numéro de suivi 1Z 4E7 712 68 0412 5512 (UPS), colis de 3,2 kg"
    view, start = _at(text, "712 68")
    assert not numbers.phone_in_context(view, start, "712 68 0412 5512")
    assert identifiers.inside_code(view, start, start + len("712 68 0412"))
    view, start = _at("Call me on 712 68 0412 5512", "712 68")
    assert numbers.phone_in_context(view, start, "712 68 0412 5512")


@pytest.mark.parametrize("text, value, named", [
    ("Parcel ID 231-04-5567 covers Lot 12, Block 4", "231-04-5567", True),
    ("order no. 600-22-7781 shipped", "600-22-7781", True),
    ("Member ID 231-04-5567 on file", "231-04-5567", False),
    ("SSN no 231-04-5567", "231-04-5567", False),
])
def test_a_record_s_word_names_an_ssn_shaped_number_across_its_number_word(text, value, named):
    view, start = _at(text, value)
    assert numbers.named_by_record(view, start, start + len(value)) is named


@pytest.mark.parametrize("text, value", [
    ("SNMP walked OID 1.3.6.1.2.1 and read sysUpTime 123456789 ticks.", "123456789"),
    ("the loop ran 412345678 cycles", "412345678"),
])
def test_a_count_of_ticks_or_cycles_is_no_phone_number(text, value):
    view, start = _at(text, value)
    assert not numbers.phone_in_context(view, start, value)


@pytest.mark.parametrize("text", [
    "Für die Buchung rufen Sie 030 1234567 an",
    "Reservierung telefonisch unter 030 1234567",
])
def test_a_german_call_word_announces_the_number_after_a_booking(text):
    assert _found(numbers.phones, text) == ["030 1234567"]


@pytest.mark.parametrize("text, value, series", [
    ("Please quote the case id 600-41-2287; the previous case 600-41-2279 is merged into it.", "600-41-2287", True),
    ("claim_no,status\n412-55-0983,open\n412-55-0984,closed", "412-55-0984", True),
    ("Case 231-44-9087 escalated to tier 2", "231-44-9087", False),
    ("Case 231-44-9087 and case 231-45-9087", "231-44-9087", False),  # another group: no series
])
def test_ssn_shaped_numbers_sharing_area_and_group_are_a_series_of_records(text, value, series):
    view, start = _at(text, value)
    assert identifiers.one_of_a_series(view, start, start + len(value)) is series
    assert identifiers.filed_as_record(view, start, start + len(value)) is series
