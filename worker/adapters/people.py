"""Who is a person: the name model (``ibex_worker.pii.name_model``) over the findings of the
recognizers (``ibex_worker.adapters.recognizers``) and their refinement.

Every finder's people before refinement, and what refinement kept, are the model's
evidence; the model's names replace refinement's people. What no context makes a person
(an id, a place, a language alone) is not taken from the model unless the rules found a
person there too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from spacy.lang.en.stop_words import STOP_WORDS

from ibex_worker.adapters.recognizers import (CJK_NAMED, CUED, HANDLE_NAMED, ID_LIKE, KNOWN, NOT_NAME_WORDS,
                                              OTHER_SCRIPT, SCRIPT_NAMED, SPACY, THING_NAMED, plausible_person)
from ibex_worker.pii import languages, name_model, name_neighbours, not_names
from ibex_worker.pii.casing import View
from ibex_worker.pii.lexicon import places
from ibex_worker.pii.name_words import PARTICLES
from ibex_worker.pii.policy import Finding
from ibex_worker.pii.vocab import BRANDS

# The finders whose people the name model reads as evidence, by the source name it knows them by.
_SOURCE_OF = {SPACY: "spacy", CUED: "cued", KNOWN: "known", THING_NAMED: "thing", OTHER_SCRIPT: "script"}
MODEL_NAMED = "IbexNameModel"
MODEL_NAME_SCORE = 0.85  # a name the model is sure of (its own threshold) is redacted, not quarantined
# A word the model is this sure is a name, joined to a person by "and", is one too although it
# is also a place ("Ivy and Jasper", "ade and kemi"); a word it doubts is not ("Hilton and Marriott").
LISTED_NAME_SURE = 0.5


def name_evidence(raw: Sequence[Finding], refined: Sequence[Finding]) -> name_model.Evidence:
    spans: dict[str, list[tuple[int, int]]] = {}
    for f in raw:
        if f.entity_type == "PERSON" and f.recognizer in _SOURCE_OF:
            spans.setdefault(_SOURCE_OF[f.recognizer], []).append((f.start, f.end))
    for f in refined:
        spans.setdefault("kept" if f.entity_type == "PERSON" else "other", []).append((f.start, f.end))
    return name_model.Evidence(spans)


def arbitrate_names(view: View, doc: Sequence[Any], raw: Sequence[Finding], refined: Sequence[Finding],
                    model: name_model.NameModel) -> list[Finding]:
    """The refined findings with their people replaced by the names the model finds, reading
    every finder's people (before and after refinement) as evidence; in text written mostly
    in Chinese, Japanese, Korean or Thai, which the model cannot read, those names are
    ``cjk_names``' and ``script_names``'; an account's handle after a user's key is
    ``handles``'.
    Then the names the structure around them gives (an alias in brackets, the other speakers
    of a text in turns, the rest of a list of people, a signature:
    ``name_neighbours.aliases_and_speakers``)."""
    words = name_model.words_of(view.text, doc)
    foreign = languages.reads_foreign(view.text)
    probabilities = model.probabilities(view.text, words, name_evidence(raw, refined), foreign=foreign)
    kept = [(f.start, f.end) for f in refined if f.entity_type == "PERSON"]
    cjk_text = _cjk_text(view.text)
    people = [Finding("PERSON", *_whole_words(view.text, start, end), MODEL_NAME_SCORE, MODEL_NAMED)
              for start, end in name_model.name_spans(view.text, words, probabilities, model.threshold)
              if _model_person(view.text, start, end, kept)
              and not (cjk_text and _CJK_SPAN.fullmatch(view.text[start:end]))]
    others = [(f.start, f.end) for f in refined if f.entity_type != "PERSON"]
    people = people if foreign else [_grown(view.text, f, others) for f in people]
    named = [(f.start, f.end) for f in refined if f.entity_type == "PERSON" and f.recognizer in (KNOWN, CUED)]
    people = people if foreign else [_with_the_rules_name(view.text, f, named, others) for f in people]
    people = [Finding("PERSON", *_trimmed(view, *_whole_words(view.text, f.start, f.end)), f.score, f.recognizer)
              for f in people]
    taken = [f for f in refined
             if f.entity_type == "PERSON" and f.recognizer in (CJK_NAMED, SCRIPT_NAMED, HANDLE_NAMED)]
    found = [(f.start, f.end) for f in people + taken]
    listed = [(h.start, h.end) for h in name_neighbours.coordinated(view.text, found, NOT_NAME_WORDS)
              if plausible_person(view.text[h.start:h.end], placed=True)
              and all(p >= LISTED_NAME_SURE for w, p in zip(words, probabilities, strict=True)
                      if h.start <= w.start < h.end)]
    structural = [Finding("PERSON", h.start, h.end, h.score, MODEL_NAMED)
                  for h in name_neighbours.aliases_and_speakers(view.text, found + listed, NOT_NAME_WORDS,
                                                                    foreign=foreign)]
    structural += [Finding("PERSON", start, end, MODEL_NAME_SCORE, MODEL_NAMED) for start, end in listed]
    return [f for f in refined if f.entity_type != "PERSON"] + people + taken + structural


# Chinese, Japanese, Korean or Thai writing. In text mostly of these scripts the model, which
# reads words between spaces, takes a whole unspaced sentence for a name ("黄金价格今天又涨了"):
# there ``cjk_names`` and ``script_names`` decide. A short run of them in Latin text is the
# model's to decide.
_CJK_LETTER = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uff66-\uff9f\uac00-\ud7a3"
                         r"\u0e00-\u0e7f]")
_CJK_SPAN = re.compile(rf"(?:{_CJK_LETTER.pattern}|[\s\u3000-\u303f\uff01-\uff65])+")


_NOT_LATIN = re.compile(r"[^\x00-\u024f\u1e00-\u1eff]")


def _grown(text: str, finding: Finding, others: Sequence[tuple[int, int]]) -> Finding:
    """A name the model found, grown over the rest of its name (``name_neighbours.completed``:
    "John [Smith]", where the model, trained on text that names "John Lewis" and "Elton John",
    doubts "John"), never over a brand ("Ahmed [Tesla]"), into another finding or over words of
    another script."""
    start, end = name_neighbours.completed(text, finding.start, finding.end, NOT_NAME_WORDS | BRANDS)
    if any(s < end and start < e for s, e in others) or _NOT_LATIN.search(text[start:finding.start]
                                                                          + text[finding.end:end]):
        return finding  # another finding, or words of a script the view capitalises whole
    return Finding(finding.entity_type, start, end, finding.score, finding.recognizer)


def _with_the_rules_name(text: str, finding: Finding, kept: Sequence[tuple[int, int]],
                         others: Sequence[tuple[int, int]]) -> Finding:
    """A name the model found part of, as a whole where a name rule found it whole in up to three
    capitalised words (the model doubts a given name it does not know: "Lowri [Pritchard]"),
    never into another finding. Not in text of another language, whose view capitalises every
    word."""
    start, end = finding.start, finding.end
    for s, e in kept:
        words = text[s:e].split()
        if s < end and start < e and len(words) <= 3 and all(word[:1].isupper() for word in words):
            start, end = min(start, s), max(end, e)
    if (start, end) == (finding.start, finding.end) or any(s < end and start < e for s, e in others):
        return finding
    return Finding(finding.entity_type, start, end, finding.score, finding.recognizer)


def _whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """The span grown to whole words: the model's words end at a combining mark, which scripts
    such as Devanagari and Thai write inside words ("शर्मा" would be cut to "श" and "र")."""
    while start > 0 and _in_word(text[start - 1]):
        start -= 1
    while end < len(text) and _in_word(text[end]):
        end += 1
    return start, end


# "I'm Sarah", "Anna will call": a speaker's "I'm" before a name, and a function word written in
# lower case after a name written with capitals, are no part of the name (the view's case is not
# the writer's: it lowers names that are also words, and capitalises names in lower-case text).
# Only function words: "Maria gonzalez" is a name a careless writer did not capitalise.
_SPEAKER_BEFORE = re.compile(r"I['’](?:m|ve|ll|d)\s+")
_LOWER_WORD_AFTER = re.compile(r"\s+([^\W\d_]+)$")


def _trimmed(view: View, start: int, end: int) -> tuple[int, int]:
    """The span without a speaker's "I'm" before the name and, after a name whose first word
    the writer capitalised, function words the writer wrote in lower case ("will", "and") that
    are no particle of a name ("de", "van")."""
    if (speaker := _SPEAKER_BEFORE.match(view.text, start, end)) is not None and speaker.end() < end:
        start = speaker.end()
    first = view.original[slice(*view.to_original(start, start + 1))]
    while first.isupper() and (tail := _LOWER_WORD_AFTER.search(view.text, start, end)) is not None \
            and tail.group(1) in STOP_WORDS and tail.group(1) not in PARTICLES \
            and view.original[slice(*view.to_original(tail.start(1), tail.end(1)))].islower():
        end = tail.start()
    return start, end


def _in_word(ch: str) -> bool:
    return ch.isalpha() or unicodedata.category(ch)[0] == "M"


def _cjk_text(text: str) -> bool:
    letters = sum(1 for ch in text if ch.isalpha())
    return letters > 0 and len(_CJK_LETTER.findall(text)) * 2 > letters


def _model_person(text: str, start: int, end: int, kept: Sequence[tuple[int, int]]) -> bool:
    """Not an id, and, unless the rules found a person there too (``Julia from accounting``,
    ``my sister Georgia``), not only a place or the name of a language, a product, a brand,
    a month or a nationality."""
    value = text[start:end]
    if ID_LIKE.search(value) or not_names.not_a_name(text, start, end):
        return False
    if any(s < end and start < e for s, e in kept):
        return True
    words = re.findall(r"[^\W\d_]+", value.lower())
    return not (words and all(w in NOT_NAME_WORDS for w in words) or value.lower() in BRANDS
                or value.lower() in places())
