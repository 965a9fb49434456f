"""Phone-shaped numbers a clause names as something else (``ibex_worker.pii.phone_vetoes``):
a record's number the clause is about, a ZIP+4 code in a text about postal codes; and the
phone numbers these rules must leave alone."""

from __future__ import annotations

import pytest

from ibex_worker.pii import numbers
from ibex_worker.pii.casing import canonical_view


def _phone(text: str, value: str) -> bool:
    view = canonical_view(text).text
    return numbers.phone_in_context(view, view.lower().index(value.lower()), value)


@pytest.mark.parametrize("text, value", [
    ("The serial number stamped under the boiler is 0471 338 2291.", "0471 338 2291"),
    ("Your locker number for the gym is 8812 4409.", "8812 4409"),
    ("The electricity meter number on last month's bill was 2045 7781 36.", "2045 7781 36"),
    ("The part number for the left hinge is 0412-345-679.", "0412-345-679"),
    ("The booking number of the ferry is 552 018 3374.", "552 018 3374"),
    ("the conference call ID is 883 2210 4417, passcode 5521", "883 2210 4417"),
])
def test_a_record_number_the_clause_is_about_is_not_a_phone_number(text, value):
    assert _phone(text, value) is False


@pytest.mark.parametrize("text, value", [
    ("My phone number for the delivery is 0471 338 2291.", "0471 338 2291"),
    ("The contact number on the booking form is 0161 496 0432.", "0161 496 0432"),
    ("The reception number of the clinic is 020 7946 0321.", "020 7946 0321"),
    ("Her new number is 07700 900417.", "07700 900417"),
    ("The caller ID number was 415 555 0176.", "415 555 0176"),
    ("The number of the order desk is +44 20 7946 0555.", "+44 20 7946 0555"),
])
def test_a_number_the_clause_calls_a_phone_or_a_place_s_number_stays_a_phone_number(text, value):
    assert _phone(text, value) is True


def test_a_zip_plus_four_is_not_a_phone_number_where_the_text_speaks_of_zip_codes():
    assert _phone("name,city,zip / Ana,Austin,78701-3318 / Bo,Dallas,75201-4402", "75201-4402") is False
    assert _phone("Update the ZIP to 30309-1187 on the form.", "30309-1187") is False
    assert _phone("Ligue para 98765-4321 amanhã.", "98765-4321") is True  # a Brazilian mobile, no ZIP word


def test_a_record_head_decides_only_before_a_copula_and_past_no_phone_word():
    view = canonical_view("Model no. 4471-220 is discontinued; call 0471 338 2291.").text
    assert numbers.named_by_record(view, view.index("0471")) is False
    view = canonical_view("The order number, or call me, is 0471 338 2291.").text
    assert numbers.named_by_record(view, view.index("0471")) is False
