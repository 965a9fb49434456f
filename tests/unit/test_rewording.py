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
])
def test_the_tagger_reads_rewordings_and_other_subjects(tagger, a, b, same):
    assert (len(rewording.differing(tagger.terms(a), tagger.terms(b))) <= rewording.MAX_DIFFERING) is same
