"""The redactor with the real spaCy model on personal data in structured text a tool hands an
agent: CSV tables (quoted, semicolon- and bar-delimited, a name in the first column), JSON,
YAML, XML, forms whose lines the analysed view joins, vCards, mail headers and logs that name
an account; beside tables and keys that hold products, tools and teams."""

from __future__ import annotations

import pytest

from tests.unit.conftest import redacted as _content


@pytest.mark.parametrize("text, values", [
    ('"contact","company","phone"\n"Wanjiru Kamau","Savanna Logistics Ltd","+254 712 345 678"\n'
     '"Diego Salazar","Andes Café S.A.","+51 1 555 0142"', ("Wanjiru", "Diego Salazar")),
    ("applicant_ssn|applicant|state\n318-42-7760|Brandon Kowalski|IL\n472-09-1835|Alicia Thornberry|MN",
     ("Kowalski", "Alicia Thornberry", "472-09-1835")),
    ("name,email,phone\nLowri Pritchard,lowri@example.net,029 2018 0475\nSian Evans,sian@example.net,029 2018 0477",
     ("Lowri", "Sian Evans", "0477")),
    ("patient_ref,given,family,dob,nhs_no\nPR-2281,Gwen,Llewellyn,1987-04-12,943 476 5919\n"
     "PR-2282,Rhys,Pritchard,1990-09-30,401 023 2137", ("943 476 5919", "401 023 2137")),
    ('{"ssn": "614-22-8071", "applicant": {"first": "Tamika", "last": "Washington"}, "pesel": "88071419356"}',
     ("Tamika", "Washington", "88071419356")),
    ("<person><givenName>Astrid</givenName><familyName>Kjær</familyName><Passport>N3318920</Passport></person>",
     ("Astrid", "Kjær", "N3318920")),
    ("First name: Oksana\nLast name: Shevchenko\nDate of birth: 1991-07-22\nIIN: 920415450127",
     ("Oksana", "Shevchenko", "920415450127")),
    ('payroll:\n  employee: "Thabo Nkosi"\n  id_number: "9104055124086"', ("Thabo", "9104055124086")),
    ("first=Beatriz&last=Souza&tel=555-0142", ("Beatriz", "Souza")),
    ("BEGIN:VCARD\nN:Achebe;Ngozi;;;\nNICKNAME:Joe\nEND:VCARD", ("Achebe", "Joe")),
    ("From: Kiri Waititi <kiri.w@example.co.nz>\nTo: Hemi Walker <hemi@example.co.nz>, Moana Tuhoe <moana@example.co.nz>",
     ("Kiri", "Hemi", "Moana Tuhoe")),
    ('ATTENDEE;CN="Sørensen, Mette":mailto:m@example.no\nATTENDEE;CN=Björn Ásgeirsson:mailto:b@example.is',
     ("Mette", "Ásgeirsson")),
    ("203.0.113.58 - mgarcia [03/Jun/2024:12:05:09 +0000] \"POST /admin/users HTTP/1.1\" 201 89", ("mgarcia",)),
    ("Jun  3 12:04:19 bastion-1 sshd[22871]: Accepted publickey for rkhanna from 198.51.100.203", ("rkhanna",)),
    ("Jun  4 08:06:40 ws-22 sudo:   dbrennan : TTY=pts/0 ; USER=root", ("dbrennan",)),
])
def test_personal_values_in_structured_text_are_hidden(redactor, text, values):
    content = _content(redactor, text)
    assert not [value for value in values if value in content], content


@pytest.mark.parametrize("text, kept", [
    ("name,price,stock\nBlue Widget,9.99,4\nJordan Valley Honey,4.50,12", ("name,price,stock", "Blue Widget",
                                                                           "Jordan Valley Honey")),
    ('{"name": "Jenkins", "type": "ci-server", "owner_team": "Platform"}', ("Jenkins",)),
    ("Cc: Support Team <support@example.com>", ("Support Team",)),
    ("Train 9O 9014 London St Pancras 07:01 - Paris Nord 10:20, coach 12", ("Paris Nord",)),
    ("card 4936 9553 9272 7919 over the phone - agent should not have typed it", ("agent",)),
    ("sku,licence,price\n4471,MIT,0", ("4471,MIT,0",)),
])
def test_products_tools_and_teams_in_the_same_shapes_stay_readable(redactor, text, kept):
    content = _content(redactor, text)
    assert all(value in content for value in kept), content


@pytest.mark.parametrize("text, kept", [
    ("Month\tVisitors\tSignups\nJan\t18204\t412\nFeb\t17733\t398", ("18204", "412", "17733")),
    ("Month\\tVisitors\\nJan\\t18204\\t412\\t2.26%", ("18204", "412")),   # tabs and breaks written as escapes
])
def test_numbers_in_a_table_s_cells_are_no_phone_number(redactor, text, kept):
    content = _content(redactor, text)
    assert "[PHONE_NUMBER" not in content and all(value in content for value in kept)


def test_a_phone_number_in_one_cell_is_still_hidden(redactor):
    content = _content(redactor, "name\tphone\nLowri Pritchard\t029 2018 0475\nSian Evans\t+44 29 2018 0477")
    assert "2018 0475" not in content and "2018 0477" not in content


@pytest.mark.parametrize("text", ["Call   +1   415   555   0132   today", "Phone: +44 20\n7946 0958 (office)"])
def test_a_phone_number_spaced_carelessly_or_wrapped_is_still_hidden(redactor, text):
    content = _content(redactor, text)
    assert "0132" not in content and "0958" not in content

