"""Words the name model takes for names that their surroundings show are no one's
(``ibex_worker.pii.not_names``)."""

from __future__ import annotations

import pytest

from ibex_worker.pii.not_names import not_a_name


def _at(text: str, word: str) -> bool:
    start = text.index(word)
    return not_a_name(text, start, start + len(word))


@pytest.mark.parametrize("text, word", [
    ("dates as YYYY-MM-DD, currency EUR", "YYYY-MM-DD"),
    ("Format: dd.mm.yyyy hh:mm", "dd.mm.yyyy"),
    ("Set TZ=America/Sao_Paulo on the container", "Paulo"),
    ("timezone Europe/Isle_of_Man", "Man"),
    ("Öffnungszeiten: Mo–Fr 08:00–18:00", "Mo"),
    ("Orari: lun–ven 8:30–19:30", "lun"),
    ("Horario: lun a vie 9-14", "lun"),
    ("Geöffnet Mo. - Fr. 9 bis 17 Uhr", "Fr"),
])
def test_masks_time_zones_and_weekday_ranges_are_not_names(text, word):
    assert _at(text, word) is True


@pytest.mark.parametrize("text, word", [
    ("Mo said the shop opens at nine", "Mo"),
    ("ask Paulo about the São Paulo office", "Paulo"),
    ("Sa 09:00-13:00 with Dom on duty", "Dom"),
    ("Maddy will sign", "Maddy"),
])
def test_names_in_other_places_stay_names(text, word):
    assert _at(text, word) is False
