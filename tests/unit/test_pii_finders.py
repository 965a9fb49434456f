"""The PII stage's own finders, as pure functions over the analysed view (no model): the
case- and spacing-free view, numbers by shape, checksum and context, postal addresses, and
names announced by their context."""

from __future__ import annotations

import random
import re
import uuid

import pytest

from ibex_worker.pii import addresses, ibans, identifiers, name_neighbours, names, networks, numbers, payments, spoken
from ibex_worker.pii.casing import canonical_view
from ibex_worker.pii.checksums import creditor_reference_valid, iban_valid, luhn_valid, nhs_valid, verhoeff_valid


def _found(finder, text):
    view = canonical_view(text).text
    return [(hit.entity_type, view[hit.start:hit.end], hit.score) for hit in finder(view)]


def test_the_view_depends_only_on_the_folded_text_and_keeps_one_character_per_character():
    texts = ["The customer renews the Atlas contract every September.",
             "THE CUSTOMER RENEWS THE ATLAS CONTRACT EVERY SEPTEMBER.",
             "the   customer renews\tthe atlas contract every september."]
    views = [canonical_view(t) for t in texts]
    assert len({v.text for v in views}) == 1
    assert views[0].text == "The customer renews the Atlas contract every September."
    view = views[2]
    start = view.text.index("Atlas")
    assert texts[2][slice(*view.to_original(start, start + 5))] == "atlas"


@pytest.mark.parametrize("text", ["ﬁnance: call priya natarajan", "ßabine weber ﬂies today", "ŉ ǰ ΐ john smith",
                                  "SOSYAL GÜVENLİK NO İÇİN AYŞE YILMAZ", "ıban ſocial ＫELVIN"])
def test_letters_whose_case_changes_their_length_keep_the_view_aligned(text):
    view = canonical_view(text)
    assert len(view.text) == len(view.folded) == len(view.offsets) == len(text)
    assert all(ch.isascii() for ch in view.text if ch.lower() in "iks")
    start = view.folded.rindex(" ") + 1
    assert text[slice(*view.to_original(start, len(view.text)))].lower() == text.split()[-1].lower()


def test_the_view_capitalises_names_initials_and_titles_and_leaves_ids_as_typed():
    view = canonical_view("talked to priya natarajan and j. r. okonkwo; dr. young owns org-761f7bd65466").text
    assert view == "Talked to Priya Natarajan and J. R. Okonkwo; Dr. Young owns org-761f7bd65466"


def test_check_digits():
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert iban_valid("DE89370400440532013000") and not iban_valid("DE89370400440532013001")
    assert verhoeff_valid("234123412346") and not verhoeff_valid("234123412345")
    assert nhs_valid("9434765919") and not nhs_valid("9434765918")
    assert creditor_reference_valid("RF18539007547034") and not creditor_reference_valid("RF19539007547034")
    assert creditor_reference_valid("rf18539007547034") and not creditor_reference_valid("RF18")


@pytest.mark.parametrize("text, value, score", [
    ("call me on 0917 555 2841 tomorrow", "0917 555 2841", numbers.LIKELY),
    ("reach her at +44 (0) 20 7946 0958 ext. 12", "+44 (0) 20 7946 0958 ext. 12", numbers.LIKELY),
    ("it was 415 555 0132 again", "415 555 0132", numbers.UNCERTAIN),
    ("whatsapp two one two, five five five, zero one four six", "two one two, five five five, zero one four six",
     numbers.LIKELY),
    ("the desk is +27 21 555 0199 loc. 40 after hours", "+27 21 555 0199 loc. 40", numbers.LIKELY),
    ("orders go through 1-877-GET-TILES now", "1-877-get-tiles", numbers.LIKELY),
    ("ping me https://wa.me/351912345678 whenever", "351912345678", numbers.LIKELY),
    ("my mobile's 07700 900 461 if I'm out", "07700 900 461", numbers.LIKELY),
    ("my mobile is oh seven seven double oh nine hundred eight eight one, ring after 5",
     "oh seven seven double oh nine hundred eight eight one", numbers.LIKELY),  # 07700 900881
    ("my mobile's plus eight one, ninety, two two one four, seven seven zero three.",
     "plus eight one, ninety, two two one four, seven seven zero three", numbers.LIKELY),
    ("su pedido ya llegó, llámeme al 81 8342 1177.", "81 8342 1177", numbers.LIKELY),  # a call verb wins
])
def test_phone_numbers_by_context_and_grouping(text, value, score):
    assert ("PHONE_NUMBER", value.lower(), score) in [(k, v.lower(), s) for k, v, s in _found(numbers.phones, text)]


_L, _U = numbers.LIKELY, numbers.UNCERTAIN


@pytest.mark.parametrize("text, value, digits, score", [
    ("rappelez-moi au zéro sept, vingt-neuf, quatre-vingt-onze, soixante-dix-huit, zéro trois",
     "zéro sept, vingt-neuf, quatre-vingt-onze, soixante-dix-huit, zéro trois", "0729917803", _L),
    ("mi número es seis uno cinco, veintidós, cuarenta y ocho, setenta",
     "seis uno cinco, veintidós, cuarenta y ocho, setenta", "615224870", _L),
    ("Rückruf unter null drei null, einundsechzig, zwölf, neunundneunzig",
     "null drei null, einundsechzig, zwölf, neunundneunzig", "030611299", _L),
    ("richiamami al tre tre nove, ventotto, quarantuno, sedici", "tre tre nove, ventotto, quarantuno, sedici",
     "339284116", _L),
    ("bel me terug op nul zes, achtendertig, eenenzeventig, elf", "nul zes, achtendertig, eenenzeventig, elf",
     "06387111", _L),
    ("ligue para nove oito, sete seis cinco, quatro três dois um", "nove oito, sete seis cinco, quatro três dois um",
     "987654321", _L),
    ("it's five-five-five, two-one-nine-eight, fine", "five-five-five, two-one-nine-eight", "5552198", _U),
    ("zadzwoń pod sześćset dwa, trzysta czterdzieści, dziewięćset jedenaście",
     "sześćset dwa, trzysta czterdzieści, dziewięćset jedenaście", "602340911", _L),
    ("call me on nought seven seven, double nine, four one two", "nought seven seven, double nine, four one two",
     "07799412", _L),
])
def test_numbers_read_out_in_eight_languages_are_phone_numbers(text, value, digits, score):
    assert spoken.spoken_digits(value)[0] == digits
    assert ("PHONE_NUMBER", value.lower(), score) in [(k, v.lower(), s) for k, v, s in _found(numbers.phones, text)]


def test_a_letter_o_typed_for_a_zero_does_not_hide_a_phone_number():
    assert ("PHONE_NUMBER", "o79oo 9oo461", numbers.LIKELY) in [
        (k, v.lower(), s) for k, v, s in _found(numbers.phones, "call me on O79OO 9OO461 later")]
    assert _found(numbers.phones, "the room 4O1 is booked, OOO until 1000") == []


def test_one_digit_said_over_and_over_is_no_phone_number():
    assert _found(numbers.phones, "null, null, null, null, null, null, null, null") == []
    assert _found(numbers.phones, "zero zero zero zero zero zero zero") == []


@pytest.mark.parametrize("text", [
    "order 4412098831 shipped", "released on 2024-03-14", "Chrome 124.0.6367.91 renders it",
    "ISBN 978-3-16-148410-0 and 0-306-40615-2", "invoice 2024-000417 is paid", "RGB 30/144/255",
    "please call about invoice 20418873", "the daemon counted 55102934 packets",
    "in nineteen ninety nine we had three hundred and twelve staff", "nine hundred units sold in twenty twenty three",
])
def test_business_numbers_dates_versions_and_isbns_are_not_phone_numbers(text):
    assert _found(numbers.phones, text) == []


@pytest.mark.parametrize("text, value", [
    ("card 4929 1846 3320 5517 on file", "4929 1846 3320 5517"),   # dials as +49 without the "+"
    ("kernel rolled back to 5.14.0-362.8.1 today", "5.14.0-362.8.1"),
    ("short code 1647", "1647"),
    ("mailbox 19822344 is full", "19822344"),                      # a bare run no phone word announces
])
def test_cards_versions_short_codes_and_bare_counters_are_not_phone_numbers_whoever_finds_them(text, value):
    view = canonical_view(text).text
    assert not numbers.phone_in_context(view, view.lower().index(value.lower()), value)


@pytest.mark.parametrize("text, phone", [
    ("calling back about ticket 40718822 later", False),     # the business word names the number
    ("calling back about order no. 40718822 later", False),
    ("ticket done, call me on 40718822 later", True),        # a phone word between them
    ("my phone number for the order is 0917 555 2841", True),  # the order does not name the number
    ("the order is 0917 555 2841 or so", False),             # a business word and no phone word
])
def test_a_business_word_keeps_a_number_it_names_and_a_phone_word_wins_otherwise(text, phone):
    view = canonical_view(text).text
    value = re.search(r"\d[\d ]*\d", view).group(0)
    assert numbers.phone_in_context(view, view.index(value), value) is phone


@pytest.mark.parametrize("text, phone", [
    ("Leveranciers-ID bij ons: klantnummer 3094417725, graag vermelden", False),  # a record's compound name
    ("Ihre Vorgangsnr. 5520918834 liegt uns vor", False),
    ("Festnetznummer 0301 2345678, abends", True),           # a phone's compound name stays a phone's
    ("Telefonnummer 0301 2345678", True),
    ("TVA intracommunautaire 3398120554, SIREN à part", False),  # a company's register
    ("KRS 0000718822 and REGON 380118265 on the letterhead", False),
    ("routing 011000138 for the wire", False),
    ("track it at example-post.com/parcel/7718204455 today", False),  # a web address's path
    ("chat on wa.me/447700900873 after six", True),
    ('{"uid": 19, "created": 1699120045}', False),           # Unix time
    ("call me on 1699120045", True),                          # a phone word wins over the clock
    ("lot 88120.4417820931 of the batch", False),             # the rest of a number cut at its point
    ("row 17,2087745510,Oslo", True),                          # a CSV cell, not a decimal
])
def test_registers_record_compounds_web_paths_clocks_and_decimals_are_not_phone_numbers(text, phone):
    view = canonical_view(text).text
    value = re.findall(r"\+?\d[\d ]*\d", view)[-1]
    assert numbers.phone_in_context(view, view.rindex(value), value) is phone


@pytest.mark.parametrize("text, value, phone", [
    ("rows 1-9199 in March, rows 9200-10450 in April", "9200-10450", False),  # a range rising to a longer bound
    ("final set: 7-5 6-7(3-7) 6-2", "7-5 6-7(3-7) 6-2", False),             # game scores
    ("this week's picks 03 11 19 27 35 44 and 09", "03 11 19 27 35 44", False),  # rising lottery picks
    ("VLAN 110/120/130/140 trunked", "110/120/130/140", False),              # a slashed list
    ("ssh 2201/2202, standby 8801/8802", "2201/2202", False),
    ("Schlüssel 221/804/11739 im Tresor", "804/11739", False),              # a run of slashed numbers
    ("dial 0711/9934512 after nine", "0711/9934512", True),                  # an area code before a slash
    ("logged in at 1702915533 from Lisbon", "1702915533", False),            # "at" a clock
    ("Ltd, VAT Reg. GB 298 7710 45, registered in Wales", "298 7710 45", False),  # a VAT number after its country
    ("BTW-nummer NL 8120 4417 1 B01", "8120 4417 1", False),
    ("ci scriva per la pratica 8812-2023 entro venerdì", "8812-2023", False),  # a case file's number
    ("rack 4 holds 2,600 units of 72-4410-19 until Friday", "72-4410-19", False),  # an article counted in stock
    ("ordered 12 boxes of 0734 551 208 brackets", "0734 551 208", False),
    ("12 boxes of gloves; ring the depot on 0734 551 208", "0734 551 208", True),
    ("fatura com NIF da empresa 509 442 017, pagamento a 60 dias", "509 442 017", False),  # a company's tax number
    ("Bestelling 5521-0087 wordt dinsdag geleverd", "5521-0087", False),       # an order in Dutch
    ("the superseded PN 7731-4410-0652 still ships", "7731-4410-0652", False),  # a part's number
    ("codice PDR 00883100512209 sulla bolletta", "00883100512209", False),      # a gas meter point

    ("call her at 1702915533", "1702915533", True),
])
def test_ranges_scores_lists_and_clocks_are_not_phone_numbers(text, value, phone):
    view = canonical_view(text).text
    assert numbers.phone_in_context(view, view.index(value), value) is phone


def test_an_area_code_written_before_a_slash_is_a_phone_number_also_glued_to_its_label():
    assert _found(numbers.phones, "Tel.0711/9934512Fax0711/9934513") == [
        ("PHONE_NUMBER", "0711/9934512", numbers.LIKELY), ("PHONE_NUMBER", "0711/9934513", numbers.LIKELY)]
    assert _found(numbers.phones, "Zentrale 0711/9934512") == [("PHONE_NUMBER", "0711/9934512", numbers.UNCERTAIN)]
    assert _found(numbers.phones, "Quote 3.0711/99345 und 01/2023") == []


@pytest.mark.parametrize("text, phone", [
    ("Mobile No.: 050 123 4567   Alt. No.: +966 11 234 5678", True),  # "No." names no business number
    ("No. +44 20 7946 0958 after six", True),
    ("Order No.: +966 11 234 5678", False),
    ("ticket # +1 415 555 0132", False),
])
def test_a_number_word_alone_does_not_make_an_international_number_a_business_one(text, phone):
    view = canonical_view(text).text
    value = re.search(r"\+[\d ]*\d", view).group(0)
    assert numbers.phone_in_context(view, view.index(value), value) is phone


def test_cards_certain_by_check_digit_uncertain_when_mistyped_and_ignored_when_ungrouped_and_unannounced():
    assert _found(payments.cards, "paid with 4111 1111 1111 1111") == [
        ("CREDIT_CARD", "4111 1111 1111 1111", numbers.CERTAIN)]
    assert _found(payments.cards, "it was 4111 1111 1111 1112") == [
        ("CREDIT_CARD", "4111 1111 1111 1112", numbers.UNCERTAIN)]
    assert _found(payments.cards, "visa 4111111111111112") == [("CREDIT_CARD", "4111111111111112", numbers.UNCERTAIN)]
    assert _found(payments.cards, "reference 4111111111111112") == []
    assert _found(payments.cards, "use 4111111111111112 again") == [
        ("CREDIT_CARD", "4111111111111112", numbers.UNCERTAIN)]  # a card's network and length: masked


def test_a_barcode_and_a_number_a_nearer_business_word_names_are_not_cards():
    assert _found(payments.cards, "GTIN 5012345678900 on the carton") == []
    assert _found(payments.cards, "restock 4012345678901 shelves") == []        # EAN-13: its check right, Luhn wrong
    assert _found(payments.cards, "card 4012345678901 declined") == [
        ("CREDIT_CARD", "4012345678901", numbers.UNCERTAIN)]                   # announced as a card: still masked
    assert _found(payments.cards, 'card: "on file", exp 09/29, order id 4417620953381204') == []
    assert _found(payments.cards, "card exp 09/29 order 4111 1111 1111 1111") == [
        ("CREDIT_CARD", "4111 1111 1111 1111", numbers.CERTAIN)]              # a valid card after a card word stays
    assert _found(payments.cards, "Referenz 4417 8200 1955 2311") == []
    assert _found(payments.cards, "customs declaration 5402 2025 1187 3306 filed") == []


def test_an_iban_with_a_wrong_check_digit_is_uncertain_and_an_unknown_country_is_not_an_iban():
    assert _found(ibans.ibans, "IBAN DE89 3704 0044 0532 0130 01") == [
        ("IBAN_CODE", "de89 3704 0044 0532 0130 01", numbers.UNCERTAIN)]
    assert _found(ibans.ibans, "reference RF18 5390 0754 7034") == []


def test_an_iban_one_character_short_is_uncertain_and_a_valid_one_is_certain_whole_or_grouped():
    assert _found(ibans.ibans, "IBAN DE89 3704 0044 0532 0130 0 please") == [
        ("IBAN_CODE", "de89 3704 0044 0532 0130 0", numbers.UNCERTAIN)]
    assert _found(ibans.ibans, "to GB82-WEST-1234-5698-7654-32 now") == [
        ("IBAN_CODE", "gb82-west-1234-5698-7654-32", numbers.CERTAIN)]
    assert _found(ibans.ibans, "to GB82WEST12345698765432 now") == [
        ("IBAN_CODE", "gb82west12345698765432", numbers.CERTAIN)]
    assert _found(ibans.ibans, "DE89 3704 0044 0532 0130 0012 3456") == [
        ("IBAN_CODE", "de89 3704 0044 0532 0130 0012 3456", numbers.UNCERTAIN)]  # 30 characters: mistyped
    assert _found(ibans.ibans, "paid into MU17 BOMM 0101 1010 3030 0200 000M UR today") == [
        ("IBAN_CODE", "mu17 Bomm 0101 1010 3030 0200 000m ur", numbers.CERTAIN)]  # the currency ends it
    assert _found(ibans.ibans, "account SE42 2291 4773 0490 3914 1052 and NO02 4462 7727 218 are hers") == [
        ("IBAN_CODE", "se42 2291 4773 0490 3914 1052", numbers.CERTAIN),
        ("IBAN_CODE", "no02 4462 7727 218", numbers.CERTAIN)]


def test_uuids_and_hex_digests_are_neither_ibans_nor_wallets():
    rng = random.Random(20261201)
    for _ in range(20_000):
        value = uuid.UUID(int=rng.getrandbits(128), version=4)
        texts = [f"Request {value} failed", f"the canary-{value.hex} came back"]
        texts += [f"id {value.hex[:n]} ok" for n in (16, 20, 24) if not value.hex[4:n].isdigit()]
        for text in texts:
            assert ibans.ibans(text) == [] and payments.wallets(text) == [], text
    assert ibans.ibans("request ae34be4a-2025-4aef-8a88-e536acacfbb9 failed") == []
    # Digits only after "be52": a Belgian IBAN with a wrong check digit for all anyone can tell.
    assert _found(ibans.ibans, "id be52905859914328 ok") == [("IBAN_CODE", "be52905859914328", numbers.UNCERTAIN)]
    assert _found(payments.wallets, "tip jar 1BoatSLRHtKNngkdXEeobR76b53LETtpyT thanks") == [
        ("CRYPTO", "1boatslrhtknngkdxeeobr76b53lettpyt", numbers.LIKELY)]
    assert ibans.ibans("request ae34be4a-2025-4aef-8a88-e536acacfbb9 failed") == []


@pytest.mark.parametrize("text, value, kind", [
    ("NHS number 943 476 5919", "943 476 5919", "NATIONAL_ID"),
    ("mi DNI es 48392017-V y el pasaporte", "48392017-v", "NATIONAL_ID"),
    ("NI number: AB 12 34 56 C today", "ab 12 34 56 c", "NATIONAL_ID"),
    ("Passport (DE): C7RT1WN94 for", "c7rt1wn94", "NATIONAL_ID"),
    ("SSN: 287 65 1043", "287 65 1043", "US_SSN"),
    ("Personnummer till försäkringen: 19850312-1234.", "19850312-1234", "NATIONAL_ID"),   # starts with a birth date
    ("Nambari ya kitambulisho: 23456789", "23456789", "NATIONAL_ID"),                       # Swahili
    ("Passport no. on file: A12345678.", "a12345678", "NATIONAL_ID"),                       # past the abbreviation
])
def test_an_identifier_announced_by_its_name_is_found_in_many_languages(text, value, kind):
    assert (kind, value, numbers.NAMED) in [(k, v.lower(), s) for k, v, s in _found(identifiers.named_ids, text)]


@pytest.mark.parametrize("text", [
    "CUIT 30-71184220-4 (inmobiliaria), Ley 27.551",                        # a legal entity's CUIT
    "Olá, a encomenda foi faturada (NIF 503 504 564)",                      # a Portuguese company's NIF
    "Steuernummer 21/815/08150 (Betrieb), Festsetzung unter Vorbehalt",     # a business's tax number
    "invalid NI number format, expected AA999999A",                         # a format's mask
    "SSN format 999-99-9999 only",
    "declined amount=2318.40 code=05 rrn=412210448817",                     # a payment's retrieval reference
])
def test_company_tax_numbers_format_masks_and_payment_references_are_no_personal_identifier(text):
    assert _found(identifiers.named_ids, text) == []


@pytest.mark.parametrize("text, value", [
    ("CUIT 20-31184220-4 del inquilino", "20-31184220-4"),
    ("NIF 245 123 456 da inquilina", "245 123 456"),
    ("주민등록번호 RRN 880314-2184517", "880314-2184517"),
])
def test_a_person_s_cuit_nif_and_resident_number_stay_identifiers(text, value):
    assert value in [v for _, v, _ in _found(identifiers.named_ids, text)]


def test_wallets_by_shape_and_an_ipv6_address_written_with_a_port():
    assert _found(payments.wallets, "send to 0x71c9a4e3b2d06f58e1a9c7b34d20f6e8a5c19b3d") == [
        ("CRYPTO", "0x71c9a4e3b2d06f58e1a9c7b34d20f6e8a5c19b3d", numbers.CERTAIN)]
    assert _found(networks.ipv6_with_port, "from 2001:db8:4006:812::200e:44321 at") == [
        ("IP_ADDRESS", "2001:db8:4006:812::200e", numbers.LIKELY)]


@pytest.mark.parametrize("text, value", [
    ("Ship it to 12 Elm St, Somerville, MA 02143 not the office", "12 elm St, Somerville, Ma 02143"),
    ("Ewa, ul. Piotrkowska 120 lok. 4, 90-006 Łódź", "ul. Piotrkowska 120 lok. 4, 90-006 Łódź"),
    ("Flat 4, 27 Hollybush Lane, Leeds LS6 2QJ", "Flat 4, 27 Hollybush lane, Leeds ls6 2qj"),
    ("Postfach 210, 3000 Bern 7", "Postfach 210, 3000 Bern 7"),
    ("3-12-8 Jingumae, Shibuya-ku, Tokyo 150-0001", "3-12-8 Jingumae, Shibuya-Ku, Tokyo 150-0001"),
    ("Adresse: Hauptgasse 12, 4500 Solothurn", "Hauptgasse 12, 4500 Solothurn"),
    ("Endereço: Rua das Laranjeiras, 415, 22240-003 Rio", "Rua das Laranjeiras, 415, 22240-003 Rio"),
    ("to 14 ter, avenue Foch, 69006 Lyon by Monday", "14 ter, avenue Foch, 69006 Lyon"),
    ("Casella Postale 88, 40100 Bologna", "Casella Postale 88, 40100 Bologna"),
    ("Apt 302, 15 Sejong-daero, Jongno-gu, Seoul 03172", "Apt 302, 15 Sejong-daero, Jongno-Gu, Seoul 03172"),
    ("〒530-0001 Osaka-shi, Kita-ku, Umeda 3-1-1", "〒530-0001 Osaka-Shi, Kita-Ku, Umeda 3-1-1"),
    ("PO BOX 512, STN B, OTTAWA ON K1P 5P6", "PO BOX 512, STN B, OTTAWA ON K1P 5P6"),
    ("Contact: Dana Reyes / Unit 9, 40 Quay Street, Galway", "Unit 9, 40 Quay Street, Galway"),
    ("mail goes to Private Bag X17, Hatfield 0028", "Private Bag X17, Hatfield 0028"),
    ("Grange Farm, Little Snoring NR21 0HU", "Grange Farm, Little Snoring NR21 0HU"),
    ("Deliver to Hauptstraße 5, 04109 Leipzig, Kundennummer 55209", "Hauptstraße 5, 04109 Leipzig"),
    ("Block 7, Sector 5, Dwarka, New Delhi 110075", "Block 7, Sector 5, Dwarka, New Delhi 110075"),
    ("Send to 9 Oak Ave / Portland OR 97215-3301", "9 Oak Ave / Portland OR 97215-3301"),
    ("He lives at 88 Bay St., Staten Island, New York 10301-2223", "88 Bay St., Staten Island, New York 10301-2223"),
    ("Adresse : Case postale 45, 2001 Neuchâtel", "Case postale 45, 2001 Neuchâtel"),  # "case": a box's word
    ("Address: Unit 4, The Parcel Yard, 3 King St, Leeds LS1 2HH", "Unit 4, The Parcel Yard, 3 King St, Leeds LS1 2HH"),
    ("send the invoice to 4417 Linden Ave N, Seattle, WA 98103", "4417 Linden Ave N, Seattle, WA 98103"),  # "to"
    ("Doors 19:00, support act 19:45, Flat 2, 9 Mill Road, Ely CB7 4DD", "Flat 2, 9 Mill Road, Ely CB7 4DD"),
    ("Adres: Keizersgracht 318, 1016 EZ Amsterdam", "Keizersgracht 318, 1016 EZ Amsterdam"),
    ("new address is Valiasr St, no. 2134, unit 6, Tehran 1967913561.",
     "Valiasr St, no. 2134, unit 6, Tehran 1967913561"),
    ("she moved to Church Road, Bristol BS4 1AA.", "Church Road, Bristol BS4 1AA"),  # a place after it
    ("kosten € 62,40 per half jaar, Dorpsstraat 12, 1234 AB Utrecht", "Dorpsstraat 12, 1234 AB Utrecht"),  # a fraction
    ("Harç 1.450 TL, kart ücreti 310 TL, Atatürk Caddesi 12, Ankara", "Atatürk Caddesi 12, Ankara"),  # amounts
    ("seats 4-5 are ours; post them to Flat 2, 9 Mill Road, Ely CB7 4DD", "Flat 2, 9 Mill Road, Ely CB7 4DD"),
    ("I live at Seat 4, 12 Harbour Road, Cork", "12 Harbour Road, Cork"),  # seats never hide a street line
    ("boarding pass printed, send it to Kongens gate 22, Oslo", "Kongens gate 22, Oslo"),  # a street after all
    ("deliver to Church Road, flat 3 by noon", "Church Road, flat 3"),     # a street in English words and a flat
])
def test_postal_addresses_from_the_street_line_to_the_postcode(text, value):
    assert [v.lower() for _, v, _ in _found(addresses.addresses, text)] == [value.lower()]


@pytest.mark.parametrize("text", [
    "It is a 5 hour drive to the coast.", "We walked 3 miles along the river walk.",
    "Version 10.0.22631.3296 of Windows 11 fixes the driver.", "Run 2024-117, sample count 96, plate layout B.",
    "Keep left on route 9 north for an hour.", "The gas meter reading 103344 units, previous 102980 units.",
    "She sells flowers on Mill Lane, lovely woman.", "Crate 2 of 40 arrived dented.",
    "Bitcoin block 830,000 was mined in April.",
    "Expose only port 7443 via Nginx to the outside.", "Expect 45 mph winds and heavy rain tonight.",
    "The uplink negotiated 2500 Mbps, full duplex.", "Invoices for the 2025-03 period close on Monday.",
    "Our insurer renewed policy 71-204-5518 in March.",
    "Hail could bring 40 knots gusts.",
    "Block 845120 hash 00000000000000000001f3, 2,981 txs, 1.52 MB.", "Admin panel 8080, 9100 Kibana, 5601 Logstash.",
    "Their 2017 Peruvian lineup, £300 each.", "Kargo numaranız 55130, yarın teslim.",
    "We close the books, 28 Feb – 3 Mar, no deploys.", "Meet by Baker Street tube, exit 3.",
    "They stole it on Regent Street, approx £90 of perfume", "Bumped to node 20.11.1 and Vue 3.4.2, lint green.",
    "Regional 4411 Leipzig, Auftragsnummer 5520918834, Gleis 4.",
    "Filiale Lindenmarkt 2291 · Kasse 3 · Bon 1187", "Vitals: HR 92, RR 18, BP 128/84, SpO2 96%.",
    "Expect delays on Route 9, M25 and A14 tonight.", "Target GJ 1214 (Ophiuchus): RA 17h 15m, Dec +04° 57′.",
    "Laser at 1310 nm, 25 Gbit/s per lane.", "CAS numbers: acetone 67-64-1, toluene 108-88-3.",
    "the wheels for cp39 and cp310 built fine",
    "$40 per walk, leash on the hook", "meet outside gate 7 at noon", "Companies House no. 11829304 filed",
    "WMS: pick list pl-0412-7731 released, 12 lines, zone C, wave 3",      # a street's type glued to a code
    "Uw afspraak is op 12-03-2025 om 9:10, loket 4.",                      # a date, not a block address
    "Kenmerk 2025/HT/2291, beschikking van 12-10-2025, bedrag 90 euro",
    "Betreft: aanvraag zorgtoeslag, dossiernummer 552-0917.",              # a record's compound before a number
    "#51873 Lastschrift aktiviert, erste Abbuchung morgen",                # a record's number after "#"
    "Anmeldung 2026 im Sekretariat, Raum 0.14, 8–12 Uhr",                  # German streets are named first
    "Bescheid für 2024 über Grundsteuer und Abwasser, Steuernummer 12/345/67890",  # a year before a function word
    "disk 500g, inodes 3,221,904 / 32,768,000, iops p99 1840",             # an Eircode's own part has a letter
    "Container CMAU 310447 2, seal 7781204, gross 18.2 t, sailed from Antwerp on 2025-02-03",  # ISO 6346
    "Vendor codes: CAGE 3XYZ1, NAICS 334111, DUNS 08-441-2290",            # company registers
    "MwSt 7% 3,21 Bon-Nr. 7716 Kasse 4 Filiale 0212",                      # a record's compound before it
    "Train ICE 1517 Berlin to Hamburg, coach 9",                            # a record's word, then its issuer
    "Flight LH 2417 MUC-WAW on 18 Sep, seat 14C",
    "Ferry 9F 3310 Dover Eastern Docks 06:15, cabin 4",                     # an operator's letter and digit
    "Flight KL 1002 boards from Schiphol gate 7, departs 09:40",            # a gate at an airport
    "Referência 552 118 904, entidade 11249, montante 32,15 €, pagável até 15/08",  # an amount, its sign after it
    "Sipariş 2025/118, 240 adet, birim fiyat 9,80 USD, teslim Mersin",       # pieces, and a number cut from its unit
    "park on the ring road behind building 12 after six",                   # "behind" is prose
    "Train 2417 Leeds St Helens 11:02",
    "Summe 2 400 Kuna, rok 15 dana",                                        # an amount in its currency
    "her phone was snatched on Sukhumvit Soi 11; police ref tp-2291",       # a prefix and a number alone
    "Le train part du quai 11 et arrive à Lyon à 9 h 38",                  # a platform
    "Log pokazuje timeout na porcie 8080 po 30000 ms, commit d41d8cd",      # no town after a Dutch postcode
    "Terminal 60012298, mid 4400018821, batch 118, STAN 004471, RRN 407112884120",  # records' fields
    "our five-a-side lot finished 3rd, fourth place went to 11 others",    # a street's type in English words
    "compaction freed 2,310 old row groups across 84 files",
    "Gig night: block 204, row C, seats 31-32, doors 18:30",               # seats in a hall
    "Beslut 2291-25: ansökan prövas av nämnden för bygglov inom 6–8 veckor.",  # Swedish "av" is no avenue
    "Ärende 4410-318, handläggs av enheten för tillstånd. Svar inom 3–5 veckor.",
    "Deniz manzaralı oda 1204 için rezervasyon onaylandı, toplam 14.500 TL.",  # Turkish "for" after a room
])
def test_prose_with_numbers_is_not_an_address(text):
    assert _found(addresses.addresses, text) == []


@pytest.mark.parametrize("text, value", [
    ("Hi Amara, thanks for the update.", "Amara"),
    ("my son's name is Keoni and he is five", "Keoni"),
    ("Regards, Tomasz", "Tomasz"),
    ("Name: Zeynep Çelik | City: Istanbul", "Zeynep Çelik"),
    ("thanks Ben", "Ben"),
    ("Ik heet Daan van den Berg.", "Daan van den Berg"),                # "my name is" of other languages
    ("Mi hermana se llama Lucía Fernández.", "Lucía Fernández"),
    ("Visita di controllo dal dott. Bellandi, ore 16:45", "Bellandi"),  # an Italian title
])
def test_names_announced_by_a_greeting_sign_off_or_field(text, value):
    assert value.lower() in [v.lower() for _, v, _ in _found(names.cued_names, text)]


def test_a_full_name_after_the_romance_preposition_a_is_a_name_but_not_after_the_article():
    assert [v for _, v, _ in _found(names.known_names, "Bonifico intestato a Giulia Romano")] == ["Giulia Romano"]
    assert _found(names.known_names, "and a Giulia Romano lookalike") == []


def _completed(text, half, not_names=frozenset()):
    view = canonical_view(text).text
    start = view.lower().index(half.lower())
    start, end = name_neighbours.completed(view, start, start + len(half), not_names)
    return text[start:end]


@pytest.mark.parametrize("text, half, whole", [
    ("Name: Grace Young Company: Young & King LLP", "Grace", "Grace Young"),
    ("Thank Precious Dimaculangan for covering my shift", "Dimaculangan", "Precious Dimaculangan"),
    ("PACKAGE FOR ROSE MCALLISTER LEFT AT THE DOOR", "MCALLISTER", "ROSE MCALLISTER"),
    ("name on card M J Castellanos", "Castellanos", "M J Castellanos"),
    ("Hee-jin Park from Seoul office wants Korean localisation", "Hee-jin", "Hee-jin Park"),
    ("Ask Tom Kettering about the lease", "Tom", "Tom Kettering"),
    ("Aditi Rao joined the call late", "Rao", "Aditi Rao"),
])
def test_a_person_found_by_half_grows_over_the_rest_of_the_name(text, half, whole):
    assert _completed(text, half) == whole


@pytest.mark.parametrize("text, half", [
    ("Mark Taylor lives at 221b Baker Street now", "Baker"),
    ("Ask Maria about the deployment", "Maria"),
    ("User's parrot is called Captain", "Captain"),
    ("I told Tom the news", "Tom"),
    ("Lina and I will send the draft", "Lina"),
    ("plan b Maria said yes", "Maria"),
    ("U Maria said yes", "Maria"),
])
def test_a_person_does_not_grow_over_common_words_streets_owners_pronouns_or_lone_letters(text, half):
    assert _completed(text, half) == half


def test_a_rare_word_names_somebody_after_a_relation_only_beside_a_name():
    assert "jericho mendoza" in [v.lower() for _, v, _ in _found(names.cued_names, "my nanny Jericho Mendoza starts Monday")]
    assert _found(names.cued_names, "the patient thrombus was removed") == []


def test_every_cue_is_read_whatever_case_folding_matched_it():
    assert any("zeynep" in v.lower() for _, v, _ in _found(names.cued_names, "adi Zeynep, soyadı Kaya"))
    for cue in sorted(names.CUE_WORDS):
        for written in {cue.upper(), cue.title(), cue.replace("ı", "i"), cue.replace("i", "ı")}:
            names.cued_names(f"{written} Zeynep Kaya")


@pytest.mark.parametrize("text, found", [
    ("Crystal from the finance team approved the refund", ["Crystal"]),
    ("can you ask Ruby in QA to rerun it", ["Ruby"]),
    ("Julia said the invoice was paid twice", ["Julia"]),
    ("We rewrote the solver in Julia from scratch", []),
    ("Ruby in production is slower than Go", []),
    ("The Crystal at the front desk is a vase", []),
])
def test_a_name_that_is_also_a_language_is_a_person_where_only_a_person_fits(text, found):
    things = frozenset({"crystal", "ruby", "julia", "go"})
    assert [v for _, v, _ in _found(lambda view: names.people_named_like_things(view, things), text)] == found


def test_a_person_does_not_grow_over_the_words_it_is_told_are_no_names():
    assert _completed("Call Patel Friday at 10", "Patel", frozenset({"friday"})) == "Patel"
    assert _completed("Tell Priya Kubernetes is down", "Priya", frozenset({"kubernetes"})) == "Priya"
    assert _completed("Tell Priya Kubernetes is down", "Priya") == "Priya Kubernetes"


@pytest.mark.parametrize("text, word, titled", [
    ("Ms. Haskell from the landlord's office called", "Haskell", True),
    ("message for Ms. Villanueva, it's Ramon", "Villanueva", True),
    ("Timeout is 500 ms Kafka consumers lag", "Kafka", False),
    ("Ship it to 12 Oak Dr. Springfield", "Springfield", False),
    ("the Kafka consumers lag", "Kafka", False),
])
def test_a_title_names_a_person_unless_a_number_makes_it_a_unit_or_a_street(text, word, titled):
    view = canonical_view(text).text
    assert names.after_title(view, view.lower().index(word.lower())) is titled


def test_known_names_of_many_cultures_but_not_places_or_common_words_after_an_article():
    found = [v for _, v, _ in _found(names.known_names, "I met Wanjiru Kamau and Sigrid Lindqvist in Florence.")]
    assert found == ["Wanjiru Kamau", "Sigrid Lindqvist"]
    assert _found(names.known_names, "The house goes to the charity.") == []


@pytest.mark.parametrize("text, value, phone", [
    ("GC pause 2024-03-11T08:42:17 +0100: 41729.883: [Eden]", "41729.883", False),  # seconds since start
    ("load avg 1.42 0.98 0.77 on the box", "1.42 0.98 0.77", False),
    ("firmware 1.20240424 is installed", "1.20240424", False),
    ('"created_at":"Mon Mar 11 08:42:17 +0000 2024"', "+0000 2024", False),  # a UTC offset and a year
    ("Dentist 21.03.2024 10:45 in room 2", "21.03.2024 10", False),
    ("-54.63,4363.19 / 2024-03-02,GEHALT", "19 / 2024-03-02", False),
    ("ifIndex=10104 uptime=447182931", "447182931", False),         # a log field's value
    ("lead phone=4155550132 source=web", "4155550132", True),      # unless a phone word names the field
    ("call 1.800.555.0199 after nine", "1.800.555.0199", True),    # dots between groups
    ("my number is 06.12.34.56.78", "06.12.34.56.78", True),
    ("tel. 089.1234567 (office)", "089.1234567", True),              # one dot, a phone word before it
    ("reach me on +33 6 12 34 56 78", "+33 6 12 34 56 78", True),
])
def test_decimals_utc_offsets_dates_and_log_fields_are_not_phone_numbers_and_dotted_numbers_still_are(text, value, phone):
    view = canonical_view(text).text
    assert numbers.phone_in_context(view, view.lower().index(value.lower()), value) is phone


def test_hundreds_said_in_one_word_in_italian_spanish_and_portuguese():
    for text, digits in (("al trecentoquaranta, uno due uno, otto otto quattro sette", "3401218847"),
                         ("seiscientos doce, trescientos cuarenta y cinco, sesenta y siete", "61234567"),
                         ("quinhentos e doze, trezentos e quarenta, vinte e dois", "51234022"),
                         ("novecento, dodici, trentatre", "9001233")):
        assert spoken.spoken_digits(text)[0] == digits


def test_a_business_word_before_the_end_of_a_question_does_not_name_the_card_after_it():
    text = "can you add it to the club account? 4539 1488 0343 6467 exp 11/28"
    found = [(kind, value) for kind, value, _ in _found(payments.cards, text)]
    assert found == [("CREDIT_CARD", "4539 1488 0343 6467")]
    assert _found(payments.cards, "club account 4539 1488 0343 6467") == []


def test_a_date_after_a_word_that_is_also_an_ids_name_is_no_id():
    assert _found(identifiers.named_ids, "certyfikat wygasa za 5 dni (2025-06-30), odnowienie jutro") == []
    assert [v.lower() for _, v, _ in _found(identifiers.named_ids, "mi DNI es 48392017V")] == ["48392017v"]


def test_treble_repeats_a_digit_in_a_number_read_out():
    assert spoken.spoken_digits("oh seven seven, treble four, one two three")[0] == "077444123"


@pytest.mark.parametrize("text, value", [
    ("il suo indirizzo corretto è MStKRC9NF92gng4qo6uHFSbef2TUSt5gnv", "MStKRC9NF92gng4qo6uHFSbef2TUSt5gnv"),
    ("dash addr XvZ6rhR2AtHJ9u1SWafP7uaa9Rjbh6QNTp in case", "XvZ6rhR2AtHJ9u1SWafP7uaa9Rjbh6QNTp"),
    ("USDT on Tron: TrBuS9zNybmQrUqCSEoC5tNLX71yPhzg4F", "TrBuS9zNybmQrUqCSEoC5tNLX71yPhzg4F"),
])
def test_litecoin_dash_and_tron_addresses_after_an_address_or_coin_word_are_wallets(text, value):
    assert [v.lower() for _, v, _ in _found(payments.wallets, text)] == [value.lower()]


def test_an_escaped_line_break_reads_as_whitespace_but_not_inside_a_windows_path():
    assert canonical_view("Best,\\nMarc").text == "Best, Marc"
    assert canonical_view("Team\\n+1 (888) 555-0123").text.startswith("Team +1")
    assert canonical_view("C:\\Users\\nadia\\notes").text.lower() == "c:\\users\\nadia\\notes"
    view = canonical_view("Best,\\nMarc")
    assert view.to_original(6, 10) == (7, 11)
    assert canonical_view("C:\\nadia\\notes.txt").text.lower() == "c:\\nadia\\notes.txt"  # after a drive's letter
    assert canonical_view("home\\user\\nadia").text.lower() == "home\\user\\nadia"      # a path's folder
    assert canonical_view("Best,\\nMarc\\nSenior PM").text == "Best, Marc senior pm"      # escapes are no path
    assert canonical_view("amount,order\\nbc1q").text.lower() == "amount,order bc1q"


def test_a_card_read_out_in_words_after_a_card_word_is_a_card():
    text = "Agent: I'll read back the card: five three seven four, one two one five, four seven two eight, zero three."
    assert [label for label, _, _ in _found(payments.cards, text)] == ["CREDIT_CARD"]
    assert _found(payments.cards, "the code is five three seven four, one two one five, four seven two eight") == []


def test_a_mistyped_bech32_address_after_a_wallet_word_is_a_wallet_and_elsewhere_nothing():
    value = "bc1qk4m7x2n9p0d8f5r3t6w1y8c2v4b7n9h0j3l5q8"
    assert [v.lower() for _, v, _ in _found(payments.wallets, f"wallet,asset\\n{value},BTC")] == [value]
    assert _found(payments.wallets, f"commit {value} merged") == []


def test_the_last_two_items_of_a_list_of_people_are_two_items():
    view = canonical_view("Guests so far: Abena, Kojo, Esi and Nana. Anyone else?").text
    people = [(view.index(name), view.index(name) + len(name)) for name in ("Kojo", "Esi", "Nana")]
    found = name_neighbours.aliases_and_speakers(view, people, frozenset(), foreign=False)
    assert [view[hit.start:hit.end] for hit in found] == ["Abena"]


def test_speakers_of_a_timed_transcript_with_hyphenated_given_names_are_people():
    view = canonical_view("[00:01:02] Hana: shall we start?\n[00:01:05] Min-ho: yes, go ahead").text
    people = [(view.index("Hana"), view.index("Hana") + 4)]
    found = name_neighbours.aliases_and_speakers(view, people, frozenset(), foreign=False)
    assert [view[hit.start:hit.end].lower() for hit in found] == ["min-ho"]


def test_a_turn_label_that_is_no_name_keeps_the_others_unread():
    view = canonical_view("[00:01:02] Hana: shall we start?\n[00:01:05] Follow-up: next week").text
    people = [(view.index("Hana"), view.index("Hana") + 4)]
    assert name_neighbours.aliases_and_speakers(view, people, frozenset(), foreign=False) == []
