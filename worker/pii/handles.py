"""People named by their account's handle: ``user=ingrid.halvorsen``, a ``user`` column holding
``l.bertrand``. Directory services build these from a person's names (given name or initial,
a point, family name), so a handle of that shape after a user's key is that person's name.
And a person's name in a table's column of people's names (``id,name,email`` then
``1042,Lowri Pritchard,...``), which the name model, reading prose, often doubts.
"""

from __future__ import annotations

import re

from ibex_worker.pii import tables
from ibex_worker.pii.lexicon import gazetteer, is_common
from ibex_worker.pii.numbers import LIKELY, Hit

# A key that names an account right before its value ("user=", "username:", "owner=").
_USER_KEY = re.compile(r"(?<![\w])(?:user|username|user_name|login|owner|assignee|author|by|account|uid|"
                       r"requester|reporter|approver)\s*[=:]\s*[\"']?$", re.IGNORECASE)
_USER_COLUMN = re.compile(r"(?:^|_)(?:user|username|login|owner|assignee|author|requester|reporter)(?:$|_)")
_HANDLE = re.compile(r"(?<![\w.@/\\-])(?P<first>[^\W\d_]+)\.(?P<family>[^\W\d_]{2,})(?![\w@]|\.[^\W\d_])")


def handles(text: str) -> list[Hit]:
    return _handles(text) + _name_cells(text)


def _handles(text: str) -> list[Hit]:
    """``given.family`` or ``i.family`` after a user's key or in a user's column, where the
    family name is one the name lists hold and no common word, and the first part is an
    initial or a given name."""
    hits = []
    for match in _HANDLE.finditer(text):
        first, family = match.group("first").lower(), match.group("family").lower()
        if not (len(first) == 1 or "g" in gazetteer().get(first, "")) or family not in gazetteer() \
                or is_common(family):
            continue
        if _USER_KEY.search(text, max(0, match.start() - 24), match.start()) \
                or _USER_COLUMN.search(tables.column_name(text, match.start()) or ""):
            hits.append(Hit("PERSON", match.start(), match.end(), LIKELY))
    return hits


# Columns that hold people's names, in the languages of the corpus (a "name" column also holds
# products and teams: its cells count only when one word is a name the gazetteer knows and no
# other is a common word it does not know).
_NAME_COLUMNS = frozenset("""
name full_name fullname customer_name contact_name first_name firstname last_name lastname given_name surname
family_name nombre apellido apellidos nom prenom prénom naam voornaam achternaam imie imię nazwisko vorname
nachname cognome nome sobrenome ad soyad ad_soyad patient patient_name employee_name cardholder guest_name
passenger attendee recipient
""".split())
_CELL = re.compile(r"(?<=[,;])\s?\"?(?P<value>[^\W\d_][^\W\d_'’\-]*(?: [^\W\d_][^\W\d_'’\-]*){0,3})\"?(?=[,;]|\s|$)")


def _name_cells(text: str) -> list[Hit]:
    hits = []
    for match in _CELL.finditer(text):
        words = match.group("value").lower().split()
        if tables.column_name(text, match.start("value")) in _NAME_COLUMNS \
                and all(word in gazetteer() or not is_common(word) for word in words) \
                and any(word in gazetteer() and not is_common(word) for word in words):
            hits.append(Hit("PERSON", match.start("value"), match.end("value"), LIKELY))
    return hits
