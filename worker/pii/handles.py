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
from ibex_worker.pii.vocab import BRANDS, NOT_A_PERSON

# A key that names an account right before its value ("user=", "username:", "owner="), and where
# logs write the account: "Accepted publickey for ...", "sudo: ...".
_USER_KEY = re.compile(r"(?:(?<![\w])(?:user|username|user_name|login|owner|assignee|author|by|account|uid|"
                       r"requester|reporter|approver|actor|grantee|granted_by|updated_by|created_by|modified_by)"
                       r"[\"']?\s*[=:]\s*[\"']?|(?:publickey|password) for |sudo:\s+)$", re.IGNORECASE)
_USER_COLUMN = re.compile(r"(?:^|_)(?:user|username|login|owner|assignee|author|requester|reporter|actor)(?:$|_)")
_HANDLE = re.compile(r"(?<![\w.@/\\-])(?P<first>[^\W\d_]+)\.(?P<family>[^\W\d_]{2,})(?![\w@]|\.[^\W\d_])")


# An access log's user between the client's address and the time ("203.0.113.5 - mgarcia [03/Jun/...").
_ACCESS_LOG = re.compile(r"(?:\d{1,3}\.){3}\d{1,3} - [A-Za-z][a-z]{4,} \[$")
# An account's name of an initial glued to a family name ("kfischer", "amorales").
_INITIAL_HANDLE = re.compile(r"(?<![\w.@/\\-])[A-Za-z](?P<family>[a-z]{4,})(?![\w@]|\.[^\W\d_])")


def handles(text: str) -> list[Hit]:
    return _handles(text) + _initial_handles(text) + _name_cells(text) + _keyed_names(text) + \
        _structured_names(text) + _home_directories(text) + _listed_accounts(text) + _sql_names(text)


# A home directory names its account: "/home/dbrennan", "C:\\Users\\m.okafor".
_HOME = re.compile(r"(?:(?<![\w.])/home/|(?<![\w.])/users/|(?<![\w])[a-z]:\\users\\)(?P<user>[a-z][\w.\-]{2,40})",
                   re.IGNORECASE)


def _home_directories(text: str) -> list[Hit]:
    """The account in a home directory's path when it has a person's handle's shape: an initial or
    a given name, then a family name the name lists hold (``dbrennan``, ``maria.lopez``)."""
    hits = []
    for match in _HOME.finditer(text):
        user = match.group("user")
        start = match.start("user")
        if _person_handle(user):
            hits.append(Hit("PERSON", start, match.end(), LIKELY))
    return hits


# A YAML list of accounts under a key of people ("reviewers:\n  - jnakamura\n  - pkaur").
_ACCOUNT_LIST = re.compile(r"(?<![\w])(?:reviewers|assignees|owners|maintainers|members|users|approvers|watchers|"
                           r"codeowners|admins)\s*:(?P<items>(?:\s+-\s+@?[\w.\-]+){1,30})", re.IGNORECASE)


def _listed_accounts(text: str) -> list[Hit]:
    hits = []
    for listing in _ACCOUNT_LIST.finditer(text):
        for item in re.finditer(r"-\s+@?(?P<user>[\w.\-]+)", listing.group("items")):
            user = item.group("user")
            if _person_handle(user):
                start = listing.start("items") + item.start("user")
                hits.append(Hit("PERSON", start, start + len(user), LIKELY))
    return hits


def _person_handle(user: str) -> bool:
    """A whole account's name with a person's handle's shape (an initial or a given name, then a
    family name the name lists hold), and no system's or tool's account."""
    if user.lower() in NOT_A_PERSON or user.lower() in BRANDS:
        return False  # "/home/ubuntu", "/home/jenkins": a system's or a tool's account
    if (dotted := _HANDLE.fullmatch(user)) is not None:
        return _names_of_handle(dotted.group("first"), dotted.group("family"))
    initial = _INITIAL_HANDLE.fullmatch(user)
    return initial is not None and _family_of_handle(initial.group("family"))


def _names_of_handle(first: str, family: str) -> bool:
    """``given.family`` or ``i.family``: an initial or a given name, then a family name the name
    lists hold that is no common word."""
    first, family = first.lower(), family.lower()
    return (len(first) == 1 or "g" in gazetteer().get(first, "")) and family in gazetteer() and not is_common(family)


def _family_of_handle(family: str) -> bool:
    """The family name after an initial ("kfischer"): one the lists hold as a family name, no common word."""
    family = family.lower()
    return "s" in gazetteer().get(family, "") and not is_common(family)


def _initial_handles(text: str) -> list[Hit]:
    """An initial and a family name the name lists hold (no common word) after a user's key or in
    a user's column."""
    hits = []
    for match in _INITIAL_HANDLE.finditer(text):
        if _family_of_handle(match.group("family")) and (
                _USER_KEY.search(text, max(0, match.start() - 24), match.start())
                or _ACCESS_LOG.search(text, max(0, match.start() - 20), match.end() + 2)
                or _USER_COLUMN.search(tables.column_name(text, match.start()) or "")):
            hits.append(Hit("PERSON", match.start(), match.end(), LIKELY))
    return hits


def _handles(text: str) -> list[Hit]:
    """``given.family`` or ``i.family`` after a user's key or in a user's column, where the
    family name is one the name lists hold and no common word, and the first part is an
    initial or a given name."""
    hits = []
    for match in _HANDLE.finditer(text):
        if not _names_of_handle(match.group("first"), match.group("family")):
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
passenger attendee recipient applicant student guardian contact signer holder account_holder forename given
family first last
""".split())
_CELL = re.compile(rf"(?:(?<=[,;|])|(?<=\S ))\s?\"?(?P<value>{tables.WORDS_CELL})\"?(?=\"?(?:[,;|]|\s|$))")


def _name_cells(text: str) -> list[Hit]:
    header = tables.header_end(text)
    spans = [(m.start("value"), m.end("value")) for m in _CELL.finditer(text, header)
             if tables.column_name(text, m.start("value")) in _NAME_COLUMNS]
    first = tables.column_name(text, header + 1) if header else None
    spans += tables.first_cells(text) if first in _NAME_COLUMNS else []
    return [Hit("PERSON", start, end, LIKELY) for start, end in spans if _names_a_person(text[start:end])]


def _names_a_person(value: str) -> bool:
    """Words a name list holds, and none a common word it does not know ("Lowri Pritchard", not
    "Blue Widget")."""
    words = value.lower().split()
    return all(word in gazetteer() or not is_common(word) for word in words) \
        and any(word in gazetteer() and not is_common(word) for word in words)


def _sql_names(text: str) -> list[Hit]:
    """Values of an SQL INSERT in a column of people's names or of accounts."""
    return [Hit("PERSON", start, end, LIKELY) for start, end, column in tables.sql_cells(text)
            if column in _NAME_COLUMNS and re.fullmatch(tables.WORDS_CELL, text[start:end])
            and _names_a_person(text[start:end])
            or _USER_COLUMN.search(column) and _person_handle(text[start:end])]


# Keys of structured text (JSON, YAML, XML, forms, vCards) whose value is a person's name: the
# parts of a name, and keys that hold a name or a product's ("name", "contact": ``_WEAK_KEYS``).
_NAME_PART_KEYS = ("first|firstname|first_name|first name|forename|given|givenname|given_name|given name|last|lastname|"
                   "last_name|last name|surname|family|familyname|family_name|family name|fullname|full_name|"
                   "full name|displayname|display_name|fn|cn|nickname|vorname|nachname|prenom|prénom|apellido|apellidos")
_WEAK_KEYS = frozenset({"name", "contact", "signer", "holder", "account_holder", "cardholder", "applicant",
                        "guardian", "student", "patient", "employee", "customername", "customer_name", "contactname",
                        "contact_name", "nombre", "nom", "naam"})
_NAME_VALUE = r"[^\W\d_]+(?:['’.\-][^\W\d_]+)*\.?(?:,? [^\W\d_]+(?:['’.\-][^\W\d_]+)*\.?){0,5}"
_KEYED = re.compile(
    rf"(?<![\w\-])[\"']?(?P<key>{_NAME_PART_KEYS}|{'|'.join(sorted(_WEAK_KEYS))})[\"']?\s*[:=]\s*[\"']?"
    rf"(?P<value>{_NAME_VALUE})"
    rf"|<(?P<tag>{_NAME_PART_KEYS}|{'|'.join(sorted(_WEAK_KEYS))})(?:\s[^>]*)?>(?P<element>{_NAME_VALUE})</",
    re.IGNORECASE)
# The analysed view joins a form's lines with spaces ("First name: Oksana Last name: Shevchenko"):
# a value ends before the next key, a word right before ":" or "=", with the word before it when
# that word begins a key of two words ("Last name:", "Date of birth:" ends at "of").
_KEY_AFTER = re.compile(r" ([^\W\d_][\w\-]*)\s*[:=](?!(?i:mailto)|/)")
_KEY_LEADS = frozenset({"first", "last", "given", "family", "full", "middle", "maiden", "date", "phone", "mobile",
                        "home", "work", "email", "e", "postal", "post", "zip", "birth", "of", "place", "company",
                        "job", "country", "city", "street", "display", "user", "account", "emergency"})


def _value_end(text: str, start: int, end: int) -> int:
    key = _KEY_AFTER.search(text, start, end + 30)
    if key is None or key.start() >= end:
        return end
    cut = key.start()
    while True:
        before = re.search(r" ([^\W\d_]+)$", text[start:cut])
        if before is None or before.group(1).lower() not in _KEY_LEADS:
            return cut
        cut = start + before.start()


# A vCard's structured name ("N:Achebe;Ngozi;;;"), and a display name before a mailbox in
# brackets ("To: Hemi Walker <hemi@...>, Moana Tuhoe <moana@...>").
_VCARD_N = re.compile(r"(?<![\w\-])N:(?P<family>[^\W\d_][^;:\d]{0,40}?);(?P<given>[^\W\d_][^;:\d]{0,40}?)?;")
_DISPLAY_NAME = re.compile(r"(?:^|[:,]\s*)\"?(?P<value>[^\W\d_]+(?:['’.\-][^\W\d_]+)*\.?"
                           r"(?: [^\W\d_]+(?:['’.\-][^\W\d_]+)*\.?){0,3})"
                           r"\"?\s*<[^<>\s@]+@[^<>\s]+>")


# A passenger as airlines print one: family name, a slash, given name, title ("LINDQVIST/ELSA MS").
_PASSENGER = re.compile(r"(?<![\w/])(?P<value>[^\W\d_]{2,30}/[^\W\d_]{2,30}(?: [^\W\d_]{2,20})?)"
                        r"(?= (?:mr|ms|mrs|miss|mstr|dr)(?![\w]))", re.IGNORECASE)


def _structured_names(text: str) -> list[Hit]:
    spans = [(m.start(g), m.end(g)) for m in _VCARD_N.finditer(text) for g in ("family", "given") if m.group(g)]
    spans += [(m.start("value"), m.end("value")) for m in (*_DISPLAY_NAME.finditer(text), *_PASSENGER.finditer(text))]
    return [Hit("PERSON", start, end, LIKELY) for start, end in spans if _plain_name(text[start:end])]


def _plain_name(value: str) -> bool:
    """No word a system's or a brand's, and either no common word at all or a given name the lists
    hold that is no common word ("Per-Olav Strand", not "Billing Team")."""
    words = re.findall(r"[^\W\d_]+", value.lower())
    if any(w in NOT_A_PERSON for w in words) or value.lower() in BRANDS:
        return False
    return not any(is_common(w) for w in words) or any("g" in gazetteer().get(w, "") and not is_common(w)
                                                        for w in words)


def _keyed_names(text: str) -> list[Hit]:
    """The value of a key that names a person's name: words of letters none of which is a common
    word, a language's or a tool's name, nor a brand; after a key that also names products and
    teams ("name"), one of them a name the lists hold."""
    hits = []
    cursor = 0
    while (match := _KEYED.search(text, cursor)) is not None:
        key = (match.group("key") or match.group("tag")).lower()
        group = "value" if match.group("value") is not None else "element"
        start, end = match.start(group), match.end(group)
        end = _value_end(text, start, end) if group == "value" else end
        cursor = max(end, match.start(group) + 1)
        words = re.findall(r"[^\W\d_]+", text[start:end].lower())
        if not words or any(is_common(word) or word in NOT_A_PERSON for word in words) \
                or text[start:end].lower() in BRANDS \
                or key in _WEAK_KEYS and not any(word in gazetteer() for word in words):
            continue
        hits.append(Hit("PERSON", start, end, LIKELY))
    return hits
