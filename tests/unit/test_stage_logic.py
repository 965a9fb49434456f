"""Pure stage logic: hashing, the strict near-duplicate threshold, redaction policy,
placeholders, retry schedule, settings. Fakes stand in only for adapters here."""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path

import pytest

from tests.conftest import make_settings
from ibex_worker.pii.policy import Finding, RedactionPolicy, apply_placeholders, build_report, classify_findings
from ibex_worker.adapters.vector_store import Candidate
from ibex_worker.errors import TransientError
from ibex_worker.pipeline import embed, near_dedup, pii
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.pipeline.exact_dedup import content_hash
from ibex_worker.retry import backoff_seconds

POLICY = RedactionPolicy(entities=("EMAIL_ADDRESS", "PERSON", "NATIONAL_ID", "CREDIT_CARD"),
                         redaction_threshold=0.7, quarantine_floor=0.3, disallowed=("CREDIT_CARD",))


def ctx(**fields):
    return WriteContext(job_id="job-1", org_id="org", agent_id="agent", request={"source": "chat"}, **fields)


def test_content_hash_ignores_case_and_whitespace_runs_only():
    assert content_hash("User  prefers\tPython\n") == content_hash("user prefers python")
    assert content_hash("user prefers python") != content_hash("user prefers pythons")
    assert re.fullmatch(r"[0-9a-f]{64}", content_hash("x"))


class FixedStore:
    def __init__(self, candidates):
        self.candidates = candidates
        self.calls = []

    def search(self, conn, org_id, agent_id, vector, *, model, min_similarity, limit, since=None, corpus=None):
        self.calls.append((org_id, agent_id, min_similarity, limit))
        return [c for c in self.candidates if c.similarity >= min_similarity]


def test_a_candidate_exactly_at_the_threshold_is_not_a_near_duplicate(monkeypatch):
    """The embedding threshold is strict (ADR-0055). The store's lexical proposals are
    stubbed out here: none, and texts unlike the new one."""
    from types import SimpleNamespace

    settings = make_settings()
    store = FixedStore([Candidate("at", 0.92), Candidate("above", 0.9200001), Candidate("below", 0.91)])
    deps = StageDeps(settings=settings, engine=None, vector_store=store)
    unlike = SimpleNamespace(content="Payroll questions go to the finance team.", content_hash="h",
                             lexical_fingerprint="f", redaction_tags=None)
    monkeypatch.setattr(near_dedup.lexical_store, "candidates", lambda *args: [])
    monkeypatch.setattr(near_dedup.lexical_store, "rows", lambda conn, org, ids: {i: unlike for i in ids})
    monkeypatch.setattr(near_dedup.relationships, "unlinked_partners", lambda *args: set())
    found, left_out = near_dedup.find(None, ctx(embedding=[0.0] * 384, content="The staging server uses port 8080."),
                                      deps)
    assert [c["memory_id"] for c in found] == ["above"] and left_out == []
    assert store.calls == [("org", "agent", 0.92, settings.near_duplicate_candidate_limit)]


def test_findings_at_the_threshold_are_redacted_and_between_floor_and_threshold_masked_and_quarantined():
    findings = [Finding("EMAIL_ADDRESS", 0, 5, 0.7), Finding("NATIONAL_ID", 10, 19, 0.4),
                Finding("PERSON", 20, 24, 0.29)]
    decision = classify_findings(findings, POLICY)
    assert decision.redact == [findings[0]]
    assert decision.mask == [findings[1]]
    assert decision.reasons == ["low_confidence:NATIONAL_ID"]


def test_a_low_score_duplicate_of_a_redacted_span_does_not_quarantine():
    findings = [Finding("PERSON", 0, 8, 0.85), Finding("PERSON", 0, 8, 0.4)]
    decision = classify_findings(findings, POLICY)
    assert decision.reasons == [] and decision.redact == [findings[0]] and decision.mask == []


def test_a_disallowed_entity_quarantines_even_when_redacted():
    findings = [Finding("CREDIT_CARD", 0, 16, 1.0)]
    decision = classify_findings(findings, POLICY)
    assert decision.redact == findings and decision.reasons == ["disallowed_entity:CREDIT_CARD"]


def test_overlapping_redactions_merge_into_one_placeholder():
    text = "Mail jane.doe@example.com now"
    findings = [Finding("EMAIL_ADDRESS", 5, 25, 1.0), Finding("PERSON", 5, 13, 0.85)]
    assert apply_placeholders(text, findings) == "Mail [EMAIL_ADDRESS] now"


def test_uncertain_spans_are_masked_with_a_question_mark_and_a_certain_overlap_wins():
    text = "Call 555 0132 or 4111 1111 1111 1112"
    certain, uncertain = Finding("PHONE_NUMBER", 5, 13, 0.85), Finding("CREDIT_CARD", 17, 36, 0.5)
    assert apply_placeholders(text, [certain], [uncertain]) == "Call [PHONE_NUMBER] or [CREDIT_CARD?]"
    overlapping = Finding("PHONE_NUMBER", 17, 30, 0.5)
    assert apply_placeholders(text, [Finding("CREDIT_CARD", 17, 36, 1.0)], [overlapping]) == \
        "Call 555 0132 or [CREDIT_CARD]"


def test_the_pii_report_holds_types_counts_and_scores_never_values():
    text = "Jane Doe"
    findings = [Finding("PERSON", 0, 8, 0.85)]
    report = build_report(findings, classify_findings(findings, POLICY), POLICY, "presidio")
    assert report["entities"] == {"PERSON": {"count": 1, "redacted": 1, "masked": 0, "max_score": 0.85}}
    assert report["status"] == "redacted"
    assert text not in repr(report)


class Exploding:
    name = "exploding"

    def redact_many(self, texts):
        raise ValueError(f"cannot parse {texts[0]!r}")

    def embed_many(self, texts):
        raise RuntimeError(f"model crashed on {texts[0]!r}")


def test_an_analyzer_error_fails_closed_without_quoting_the_text():
    secret = "jane.doe@example.com"
    job = ctx(raw_content=f"Write to {secret}")
    with pytest.raises(TransientError) as caught:
        pii.run_batch([job], StageDeps(settings=make_settings(), engine=None, vector_store=None, redactor=Exploding()))
    assert caught.value.code == "PII_ANALYSIS_FAILED"
    assert secret not in str(caught.value) and caught.value.__cause__ is None
    assert job.content is None and job.raw_content is not None  # nothing redacted was pretended


def test_an_embedding_error_is_transient_and_leaves_no_vector():
    job = ctx(content="User prefers tea.")
    with pytest.raises(TransientError) as caught:
        embed.run_batch([job], StageDeps(settings=make_settings(), engine=None, vector_store=None, embedder=Exploding()))
    assert caught.value.code == "EMBEDDING_FAILED" and "tea" not in str(caught.value)
    assert job.embedding is None


def test_backoff_is_capped_jittered_and_grows():
    rng = random.Random(7)
    delays = [backoff_seconds(n, base=1.0, cap=8.0, rng=rng) for n in range(1, 8)]
    assert all(0.0 <= d <= min(8.0, 2 ** (n - 1)) for n, d in enumerate(delays, start=1))
    assert max(backoff_seconds(10, base=1.0, cap=8.0, rng=random.Random(i)) for i in range(50)) > 4.0
    with pytest.raises(ValueError):
        backoff_seconds(0, base=1.0, cap=8.0)


def test_settings_refuse_a_task_or_a_lease_the_broker_would_redeliver_first():
    with pytest.raises(ValueError, match="task_time_limit"):
        make_settings(task_time_limit=700)
    with pytest.raises(ValueError, match="job_lease_seconds"):
        make_settings(job_lease_seconds=900)
    make_settings(task_time_limit=200, job_lease_seconds=10)  # a renewed lease may be shorter than a task


def test_settings_refuse_console_logs_in_production():
    with pytest.raises(ValueError, match="JSON"):
        make_settings(environment="production", log_format="console")


PRODUCTION = {"environment": "production", "log_format": "json", "flower_basic_auth": "ops:a-long-random-password",
              "idempotency_fingerprint_key": "k" * 32}


def test_production_needs_a_real_fingerprint_key():
    assert make_settings(**PRODUCTION).idempotency_fingerprint_key.get_secret_value() == "k" * 32
    for key in ("", "k" * 31, "change-me-to-a-random-key-of-32-characters-or-more"):
        with pytest.raises(ValueError, match="IBEX_IDEMPOTENCY_FINGERPRINT_KEY"):
            make_settings(**{**PRODUCTION, "idempotency_fingerprint_key": key})


def test_a_fingerprint_is_keyed_and_ignores_key_order():
    from ibex_worker.submit import request_fingerprint as fingerprint

    body = {"org_id": "acme", "agent_id": "bot", "content": "Call Jane on +44 7700 900461.", "source": "chat"}
    reordered = dict(reversed(list(body.items())))
    assert fingerprint(body, "k1") == fingerprint(reordered, "k1")
    assert fingerprint(body, "k1") != fingerprint(body, "k2")
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert fingerprint(body, "k1") != hashlib.sha256(canonical).hexdigest()


def test_entity_lists_are_read_from_comma_separated_variables(monkeypatch):
    monkeypatch.setenv("IBEX_PII_DISALLOWED_ENTITIES", "CREDIT_CARD, US_SSN")
    assert make_settings().pii_disallowed_entities == ("CREDIT_CARD", "US_SSN")


def test_the_readme_documents_every_setting():
    from ibex_worker.config import Settings

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for name in Settings.model_fields:
        variable = f"IBEX_{name.upper()}"
        if name.startswith("queue_"):
            continue  # documented together as IBEX_QUEUE_VALIDATE … IBEX_QUEUE_PERSIST
        assert variable in readme, variable
