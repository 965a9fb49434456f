"""The redactor with the real spaCy model on records' numbers written like phone numbers,
sections and rules written like addresses of hosts, and the values beside them that stay
personal: handles, wallets in lists and in other scripts, two hosts joined by a slash."""

from __future__ import annotations

import re

import pytest

from tests.unit.conftest import redacted as _content


@pytest.mark.parametrize("text, record", [
    ("Клиент: Иван Петров, тел. +7 916 123-45-67; заказ 916 123 45 68.", "916 123 45 68"),
    ("고객: 김민준, 휴대폰 010-1234-5678; 주문 010-1234-5679.", "010-1234-5679"),
    ("ऑर्डर नंबर 98765 43210 12 भेज दिया गया है", "98765 43210 12"),
    ("याद रखें: पॉलिसी नंबर 022 4471 2290 कंपनी की गाड़ी का है", "022 4471 2290"),
    ("رقم الشكوى 050 123 4567 89 قيد المعالجة", "050 123 4567 89"),
    ("Ricorda che il codice cliente 02 4471 2290 è dell'azienda di Milano.", "02 4471 2290"),
    ("Zapamiętaj: numer umowy 22 447 12 29 to umowa firmowa.", "22 447 12 29"),
    ("Household: two policies, 1002 338 443 and 1002 338 444.", "1002 338 443"),
    ("Interview 10:00-11:00, Teams 344 118 229 802 1.", "344 118 229 802 1"),
    ("周会：腾讯会议号 138 0013 8000，密码 4471。", "138 0013 8000"),
    ("файрвол: заблокирован 95.165.44.12, порт 22, правило 4.12.0.7", "4.12.0.7"),
    ("第 4.2.1.3 条：納期は受注後 12 営業日。", "4.2.1.3"),
])
def test_records_rules_and_sections_stay_readable(redactor, text, record):
    assert record in _content(redactor, text)


@pytest.mark.parametrize("text, value", [
    ("Клиент, тел. 916 123 45 68, заказ вчера", "916 123 45 68"),  # a phone word before it in its clause
    ("Per il ritiro chiamare il 347 123 4567, codice cliente 4471", "347 123 4567"),
    ("मेरा मोबाइल नंबर 98111 22334 है", "98111 22334"),
    ("PESEL do umowy: 85031204567", "85031204567"),
    ("رقم الهوية: 784-1985-1234567-1", "784-1985-1234567-1"),
    ("العنوان: شارع الشيخ زايد 45، دبي", "شارع الشيخ زايد 45"),
    ("anyone else seeing 502s from the lb? 10.1.1.10/10.1.1.11 both flapping", "10.1.1.10"),
    ("anyone else seeing 502s from the lb? 10.1.1.10/10.1.1.11 both flapping", "10.1.1.11"),
    ("the node kept dropping peers until I pinned it to 10.4.4.4.", "10.4.4.4"),
    ("dave's test box is 10.10.10.10 lol, the splash screen says version 10.10.10.11", "10.10.10.10"),
    ("backends = 10.2.0.11, 10.2.0.12\nversion = 10.2.0.14", "10.2.0.12"),
    ("Bill to: Helena Brandt\n221 Harbour Road, Unit 4, Portland, ME 04101\nInvoice 2024/07/00319", "04101"),
    ("vault: login method=userpass user=ingrid.halvorsen remote_addr=10.12.0.44", "halvorsen"),
    ("timestamp,user,ip\n2024-05-01T10:00:00Z,l.bertrand,10.2.9.14", "bertrand"),
    ("送金先0xF64195f92ceC094E554BE8Ce951eA0615395AFE6への出金", "0xF64195f92ceC094E554BE8Ce951eA0615395AFE6"),
    ("Testnet payout went to tb1qh8762rntdrrqvrc7s47gs838qdk7g07425a3ne.",
     "tb1qh8762rntdrrqvrc7s47gs838qdk7g07425a3ne"),
    ("wallets: 1Fya97vvqwRLhwFdRbwKPTSx6DPt22Z4rd, 0xf739aC312b4d963C44D0d709A6Bd5a64a9c1A05A, "
     "CTgjChDEYGcUtVBHjbwSJ1Fww9NV3ox7C8tTD1GoW6As.", "CTgjChDEYGcUtVBHjbwSJ1Fww9NV3ox7C8tTD1GoW6As"),
    ("XRP deposit missing destination tag. Sent to rpMuvMRrenAs8rMT7CXXrT3S1cw7WePdDH without tag 40213.",
     "rpMuvMRrenAs8rMT7CXXrT3S1cw7WePdDH"),
    ("balance change owner=DBmWMz2zXKtBd8YYp8WsjYmbS8viJkW91Bw9TpsJVDKX delta=+2.5 SOL",
     "DBmWMz2zXKtBd8YYp8WsjYmbS8viJkW91Bw9TpsJVDKX"),
])
def test_personal_values_beside_records_and_in_other_scripts_are_hidden(redactor, text, value):
    assert value not in _content(redactor, text)


@pytest.mark.parametrize("text", ["import os.path; user=config.admin", "see report.final and user=build.bot"])
def test_a_dotted_word_after_a_user_key_is_a_handle_only_when_it_holds_a_name(redactor, text):
    assert "[PERSON]" not in _content(redactor, text)


def test_text_whose_case_changes_its_length_is_redacted_in_place(redactor):
    content = _content(redactor, "ﬁnance: KİMLİK NO 12345678901, call John Smith on 020 7946 0018")
    assert "Smith" not in content and "7946" not in content
    assert content.startswith("ﬁnance: ")


_PIECES = ["İ", "ı", "ﬁ", "ß", "ǰ", "ŉ", "\u212a", "ſ", "\u200d", "\u200b", "\u202e", "👍🏽", "\x00", "\\n", "\t", "  ",
           "+44", "020", "7946", "0018", "4111 1111 1111 1111", "10.0.0.1", "/", ":", "@", ".", "-", "#", "№",
           "user=", "Dr.", "KİMLİK NO", "adı", "ADI", "SOSYAL GÜVENLİK", "नंबर", "ऑर्डर", "رقم الهوية", "شارع", "第",
           "条", "주문", "注文", "คุณ", "Иван", "заказ", "ingrid.halvorsen", "0x", "bc1q", "tb1", "r", "IBAN", "DE89",
           "3704 0044 0532 0130 00", "Straße", "Rd.", "Apt 4", "Mr", "john", "SMITH", "ß-Weg 5", "ΐ", "\ufb00"]


def test_no_text_makes_the_analysis_raise(redactor):
    import random

    rng = random.Random(20261207)
    texts = [" ".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 24))) for _ in range(400)]
    texts += ["".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 24))) for _ in range(200)]
    outcomes = redactor.redact_many(texts)
    assert len(outcomes) == len(texts) and all(isinstance(o.content, str) for o in outcomes)


@pytest.mark.parametrize("text, placeholder", [
    ("My number is 07700 900123, text me.", "[PHONE_NUMBER]"),       # English for a phone number
    ("my number is 0161 496 0123", "[PHONE_NUMBER]"),
    ("its jiwoo kakao id is my number 01055550192", "[PHONE_NUMBER]"),  # no phone word needed after "my number"
    ("My Number: 1234 5678 9018", "[NATIONAL_ID]"),                  # Japan's individual number: 12 digits
])
def test_my_number_is_japan_s_id_only_with_its_twelve_digits(redactor, text, placeholder):
    assert placeholder in _content(redactor, text)


@pytest.mark.parametrize("text, name", [
    ("I'm Sarah, the new office manager.", "I'm [PERSON],"),           # the speaker's "I'm" is no part of the name
    ("My wife Anna will pick up the order.", "[PERSON] will pick"),     # nor a function word in lower case after it
    ("talked to Maria gonzalez about it", "to [PERSON] about"),         # a surname left in lower case stays masked
    ("Li Wei said the shipment is stuck", "[PERSON] said"),             # "Wei" is lowered by the view, not the writer
    ("li wei said the shipment is stuck", "[PERSON] said"),
])
def test_a_name_the_model_finds_is_cut_to_the_words_the_writer_wrote_as_a_name(redactor, text, name):
    content = _content(redactor, text)
    assert name in content and not {"Wei", "wei", "gonzalez"} & set(re.findall(r"\w+", content))
