"""The producers' client's pure logic: derived keys, retry timing, and answers mapped to
results or typed errors (its calls are tested against the real stack in
tests/integration/test_client.py)."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pytest
from ibex_client import (AuthenticationError, ConflictError, IbexError, RateLimitedError, RetryPolicy,
                         UnavailableError, ValidationError, derived_key)
from ibex_client._core import error_from, memory_body, write_result


def test_the_derived_key_depends_on_the_body_only_not_on_key_order():
    one = {"org_id": "acme", "agent_id": "bot", "content": "Ships on Monday.", "source": "chat"}
    assert derived_key(one) == derived_key(dict(reversed(list(one.items()))))
    assert derived_key(one) != derived_key({**one, "content": "Ships on Tuesday."})
    assert derived_key(one).startswith("ibex-client-") and len(derived_key(one)) <= 255


def test_retry_delays_follow_retry_after_capped_with_jitter_else_back_off_exponentially():
    policy, rng = RetryPolicy(base_delay=0.5, max_delay=10.0, jitter=0.25), random.Random(7)
    assert 3.0 <= policy.delay(0, 3.0, rng) <= 3.75
    assert 10.0 <= policy.delay(0, 120.0, rng) <= 12.5  # a long Retry-After is capped
    assert [round(RetryPolicy(jitter=0.0).delay(n, None), 2) for n in range(4)] == [0.5, 1.0, 2.0, 4.0]


def test_answers_map_to_results_and_the_409s_that_are_outcomes_are_not_errors():
    queued = write_result(202, {"job_id": "j1", "status": "queued"}, {}, "k")
    running = write_result(409, {"error": {"code": "IDEMPOTENCY_IN_PROGRESS", "message": "m"}, "job_id": "j1"}, {}, "k")
    duplicate = write_result(409, {"error": {"code": "DUPLICATE_CONTENT", "message": "m"}, "job_id": "j2",
                                   "memory_id": "m1", "status": "active", "outcome": "exact_duplicate"}, {}, "k")
    created = write_result(201, {"job_id": "j3", "memory_id": "m3", "status": "quarantined", "outcome": "created",
                                 "near_duplicates": [{"memory_id": "m1", "similarity": 0.95}], "escalations": ["e"]},
                           {"idempotent-replayed": "true"}, "k")
    assert queued.queued and queued.job_id == "j1" and not queued.replayed
    assert running.queued and running.job_id == "j1"
    assert (duplicate.outcome, duplicate.memory_id) == ("exact_duplicate", "m1")
    assert created.replayed and created.status == "quarantined" and created.near_duplicates[0].similarity == 0.95
    with pytest.raises(ConflictError):
        write_result(409, {"error": {"code": "IDEMPOTENCY_CONFLICT", "message": "m"}}, {}, "k")


@pytest.mark.parametrize("status, code, kind", [
    (401, "UNAUTHENTICATED", AuthenticationError), (422, "PII_IN_FIELD", ValidationError),
    (429, "BACKPRESSURE", RateLimitedError), (503, "UNAVAILABLE", UnavailableError), (500, "?", UnavailableError),
])
def test_errors_are_typed_by_status_and_keep_the_envelope(status, code, kind):
    body = {"error": {"code": code, "message": "refused", "details": [{"field": "labels", "issue": "x"}]},
            "request_id": "r1"} if code != "?" else {}
    error = error_from(status, body, {"retry-after": "2"})
    assert isinstance(error, kind) and isinstance(error, IbexError)
    assert error.status == status and error.retry_after == 2.0
    if code != "?":
        assert (error.code, error.request_id, error.details) == (code, "r1", [{"field": "labels", "issue": "x"}])


def test_a_body_leaves_out_what_was_not_given_and_needs_time_zones():
    body = memory_body("Ships on Monday.", org_id="acme", agent_id="bot", source="chat", labels=["ops"],
                       valid_from=datetime(2026, 1, 1, tzinfo=timezone.utc), valid_until=None, category=None,
                       confidence=None, metadata=None)
    assert body == {"org_id": "acme", "agent_id": "bot", "content": "Ships on Monday.", "source": "chat",
                    "labels": [{"label": "ops", "confidence": 1.0}], "valid_from": "2026-01-01T00:00:00+00:00"}
    with pytest.raises(ValueError):
        memory_body("x", org_id="a", agent_id="b", source="s", labels=None, valid_from=datetime(2026, 1, 1),
                    valid_until=None, category=None, confidence=None, metadata=None)


def test_a_batch_items_error_is_typed_by_its_code_and_an_unknown_code_is_no_outage():
    from ibex_client import ValidationError as Invalid
    from ibex_client._core import batch_item_result

    invalid = batch_item_result({"index": 0, "error": {"code": "VALIDATION_ERROR", "message": "m"}}, "k").error
    unknown = batch_item_result({"index": 1, "error": {"code": "SOMETHING_NEW", "message": "m"}}, "k").error
    assert isinstance(invalid, Invalid) and invalid.status == 422
    assert type(unknown) is IbexError and unknown.code == "SOMETHING_NEW"
