"""The redactor with the real spaCy model on people named across scripts and around their
roles: a name in a caseless script after an English word that announces a person, its Latin
transliteration in brackets, a name in apposition to a role, the first of a list closed by
"and I", and a name whose letters carry combining marks; and the texts around them that name
nobody."""

from __future__ import annotations

import pytest

from tests.unit.conftest import redacted as _content


@pytest.mark.parametrize("text, names", [
    ("The user's Tamil tutor is கார்த்திகா சுப்ரமணியம் (Karthika); classes on Sunday evenings.",
     ["கார்த்திகா", "சுப்ரமணியம்", "Karthika"]),
    ("Accountant: వెంకట రమణ రావు; invoices go out monthly.", ["వెంకట", "రమణ", "రావు"]),
    ("My manager is ريم الحسيني and she approved the leave.", ["ريم", "الحسيني"]),
    ("User's host in Tbilisi is ნინო ბერიძე (Nino); she runs the guesthouse.", ["ნინო", "Nino"]),
    ("Referee for the flat: Babajide Oyelaran, former landlord, +44 20 7946 0321.", ["Babajide", "Oyelaran"]),
    ("Thandiwe Nkosi, the user's physio since 2019, moved clinics.", ["Thandiwe", "Nkosi"]),
    ("Ngozi, Tunde and I will split the airbnb.", ["Ngozi", "Tunde"]),
    ("User's tailor Adébáyọ̀ Ògúnlẹ́yẹ needs the fabric by next Saturday.", ["Adébáyọ̀", "Ògúnlẹ́yẹ", "yẹ"]),
])
def test_people_named_across_scripts_and_beside_their_roles_are_masked(redactor, text, names):
    content = _content(redactor, text)
    assert "[PERSON]" in content
    assert [name for name in names if name in content] == []


@pytest.mark.parametrize("text, kept", [
    ("The user's tutor is கார்த்திகா (Tamil) on Sundays.", "(Tamil)"),           # a language, no alias
    ("Their office is in ტბილისი (Tbilisi) near the river.", "Tbilisi"),          # no word announces a person
    ("कॉल 022 4412 7789 से आई, कतार BILLING-HI, एजेंट 7042", "एजेंट"),              # "-HI" greets nobody
    ("Acme Plumbing, the plumber, came at nine.", "Acme Plumbing"),               # a firm before a role
    ("Kadıköy'den Karaköy'e vapur 20 dakikada bir kalkıyor, son sefer 23:30.", "dakikada bir kalkıyor"),
])
def test_words_beside_those_cues_that_name_nobody_stay_readable(redactor, text, kept):
    assert kept in _content(redactor, text)
