"""People named in the structure of machine text: home directories, lists of accounts, SQL rows
whose columns are named, passengers as airlines print them, display names with hyphens."""

from __future__ import annotations

import pytest

from ibex_worker.pii import handles, tables
from ibex_worker.pii.casing import canonical_view


def _names(text: str) -> list[str]:
    view = canonical_view(text).text
    return sorted({view[hit.start:hit.end].lower() for hit in handles.handles(view)})


@pytest.mark.parametrize("text, names", [
    ("Jun 4 08:06:40 ws-22 sudo: ok ; PWD=/home/tgallagher ; USER=root", ["tgallagher"]),
    (r"opened C:\Users\a.moreau\Downloads\report.pdf", ["a.moreau"]),
    ("rsync -a /Users/kobrien/photos backup:/srv", ["kobrien"]),
    ("reviewers:\n  - mkowalski\n  - platform-team\n  - s.tanaka", ["mkowalski", "s.tanaka"]),
    ("INSERT INTO patients (id, first_name, last_name) VALUES (77, 'Amara', 'Okonkwo');", ["amara", "okonkwo"]),
    ("INSERT INTO audit (actor, action) VALUES ('jpetersen', 'login'), ('system', 'vacuum');", ["jpetersen"]),
    ("Pax  Seat\nHALVORSEN/INGRID MS  22A\nOKAFOR/CHIDI MR  22B", ["halvorsen/ingrid", "okafor/chidi"]),
    ("From: Anne-Sophie Lefèvre <asl@example.fr>", ["anne-sophie lefèvre"]),
    ("name,email\nSiobhán O'Brien-Hughes,s@example.ie\n", ["siobhán o'brien-hughes"]),
])
def test_people_in_machine_text_are_found(text, names):
    assert _names(text) == names


@pytest.mark.parametrize("text", [
    "cd /home/ubuntu/app && ls /home/deploy /home/git /home/jenkins/workspace",
    "owners:\n  - platform-team\n  - ubuntu",
    "INSERT INTO products (sku, title) VALUES ('BW-1', 'Blue Widget');",
    "INSERT INTO audit (actor, action) VALUES ('system', 'vacuum');",
    "From: Billing Team <billing@example.com>",
    "the path a/b ms 4 is fine",
])
def test_systems_products_and_teams_are_no_people(text):
    assert _names(text) == []


def test_sql_cells_pair_each_quoted_value_with_its_column():
    text = "INSERT INTO t (a, b, c) VALUES (1, 'x, y', 'it''s'), (2, NULL, 'z');"
    assert [(text[s:e], c) for s, e, c in tables.sql_cells(text)] == [("x, y", "b"), ("it''s", "c"), ("z", "c")]
