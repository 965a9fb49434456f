"""Text in another language than English: its function words, and the PERSON findings they
disprove.

The analysed view capitalises every word the English lexicon does not know, so that a name in
a lower-case chat stands out; in a sentence of Spanish, German or Hinglish that capitalises
whole phrases (``Te Mando El Contrato``), which spaCy then tags as people. In a sentence that
reads as another language, a finding is cut at that language's function words and only the
parts that hold a known name are kept. Works on the view alone, so the result does not
depend on the producer's casing.
"""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache

from spacy.lang.en.stop_words import STOP_WORDS as ENGLISH_STOP_WORDS

from ibex_worker.pii.lexicon import common_words, gazetteer

# spaCy's stop-word lists of the languages users of an English service most often mix in.
_SPACY_LANGUAGES = ("es", "de", "fr", "pt", "it", "nl", "id", "tl", "tr", "vi", "ro", "sv", "nb", "da", "pl", "ca")
# Hindi and Urdu written in Latin script (spaCy's Hindi list is in Devanagari).
_HINGLISH = frozenset("""
hai hain hoon hun tha thi ka ki ke ko se mein mera meri mere tera teri tere apna apni uska uski unka unki kya
kyun kyon kaise kab kahan nahi nahin haan bhi aur lekin toh abhi aaj kal phir bas yeh woh yahan wahan raha rahi
rahe karo karna karke karunga karungi karenge kiya hua hui hoga hogi gaya gayi gaye diya diye liya mila milega
bolo bata batao dekh dekho chal chalo yaar bhai bhaiya didi wala wali waala naya nayi purana kuch koi kaun
kitna kitne bahut zyada pehle baad saath liye bhej bhejo bhejta bhejti bhejna bhejdo dena lena dunga dungi
chahiye sakta sakti accha acha theek thik sab ghar kaam paisa paise
""".split())
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
FOREIGN_SHARE = 0.2  # two function words of another language in a sentence this short make it foreign


@lru_cache(maxsize=1)
def function_words() -> frozenset[str]:
    """Function words of other languages that are no English word: ``el``, ``dass``, ``hai``."""
    words: set[str] = set(_HINGLISH)
    for code in _SPACY_LANGUAGES:
        words |= {w.lower() for w in _stop_words(code)}
    english = {w for w, share in common_words().items() if share > 0}
    return frozenset(w for w in words if len(w) >= 2 and " " not in w and w not in ENGLISH_STOP_WORDS
                     and w not in english)


def _stop_words(code: str) -> set[str]:
    """spaCy's stop words of language ``code``, read from their module alone: importing
    ``spacy.lang.<code>.stop_words`` runs the language package first, and French's tokenizer
    exceptions take seconds to compile in every process that loads the redactor."""
    spec = importlib.util.find_spec("spacy.lang")
    assert spec is not None and spec.submodule_search_locations
    path = f"{spec.submodule_search_locations[0]}/{code}/stop_words.py"
    module_spec = importlib.util.spec_from_file_location(f"ibex_stop_words_{code}", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return set(module.STOP_WORDS)


def reads_foreign(text: str) -> bool:
    words = [w.lower() for w in _WORD.findall(text)]
    distinct = {w for w in words if w in function_words()}
    return len(distinct) >= 3 or len(distinct) == 2 and 2 >= FOREIGN_SHARE * len(words)


def names_in_foreign_text(text: str, start: int, end: int, particles: frozenset[str]) -> list[tuple[int, int]]:
    """The parts of a PERSON finding ``[start, end)`` of a foreign-language ``text`` that are
    names: the finding is cut at the language's function words, and a part is kept when a
    name list knows one of its words (``Bu Sri untuk Putu`` gives ``Bu Sri`` and ``Putu``;
    ``hoy hablé con`` gives nothing; see ``_named``)."""
    foreign, known = function_words(), gazetteer()
    parts: list[list[re.Match[str]]] = [[]]
    for word in _WORD.finditer(text, start, end):
        lower = word.group(0).lower()
        if lower in foreign and lower not in particles:
            parts.append([])
        else:
            parts[-1].append(word)
    return [(part[0].start(), part[-1].end()) for part in parts if _named(part, known, particles)]


def _named(part: list[re.Match[str]], known: dict[str, str], particles: frozenset[str]) -> bool:
    """A part holds a name the gazetteer knows; a part of one word must be a given name (a
    family name alone is as often a word of that language: "sagen", "hoon")."""
    words = [w.group(0).lower() for w in part if w.group(0).lower() not in particles]
    if len(part) == 1:
        return bool(words) and "g" in known.get(words[0], "")
    return any(w in known for w in words)
