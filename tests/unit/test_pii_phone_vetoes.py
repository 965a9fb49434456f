"""Phone-shaped numbers a clause names as something else (``ibex_worker.pii.phone_vetoes``):
a record's number the clause is about, a ZIP+4 code in a text about postal codes; and the
phone numbers these rules must leave alone."""

from __future__ import annotations

import re

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
    assert numbers.named_by_record(view, view.index("0471"), view.index("0471") + 12) is False
    view = canonical_view("The order number, or call me, is 0471 338 2291.").text
    assert numbers.named_by_record(view, view.index("0471"), view.index("0471") + 12) is False


@pytest.mark.parametrize("text, value", [
    ("Swap the pump seal 7731-2209-41 before winter.", "7731-2209-41"),          # a part's number: 4-4-2
    ("Archive covers 2016–2021 only.", "2016–2021"),                               # years
    ("Shop shut 23.12.–03.01. for the holidays", "23.12.–03.01."),                 # a date range
    ("Cited as 512 (1998), see the footnote.", "512 (1998"),                       # a page and its year
    ("regs 30001=4412 30002=9081 ok", "4412 30002"),                               # a value runs into the next key
    ("Printed under the bars: 0 36000 29145 2", "0 36000 29145 2"),                # a UPC-A as printed
    ("Permit 2023-1187-044 is on the door.", "2023-1187-044"),                      # a year-numbered id
    ("Their ISSN is 1532-4435 for the print run.", "1532-4435"),
    ("Kostenstelle 5120-0931 trägt die Reise.", "5120-0931"),
    ("my ref is 4500182733, quote it", "4500182733"),                              # a possessive before "ref"
    ("our ref 4417 8293 0012 on the letter", "4417 8293 0012"),
    ("my ID number is 4500182733", "4500182733"),
])
def test_part_numbers_year_ranges_citations_and_register_values_are_not_phone_numbers(text, value):
    assert _phone(text, value) is False


@pytest.mark.parametrize("text, value", [
    ("its me, my # is 7185550143 text me", "7185550143"),                         # "my #": a phone in chat
    ("Alt. No.: 022 2781 4460", "022 2781 4460"),                                 # abbreviations do not end a clause
    ("ping me at +212.6.61.22.33.44 tonight", "+212.6.61.22.33.44"),             # one-digit groups after a +
    ("save wa.me/4917655501234 pls", "4917655501234"),                           # a chat link's digits
    ("call +1.312.555.0144/+1.312.555.0145", "+1.312.555.0145"),                # a second number after a slash
    ("lines=4 msisdn=447700900184 plan=x", "447700900184"),
    ("art teacher Maria, 07700 900123", "07700 900123"),                          # "art" alone names no record
])
def test_numbers_in_chat_shapes_links_and_abbreviated_labels_stay_phone_numbers(text, value):
    assert _phone(text, value) is True


def test_an_extension_in_another_language_and_a_letter_l_typed_for_a_one_are_part_of_the_number():
    view = canonical_view("Zentrale 0221 470 5500 Durchwahl 31, privat 0176 5l2 34 567").text
    found = [view[h.start:h.end] for h in numbers.phones(view)]
    assert "0221 470 5500 Durchwahl 31" in found
    assert any(value.startswith("0176 5l2") for value in found)


@pytest.mark.parametrize("text, value", [
    ("Lot 6 6 weighed 2 870 000 kilograms at intake.", "2 870 000"),             # a count grouped by thousands
    ("The district counted 31 402 118 voters this year.", "31 402 118"),
    ("Kolli GLS ZX9K 5521 8830 44 liegt im Depot.", "5521 8830 44"),              # the tail of a code
    ("renewed policy KFZ-5518-2207 until March", "5518-2207"),                    # glued to a code by its hyphen
    ("Agent: your booking number? Guest: um, it's 7712 0048 19.", "7712 0048 19"),  # answers a record's question
    ("IVR: enter your account number. Caller: 4 4 1 9 0 2 8 8 3 6.", "4 4 1 9 0 2 8 8 3 6"),
    ("Claim 5503 1182 07 was folded into 5503 1182 44 yesterday.", "5503 1182 44"),  # the twin of a record's number
    ("zamówienie 118 204 5573 wysłane kurierem", "118 204 5573"),                   # Polish "order"
    ("heap grew to 3221225472 bytes before the GC ran", "3221225472"),            # a quantity in its unit
    ("ids,ts 88,1715760000 (48", "1715760000 (48"),                              # a Unix time before a bracket
])
def test_counts_code_tails_answers_to_record_questions_and_record_twins_are_not_phone_numbers(text, value):
    assert _phone(text, value) is False


@pytest.mark.parametrize("text, value", [
    ("Reception # 312 555 0178 after six", "312 555 0178"),                       # "#" alone says "number"
    ("best is the last part: +1 (312) 555-0178 x31", "+1 (312) 555-0178 x31"),   # written to be dialled
    ("Agent: your mobile number? Caller: sure, it's 07700 900416.", "07700 900416"),  # a phone's question
    ("Agent: the account number? Caller: my phone is 07700 900416", "07700 900416"),  # the answer names a phone
    ("Freephone 0800 123 4567 lines open 8am to 8pm", "0800 123 4567"),             # not a unit
    ("Llámame al 912 345 678 esta tarde", "912 345 678"),                          # three-digit lead: a Spanish number
    ("Ticket 5503 1182 07 — ring me on 5503 1182 44", "5503 1182 44"),             # a twin a phone word announces
    ("flyer says phone 0800 FIX ROOF for quotes", "0800 FIX ROOF"),               # a freephone number in letters
])
def test_bare_number_words_dialling_forms_and_phone_questions_stay_phone_numbers(text, value):
    assert _phone(text, value) is True


def test_numbers_glued_to_unspaced_scripts_keep_their_extensions_and_vanity_numbers_need_a_phone_word():
    view = canonical_view("店舗は06-6555-0142 内線305です。").text
    assert "06-6555-0142 内線305" in [view[h.start:h.end] for h in numbers.phones(view)]
    for text in ("The warehouse shipped 1800 bottles", "the 1300 people came to 0800 block",
                 "the caller asked if the 1800 line is free from abroad"):  # words of a sentence, not letters to dial
        view = canonical_view(text).text
        assert [view[h.start:h.end] for h in numbers.phones(view) if re.search("[a-z]", view[h.start:h.end])] == []


@pytest.mark.parametrize("text, value", [
    ("the flat went for 2 450 000 and the one next door is listed at 2 390 000", "2 390 000"),  # "at" places a price
    ("Customer number 00718244 is on the old tariff.", "00718244"),            # a record phrase holding "number"
    ("Till number 7 301 448 takes M-Pesa for the canteen.", "7 301 448"),      # a shop's till
    ("gas meter 0714 2290, read on Friday", "0714 2290"),                     # a meter's number
    ("the field overflowed at -2 147 483 648 again", "147 483 648"),          # the rest of a count with its lead
    ("listener range 8300-8400/udp stays closed", "8300-8400"),               # ports, not a phone
    ("nota fiscal nº 000.771.204 emitida hoje", "000.771.204"),               # no country code is 0
    ("Auftrag 2024/044718823 wurde storniert", "044718823"),                  # the tail of a slashed id
    ("Fehlerbericht 2025-02-0713 ist offen", "2025-02-0713"),                 # numbered by year and month
    ("Datadog monitor 220417731 is flapping", "220417731"),
    ("Ondernemingsnummer: BE 0738.412.905, RPR Gent", "0738.412.905"),        # a Belgian enterprise number
    ("Part no. 0713-882-410-C fits; the 0713-882-411 does not.", "0713-882-411"),  # a part number's twin
    ("[10:02:11] Agent: and the claim number? [10:02:14] Caller: yes, it's 4-4-1-0-2-2-9-7.", "4-4-1-0-2-2-9-7"),
])
def test_prices_record_phrases_lead_cut_counts_ports_and_year_numbered_ids_are_not_phone_numbers(text, value):
    assert _phone(text, value) is False


@pytest.mark.parametrize("text, value", [
    ("Customer number: call me on 0412 345 678 instead", "0412 345 678"),     # a phone word after the label
    ("hívj a 06 20 555 0147-es számon", "06 20 555 0147"),                    # a Hungarian suffix after the number
    ("bel me op 0470.12.34.56 vanavond", "0470.12.34.56"),                    # a Belgian mobile, dotted in pairs
])
def test_a_phone_word_after_a_record_label_and_a_suffix_after_the_number_keep_a_phone_number(text, value):
    assert _phone(text, value) is True


def test_an_extension_in_brackets_or_after_dw_and_a_local_555_number_are_phone_numbers():
    found = {}
    for text in ("physio at the clinic, 01632 960 218 (ext 31).", "erreichbar unter +43 1 4000 12 DW 5521.",
                 "the vet is 555.0173 local", "replacement part 555-0173-C ships Monday"):
        view = canonical_view(text).text
        found[text] = [view[h.start:h.end].lower() for h in numbers.phones(view)]
    assert found["physio at the clinic, 01632 960 218 (ext 31)."] == ["01632 960 218 (ext 31)"]
    assert found["erreichbar unter +43 1 4000 12 DW 5521."] == ["+43 1 4000 12 dw 5521"]
    assert found["the vet is 555.0173 local"] == ["555.0173"]
    assert found["replacement part 555-0173-C ships Monday"] == []


@pytest.mark.parametrize("text, found", [
    ("if it gets bad, ring the helpline on 116 123, day or night", ["116 123"]),
    ("please text or call 988 tonight", ["988"]),
    ("the roadside line is 13 11 11 and it is free", ["13 11 11"]),
    ("the depot line is 19400.", ["19400"]),
    ("just call 999, then me", []),                      # an emergency number reaches a service
    ("we call 300 customers a week", []),                # a noun after the number
    ("the parser failed on line 4412.", []),             # a line of a file
    ("ring me at 1500 tomorrow", []),                    # a time
])
def test_a_short_line_a_call_word_announces_is_a_phone_number(text, found):
    view = canonical_view(text).text
    assert [view[h.start:h.end] for h in numbers.phones(view)
            if numbers.phone_in_context(view, h.start, view[h.start:h.end])] == found


@pytest.mark.parametrize("text, value", [
    ("call transferred to desk 17, call ID 7781-2241-09.", "7781-2241-09"),          # a phone word in a record's name
    ("HDMI cable 2m, art. no. 714.882.03, qty 2", "714.882.03"),                     # an article's number
    ("FedEx 7749 1234 5678 is stuck in customs", "7749 1234 5678"),                 # a carrier's tracking number
    ("both went by UPS 4417 2291 0877 yesterday", "4417 2291 0877"),
    ("terminal 60012298, mid 4400018821, batch 118", "4400018821"),                # a merchant id
])
def test_record_names_holding_a_phone_word_articles_carriers_and_merchants_name_no_phone(text, value):
    assert _phone(text, value) is False


@pytest.mark.parametrize("text, value", [
    ("call DHL on 0800 123 4567 if it is late", "0800 123 4567"),                   # a carrier's line, a call word
    ("the DHL courier, phone 0171 2233445, will ring", "0171 2233445"),
    ("please call 0800 123 4567", "0800 123 4567"),
    ("call me mid morning on 07700 900123", "07700 900123"),
])
def test_a_carrier_named_near_a_phone_word_leaves_the_phone_number(text, value):
    assert _phone(text, value) is True


@pytest.mark.parametrize("text, value, phone", [
    ("Votre numéro de commande est le 01 45 22 87 19 ; conservez-le.", "01 45 22 87 19", False),
    ("Il numero d'ordine 347 112 4450 risulta già evaso.", "347 112 4450", False),
    ("O número do pedido é 11 98765 4321, guarde-o.", "11 98765 4321", False),
    ("Número de cliente 600 112 334; consulte sus facturas.", "600 112 334", False),
    ("Le client précise que 0033 1442 8871 est son numéro de contrat.", "0033 1442 8871", False),
    ("会員番号 4401-2287-6650 でログインしてください。", "4401-2287-6650", False),
    ("Numer przesyłki 0412 9987 3320 czeka w paczkomacie.", "0412 9987 3320", False),
    ("Votre numéro de téléphone est le 01 45 22 87 19.", "01 45 22 87 19", True),     # a phone's kind
    ("número de contacto: 600 112 334", "600 112 334", True),
    ("il mio numero nuovo è 347 128 4590, salvalo!", "347 128 4590", True),          # "new" is no record
    ("il numero di casa è 0039 081 555 0193", "0039 081 555 0193", True),            # home
    ("+52 (55) 4161 2093 es el número de mi tía", "+52 (55) 4161 2093", True),       # a person's
    ("電話番号：03-1234-5678", "03-1234-5678", True),
    ("新しい番号は090-4821-7733です。", "090-4821-7733", True),
    ("Set-top box firmware 3.14.159.26 shipped to the pilot households.", "3.14.159.26", False),
    ("Le numéro du client est le 06 12 34 56 78.", "06 12 34 56 78", True),          # the client's own number
    ("Llamar al número del cliente 612 345 678 mañana.", "612 345 678", True),
    ("お客様の携帯番号は 090-1234-5678 です", "090-1234-5678", True),                   # the customer's mobile
    ("Call the driver at 415.555.0132 when you land.", "415.555.0132", True),
    ("Zoom with Jane, 415 555 0132", "415 555 0132", True),                          # "Zoom" not right before it
    ("Jane's phone for Zoom 07700 900123", "07700 900123", True),                     # a phone word before it
    ("Call me on WhatsApp or Teams: 07700 900123", "07700 900123", True),
    ("予約者の番号は090-1234-5678です", "090-1234-5678", True),                          # the booker's number
    ("お客様の新しい番号は090-1234-5678", "090-1234-5678", True),                        # the customer's new number
    ("来週の会議IDは 814 2279 3305 です", "814 2279 3305", False),                       # a meeting's id
    ("Stand-up (Zoom 891 2345 6780, passcode 442211)", "891 2345 6780", False),
])
def test_a_number_word_naming_a_record_kind_makes_no_phone_number_and_a_phone_kind_does(text, value, phone):
    assert _phone(text, value) is phone


@pytest.mark.parametrize("text, value, phone", [
    ("the 0412 889 301 thing is my booking ref btw", "0412 889 301", False),
    ("ok the 556123-4567 is the org nr, fine.", "556123-4567", False),
    ("the one on my card says 0412 778 903 but that's the member number right?", "0412 778 903", True),  # a member's
    ("0117 2290, is the boiler's service code.", "0117 2290", False),
    ("07700 900123 is the number on the order.", "07700 900123", True),            # "number" before the record
    ("0412 889 301 is the contact for the order.", "0412 889 301", True),          # a phone's word before it
    ("Call 0161 442 7781, that's the order desk.", "0161 442 7781", True),         # the record does not end the phrase
    ("0161 442 7781 is the booking office.", "0161 442 7781", True),
    ("my new number is 0412 889 301 and that's the reservation for friday", "0412 889 301", True),
    ("her mobile 0412 889 301 is the booking ref she gave", "0412 889 301", True),  # a phone word before it
    ("+44 20 7946 0958 is my booking ref", "+44 20 7946 0958", True),             # dialled with a country code
])
def test_the_words_after_a_number_can_call_it_a_record_unless_a_phone_word_comes_first(text, value, phone):
    assert _phone(text, value) is phone


@pytest.mark.parametrize("text, value", [
    ("Agent: Can I take the order number, please? Caller: Yes, it's 0161 442 7781.", "0161 442 7781"),
    ("Sipariş numarası 0532 417 28 93, kargoya verildi", "0532 417 28 93"),
])
def test_an_asked_record_may_say_please_and_a_record_s_number_word_may_be_of_another_language(text, value):
    assert _phone(text, value) is False


@pytest.mark.parametrize("text, value", [
    ("zadzwoń pod 512 555 014, Kasia", "512 555 014"),            # Polish "pod" is "on", no supply point
    ("Agent: Can I take a contact number, please? Caller: Yes, it's 0161 442 7781.", "0161 442 7781"),
])
def test_a_polish_call_and_a_phone_s_question_keep_the_phone_number(text, value):
    assert _phone(text, value) is True


@pytest.mark.parametrize("text, value", [
    ("07700 900123 is the tenant. Landlord is Mike Jones, 07700 900456.", "07700 900456"),   # no twin of a record
    ("Ana: 0412 889 301 / Ben: 0412 777 302 (0412 555 999 is the booking ref)", "0412 889 301"),
    ("Note to self: 07700 900123 is my Revolut account, 2FA goes there.", "07700 900123"),  # used as an account
    ("07700 900321, that's my membership.", "07700 900321"),
    ("Employee number 5521, Sarah Khan, 555-867-5309", "555-867-5309"),
    ("Lieferschein an Frau Weber, 0171 2345678", "0171 2345678"),
    ("Call Tom on 07700 900123 wh/sms", "07700 900123"),
    ("Kundennummer 4471, Ansprechpartner Herr Weber 0171 2345678", "0171 2345678"),   # the record has its number
    ("Employee ID E5521 - Sarah Khan, 07700 900123", "07700 900123"),
    ("Order 4471 for sarah khan 07700 900123", "07700 900123"),
    ("my sister's is 07700 900654.", "07700 900654"),                 # a British mobile as printed
    ("the right address is 77 Birchwood Lane, Leeds, contact number 07700 900418.", "07700 900418"),
    ("Müşteri Elif Yılmaz, cep +90 532 555 41 77, sipariş 771-204-5540.", "+90 532 555 41 77"),  # Turkish mobile
])
def test_a_record_described_or_named_elsewhere_leaves_a_person_s_phone_number_masked(text, value):
    assert _phone(text, value) is True


def test_an_ssn_a_clause_calls_a_member_id_stays_an_ssn():
    view = canonical_view("Patient Maria Lopez, 423-55-1234 is her member ID.").text
    assert numbers.named_by_record(view, view.index("423-55-1234"), view.index("423-55-1234") + 11) is False


@pytest.mark.parametrize("text, value, phone", [
    ("Rückrufnummer: 030/2647 118-0", "030/2647 118-0", True),          # a callback's number is a phone's
    ("Номер телефона 916 427-18-55", "916 427-18-55", True),
])
def test_a_callback_s_compound_and_a_russian_phone_s_number_word_keep_the_phone_number(text, value, phone):
    assert _phone(text, value) is phone


def test_a_brazilian_postcode_after_its_word_is_no_phone_number():
    assert _phone("Telefone: (11) 98765-4321; CEP: 01310-100", "01310-100") is False
    assert _phone("Aviso: CEP 01310100 errado", "01310100") is False


@pytest.mark.parametrize("text, value, phone", [
    ("INSERT INTO addresses VALUES (5521, 'Rua Augusta 2690', 'São Paulo', '01412-100', 'BR')", "01412-100", False),
    ("TEL;TYPE=HOME:+55 (21) 2555-7810\nADR:;;Rua Visconde de Pirajá 414;Rio de Janeiro;RJ;22410-002", "22410-002",
     False),                                                             # hyphenated 5-3 only as a CEP is
    ("Celular: 98765-4321", "98765-4321", True),                         # a Brazilian mobile is 5-4
    ("Mastercard starts with 51–55 or 2221–2720", "2221–2720", False),  # a dash of ranges between equal lengths
    ("Call me on 555–0123 tonight", "555–0123", True),                   # a local number, even with a dash
    ("Call me on 2221-2720 tonight", "2221-2720", True),                # a hyphen joins a phone's groups
])
def test_a_cep_anywhere_and_a_range_with_a_dash_of_ranges_are_no_phone_numbers(text, value, phone):
    assert _phone(text, value) is phone


@pytest.mark.parametrize("text, value", [
    ("Номер заказа 916-427-18-55, сумма 4 280 ₽", "916-427-18-55"),
    ("Objednávka č. 603 218 447 byla odeslána", "603 218 447"),
    ("Lieferschein 0049 1762 2849 915, 3 Paletten", "0049 1762 2849 915"),
    ("Yurtiçi Kargo takip numarası 412998823001 teslim edilmedi", "412998823001"),
    ("رقم التتبع 4418829301", "4418829301"),
    ("Delivery note no. 01 45 67 89 12, 14 parcels", "01 45 67 89 12"),
])
def test_a_record_word_of_another_language_right_before_a_number_names_a_record(text, value):
    assert _phone(text, value) is False


@pytest.mark.parametrize("text, value", [
    ("Tilaus vahvistettu, soita Mikalle 040 123 4567.", "040 123 4567"),
    ("Objednávka potvrzena, paní Nováková: 603 218 447", "603 218 447"),
    ("Envio amanhã, o João atende no 912 345 678.", "912 345 678"),
    ("الفاتورة أرسلت إلى أحمد على الرقم 0501234567", "0501234567"),
    ("Kvitto skickat till Erik, 070 123 45 67", "070 123 45 67"),
    ("Заказ 4471 оформлен, перезвонить на 8 916 427-18-55", "916 427-18-55"),
    ("Handynummer für die Lieferung 0176 2345 6789", "0176 2345 6789"),      # a phone word earlier wins
    ("Bitte Rückruf zum Vertrag: 030 12345678", "030 12345678"),
    ("Tel. pro objednávky: 603 218 447", "603 218 447"),
    ("Contact livraison : 06 12 34 56 78", "06 12 34 56 78"),
    ("Rückfragen zur Lieferung: 0176 2345 6789", "0176 2345 6789"),          # an order's word needs "Nr."
    ("Bookings 1300 123 456", "1300 123 456"),                              # a plural names the line
])
def test_a_record_word_of_another_language_further_back_leaves_the_phone_number(text, value):
    assert _phone(text, value) is True


@pytest.mark.parametrize("text, value, phone", [
    ("Two-factor backup codes: 4417 2290, 8831 0062, 1190 7345.", "8831 0062", False),
    ("El usuario gestiona los pedidos 0412 778 903 y 0412 779 115 del cliente.", "0412 778 903", False),
    ("the claims 512-90-3378 and 512-90-3401 to discuss", "512-90-3401", False),
    ("Bookings 1300 123 456", "1300 123 456", True),                        # a department's line is no list
    ("Questions: accounts@example.co.uk or 0161 496 0420.", "0161 496 0420", True),
    ("Our claims line is 0345 600 7788 or 0345 600 7789.", "0345 600 7788", True),  # a phone word in the clause
])
def test_numbers_listed_under_a_record_s_plural_are_records(text, value, phone):
    assert _phone(text, value) is phone


def test_an_ssn_shaped_number_in_a_list_of_skus_is_a_product_s():
    view = canonical_view("Pricing applies to SKUs 330-18-4471 to 330-18-4480.").text
    for value in ("330-18-4471", "330-18-4480"):
        assert numbers.named_by_record(view, view.index(value), view.index(value) + 11) is True
    view = canonical_view("Claims 330-18-4471 and 330-18-4480 are open.").text
    assert numbers.named_by_record(view, view.index("330-18-4471"), view.index("330-18-4471") + 11) is False


@pytest.mark.parametrize("text, value, phone", [
    ("numero_cliente,telefono_contatto\n04 4417 2290,+39 347 882 1096", "04 4417 2290", False),
    ("номер_договора,телефон\n77-4410-2381,+7 495 448-21-90", "77-4410-2381", False),
    ("name,phone,order_no\nAna,0161 496 0732,0161 496 0733", "0161 496 0732", True),    # the phone column
    ("name,phone,order_no\nAna,0161 496 0732,0161 496 0733", "0161 496 0733", False),
    ("| customer | mobile |\n|---|---|\n| Ana | 0161 496 0732 |", "0161 496 0732", True),
    ("Orders,invoices and tickets: call 0161 496 0732 today", "0161 496 0732", True),    # prose, no table
    ("Vertragskonto 7001 4482 19, Zählernummer 1ESY 1160 4471 22", "7001 4482 19", False),
    ("Подписка № 447-122-908 продлена, списание с карты **** 0934", "447-122-908", False),
    ("رقم العداد 22-0093-4471، قيمة الفاتورة 312 ريال", "22-0093-4471", False),
    ("出荷番号 4471-2290-3318、ロット LOT-240517-0093", "4471-2290-3318", False),
])
def test_a_table_s_record_column_and_records_of_more_languages_are_no_phone_numbers(text, value, phone):
    assert _phone(text, value) is phone


@pytest.mark.parametrize("text, value, phone", [
    ("Gönderiniz 7219 8831 0045 takip numarasıyla kargoya verildi.", "7219 8831 0045", False),  # tracking, after it
    ("Siparişiniz 4471 2290 8817 sipariş numarasıyla alındı.", "4471 2290 8817", False),
    ("0532 418 27 60 telefon numarası", "0532 418 27 60", True),
    ("تم شحن طلبك رقم 7741-2209 وسيصل خلال 3 أيام", "7741-2209", False),                       # "your order number"
    ("Driver 27.20.100.9664 fixed the flicker", "27.20.100.9664", False),                       # a driver's version
])
def test_a_record_named_after_the_number_in_turkish_an_arabic_order_and_a_driver_s_version(text, value, phone):
    assert _phone(text, value) is phone
