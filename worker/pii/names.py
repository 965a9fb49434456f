"""Person names that the words around them announce: ``Hi Amara``, ``my son's name is
Keoni``, ``Regards, Tomasz``, ``Name: Zeynep``, ``her mother Lê Thị Hồng Nhung``.

spaCy's NER finds most names; greetings, sign-offs, form fields and family words are where
it misses them (a name alone after "Hi" has little for a tagger to go on). A name here is
one to four words the analysed view capitalises (words the lexicon does not know as common
English words), joined by name particles (``van der``, ``bin``, ``dela``); right after a
strong cue, a common word often used as a name (``grace``, ``mark``) counts too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from spacy.lang.en.stop_words import STOP_WORDS

from ibex_worker.pii import tables
from ibex_worker.pii.casing import matched_key
from ibex_worker.pii.lexicon import capitalised_share, gazetteer, is_common, places, rare
from ibex_worker.pii.name_words import (ANNOUNCING, GROUP_MENTIONS, NOT_A_NAME_OBJECT, NOT_NAME_CONTEXT, ORG_WORDS,
                                   PARTICLES, RELATIONS, TITLES, WEAK_CUES)
from ibex_worker.pii.numbers import LIKELY, Hit
from ibex_worker.pii.relations import appositive_people, opening_people, relatives
from ibex_worker.pii.script_names import caseless_run, has_caseless

NAME_WORD = r"[^\W\d_][^\W\d_'’\-]*(?:['’\-][^\W\d_]+)*"
CUE_WORDS = {c for c in (*ANNOUNCING, *TITLES, *RELATIONS, *WEAK_CUES)}
TITLE = 3  # the cue levels: 0 weak, 1 role or relation, 2 announcing, 3 a title
_LEVEL = {matched_key(cue): level for level, cues in enumerate((WEAK_CUES, RELATIONS, ANNOUNCING, TITLES))
          for cue in cues}
_CUE_RE = re.compile(
    r"(?<![\w])(" + "|".join(sorted((re.escape(c) for c in CUE_WORDS), key=len, reverse=True)) + r")"
    r"(?:'s)?(?:\s+(?:name\s+is|is\s+called|called|named|is))?[\s,:.\-–|/]+",
    re.IGNORECASE)
_AFTER_NAME = re.compile(
    r"^(?:'s\b|’s\b|\s+(?:said|says|asked|asks|wants|wanted|called|emailed|texted|mentioned|told|prefers|"
    r"is\s+allergic|will|would|can|could|has|had|and\s+i|replied|wrote|confirmed|approved|agreed|thinks|"
    r"lives|moved|works|joined|left|sent))",
    re.IGNORECASE)
NAME_SHARE = 0.15  # a common word capitalised this often in running text is also a name (grace, mark, may)


def cued_names(text: str) -> list[Hit]:
    hits = []
    for cue in _CUE_RE.finditer(text, tables.header_end(text)):  # "name,price,stock" is a table's header
        level = _cue_level(cue)
        if level == TITLE and _NUMBER_NEAR.search(text[max(0, cue.start() - 60):cue.start()]):
            level = 2  # "500 ms Kafka", "12 Oak Dr. Springfield": a unit or a street type
        span = _name_after(text, cue.end(), level)
        if span is not None:
            hits.append(Hit("PERSON", *_absorb_common_names(text, *span), LIKELY))
    return (hits + _named_by_verb(text) + _addressed(text) + _mentioned(text) + _speakers(text) + _addressee(text)
            + _pair(text) + relatives(text) + opening_people(text) + appositive_people(text))


def _cue_level(cue: re.Match[str]) -> int:
    return 2 if _NAMING.search(cue.group(0)) else _LEVEL[matched_key(cue.group(1))]


def cued_other_script(text: str) -> list[Hit]:
    """A name in a script without capitals right after an English word that announces a
    person, other than a plain verb ("The user's Tamil tutor is கார்த்திகா சுப்ரமணியம்"):
    ``script_names.caseless_run``."""
    if not has_caseless(text):
        return []
    return [Hit("PERSON", *span, LIKELY) for cue in _CUE_RE.finditer(text, tables.header_end(text))
            if text[cue.start() - 1:cue.start()] not in ("-", "_", "/")  # "BILLING-HI" greets nobody
            and _cue_level(cue)
            and (span := caseless_run(text, cue.end())) is not None]


# "grace and hope r coming too", "Park and Cook are both on leave": two known given names joined
# and acting together.
_PAIR = re.compile(
    r"(?<![\w'’])(" + NAME_WORD + r")\s*(?:and|&|\+)\s*(" + NAME_WORD + r")\s+(?:are|were|r|have|had|both|said|"
    r"say|want|wanted|came|come|went|left|joined|run|ran|will|can|got|get)\b", re.IGNORECASE)


def _pair(text: str) -> list[Hit]:
    hits = []
    for match in _PAIR.finditer(text):
        words = [match.group(1).lower(), match.group(2).lower()]
        if all(given_name(w) and (w not in STOP_WORDS or w in _MODAL_NAMES) and w not in CUE_WORDS
               and w not in places() for w in words) and not _after_determiner(text, match.start(1)):
            hits += [Hit("PERSON", match.start(g), match.end(g), NAMED_ALONE) for g in (1, 2)]
    return hits


# "tell will im running late", "remind me to venmo joy": a known given name as the object of a
# verb that takes a person, with nothing after it that would make it a noun ("ask price for").
_PERSON_OBJECT = re.compile(
    r"(?<![\w'’])(?:tell|ask|text|ping|remind|venmo|thank|email|message|dm|invite|call|ring|meet|meeting)\s+"
    r"(" + NAME_WORD + r")(?=\s*(?:$|[,.!?;:)]|\s(?:to|for|about|that|if|whether|back|asap|im|i'm|i|we|and|or|"
    r"tomorrow|today|tonight|later|please|pls|re|at|on)\b))", re.IGNORECASE)


def _addressee(text: str) -> list[Hit]:
    hits = []
    for match in _PERSON_OBJECT.finditer(text):
        lower = match.group(1).lower()
        if (given_name(lower) and (lower not in STOP_WORDS or lower in _MODAL_NAMES)
                and lower not in CUE_WORDS and lower not in NOT_A_NAME_OBJECT):
            hits.append(Hit("PERSON", match.start(1), match.end(1), NAMED_ALONE))
    return hits


# "@grace can you check": a mention names a person (a handle is personal too).
_MENTION = re.compile(r"(?<![\w@.])@([^\W\d_][\w.\-]*[^\W_]|[^\W\d_])", re.UNICODE)


def _mentioned(text: str) -> list[Hit]:
    return [Hit("PERSON", m.start(1), m.end(1), LIKELY) for m in _MENTION.finditer(text)
            if m.group(1).lower() not in GROUP_MENTIONS]


# "Dawn: I can take notes." in a transcript: a known given name as the speaker's label, at the
# start of the text or of a sentence, before what the speaker said.
_SPEAKER_LABEL = re.compile(r"(?:^|(?<=[.!?]\s)|(?<=\]\s))(" + NAME_WORD + r")\s?:\s+(?=[^\W\d_]+\b(?![\-\d]))")


def _speakers(text: str) -> list[Hit]:
    return [Hit("PERSON", m.start(1), m.end(1), NAMED_ALONE) for m in _SPEAKER_LABEL.finditer(text)
            if given_name(m.group(1)) and m.group(1).lower() not in CUE_WORDS
            and (m.group(1).lower() not in STOP_WORDS or m.group(1).lower() in _MODAL_NAMES)]


# Where only a person fits after a name that is also a language or a product (``Julia from
# accounting``, ``Crystal at the front desk``, ``Ruby said``): a department, a desk, a verb of speech.
_ONLY_A_PERSON = re.compile(
    r"^\s+(?:said|says|asked|asks|told|tells|texted|emailed|replied|apologi[sz]ed|"
    r"(?:from|in)\s+(?:accounting|finance|hr|legal|sales|marketing|support|procurement|payroll|ops|qa|it|"
    r"engineering|reception|the\s+[\w\-']+\s+(?:team|office|department))|"
    r"(?:at|from)\s+the\s+(?:front\s+desk|reception|desk|counter)|"
    r"(?:is|was)\s+(?:coming|the\s+one\s+who|my\s+(?:daughter|son|wife|husband|partner|sister|brother|mum|mom|"
    r"dad|mother|father|niece|nephew|cousin|aunt|uncle|grandson|granddaughter|neighbour|neighbor|colleague)))\b",
    re.IGNORECASE)


def people_named_like_things(text: str, things: frozenset[str]) -> list[Hit]:
    """A known given name that is also one of ``things`` (a programming language, a product:
    ``Julia``, ``Ruby``, ``Crystal``) where only a person fits after it."""
    return [Hit("PERSON", m.start(), m.end(), NAMED_ALONE) for m in re.finditer(NAME_WORD, text)
            if m.group(0).lower() in things and given_name(m.group(0)) and _ONLY_A_PERSON.match(text[m.end():])
            and not _after_determiner(text, m.start())]


_NAMING = re.compile(r"\b(?:name\s+is|named|called)\b", re.IGNORECASE)
_VOCATIVE = re.compile(r"^\s*(" + r"[^\W\d_][^\W\d_'’\-]*(?:['’\-][^\W\d_]+)*" + r")\s*[,:!](?!\d)")


def _addressed(text: str) -> list[Hit]:
    """A text that opens by naming someone (``Selamawit, the keys are...``, ``Fatima: new
    number``): a word the view capitalises as a name, not a place or a common word."""
    match = _VOCATIVE.match(text)
    if match is None:
        return []
    word = match.group(1)
    if not capitalised(word) or word.lower() in places() or word.lower() not in gazetteer():
        return []
    return [Hit("PERSON", match.start(1), match.end(1), NAMED_ALONE)]


_SPEAKER = re.compile(
    r"^(?:'s\s|’s\s|\s+(?:said|says|asked|asks|told|tells|wants|wanted|thinks|replied|wrote|texted|emailed|"
    r"mentioned|called|agreed|confirmed|presented|raised|approved|signed|suggested|proposed|swears|promised|"
    r"reckons|insists|recommended|volunteered|offered|apologised|apologized|handles|manages|leads|owns|"
    r"coordinates|organises|organizes|(?:is|was|will\s+be)\s+(?:handling|taking|flying|picking|joining|"
    r"leaving|driving|bringing|helping|covering|presenting|the\s+one\s+who|"
    r"(?:out|off)\s+(?:until|sick|today|tomorrow|this\s+week|next\s+week)|"
    r"(?:on|back\s+from)\s+(?:leave|holiday|vacation|sick\s+leave|parental\s+leave|maternity\s+leave))|"
    r"had\s+(?:a|the|her|his)\s+baby|from\s+(?:accounting|finance|hr|it|legal|sales|marketing|support|"
    r"procurement|payroll|ops|engineering|the\s+[\w\-']+\s+team))\b"
    r"|\s+and\s+(?:i|me)\b)",
    re.IGNORECASE)


# Given names that are English modal verbs: a name only before a verb no modal takes ("Will
# said", not "will and I").
_MODAL_NAMES = frozenset({"will", "may"})
_ACTING = re.compile(r"\s+(?!and\b)", re.IGNORECASE)


def _named_by_verb(text: str) -> list[Hit]:
    """A given name that is also a common word, acting as a person: ``Grace says``,
    ``Dawn's shift``, ``Amber and I``, ``Will said``."""
    hits = []
    for word in re.finditer(NAME_WORD, text):
        lower = word.group(0).lower()
        verb = _SPEAKER.match(text[word.end():])
        if ("g" in gazetteer().get(lower, "") and verb and not _after_determiner(text, word.start())
                and (lower not in STOP_WORDS or lower in _MODAL_NAMES and _ACTING.match(verb.group(0)))):
            hits.append(Hit("PERSON", word.start(), word.end(), NAMED_ALONE))
    return hits


_TITLE_BEFORE = re.compile(r"(?<![\w.'’])(" + "|".join(TITLES) + r")\.?\s+$", re.IGNORECASE)
_NUMBER_NEAR = re.compile(r"\d\S*(?:\s+\S+){0,3}\s*$")


def after_title(text: str, start: int) -> bool:
    """A title stands right before ``start`` (``Ms. Haskell``), and no number shortly before it
    makes it a unit or a street type (``500 ms Kafka``, ``12 Oak Dr. Springfield``)."""
    offset = max(0, start - 12)
    title = _TITLE_BEFORE.search(text[offset:start])
    if title is None:
        return False
    at = offset + title.start()
    return not _NUMBER_NEAR.search(text[max(0, at - 60):at])


def _name_after(text: str, pos: int, level: int) -> tuple[int, int] | None:
    """The name right after a cue of ``level``."""
    words = list(re.finditer(NAME_WORD, text[pos:pos + 120]))
    if not words or words[0].start() != 0:
        return None
    taken: list[re.Match[str]] = []
    for word in words[:6]:
        if taken and text[pos + taken[-1].end():pos + word.start()] not in (" ", ". ", "."):
            break
        value = word.group(0)
        if capitalised(value) or level and rare(value.lower()):
            taken.append(word)
        elif taken and value.lower() in PARTICLES:
            taken.append(word)
        elif not taken and level and _common_name(value, text, pos + word.end()):
            taken.append(word)
        else:
            break
    while len(taken) > 1 and taken[-1].group(0).lower() in PARTICLES:
        taken.pop()
    if all(rare(w.group(0).lower()) for w in taken):
        return None  # a rare word names somebody only beside a name ("nanny Jericho Mendoza")
    if not taken or len(taken) > 4:
        return None
    start, end = pos + taken[0].start(), pos + taken[-1].end()
    if level == 0 and not _AFTER_NAME.match(text[end:]):
        return None
    alone = len(taken) == 1 and taken[0].group(0).lower() not in gazetteer()
    if level < 2 and alone:
        return None  # after a role or a plain verb, a lone word must be a known name
    if text[start:end].lower() in places() and not (level >= 1 and given_name(text[start:end]) or level == TITLE):
        return None  # "visit Georgia"; but "my sister Georgia", "Hi Austin", "Ms. Villanueva" name people
    return start, end


def given_name(value: str) -> bool:
    return "g" in gazetteer().get(value.lower(), "")


def capitalised(word: str) -> bool:
    return word[:1].isupper() and capitalised_share(word.lower()) is None


def _common_name(word: str, text: str, end: int) -> bool:
    """A common word used as a name right after a strong cue (``Hi grace,``, ``Hi Will,``):
    only a known given name, and only when nothing but punctuation or a name follows."""
    share = capitalised_share(word.lower())
    if share is None or "g" not in gazetteer().get(word.lower(), ""):
        return False
    following = text[end:end + 3]
    return (not following or following[0] in ",.!?;:)"
            or following.strip()[:1].isupper() and not re.match(r"\s*I\b", following))


# ---------------------------------------------------------------- names the gazetteer knows

_INITIAL = re.compile(r"[A-Z]\.")


def known_names(text: str, entity_labels: Sequence[tuple[int, int, str]] = ()) -> list[Hit]:
    """Runs of capitalised words (in the view: words that are not common English) that hold a
    name the gazetteer knows: ``Wanjiru Kamau``, ``Sigrid Lindqvist``, ``marcus`` in a
    lower-case chat. A run spaCy calls a place, product or event is left to it."""
    hits = []
    for start, end, words in _proper_runs(text):
        if words[-1].lower() in ORG_WORDS:
            continue
        score = _run_score(text, start, end, words)
        if _after_determiner(text, start, romance_a=score >= LIKELY):
            continue  # "the house", "a bishop", "the Chase": a name takes no article
        if score < LIKELY and (text[start:end].lower() in places() and not _SPEAKER.match(text[end:])
                               or _labelled_other(start, end, entity_labels)):
            continue  # a lone known name that is a place, or that spaCy reads as a date: "Victoria", "June"
        if score:
            start, end = _absorb_common_names(text, start, end)
            if not _after_determiner(text, start, romance_a=score >= LIKELY):
                hits.append(Hit("PERSON", start, end, score))
    return hits


_DETERMINER = re.compile(r"(?:^|\W)(?:the|a|an|this|that|these|those|every|each|any|some|no|our|their|your|its)\s+$",
                         re.IGNORECASE)


def _after_determiner(text: str, start: int, *, romance_a: bool = False) -> bool:
    """``romance_a``: "a" before a full name, after a word that is not English, is the
    preposition of Italian, Spanish or Portuguese ("intestato a Matteo Ferraris")."""
    match = _DETERMINER.search(text[max(0, start - 12):start])
    if match is None or not romance_a or match.group(0).strip().lower() != "a":
        return match is not None
    before = re.search(r"([^\W\d_]+)\W+a\s+$", text[max(0, start - 40):start])
    return before is None or is_common(before.group(1).lower())


_WORD_BEFORE = re.compile(r"(?<![^\W\d_'’\-])(" + NAME_WORD + r") $")


def _absorb_common_names(text: str, start: int, end: int) -> tuple[int, int]:
    """``Li wei``, ``Owen price``: a neighbouring word the lexicon knows as common but that is
    a known name belongs to the name - a family name after it, a given name before it."""
    after = re.match(r" (" + NAME_WORD + r")", text[end:])
    if after and _name_word(after.group(1), "s") and not _SPEAKER.match(text[end:]):
        end += after.end()
    before = _WORD_BEFORE.search(text, max(0, start - 80), start)
    if before and _name_word(before.group(1), "g"):
        start = before.start(1)
    return start, end


def _name_word(word: str, kind: str) -> bool:
    lower = word.lower()
    return kind in gazetteer().get(lower, "") and lower not in STOP_WORDS and lower not in CUE_WORDS


def _run_score(text: str, start: int, end: int, words: list[str]) -> float:
    names = gazetteer()
    core = [w.lower() for w in words if w.lower() not in PARTICLES and not _INITIAL.fullmatch(w)]
    if not core:
        return 0.0
    known = [w for w in core if w in names or w.replace("’", "'") in names]
    initials = len(core) < len(words) and any(_INITIAL.fullmatch(w) for w in words)
    if len(core) >= 2 and 2 * len(known) >= len(core) or initials:
        return LIKELY  # half the words or more are known names: not a phrase of another language
    if len(core) == 1 and "g" in names.get(core[0], ""):
        return NAMED_ALONE
    if len(core) == 1 and len(core[0]) >= 4 and "s" in names.get(core[0], "") and _SPEAKER.match(text[end:]):
        return NAMED_ALONE  # a family name alone, acting as a person: "Halonen presented the numbers"
    if len(core) >= 2 and _AFTER_NAME.match(text[end:]):
        return NAMED_ALONE
    return 0.0


NAMED_ALONE = 0.75  # a lone given name, or a run followed by "said", "'s" ...: redacted, not certain


def _labelled_other(start: int, end: int, labels: Sequence[tuple[int, int, str]]) -> bool:
    return any(s <= start and end <= e and label.lower() in NOT_NAME_CONTEXT for s, e, label in labels)


_RUN_WORD = re.compile(r"[A-Z]\.|" + NAME_WORD)


def _proper_runs(text: str) -> list[tuple[int, int, list[str]]]:
    runs: list[tuple[int, int, list[str]]] = []
    current: list[re.Match[str]] = []
    for word in _RUN_WORD.finditer(text):
        value = word.group(0)
        joined = bool(current) and text[current[-1].end():word.start()] == " "
        proper = capitalised(value) or _INITIAL.fullmatch(value) is not None
        particle = value.lower() in PARTICLES and joined
        if proper and (joined or not current) or particle:
            current.append(word)
            continue
        _close(current, runs)
        current = [word] if proper else []
    _close(current, runs)
    return runs


def _close(current: list[re.Match[str]], runs: list[tuple[int, int, list[str]]]) -> None:
    while len(current) > 1 and (current[-1].group(0).lower() in PARTICLES or _INITIAL.fullmatch(current[-1].group(0))):
        current.pop()
    if current and len(current) <= 5:
        runs.append((current[0].start(), current[-1].end(), [m.group(0) for m in current]))
    current.clear()


# ---------------------------------------------------------------- names in other scripts

_HAN_KANA = r"[\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff]"
_OTHER_SCRIPT_NAME = re.compile(
    rf"(?<![\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7a3])"
    rf"(?:{_HAN_KANA}{{2,4}}(?:\s{_HAN_KANA}{{1,3}})?|[\uac00-\ud7a3]{{2,4}}(?:\s[\uac00-\ud7a3]{{1,3}})?"
    r"|[\u0370-\u03ff\u0400-\u04ff]+(?:\s[\u0370-\u03ff\u0400-\u04ff]+){0,2})"
    rf"(?![\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7a3])")
LATIN_SHARE = 0.6  # letters of a text this often Latin: the text is written in a Latin script


def other_script_names(text: str) -> list[Hit]:
    """A short run of Chinese, Japanese, Korean, Greek or Cyrillic writing in a text written in
    Latin letters is, in what people tell an assistant, most often somebody's name (``my
    colleague 黄晓雯``, ``Κατερίνα Παπαδάκη``). Nothing here tells a name from a word of that
    language, so such a run is masked as one: uncertain means masked."""
    letters = [ch for ch in text if ch.isalpha()]
    latin = sum(1 for ch in letters if ch.isascii() or "\u00c0" <= ch <= "\u024f" or "\u1e00" <= ch <= "\u1eff")
    if not letters or latin < LATIN_SHARE * len(letters):
        return []
    return [Hit("PERSON", m.start(), m.end(), NAMED_ALONE) for m in _OTHER_SCRIPT_NAME.finditer(text)]
