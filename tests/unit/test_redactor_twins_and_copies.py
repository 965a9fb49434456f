"""The redactor with the real spaCy model on numbers beside near-identical records (a phone
number, then an order numbered one digit off), values written twice, and names joined by
"and" to a name found, where one of them is also a place."""

from __future__ import annotations

import pytest

from ibex_worker.pii.policy import Finding, every_copy
from tests.unit.conftest import redacted as _content


@pytest.mark.parametrize("text, value", [
    # a record after the phone number says nothing of the phone
    ("Ihr Paket kommt heute. Fahrer: 0157 3456 7891. Sendung 0157 3456 7892.", "0157 3456 7891"),
    ("Spoke to the customer from 0917 555 0188 about order 0917 555 0189.", "0917 555 0188"),
    # a label of its own before the number, after a record of the same shape
    ("Reminder: MOT booked, job 0161 555 7720. Garage: 0161 496 0021.", "0161 496 0021"),
    # phone words of more languages
    ("Il cliente chiede di essere richiamato al 347 123 4567; pratica n. 347 123 4568.", "347 123 4567"),
    ("رقم الهاتف 055 987 6543، رقم الحساب 055 987 6544", "055 987 6543"),
    ("ग्राहक का मोबाइल 98765 12345 है; ऑर्डर नंबर 98765 12346", "98765 12345"),
    ("Tumawag si Ana mula sa 0917 555 0188 tungkol sa order 0917 555 0189.", "0917 555 0188"),
    ("예약번호 0231 2345 가 확정되었습니다. 문의: 02-2187-4400", "02-2187-4400"),
    # the same number written again where no phone word stands before it
    ('she typed her mobile 07911 123456 in the order field, so "order 07911 123456" does not exist',
     "07911 123456"),
])
def test_a_phone_number_beside_its_record_twin_is_masked(redactor, text, value):
    assert value not in _content(redactor, text)


@pytest.mark.parametrize("text, kept", [
    ("Ticket 4471 2290 81 was merged into 4471 2290 12 yesterday.", "4471 2290 12"),
    ("Billing run produced 12,448 invoices numbered 2406-000001 to 2406-012448 in 14 min.", "2406-000001"),
    ("the 212 555 0199 batch failed QA again, same as lot 212 555 0188 yesterday.", "212 555 0199"),
    ("Numéro de TVA FR40 303 265 045, SIRET 303 265 045 00017", "303 265 045 00017"),
])
def test_records_named_before_after_or_as_a_range_stay_readable(redactor, text, kept):
    assert kept in _content(redactor, text)


@pytest.mark.parametrize("text, names", [
    ("Ivy and Jasper are the twins next door; their mum asked the user to babysit.", ("Ivy", "Jasper")),
    ("tell ade and kemi the bbq is at ours not at the park", ("ade", "kemi")),
])
def test_a_name_joined_to_a_name_is_masked_though_it_is_a_place(redactor, text, names):
    content = _content(redactor, text)
    assert not any(name in content.split() for name in names), content


@pytest.mark.parametrize("text, kept", [
    ("Hilton and Marriott both offered corporate rates for the offsite.", "Hilton"),
    ("Holly and ivy garlands for reception need to be ordered by 1 December.", "ivy"),
    ("Para cualquier duda contacte con Javier Ortega en el (+34) 933 184 726.", "en el"),
])
def test_a_word_the_name_model_doubts_is_not_a_name_for_being_joined_to_one(redactor, text, kept):
    assert kept in _content(redactor, text)


def test_every_copy_masks_each_whole_repetition_and_nothing_inside_a_longer_number():
    text = "call 0161 496 0021 or 0161 496 0021; ref 0161 496 0021 7 and 90161 496 0021"
    found = every_copy(text, [Finding("PHONE_NUMBER", 5, 18, 0.9, "r")])
    assert [(f.start, f.end) for f in found] == [(5, 18), (22, 35)]
    assert every_copy("Ann met Ann", [Finding("PERSON", 0, 3, 0.9, "r")]) == [Finding("PERSON", 0, 3, 0.9, "r")]


def test_a_table_row_after_a_header_ending_in_phone_is_no_service_number(redactor):
    content = _content(redactor, "id,name,email,phone\n1042,Lowri Pritchard,lowri.p@example.net,+44 29 2018 0475")
    assert content.splitlines()[1] == "1042,[PERSON],[EMAIL_ADDRESS],[PHONE_NUMBER]"
    assert "1737" not in _content(redactor, "For help, call 1737, free")


def test_a_phone_in_a_tables_last_column_is_masked_though_the_next_row_follows_it(redactor):
    content = _content(redactor, "id,name,email,phone\n1042,Lowri Pritchard,lowri.p@example.net,+44 29 2018 0475\n"
                                 "1043,Sian Evans,sian@example.net,029 2018 0477\n1044,Aled Jones,aled@example.net,")
    assert "2018" not in content and "Lowri" not in content and "Pritchard" not in content
    assert [line.split(",")[0] for line in content.splitlines()[1:]] == ["1042", "1043", "1044"]


def test_a_phone_in_a_middle_column_is_masked_whole(redactor):
    content = _content(redactor, "id,name,phone,city\n1042,Aino Virtanen,+358 40 718 2934,Tampere\n"
                                 "1043,Joonas Heikkinen,09 4257 3310,Helsinki")
    assert content.splitlines()[1:] == ["1042,[PERSON],[PHONE_NUMBER],Tampere", "1043,[PERSON],[PHONE_NUMBER],Helsinki"]


def test_a_name_column_holds_people_only_where_its_words_are_names(redactor):
    content = _content(redactor, "sku,name,price\n4471,Blue Widget,9.99\n4472,Jordan Valley Honey,4.50")
    assert "Blue Widget" in content and "Jordan Valley Honey" in content


@pytest.mark.parametrize("text, kept", [
    ("User: mia suocera Graziella vuole la ricetta del tiramisù", "mia suocera"),
    ("mi hermana Lucía llega el viernes", "mi hermana"),
])
def test_a_possessive_of_another_language_before_a_family_word_is_no_name(redactor, text, kept):
    content = _content(redactor, text)
    assert kept in content and "[PERSON]" in content
