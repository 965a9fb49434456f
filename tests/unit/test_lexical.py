"""The lexical signal (``ibex_worker.lexical``): what is normalised away, what is not, and
that the bands propose what they should, for one org and agent only."""

from __future__ import annotations

from ibex_worker import lexical


def test_case_spacing_and_punctuation_are_normalised_but_accents_are_kept():
    assert lexical.normalise("  The  Staging-Server, uses PORT 8080!  ") == "the staging server uses port 8080"
    assert lexical.normalise("Ask [PERSON] at the café") == "ask [person] at the café"
    assert lexical.similarity("Meet at the café on Monday.", "Meet at the cafe on Monday.") < 1.0


def test_a_typo_or_a_spelling_variant_stays_close_and_unrelated_texts_do_not():
    assert lexical.similarity("The user's favourite colour is dark blue.",
                              "The user's favorite color is dark blue.") > 0.75
    assert lexical.similarity("Call Jon Smyth about the renewal.", "Call John Smith about the renewal.") > 0.7
    assert lexical.similarity("The team standup is at 9am on Mondays.",
                              "The billing service retries failed card payments.") < 0.1


def test_short_texts_have_no_lexical_similarity():
    assert lexical.similarity("cat food", "car food") is None
    assert lexical.profile("cat food", "o", "a").bands == []
    assert lexical.similarity("cat food", "cat food") is None  # exact copies are the exact-dedup stage's


def test_the_fingerprint_is_the_set_of_words():
    assert lexical.fingerprint("Port 8080, staging!") == lexical.fingerprint("staging  port 8080")
    assert lexical.fingerprint("port 8080 staging") != lexical.fingerprint("port 8081 staging")


def test_close_texts_share_bands_within_one_agent_and_never_across_agents():
    a, b = "The staging server uses port 8080 for the API.", "The staging server uses port 8081 for the API."
    mine, close = lexical.profile(a, "org", "agent"), lexical.profile(b, "org", "agent")
    assert len(mine.bands) == lexical.BANDS and set(mine.bands) & set(close.bands)
    assert mine == lexical.profile(a, "org", "agent")  # deterministic: stored bands stay comparable
    assert not set(mine.bands) & set(lexical.profile(a, "org", "other-agent").bands)
    assert not set(mine.bands) & set(lexical.profile(a, "other-org", "agent").bands)
    far = lexical.profile("Payroll questions go to the finance team, not to IT.", "org", "agent")
    assert not set(mine.bands) & set(far.bands)
