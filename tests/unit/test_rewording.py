"""The rewording signal (``ibex_worker.rewording``): which content words stand on one side
only, read from tagged tokens (pure), and with the real spaCy tagger."""

from __future__ import annotations

import pytest

from ibex_worker import rewording


def _terms(*words: tuple[str, str]) -> frozenset[tuple[str, str]]:
    return frozenset(words)


def test_only_content_words_on_one_side_count_by_lemma():
    a = _terms(("user", "NOUN"), ("call", "VERB"), ("afternoon", "NOUN"))
    b = _terms(("user", "NOUN"), ("phone", "VERB"), ("afternoon", "NOUN"), ("quick", "ADJ"))
    assert rewording.differing(a, b) == ["quick"]          # "call"/"phone" are verbs
    assert len(rewording.differing(a, b)) <= rewording.MAX_DIFFERING


def test_a_content_word_swapped_for_another_is_another_fact():
    cfo = _terms(("cfo", "PROPN"), ("want", "VERB"), ("summary", "NOUN"))
    cto = _terms(("cto", "PROPN"), ("want", "VERB"), ("summary", "NOUN"))
    assert rewording.differing(cfo, cto) == ["cfo", "cto"]
    assert len(rewording.differing(cfo, cto)) > rewording.MAX_DIFFERING


@pytest.mark.parametrize("words, when", [
    (["mondays", "wednesday"], True),                      # "on Wednesdays" / "on Mondays"
    (["1", "15", "august", "september"], True),
    (["november", "october", "second"], True),
    (["14th", "15th"], True),
    (["9:30", "evening"], True),
    (["12", "21"], False),                                 # a count as much as a day
    (["last", "next"], False),                             # an order as much as a date
    (["friday", "invoice"], False),
    (["march", "ticket"], False),
    ([], False),
])
def test_only_words_that_say_when_on_one_side_only_is_another_date_of_one_fact(words, when):
    assert rewording.only_when_differs(words) is when
    assert rewording.reworded(words) is (when or len(words) <= rewording.MAX_DIFFERING)


def test_placeholders_are_one_term_of_their_type_and_their_words_are_not_read():
    text = "Call [PERSON] or [PHONE_NUMBER?] today"
    tokens = [(0, 4, "call", "VERB", False), (5, 6, "[", "PUNCT", True), (6, 12, "PERSON", "PROPN", False),
              (12, 13, "]", "PUNCT", True), (14, 16, "or", "CCONJ", True), (17, 18, "[", "PUNCT", True),
              (18, 30, "PHONE_NUMBER", "PROPN", False), (30, 32, "?]", "PUNCT", True),
              (33, 38, "today", "NOUN", False)]
    assert rewording.terms_of(tokens, text) == _terms(("call", "VERB"), ("[person]", "PROPN"),
                                                      ("[phone_number]", "PROPN"), ("today", "NOUN"))


@pytest.fixture(scope="module")
def tagger():
    from ibex_worker.adapters.tagger import SpacyTagger
    from ibex_worker.config import Settings
    from ibex_worker.runtime import load_nlp

    return SpacyTagger(load_nlp(Settings(environment="test")))


@pytest.mark.parametrize("a, b, same", [
    ("[PERSON] would rather be called after 3 pm.", "Calling [PERSON] after 3 pm works better.", True),
    ("The user does not want e-mail reminders.", "The user wants e-mail reminders.", True),
    ("The CFO wants a summary of expenses every Friday.", "The CTO wants a summary of expenses every Friday.",
     False),
    ("The user's son plays the piano.", "The user's daughter plays the piano.", False),
    ("Garbage collection in the street is on Wednesdays.", "Garbage collection in the street is on Mondays.",
     True),
    ("The office will move to the new building in January.", "The office will move to the new warehouse in April.",
     False),
])
def test_the_tagger_reads_rewordings_and_other_subjects(tagger, a, b, same):
    assert rewording.reworded(rewording.differing(tagger.terms(a), tagger.terms(b))) is same
