"""The PII stage over every free-text field, with a fake redactor (pure logic): metadata is
redacted in place, a label, the category, the source or a metadata key holding personal
data refuses the write naming the field, the request keeps no raw text, and a release only
analyses the reviewer's note."""

from __future__ import annotations

import re

from tests.conftest import make_settings
from ibex_worker.adapters.redactor import RedactionOutcome
from ibex_worker.pii.policy import Finding
from ibex_worker.pipeline import pii
from ibex_worker.pipeline.context import StageDeps, WriteContext

CANARY = "Zxqv Canary"
UNSURE = "7777-UNSURE"


class FakeRedactor:
    """Flags CANARY as a certain PERSON and UNSURE as an uncertain PHONE_NUMBER."""

    name = "fake"

    def __init__(self):
        self.seen: list[str] = []

    def redact_many(self, texts):
        self.seen.extend(texts)
        return [self._one(text) for text in texts]

    def _one(self, text):
        certain = [Finding("PERSON", m.start(), m.end(), 0.9) for m in re.finditer(CANARY, text)]
        unsure = [Finding("PHONE_NUMBER", m.start(), m.end(), 0.5) for m in re.finditer(UNSURE, text)]
        content = text.replace(CANARY, "[PERSON]").replace(UNSURE, "[PHONE_NUMBER?]")
        reasons = ["low_confidence:PHONE_NUMBER"] if unsure else []
        entities = {}
        for f in certain + unsure:
            entry = entities.setdefault(f.entity_type, {"count": 0, "redacted": 0, "masked": 0, "max_score": 0})
            entry["count"] += 1
        return RedactionOutcome(content, certain + unsure, certain, unsure, reasons, "subject|key",
                                {"status": "quarantined" if reasons else "redacted" if certain else "clean",
                                 "entities": entities, "quarantine_reasons": reasons})


def _ctx(request, raw="A plain note.", **fields):
    return WriteContext(job_id="j", org_id="o", agent_id="a", request=request, raw_content=raw, **fields)


def _run(*ctxs):
    redactor = FakeRedactor()
    pii.run_batch(list(ctxs), StageDeps(settings=make_settings(), engine=None, vector_store=None, redactor=redactor))
    return redactor


def test_metadata_strings_are_redacted_in_place_at_any_depth():
    job = _ctx({"source": "chat", "metadata": {"who": CANARY, "thread": [{"from": f"{CANARY} via sms"}, 3],
                                                "ok": "nothing here", "n": 5}})
    _run(job)
    assert job.failure is None
    assert job.request["metadata"] == {"who": "[PERSON]", "thread": [{"from": "[PERSON] via sms"}, 3],
                                       "ok": "nothing here", "n": 5}
    assert job.pii_report["fields"] == {"metadata": {"PERSON": 2}}
    assert job.raw_content is None and CANARY not in repr(job.request)


def test_an_uncertain_metadata_value_is_masked_and_quarantines_the_memory():
    job = _ctx({"source": "chat", "metadata": {"callback": UNSURE}})
    _run(job)
    assert job.request["metadata"] == {"callback": "[PHONE_NUMBER?]"}
    assert job.quarantine_reasons == ["low_confidence:PHONE_NUMBER"]
    assert job.pii_report["status"] == "quarantined"


def test_personal_data_in_a_label_category_source_or_metadata_key_refuses_the_write_naming_the_field():
    jobs = [
        _ctx({"source": "chat", "labels": [{"label": "billing", "confidence": 1.0},
                                          {"label": CANARY, "confidence": 0.5}]}),
        _ctx({"source": "chat", "category": UNSURE}),
        _ctx({"source": f"call with {CANARY}"}),
        _ctx({"source": "chat", "metadata": {CANARY: "value"}}),
        _ctx({"source": "chat", "labels": [{"label": "billing", "confidence": 1.0}]}),
    ]
    _run(*jobs)
    failures = [job.failure.as_dict() if job.failure else None for job in jobs]
    assert [f["code"] if f else None for f in failures] == ["PII_IN_FIELD"] * 4 + [None]
    assert [[d["field"] for d in f["details"]] for f in failures[:4]] == \
        [["labels[1].label"], ["category"], ["source"], ["metadata"]]
    assert all(CANARY not in str(f) and UNSURE not in str(f) for f in failures[:4])
    assert all(job.request == {} and job.raw_content is None for job in jobs[:4])


def test_one_call_analyses_each_distinct_text_once_for_the_whole_batch():
    jobs = [_ctx({"source": "chat", "labels": [{"label": "billing", "confidence": 1.0}]}, raw=f"note {i}")
            for i in range(3)]
    redactor = _run(*jobs)
    assert sorted(redactor.seen) == ["billing", "chat", "note 0", "note 1", "note 2"]


def test_a_release_analyses_only_the_reviewers_note_and_clears_the_quarantine():
    job = _ctx({"source": "chat", "metadata": {"callback": "[PHONE_NUMBER?]"}, "note": f"checked with {CANARY}"},
               raw=None, content="Call [PHONE_NUMBER?] today.", release_of="m-1",
               quarantine_reasons=["low_confidence:PHONE_NUMBER"],
               pii_report={"status": "quarantined", "entities": {"PHONE_NUMBER": {"count": 1}}})
    redactor = _run(job)
    assert redactor.seen == [f"checked with {CANARY}"]
    assert job.request["note"] == "checked with [PERSON]"
    assert job.content == "Call [PHONE_NUMBER?] today."
    assert job.quarantine_reasons == []
    assert job.decisions[-1]["result"] == "released"


def test_metadata_counts_one_value_once_whoever_found_it():
    class TwiceRedactor(FakeRedactor):
        def _one(self, text):
            outcome = super()._one(text)
            outcome.redacted.extend(Finding(f.entity_type, f.start, f.end - 1, 0.8) for f in list(outcome.redacted))
            return outcome

    job = _ctx({"source": "chat", "metadata": {"who": CANARY}})
    pii.run_batch([job], StageDeps(settings=make_settings(), engine=None, vector_store=None, redactor=TwiceRedactor()))
    assert job.pii_report["fields"] == {"metadata": {"PERSON": 1}}
