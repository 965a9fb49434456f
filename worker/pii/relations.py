"""Names after a family or household word of another language (``la abuela Rosario``, ``o
cunhado Zé Carlos``, ``Kuzen Umut'un``, ``Kakak ipar pengguna, Intan``), and a given name opening
a sentence about what only a person is or does (``Victoria is the user's physiotherapist``).

In text of another language the analysed view capitalises nearly every word (the lexicon is
English), so what follows such a word is a name only when it is a given name the gazetteer
knows, and a second word joins it only when the gazetteer knows it too ("la hermana del
usuario" names nobody). English roles and relations are ``name_words.RELATIONS``.
"""

from __future__ import annotations

import re

from spacy.lang.en.stop_words import STOP_WORDS

from ibex_worker.pii.languages import reads_foreign
from ibex_worker.pii.lexicon import gazetteer, is_common, places
from ibex_worker.pii.name_words import ORG_WORDS, PARTICLES, RELATIONS
from ibex_worker.pii.numbers import LIKELY, Hit

# Spanish, Portuguese, Italian, French, German, Dutch, Polish, Turkish, Indonesian, Swahili,
# Tagalog, Vietnamese and Hindi (in Latin letters) words for family members, neighbours and people who look after a
# household; none is also a common word of another of these languages.
_WORDS = (
    "abuela", "abuelo", "tía", "tío", "hermana", "hermano", "cuñada", "cuñado", "suegra",
    "suegro", "sobrina", "sobrino", "vecina", "vecino", "madrina", "padrino", "niñera", "nuera", "yerno",
    "avó", "avô", "tia", "tio", "irmã", "irmão", "cunhada", "cunhado", "sogra", "sogro", "sobrinha", "sobrinho",
    "vizinha", "vizinho", "madrinha", "padrinho", "babá", "nonna", "nonno", "zia", "zio", "cugina", "cugino",
    "cognata", "cognato", "suocera", "suocero", "mamie", "papi", "tante", "oncle", "cousine",
    "belle-mère", "beau-père", "voisine", "voisin", "marraine", "parrain", "nounou", "institutrice", "oma",
    "opa", "onkel", "schwester", "bruder", "schwiegermutter", "schwiegervater", "nachbarin", "nachbar",
    "tagesmutter", "patentante", "kollegin", "kollege", "oom", "buurvrouw", "buurman", "schoonmoeder",
    "schoonvader", "zus", "broer", "babcia", "dziadek", "ciocia", "wujek", "kuzynka", "kuzyn", "siostra",
    "sąsiadka", "sąsiad", "teściowa", "teść", "anneanne", "babaanne", "teyze", "amca", "dayı", "kuzen",
    "abla", "kayınvalide", "kayınpeder", "komşu", "yenge", "enişte", "kakak", "adik", "sepupu", "mertua",
    "shangazi", "mjomba", "binamu", "tita", "tito", "lola", "lolo", "pinsan", "kuya", "thầy", "bác",
    "szwagier", "szwagierka", "bratowa", "wnuczka", "dada", "ninang", "ninong", "bua", "mausi", "chachi",
    "chacha", "bhabhi", "didi", "bhaiya", "jiju",
)
_NAME = r"([^\W\d_][^\W\d_\-]*)"  # a case's ending after an apostrophe is no part of it ("Umut'un")
# The family word, then words of the same phrase that are no name ("ipar pengguna", "del usuario"
# are skipped only up to a comma: "Kakak ipar pengguna, Intan"), then the name.
_FAMILY = r"(?<![\w\-])(?:" + "|".join(sorted(map(re.escape, _WORDS), key=len, reverse=True)) + r")"
_RELATIVE = re.compile(_FAMILY + r"(?:(?:\s+[^\W\d_]+){0,3}\s*,)?\s+" + _NAME + r"(?:\s+" + _NAME + r")?",
                       re.IGNORECASE)
_FAMILY_WORD = re.compile(_FAMILY, re.IGNORECASE)
# Possessives written after the family word ("dada yangu Neema", "ninang niya na si Corazon").
_RIGHT_AFTER = re.compile(r"(?:\s+(?:yangu|wangu|yake|wake|niya|ko|mo|saya|ku)(?:\s+na)?(?:\s+si)?)?\s+" + _NAME + r"(?:\s+" + _NAME + r")?",
                          re.IGNORECASE)


def relatives(text: str) -> list[Hit]:
    """A known given name right after a family word of another language (or after the words
    of its phrase, up to a comma), with a second known name after it when there is one."""
    hits = []
    for match in _RELATIVE.finditer(text):
        word = _FAMILY_WORD.match(text, match.start())
        direct = _RIGHT_AFTER.match(text, word.end()) if word else None
        if direct is not None and _known_given(direct.group(1).lower()):
            match = direct  # "schoonmoeder Ria komt zondag, kun je": the name right after the word
        first, second = match.group(1).lower(), (match.group(2) or "").lower()
        if not _known_given(first):
            continue
        end = match.end(2) if second and second in gazetteer() and not _common(second) else match.end(1)
        hits.append(Hit("PERSON", match.start(1), end, LIKELY))
    return hits


def _known_given(word: str) -> bool:
    return "g" in gazetteer().get(word, "") and word not in STOP_WORDS and word not in FAMILY_WORDS \
        and word not in _PRONOUNS and word not in PARTICLES


# Pronouns of those languages that the gazetteer also holds as names ("Kakak Anda harus ...").
_PRONOUNS = frozenset({"anda", "kamu", "dia", "saya", "mereka", "kami", "kita", "ela", "ele", "você", "usted", "lei",
                       "lui", "elle", "ihr", "sie", "zij", "hij", "ona", "on", "sen", "siz", "wewe", "yeye", "yangu",
                       "wangu", "yake", "wake", "niya", "ko", "mo", "ku"})


def _common(word: str) -> bool:
    return word in STOP_WORDS or word in FAMILY_WORDS or is_common(word)


FAMILY_WORDS = frozenset(_WORDS)


# A known given name opening a sentence, then what only a person is or does: "Victoria is the
# user's physiotherapist", "Pilar from the user's Spanish class", "Gloria from church", "Young
# still owes the user £140", "Liberty babysat last weekend" (the name model misses names that
# are words or places when nothing else in the sentence is a name).
_OPENING = re.compile(
    r"(?:^|(?<=[.!?;]\s)|(?<=\n))([A-Z][^\W\d_]+)\s+(?:"
    r"(?:is|was)\s+(?:the\s+user['’]s|my|our|his|her|their)\s+(?:[^\W\d_]+(?:['’]s)?\s+){0,2}"
    r"(?P<role>[^\W\d_]+)\b(?!['’])"
    r"|from\s+(?:the\s+user['’]s|my|our|his|her|their|church|work|school|class|next\s+door|upstairs|downstairs|"
    r"the\s+gym|the\s+office)\b|(?:still\s+)?owes\b|babysat\b|babysits\b|is\s+owed\b)")


def opening_people(text: str) -> list[Hit]:
    """See ``_OPENING``: the word must be a given name the gazetteer knows, and after "is the
    user's" the words must end in a role or a relation ("Paris is my favourite city" names none)."""
    hits = []
    for match in _OPENING.finditer(text):
        word = match.group(1).lower()
        role = (match.group("role") or "").lower()
        if _known_given(word) and (not match.group("role") or role in _ROLES or role.rstrip("s") in _ROLES):
            hits.append(Hit("PERSON", match.start(1), match.end(1), LIKELY))
    return hits


_ROLES = frozenset(RELATIONS) | {"physiotherapist", "physio", "sitter", "housekeeper", "childminder", "godchild",
                                  "goddaughter", "godson", "carer", "hairdresser", "barber", "landlady", "osteopath",
                                  "chiropractor", "psychologist", "psychiatrist", "paediatrician", "pediatrician"}


# "Babajide Oyelaran, former landlord, +44 ...", "Thandiwe Nkosi, the user's physio": two or
# three capitalised words, then after a comma what only a person is.
_APPOSITION = re.compile(
    r"(?<![\w'’\-])([A-Z][^\W\d_]+(?:[ \-][A-Z][^\W\d_]+){1,2}),\s+(?:(?:a|an|the|our|my|his|her|their|"
    r"the\s+user['’]s|former|ex|previous|new|current|retired|family|personal|private)[\s\-]+){0,3}"
    r"(?P<role>[a-z]+)(?=\s*(?:[,.;:)!?]|$)|\s+(?:of|at|for|from|in|and|who|with|since)\b)")


def appositive_people(text: str) -> list[Hit]:
    """See ``_APPOSITION``, in English text: the role must be a person's (``_ROLES``), and no
    word of the name a common word that is no given name, a place or a firm's word ("Acme
    Plumbing, the plumber" names a firm)."""
    if reads_foreign(text):
        return []  # "... 20 dakikada bir kalkıyor, son sefer": "son" is "last" in Turkish
    hits = []
    for match in _APPOSITION.finditer(text):
        words = re.split(r"[ \-]", match.group(1).lower())
        if match.group("role") in _ROLES and not any(
                _common(w) and not _known_given(w) or w in places() or w in ORG_WORDS for w in words):
            hits.append(Hit("PERSON", match.start(1), match.end(1), LIKELY))
    return hits
