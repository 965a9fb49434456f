"""Names next to a name already found: the rest of a full name a finder found half of
(``[Hee-jin] Park``, ``Precious [Dimaculangan]``), and names listed with it (``Austin and
Dakota``).

Finders and the tagger often see one half of a name: the given name is known and the family
name is not, or the family name is also an English word (``Grace Young``, ``Jordan Swift``).
After the name, a word continues it when the view capitalises it (not common English), when
it is a family name that is often capitalised, or when the lexicon knows it only from WordNet
(a rare word, as often a proper noun: ``Zulu``, ``Hayek``); before the name, a known given
name, such a rare word (``Aditi``, ``Sita``) or an initial starts it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from spacy.lang.en.stop_words import STOP_WORDS

from ibex_worker.pii.address_words import STREET_TYPES
from ibex_worker.pii.lexicon import capitalised_share, gazetteer, places, rare
from ibex_worker.pii.name_words import ORG_WORDS, PARTICLES
from ibex_worker.pii.names import CUE_WORDS, NAME_WORD, NAMED_ALONE, capitalised, given_name
from ibex_worker.pii.numbers import Hit

MAX_NAME_WORDS = 4  # a completed name stops growing at this many words
FAMILY_NAME_SHARE = 0.05  # a common word capitalised this often in running text may continue a name
_NEXT_WORD = re.compile(rf"( |-)({NAME_WORD})")
_PREVIOUS_WORD = re.compile(rf"(?<![\w'’.\-])({NAME_WORD}|[^\W\d_]\.) $")
_INITIAL = re.compile(r"[^\W\d_]\.?")  # the view lowers single letters
_STREET_TYPES = frozenset(STREET_TYPES)
_LETTER_BEFORE = re.compile(r"(?<![\w'’.\-])[^\W\d_]\.? $")


def completed(text: str, start: int, end: int, not_names: frozenset[str]) -> tuple[int, int]:
    """The span of a person found at ``start:end``, grown over the neighbouring words that
    belong to the same name; never over one of ``not_names`` (weekdays, products, languages)."""
    while len(text[start:end].split()) < MAX_NAME_WORDS:
        after = _NEXT_WORD.match(text, end)
        if after is None or after.group(2).lower() in not_names or not _family_name(after.group(2)):
            break
        end = after.end()
    initial_after = False
    while len(text[start:end].split()) < MAX_NAME_WORDS:
        before = _PREVIOUS_WORD.search(text[max(0, start - 40):start])
        if before is None or before.group(1).lower() in not_names or not _given_name_or_initial(
                before.group(1), text[:start - len(before.group(0))], initial_after):
            break
        initial_after = _INITIAL.fullmatch(before.group(1)) is not None
        start -= len(before.group(0))
    return start, end


def _family_name(word: str) -> bool:
    """A word after a name that continues it: one the view capitalises (no place unless also a
    family name), or a family name that is also a common word but one often capitalised
    (``Young``, ``Park``; not ``said``)."""
    lower = word.lower()
    if _never_in_a_name(lower):
        return False
    if capitalised(word):
        return lower not in places() or "s" in gazetteer().get(lower, "")
    if rare(lower):
        return True
    share = capitalised_share(lower)
    return "s" in gazetteer().get(lower, "") and share is not None and share >= FAMILY_NAME_SHARE


def _given_name_or_initial(word: str, before: str, initial_after: bool) -> bool:
    """A word before a name that starts it: a known given name (``Precious``, ``Rose``) or an
    initial - a letter with a period, or a bare letter next to another (``M J Castellanos``,
    not ``plan b``); never an owner (``User's``). ``before``: the text before the word;
    ``initial_after``: the word after it is an initial."""
    lower = word.lower()
    if _never_in_a_name(lower) or re.search(r"['’]s$", lower):
        return False
    if _INITIAL.fullmatch(word):
        return word.endswith(".") or initial_after or _LETTER_BEFORE.search(before) is not None
    return given_name(word) or rare(lower)


def _never_in_a_name(lower: str) -> bool:
    return (lower in STOP_WORDS or lower in CUE_WORDS or lower in ORG_WORDS or lower in PARTICLES
            or lower in _STREET_TYPES)  # "Baker Street" is a street


_JOIN = r"(?:,?\s+(?:and|&|or|und|y|et|e|og|och|en)\s+)"
_AFTER_JOIN = re.compile(rf"^{_JOIN}({NAME_WORD}(?: {NAME_WORD}){{0,2}})")
_BEFORE_JOIN = re.compile(rf"({NAME_WORD}(?: {NAME_WORD}){{0,2}}){_JOIN}$")
_BEFORE_COMMA = re.compile(rf"(?<![\w,] )({NAME_WORD}(?: {NAME_WORD}){{0,2}}),\s*$")  # "Ngozi, Tunde and I"


def coordinated(text: str, people: Sequence[tuple[int, int]], not_names: frozenset[str]) -> list[Hit]:
    """Names joined to a name already found (``Austin and Dakota``, ``Amara and Tobenna``): a
    neighbour across "and" whose words are all names the gazetteer knows, no place and none
    of ``not_names``, or before it across a comma when "and" follows it ("Ngozi, Tunde and
    I"). Followed along the list in both directions."""
    found: list[Hit] = []
    taken = {(s, e) for s, e in people}
    todo = list(people)
    while todo:
        start, end = todo.pop()
        after = _AFTER_JOIN.match(text[end:end + 80])
        before = _BEFORE_JOIN.search(text[max(0, start - 80):start]) or (
            _BEFORE_COMMA.search(text[max(0, start - 80):start]) if re.match(_JOIN, text[end:end + 12]) else None)
        candidates = []
        if after:
            candidates.append(_first_name_words(text, end + after.start(1), end + after.end(1), not_names))
        if before:
            offset = max(0, start - 80)
            candidates.append(_last_name_words(text, offset + before.start(1), offset + before.end(1)))
        for span in candidates:
            if span is None or span in taken or any(s < span[1] and span[0] < e for s, e in taken):
                continue
            if _listed_name(text[span[0]:span[1]], not_names):
                taken.add(span)
                todo.append(span)
                found.append(Hit("PERSON", span[0], span[1], NAMED_ALONE))
    return found


# "Rosalind Pemberton (goes by Roz)", 'Pimchanok Srisuk (nickname "Ploy")', "Wang Xiaoming（王晓明）",
# "Margaret Hale (Peggy)": the name a person goes by, in brackets right after them: after a
# word that says so, or a given name that is no place ("Jorge Almagro (compras)", "(SRE)",
# "(London)" name a department, a role, a place).
_ALIAS = re.compile(rf"\s*[(（]\s*(?:(?P<cue>goes by|aka|a\.k\.a\.|nickname|nicknamed|called|known as|née|nee|geb\.)"
                    rf"\s+)?[\"“'‘]?(?P<alias>{NAME_WORD}(?: {NAME_WORD})?|[\u3400-\u9fff\uac00-\ud7a3]{{2,4}})"
                    r"[\"”'’]?\s*[)）]", re.IGNORECASE)


def aliases_and_speakers(text: str, people: Sequence[tuple[int, int]], not_names: frozenset[str], *,
                         foreign: bool) -> list[Hit]:
    """The names the structure around the people found gives: the name a person goes by, in
    brackets after them, the other speakers of a text written in turns, the other people of a
    list of people, and a given name signing the text off."""
    found = _aliases(text, people, not_names) + _speaker_turns(text, people, not_names) \
        + ([] if foreign else _list_mates(text, people, not_names)) + _signed(text, not_names)
    return [h for h in found if not any(s < h.end and h.start < e for s, e in people)]


# "Ama, Kofi, Yaw, Efua and Kojo", "Aroha (9), Tama (6) and Wiremu (2)": a list whose items are
# mostly people found: its other items that are capitalised names the gazetteer knows are
# people too ("Sarah Jones, Tom Baker, DevOps, Finance": teams and brands are not).
_LIST_JOIN = r"(?:and|&|or|und|y|et|e|en|og|och|i|a)"
_ITEM_WORDS = rf"{NAME_WORD}(?: (?!{_LIST_JOIN}(?![\w'’\-])){NAME_WORD})?"  # "Yaw and Efua": two items, not one
_ITEM = rf"{_ITEM_WORDS}(?:\s*\(\d{{1,3}}\))?"
_LIST = re.compile(rf"(?<![\w'’\-]){_ITEM}(?:\s*,\s*{_ITEM})+(?:,?\s+{_LIST_JOIN}\s+{_ITEM})?")
_ITEM_NAME = re.compile(_ITEM_WORDS)


def _list_mates(text: str, people: Sequence[tuple[int, int]], not_names: frozenset[str]) -> list[Hit]:
    """Read in English text only (the caller's ``foreign``): in another language the model's
    people are less sure, and a list of them would spread one mistake ("selam, ben Burak, okul
    kaydı")."""
    found = []
    for listed in _LIST.finditer(text):
        items = [(listed.start() + m.start(), listed.start() + m.end())
                 for m in _ITEM_NAME.finditer(listed.group(0))
                 if m.group(0).lower() not in ("and", "or", "und", "y", "et", "e", "en", "og", "och", "i", "a")]
        known = [item for item in items if any(s <= item[0] and item[1] <= e for s, e in people)]
        if len(items) < 3 or len(known) < 2 or len(known) * 2 < len(items):
            continue
        found += [Hit("PERSON", start, end, NAMED_ALONE) for start, end in items if (start, end) not in known
                  and all(_mate_word(w, not_names) and w.lower() in gazetteer() for w in text[start:end].split())]
    return found


def _mate_word(word: str, not_names: frozenset[str]) -> bool:
    """A capitalised name among people: a place's name too if it is a given name ("Anna")."""
    lower = word.lower()
    return word[0].isupper() and lower not in _FIELD_LABELS and _name_like(word) and _uncommon(word) \
        and lower not in not_names and lower not in ORG_WORDS and (lower not in places() or given_name(word))


# "See you at 7. — Haruto": a given name signing the text off after a sentence and a dash, at
# its very end ("Best coffee in town! - Starbucks" is a brand).
_SIGNATURE = re.compile(rf"(?:[.!?…)]\s*|\s{{2,}})[—–-]{{1,2}}\s+(?P<name>{NAME_WORD}(?: {NAME_WORD})?)\s*$")


def _signed(text: str, not_names: frozenset[str]) -> list[Hit]:
    match = _SIGNATURE.search(text)
    if match is None or not given_name(match.group("name").split()[0]) \
            or not all(w[0].isupper() and _alias_word(w, not_names) for w in match.group("name").split()):
        return []
    return [Hit("PERSON", match.start("name"), match.end("name"), NAMED_ALONE)]


def _aliases(text: str, people: Sequence[tuple[int, int]], not_names: frozenset[str]) -> list[Hit]:
    found = []
    for start, end in people:
        match = _ALIAS.match(text, end)
        if match is None:
            continue
        words = match.group("alias").split()
        transliterated = not re.search(r"[A-Za-z\u00c0-\u024f]", text[start:end])  # "ნინო ბერიძე (Nino)"
        if all(_alias_word(word, not_names) and (given_name(word) or _HAN_HANGUL.match(word))
               or transliterated and _name_like(word) and word.lower() not in places()
               and word.lower() not in _FIELD_LABELS and (given_name(word) or word.lower() not in not_names)
               for word in words) \
                or match.group("cue") and all(_uncommon(word) and word.lower() not in not_names for word in words):
            found.append(Hit("PERSON", match.start("alias"), match.end("alias"), NAMED_ALONE))
    return found


def _alias_word(word: str, not_names: frozenset[str]) -> bool:
    lower = word.lower()
    if _HAN_HANGUL.match(word):
        return True
    return lower not in _FIELD_LABELS and _name_like(word) and _uncommon(word) and lower not in not_names \
        and lower not in ORG_WORDS and lower not in places()


def _uncommon(word: str) -> bool:
    """No common English word, or one written capitalised at least half the time ("Judge",
    "Server", "Admin" are roles and things; "Frank" is a name as often)."""
    share = capitalised_share(word.lower())
    return word.lower() not in STOP_WORDS and (share is None or share >= 0.5)


_HAN_HANGUL = re.compile(r"[\u3400-\u9fff\uac00-\ud7a3]")
# Labels of mail headers, notes and forms, written before a colon as speakers are.
_FIELD_LABELS = frozenset({"re", "fwd", "fw", "aw", "wg", "sv", "tr", "rv", "cc", "bcc", "tel", "fax", "ps", "nb",
                           "faq", "q", "a", "eta", "fyi", "todo", "wip", "url", "ip", "id", "tldr", "edit", "update"})


# "Mark: I'd push back. Frank: agreed, ...": a text that opens with a speaker's label and
# goes on in turns, one label a given name already found a person and every other one a name
# the gazetteer knows, none a role or a field ("Jméno: ... Adresa: ..." is a form).
_TURN = re.compile(rf"(?:^|(?<=\s))({NAME_WORD}):\s")


def _speaker_turns(text: str, people: Sequence[tuple[int, int]], not_names: frozenset[str]) -> list[Hit]:
    turns = list(_TURN.finditer(text))
    found_at = {start for start, _ in people}
    if len({m.group(1).lower() for m in turns}) < 2 or not _TIMESTAMP.fullmatch(text, 0, turns[0].start()) \
            or not any(m.start(1) in found_at and given_name(m.group(1)) for m in turns) or not all(
            m.start(1) in found_at or _listed_word(m.group(1)) and _alias_word(m.group(1), not_names)
            for m in turns):
        return []
    return [Hit("PERSON", m.start(1), m.end(1), NAMED_ALONE) for m in turns if m.start(1) not in found_at]


# What may stand before a transcript's first turn: nothing, or the turn's time ("[00:03:11] Hana: ...").
_TIMESTAMP = re.compile(r"(?:\s*[\[(]?\d{1,2}:\d{2}(?::\d{2})?[\])]?\s*)?")


def _listed_word(word: str) -> bool:
    """A name the lists hold, or a hyphenated given name one of whose parts they hold ("Dae-jung")."""
    parts = word.lower().split("-")
    return word.lower() in gazetteer() or len(parts) == 2 and all(2 <= len(p) <= 5 and p.isalpha() for p in parts) \
        and any("g" in gazetteer().get(p, "") for p in parts)


def _first_name_words(text: str, start: int, end: int, not_names: frozenset[str]) -> tuple[int, int] | None:
    """The longest run of words a list joint leads into that is a name: ``and Jasper came``
    gives ``Jasper``."""
    words = list(re.finditer(NAME_WORD, text[start:end]))
    while words and not _listed_name(text[start + words[0].start():start + words[-1].end()], not_names):
        words.pop()
    return (start + words[0].start(), start + words[-1].end()) if words else None


def _last_name_words(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The name at the end of a run before a list joint: ``with Amir`` gives ``Amir``."""
    words = list(re.finditer(NAME_WORD, text[start:end]))
    while words and not _name_like(words[0].group(0)):
        words.pop(0)
    return (start + words[0].start(), start + words[-1].end()) if words else None


def _name_like(word: str) -> bool:
    lower = word.lower()
    return lower not in STOP_WORDS and (capitalised(word) or given_name(word)) and lower not in CUE_WORDS


def _listed_name(value: str, not_names: frozenset[str]) -> bool:
    """Every word a name the gazetteer knows (or a particle), none a place or ``not_names``."""
    words = value.split()
    if any(w.lower() in not_names for w in words) or value.lower() in places() and not given_name(value):
        return False
    return _name_like(words[0]) and all(
        _name_like(w) and w.lower() in gazetteer() or w.lower() in PARTICLES for w in words)
