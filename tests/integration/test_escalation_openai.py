"""The OpenAI-compatible classifier against a real local HTTP server speaking the
chat-completions shape: clean answers, slow answers, malformed answers, refusals, 5xx,
429 and 4xx. A model's unusable answer is needs_review; an endpoint that cannot answer
raises a coded TransientError after its retries; nothing ever crashes or guesses."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest

from tests.escalation_support import FakeModel, Reply, completion, facts_sent
from ibex_worker.errors import TransientError
from ibex_worker.escalations.classifiers import ConflictPair, MemoryFact, OpenAICompatibleClassifier

OLDER = MemoryFact("11111111-1111-1111-1111-111111111111", "The standup is at 9am; ask [PERSON].",
                   datetime(2024, 1, 1, tzinfo=timezone.utc), None, "standup|be", datetime(2024, 1, 1, tzinfo=timezone.utc))
NEWER = MemoryFact("22222222-2222-2222-2222-222222222222", "The standup is at 10am; ask [PERSON].",
                   datetime(2024, 6, 1, tzinfo=timezone.utc), None, "standup|be", datetime(2024, 6, 1, tzinfo=timezone.utc))
PAIR = ConflictPair(OLDER, NEWER, 0.96, "overlapping_intervals")


class Calls:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        self.count += 1


def classifier(model: FakeModel, calls: Calls | None = None, *, key: str = "sk-test-key", timeout: float = 2.0,
               retries: int = 2) -> OpenAICompatibleClassifier:
    return OpenAICompatibleClassifier(model.url, "fake-model", key, timeout=timeout, retries=retries,
                                      on_model_call=calls, sleep=lambda _: None)


def test_a_clean_answer_is_the_verdict_and_the_request_carries_only_the_redacted_facts():
    calls = Calls()
    with FakeModel(lambda body, n: Reply(body=completion("contradicts", "Two different times."))) as model:
        subject = classifier(model, calls)
        try:
            verdict = subject.classify(PAIR)
        finally:
            subject.close()

    assert (verdict.outcome, verdict.reason, verdict.rule) == ("contradicts", "Two different times.", "model")
    assert calls.count == 1
    [request] = model.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer sk-test-key"
    assert request["body"]["model"] == "fake-model"
    assert [m["role"] for m in request["body"]["messages"]] == ["system", "user"]
    sent = facts_sent(request)
    assert (sent["older"]["content"], sent["newer"]["content"]) == (OLDER.content, NEWER.content)
    assert sent["similarity"] == 0.96
    assert OLDER.memory_id not in str(request["body"]) and NEWER.memory_id not in str(request["body"])
    assert subject.decided_by == "classifier:openai@1/fake-model"


def test_without_a_key_no_authorization_header_is_sent_and_the_key_is_never_printed():
    with FakeModel(lambda body, n: Reply(body=completion("compatible"))) as model:
        keyless = classifier(model, key="")
        keyed = classifier(model, key="sk-very-secret")
        try:
            keyless.classify(PAIR)
        finally:
            keyless.close()
            keyed.close()
    assert "authorization" not in model.requests[0]["headers"]
    assert "sk-very-secret" not in repr(keyed)


def test_a_slow_answer_times_out_is_retried_and_then_raises_CLASSIFIER_TIMEOUT():
    calls = Calls()
    with FakeModel(lambda body, n: Reply(body=completion("compatible"), delay=1.5)) as model:
        subject = classifier(model, calls, timeout=0.3, retries=1)
        started = time.monotonic()
        try:
            with pytest.raises(TransientError) as raised:
                subject.classify(PAIR)
        finally:
            subject.close()
    assert raised.value.code == "CLASSIFIER_TIMEOUT"
    assert time.monotonic() - started < 1.5  # two bounded attempts, not two full answers
    assert len(model.requests) == 2
    assert calls.count == 0  # no answer came back from a model


def test_a_slow_first_answer_is_retried_and_the_second_answer_counts_once():
    calls = Calls()
    with FakeModel(lambda body, n: Reply(body=completion("contradicts"), delay=1.0 if n == 1 else 0.0)) as model:
        subject = classifier(model, calls, timeout=0.3, retries=2)
        try:
            verdict = subject.classify(PAIR)
        finally:
            subject.close()
    assert verdict.outcome == "contradicts"
    assert len(model.requests) == 2 and calls.count == 1


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_a_server_error_or_rate_limit_is_retried_and_a_later_answer_is_used(status):
    calls = Calls()
    with FakeModel(lambda body, n: Reply(status, {"error": "busy"}) if n < 3 else
                   Reply(body=completion("compatible"))) as model:
        subject = classifier(model, calls, retries=2)
        try:
            verdict = subject.classify(PAIR)
        finally:
            subject.close()
    assert verdict.outcome == "compatible"
    assert len(model.requests) == 3 and calls.count == 1


def test_500_on_every_attempt_raises_CLASSIFIER_UNAVAILABLE():
    with FakeModel(lambda body, n: Reply(500, b"Internal Server Error")) as model:
        subject = classifier(model, retries=2)
        try:
            with pytest.raises(TransientError) as raised:
                subject.classify(PAIR)
        finally:
            subject.close()
    assert raised.value.code == "CLASSIFIER_UNAVAILABLE"
    assert len(model.requests) == 3


@pytest.mark.parametrize("status", [400, 401, 404])
def test_a_client_error_is_not_retried_within_the_call(status):
    with FakeModel(lambda body, n: Reply(status, {"error": {"message": "nope"}})) as model:
        subject = classifier(model, retries=2)
        try:
            with pytest.raises(TransientError) as raised:
                subject.classify(PAIR)
        finally:
            subject.close()
    assert raised.value.code == "CLASSIFIER_REJECTED"
    assert len(model.requests) == 1


def test_an_endpoint_nobody_listens_on_raises_CLASSIFIER_UNAVAILABLE():
    with FakeModel(lambda body, n: Reply()) as model:
        url = model.url
    subject = OpenAICompatibleClassifier(url, "m", "", timeout=0.5, retries=1, sleep=lambda _: None)
    try:
        with pytest.raises(TransientError) as raised:
            subject.classify(PAIR)
    finally:
        subject.close()
    assert raised.value.code == "CLASSIFIER_UNAVAILABLE"


@pytest.mark.parametrize(("reply", "rule"), [
    pytest.param(Reply(body=b"{not json"), "malformed_answer", id="body is not JSON"),
    pytest.param(Reply(body=b""), "malformed_answer", id="empty body"),
    pytest.param(Reply(body={"choices": [{"message": {"content": "They contradict, I think."}}]}),
                 "malformed_answer", id="prose instead of JSON"),
    pytest.param(Reply(body={"choices": [{"message": {"content": '{"verdict": "delete_both", "reason": "x"}'}}]}),
                 "malformed_answer", id="a verdict that does not exist"),
    pytest.param(Reply(body={"object": "chat.completion"}), "malformed_answer", id="no choices"),
    pytest.param(Reply(body=completion("contradicts", refusal="I cannot help with that.")), "model_refused",
                 id="refusal"),
])
def test_a_malformed_or_refused_answer_becomes_needs_review(reply, rule):
    calls = Calls()
    with FakeModel(lambda body, n: reply) as model:
        subject = classifier(model, calls)
        try:
            verdict = subject.classify(PAIR)
        finally:
            subject.close()
    assert (verdict.outcome, verdict.rule) == ("needs_review", rule)
    assert len(model.requests) == 1  # an answer, even a useless one, is not retried
    assert calls.count == 1
