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

from worker.pii.lexicon import capitalised_share, gazetteer, is_common, places
from worker.pii.numbers import LIKELY, Hit

# Words that announce a name outright: an introduction, a greeting or sign-off, a name field, a title.
ANNOUNCING = (
    "my name is", "name is", "name's", "names are", "named", "i'm", "i am", "this is", "it's", "it is",
    "call me", "hi", "hello", "hey", "dear", "thanks", "thank you", "thx", "cheers", "regards", "best",
    "sincerely", "love", "xoxo", "yours", "signed", "cc", "attn", "attention", "name", "first name",
    "last name", "surname", "family name", "given name", "full name", "maiden name", "contact name",
    "mr", "mrs", "ms", "mx", "miss", "dr", "prof", "sir", "madam", "señor", "señora", "sr", "sra", "herr",
    "frau", "mme", "m.", "mlle", "dona", "don", "sig", "sig.ra", "pan", "pani",
    # greetings, sign-offs and name fields of other languages
    "hola", "bonjour", "hallo", "ciao", "olá", "hej", "hei", "salut", "saludos", "cordialement", "grüße",
    "gruesse", "groeten", "groetjes", "pozdrawiam", "saluti", "cumprimentos", "atenciosamente", "abraços",
    "merci", "gracias", "danke", "obrigado", "obrigada", "grazie", "mahalo", "kia ora", "ngā mihi", "g'day",
    "nombre", "apellido", "naam", "nom", "prénom", "nome", "cognome", "imię", "nazwisko", "imię i nazwisko",
    "beneficiario", "titular", "kontoinhaber", "destinatario", "empfänger", "holder", "account holder",
)
# Roles and relations that a name often follows ("patient Jane Doe", "my sister Amara"); a lone
# word after one must be a known name.
RELATIONS = (
    "patient", "traveller", "traveler", "passenger", "guest", "employee", "candidate", "applicant",
    "beneficiary", "cardholder", "recipient", "sender", "tenant", "landlord", "customer",
    "client", "caller", "member", "student", "pupil", "visitor", "driver", "owner", "signatory", "witness",
    "mum", "mom", "mother", "mama", "mam", "dad", "father", "papa", "sister", "brother", "sibling", "son",
    "daughter", "kid", "child", "baby", "wife", "husband", "partner", "spouse", "boyfriend", "girlfriend",
    "fiance", "fiancé", "fiancée", "ex", "friend", "bestie", "buddy", "roommate", "flatmate", "housemate",
    "boss", "manager", "supervisor", "colleague", "coworker", "co-worker", "teammate", "neighbour", "neighbor",
    "aunt", "auntie", "uncle", "cousin", "niece", "nephew", "grandma", "grandpa", "granny", "grandmother",
    "grandfather", "nan", "nana", "gran", "grandson", "granddaughter", "in-law", "stepmom", "stepdad",
    "stepson", "stepdaughter", "doctor", "gp", "dentist", "therapist", "counsellor", "counselor", "lawyer",
    "solicitor", "attorney", "accountant", "pharmacist", "vet", "nurse", "midwife", "nanny", "babysitter",
    "tutor", "teacher", "coach", "trainer", "mentor", "assistant", "pa", "realtor", "agent", "broker",
    "advisor", "adviser", "caseworker", "carer", "caregiver", "contact", "rep", "representative",
    "cleaner", "plumber", "electrician", "mechanic", "godmother", "godfather", "twin", "twins", "stepsister",
    "stepbrother", "half-sister", "half-brother", "bride", "groom", "wingman", "mate", "pal",
)
# Words a name may follow; it counts only when a speaking verb or a possessive follows too.
WEAK_CUES = (
    "with", "by", "ask", "asked", "tell", "told", "text", "texted", "email", "emailed",
    "ping", "pinged", "message", "messaged", "meet", "met", "spoke", "talked", "called", "call", "phoned",
    "invite", "invited", "thank", "remind", "visit", "visited", "see", "saw", "and", "&", "n", "or", "per",
    "approved", "assigned", "reported", "escalated", "cc'd", "cc:", "@",
)
PARTICLES = frozenset(
    "van der den de del della dela di da das dos do du la le bin binti bint ibn al el abu ben bat ter ten von "
    "zu y e mac mc st san santa".split())
_NAME_WORD = r"[^\W\d_][^\W\d_'’\-]*(?:['’\-][^\W\d_]+)*"
_CUE_WORDS = {c for c in (*ANNOUNCING, *RELATIONS, *WEAK_CUES)}
_LEVEL = {**dict.fromkeys(WEAK_CUES, 0), **dict.fromkeys(RELATIONS, 1), **dict.fromkeys(ANNOUNCING, 2)}
_CUE_RE = re.compile(
    r"(?<![\w])(" + "|".join(sorted((re.escape(c) for c in _CUE_WORDS), key=len, reverse=True)) + r")"
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
    for cue in _CUE_RE.finditer(text):
        level = 2 if _NAMING.search(cue.group(0)) else _LEVEL[cue.group(1).lower()]
        span = _name_after(text, cue.end(), level)
        if span is not None:
            hits.append(Hit("PERSON", *_absorb_common_names(text, *span), LIKELY))
    return hits + _named_by_verb(text) + _addressed(text)


_NAMING = re.compile(r"\b(?:name\s+is|named|called)\b", re.IGNORECASE)
_VOCATIVE = re.compile(r"^\s*(" + r"[^\W\d_][^\W\d_'’\-]*(?:['’\-][^\W\d_]+)*" + r")\s*[,:!](?!\d)")


def _addressed(text: str) -> list[Hit]:
    """A text that opens by naming someone (``Selamawit, the keys are...``, ``Fatima: new
    number``): a word the view capitalises as a name, not a place or a common word."""
    match = _VOCATIVE.match(text)
    if match is None:
        return []
    word = match.group(1)
    if not _capitalised(word) or word.lower() in places() or word.lower() not in gazetteer():
        return []
    return [Hit("PERSON", match.start(1), match.end(1), NAMED_ALONE)]


_SPEAKER = re.compile(
    r"^(?:'s\s|’s\s|\s+(?:said|says|asked|asks|told|tells|wants|wanted|thinks|replied|wrote|texted|emailed|"
    r"mentioned|called|agreed|confirmed)\b|\s+and\s+(?:i|me)\b)", re.IGNORECASE)


def _named_by_verb(text: str) -> list[Hit]:
    """A given name that is also a common word, acting as a person: ``Grace says``,
    ``Dawn's shift``, ``Amber and I``."""
    hits = []
    for word in re.finditer(_NAME_WORD, text):
        lower = word.group(0).lower()
        if ("g" in gazetteer().get(lower, "") and lower not in STOP_WORDS and lower not in places()
                and _SPEAKER.match(text[word.end():]) and not _after_determiner(text, word.start())):
            hits.append(Hit("PERSON", word.start(), word.end(), NAMED_ALONE))
    return hits


def _name_after(text: str, pos: int, level: int) -> tuple[int, int] | None:
    """The name right after a cue of ``level`` (2 announcing, 1 role or relation, 0 weak)."""
    words = list(re.finditer(_NAME_WORD, text[pos:pos + 120]))
    if not words or words[0].start() != 0:
        return None
    taken: list[re.Match[str]] = []
    for word in words[:6]:
        if taken and text[pos + taken[-1].end():pos + word.start()] not in (" ", ". ", "."):
            break
        value = word.group(0)
        if _capitalised(value):
            taken.append(word)
        elif taken and value.lower() in PARTICLES:
            taken.append(word)
        elif not taken and level and _common_name(value, text, pos + word.end()):
            taken.append(word)
        else:
            break
    while len(taken) > 1 and taken[-1].group(0).lower() in PARTICLES:
        taken.pop()
    if not taken or len(taken) > 4:
        return None
    start, end = pos + taken[0].start(), pos + taken[-1].end()
    if level == 0 and not _AFTER_NAME.match(text[end:]):
        return None
    alone = len(taken) == 1 and taken[0].group(0).lower() not in gazetteer()
    if level < 2 and alone or text[start:end].lower() in places():
        return None  # after a role or a plain verb, a lone word must be a known name
    return start, end


def _capitalised(word: str) -> bool:
    return word[:1].isupper() and capitalised_share(word.lower()) is None


def _common_name(word: str, text: str, end: int) -> bool:
    """A common word used as a name right after a strong cue (``Hi grace,``, ``Hi Will,``):
    only a known given name, and only when nothing but punctuation or a name follows."""
    share = capitalised_share(word.lower())
    if share is None or "g" not in gazetteer().get(word.lower(), ""):
        return False
    following = text[end:end + 2]
    return not following or following[0] in ",.!?;:)" or following.strip()[:1].isupper()


# ---------------------------------------------------------------- names the gazetteer knows

# spaCy labels that say a lone known name is something else (its GPE label is wrong on
# names too often to count: the place list decides places).
NOT_NAME_CONTEXT = frozenset({"product", "work_of_art", "law", "language", "event", "date", "time", "money",
                              "percent", "quantity", "cardinal", "ordinal", "norp"})
# Words that end organisation names: a run ending in one is not a person.
ORG_WORDS = frozenset(
    "inc ltd llc llp plc gmbh ag sa sas sarl bv nv srl spa oy ab as asa kk pty co corp corporation company group "
    "holdings labs lab bank university college school institute hospital clinic foundation trust partners "
    "associates consulting solutions systems technologies tech software studio studios media press airlines "
    "airways motors hotel hotels restaurant cafe café bar pharmacy ministry council agency".split())
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
        if score < LIKELY and (text[start:end].lower() in places() or _labelled_other(start, end, entity_labels)):
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


def _absorb_common_names(text: str, start: int, end: int) -> tuple[int, int]:
    """``Li wei``, ``Owen price``: a neighbouring word the lexicon knows as common but that is
    a known name belongs to the name - a family name after it, a given name before it."""
    after = re.match(r" (" + _NAME_WORD + r")", text[end:])
    if after and _name_word(after.group(1), "s"):
        end += after.end()
    before = re.search(r"(" + _NAME_WORD + r") $", text[:start])
    if before and _name_word(before.group(1), "g"):
        start = before.start(1)
    return start, end


def _name_word(word: str, kind: str) -> bool:
    lower = word.lower()
    return kind in gazetteer().get(lower, "") and lower not in STOP_WORDS and lower not in _CUE_WORDS


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
    if len(core) >= 2 and _AFTER_NAME.match(text[end:]):
        return NAMED_ALONE
    return 0.0


NAMED_ALONE = 0.75  # a lone given name, or a run followed by "said", "'s" ...: redacted, not certain


def _labelled_other(start: int, end: int, labels: Sequence[tuple[int, int, str]]) -> bool:
    return any(s <= start and end <= e and label.lower() in NOT_NAME_CONTEXT for s, e, label in labels)


_RUN_WORD = re.compile(r"[A-Z]\.|" + _NAME_WORD)


def _proper_runs(text: str) -> list[tuple[int, int, list[str]]]:
    runs: list[tuple[int, int, list[str]]] = []
    current: list[re.Match[str]] = []
    for word in _RUN_WORD.finditer(text):
        value = word.group(0)
        joined = bool(current) and text[current[-1].end():word.start()] == " "
        proper = _capitalised(value) or _INITIAL.fullmatch(value) is not None
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
