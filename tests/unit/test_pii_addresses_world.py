"""Postal addresses as people in many countries write them: a house's name or a flat before the
street line, the door's number after the street's name, forms without a street's type, and
scripts other than Latin; beside prose that only looks like them."""

from __future__ import annotations

import pytest

from ibex_worker.pii import addresses
from ibex_worker.pii.casing import canonical_view


def _values(text: str) -> list[str]:
    view = canonical_view(text).text
    return [view[hit.start:hit.end].lower() for hit in addresses.addresses(view)]


@pytest.mark.parametrize("text, value", [
    # a house's name or a flat before the street line
    ("Parcel for The Willows, 14 Station Road; ring twice", "the willows, 14 station road"),
    ("the Pflegeheim Haus Sonnenhang, Am Lindenberg 4, 72074 Tübingen.", "haus sonnenhang, am lindenberg 4, 72074 tübingen"),
    ("Lieferung an Wohnung 3, Kastanienweg 8, 04105 Leipzig bitte", "wohnung 3, kastanienweg 8, 04105 leipzig"),
    ("we're in unit 6/31 ocean st bondi 2026 till june", "unit 6/31 ocean st bondi 2026"),
    ("keys under the mat, unit 3 / 17 banksia st newtown", "unit 3 / 17 banksia st newtown"),
    ("mum's at rosewood manor room 12 440 n main st tulsa ok", "rosewood manor room 12 440 n main st tulsa ok"),
    ("she's in 7c. 7c, 9 Harbour Drive I mean", "7c, 9 harbour drive"),
    ("the spare key is at house 14 ngong road", "house 14 ngong road"),
    # the door's number after the street's name
    ("and it's Cedar Grove no. 41, green door", "cedar grove no. 41"),
    ("moved to Merrion Road number 12, Dublin 4, the corner house", "merrion road number 12, dublin 4"),
    ("Office: Moi Avenue 18, Nairobi", "moi avenue 18, nairobi"),
    # no street's type: a flat or floor after the door's number
    ("Enviar a Los Aromos 2231, depto 56, Providencia, Santiago.", "los aromos 2231, depto 56, providencia, santiago"),
    ("nos vemos en castelli 3120 4° c, belgrano", "castelli 3120 4° c, belgrano"),
    ("stanujem u Vlaška 44, 2. kat, zagreb", "vlaška 44, 2. kat, zagreb"),
    ("yo its 2215 n damen apt 3, side door", "2215 n damen apt 3"),
    # Turkish neighbourhoods, Russian, Arabic, Hindi, Bengali, Thai and Dutch forms
    ("Adres: Fenerbahçe Mah. Kalamış Cad. Lale Sok. No: 9 D: 4, Kadıköy", "fenerbahçe mah. kalamış cad. lale sok. no: 9 d: 4, kadıköy"),
    ("Доставка: г. Казань, ул. Баумана, д. 12, кв. 7", "г. казань, ул. баумана, д. 12, кв. 7"),
    ("العنوان: حي النخيل، شارع العليا، مبنى 318، الرياض 12244", "حي النخيل، شارع العليا، مبنى 318، الرياض 12244"),
    ("पता: मकान नं. 12, गली नं. 7, राजा पार्क, जयपुर 302004", "मकान नं. 12, गली नं. 7, राजा पार्क, जयपुर 302004"),
    ("ঠিকানা: বাড়ি ২২, রোড ১১, ধানমন্ডি, ঢাকা ১২০৯", "বাড়ি ২২, রোড ১১, ধানমন্ডি, ঢাকা ১২০৯"),
    ("Send to 45/7 Moo 2, Tambon Suthep, Mueang, Chiang Mai 50200", "45/7 moo 2, tambon suthep, mueang, chiang mai 50200"),
    ("Bezorgen op Tweede Jan Steenstraat 40, 1073 VP Amsterdam.", "tweede jan steenstraat 40, 1073 vp amsterdam"),
    ("Deliver to Villa 27, Palm Crescent 3, Jumeirah, Dubai; gate code at the guard", "villa 27, palm crescent 3, jumeirah, dubai"),
    ("Ship to B-17, Sector 22, Noida, UP 201301 before Friday", "b-17, sector 22, noida, up 201301"),
    ("Office: Level 4, 21 Ward 6, District 1, Ho Chi Minh City", "level 4, 21 ward 6, district 1, ho chi minh city"),
    ("العنوان: شقة ٤، عمارة ٩، شارع التحرير، الدقي", "شقة ٤، عمارة ٩، شارع التحرير، الدقي"),
    ("آدرس: تهران، خیابان انقلاب، کوچه بهار، پلاک ۸، واحد ۲", "خیابان انقلاب، کوچه بهار، پلاک ۸، واحد ۲"),
    ("ส่งที่ 12/34 ซอยสุขุมวิท 49 แขวงคลองตันเหนือ เขตวัฒนา กรุงเทพฯ 10110", "12/34 ซอยสุขุมวิท 49"),
    ("em o so 25 ngo 10 pho hue nhe", "so 25 ngo 10 pho hue"),
    ("rumah di perum bumi indah blok d3 no 8 sleman", "blok d3 no 8 sleman"),
    ("Παράδοση: Ερμού 45, Αθήνα 105 63", "ερμού 45, αθήνα 105 63"),
    ("Adres: Kartal Sanayi Bölgesi 3. Cad. No: 7, Kartal/İstanbul", "kartal sanayi bölgesi 3. cad. no: 7"),
    ("Spedire a Corso Francia 10, 10143 Torino TO entro venerdì", "corso francia 10, 10143 torino to"),
    ("Dad is at Maple Grove Assisted Living, 120 Oak St, Dayton", "maple grove assisted living, 120 oak st, dayton"),
    ("Deliver to Flat 12, Marina Heights, Dubai", "flat 12, marina heights, dubai"),
    ("Mail: P.O. Box CT 1234, Cantonments, Accra", "p.o. box ct 1234, cantonments, accra"),
    ("ik woon nu op Prinsengracht 12bis, Amsterdam", "prinsengracht 12bis, amsterdam"),
    ("Дерибасівській 22, кв 5", "дерибасівській 22, кв 5"),
    ("Encomenda no SQN 212 Bloco D apto 101, Asa Norte, Brasília - DF", "sqn 212 bloco d apto 101, asa norte, brasília - df"),
])
def test_addresses_of_many_countries_are_found_whole(text, value):
    assert any(value in found for found in _values(text))


@pytest.mark.parametrize("text", [
    "sensor 4.2.1.9 meldt een drift van 0,3 °C in koelcel 2",          # a temperature, not a floor
    "Main Street 5 minutes from the station is closed",                 # a distance after a street
    "Court no. 1 hosts the final at 14:00",                             # a tennis court
    "the house 3 of them bought is on the hill",                         # a house with no place
    "Patient moved to ward 6 after surgery, obs stable",                 # a hospital's ward
    "We paid 5890, apt fees included, for the whole trip",               # an amount
    "I moved there last year, then left",                                 # prose before no street
    "He plays in Ligue 1, Paris, since the summer",                     # a league and a city
    "Πύλη 12, πτήση A3 651, επιβίβαση στις 10:20",                        # a gate and a flight
    "Shinkansen Nozomi 21, Tokyo 09:00 → Kyoto 11:15",                  # a train
    "Block 5 of the test suite timed out after 300s",                    # a block of tests
    "Payee ref: deposit flat 2, due 1 March",                            # a flat with no place
    "Reserva 88-120-4471 confirmada: 3 noches",                          # a booking numbered like a block
    "Vol AF 1234 CDG–NCE, départ 09 h 45, porte F32",                    # a flight
    "HSN 998314, IGST 18%",                                              # a tax code
])
def test_look_alikes_of_those_forms_are_no_address(text):
    assert _values(text) == []


def test_a_person_before_a_street_line_stays_a_person():
    assert _values("Ewa, ul. Piotrkowska 120 lok. 4, 90-006 Łódź") == ["ul. piotrkowska 120 lok. 4, 90-006 łódź"]
