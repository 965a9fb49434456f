"""Conflict classifiers: what an escalated pair of memories means.

A classifier reads two memories of one agent (their redacted content, validity and subject
keys) and the near-duplicate similarity, and returns a :class:`Verdict`. It writes nothing
and holds no transaction; the poller applies the verdict afterwards. Outcomes:

- ``supersedes``: the newer memory replaces the older one;
- ``contradicts``: both cannot hold at once; both stay active, linked;
- ``compatible``: both can hold; nothing changes;
- ``needs_review``: the classifier cannot tell; a person decides.

``RulesClassifier`` (``ibex_worker.conflict_rules.verdicts``) is deterministic and
explainable and says ``needs_review`` whenever no rule is conclusive; it says ``supersedes``
only for two open-ended dated facts about the same subject and aspect whose newer one
starts later and changes a value. ``OpenAICompatibleClassifier`` asks a chat-completions
endpoint for a JSON verdict; an answer it cannot use (malformed, refused, unknown verdict) is
``needs_review``, never a guess; an endpoint that cannot answer (timeouts, 5xx, 429, other
4xx) raises ``TransientError`` after its retries, and the poller retries the escalation later.
"""

from __future__ import annotations

import json
import random
import re
import time
from typing import Any, Protocol

from ibex_worker.config import OPENAI_RETRY_BACKOFF_CAP_SECONDS
from ibex_worker.conflict_rules.verdicts import (OUTCOMES, ConflictPair, MemoryFact, RulesClassifier, Verdict,
                                                 order_pair)
from ibex_worker.errors import TransientError

__all__ = ["OUTCOMES", "ConflictClassifier", "ConflictPair", "MemoryFact", "OpenAICompatibleClassifier",
           "RulesClassifier", "Verdict", "build_classifier", "build_request", "order_pair", "parse_answer"]

REASON_MAX_CHARS = 500  # a model's reason is stored, bounded; it is never logged


class ConflictClassifier(Protocol):
    name: str
    version: str

    @property
    def decided_by(self) -> str: ...

    def classify(self, pair: ConflictPair) -> Verdict: ...

    def close(self) -> None: ...


# ---------------------------------------------------------------- OpenAI-compatible

PROMPT_VERSION = "1"

SYSTEM_PROMPT = (
    "You compare two stored facts (memories) of one AI agent. They are near-duplicates, and their "
    "validity periods overlap or are unknown. Decide what the pair means and answer with one JSON "
    'object only: {"verdict": "<supersedes|contradicts|compatible|needs_review>", "reason": "<one '
    'sentence>"}. "supersedes": the newer fact replaces the older one (the older one is outdated). '
    '"contradicts": both cannot be true at the same time. "compatible": both can be true together. '
    '"needs_review": you cannot tell. Do not guess: when unsure, answer needs_review. Bracketed '
    "placeholders such as [EMAIL_ADDRESS] stand for redacted values you cannot see."
)


def build_request(model: str, pair: ConflictPair) -> dict[str, Any]:
    """The chat-completions body. Only redacted content, validity, subject keys and the
    similarity leave the process: never ids, org or agent names, metadata or labels."""
    facts = {"older": _fact_for_model(pair.older), "newer": _fact_for_model(pair.newer),
             "similarity": pair.similarity, "why_escalated": pair.escalation_reason}
    return {
        "model": model,
        "temperature": 0,
        "response_format": {"type": "json_object"},
        "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                     {"role": "user", "content": json.dumps(facts, sort_keys=True)}],
    }


def _fact_for_model(fact: MemoryFact) -> dict[str, Any]:
    return {"content": fact.content,
            "valid_from": fact.valid_from.isoformat() if fact.valid_from else None,
            "valid_until": fact.valid_until.isoformat() if fact.valid_until else None,
            "subject_key": fact.subject_key}


_MALFORMED = Verdict("needs_review", "The model's answer could not be read as a verdict; a person should "
                                     "decide.", "malformed_answer")
_REFUSED = Verdict("needs_review", "The model declined to answer; a person should decide.", "model_refused")
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def parse_answer(payload: bytes | str) -> Verdict:
    """A chat-completions response body -> a verdict. Never raises: anything but a clean
    ``{"verdict", "reason"}`` object is ``needs_review``."""
    try:
        message = json.loads(payload)["choices"][0]
        content, refusal = message["message"].get("content"), message["message"].get("refusal")
        finish = message.get("finish_reason")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return _MALFORMED
    if refusal or finish == "content_filter":
        return _REFUSED
    return _read_verdict(content)


def _read_verdict(content: Any) -> Verdict:
    if not isinstance(content, str):
        return _MALFORMED
    try:
        answer = json.loads(_FENCE.sub("", content.strip()))
    except ValueError:
        return _MALFORMED
    if not isinstance(answer, dict):
        return _MALFORMED
    verdict, reason = answer.get("verdict"), answer.get("reason")
    if verdict not in OUTCOMES or not isinstance(reason, str) or not reason.strip():
        return _MALFORMED
    clean = " ".join(reason.split())[:REASON_MAX_CHARS]
    return Verdict(verdict, clean, "model")


class OpenAICompatibleClassifier:
    """Any OpenAI-compatible ``POST {base_url}/chat/completions``.

    Each HTTP attempt is bounded by ``timeout``; a timeout, a connection failure, 429 or 5xx
    is retried up to ``retries`` times with jittered backoff, then raises ``TransientError``
    (``CLASSIFIER_TIMEOUT`` / ``CLASSIFIER_UNAVAILABLE``); any other 4xx raises at once
    (``CLASSIFIER_REJECTED``). ``on_model_call`` runs for every answer a model returned (2xx).
    """

    name = "openai"
    version = PROMPT_VERSION

    def __init__(self, base_url: str, model: str, api_key: str, *, timeout: float, retries: int,
                 on_model_call: Callable[[], None] | None = None, rng: random.Random | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        import httpx

        self.model = model
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._retries = retries
        self._on_model_call = on_model_call or (lambda: None)
        self._rng = rng or random.Random()
        self._sleep = sleep
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=httpx.Timeout(timeout), headers=headers, follow_redirects=False)

    def __repr__(self) -> str:  # never the key
        return f"OpenAICompatibleClassifier(url={self._url!r}, model={self.model!r})"

    @property
    def decided_by(self) -> str:
        return f"classifier:{self.name}@{self.version}/{self.model}"

    def classify(self, pair: ConflictPair) -> Verdict:
        return parse_answer(self._post(build_request(self.model, pair)))

    def close(self) -> None:
        self._client.close()

    def _post(self, body: dict[str, Any]) -> bytes:
        import httpx

        code = "CLASSIFIER_UNAVAILABLE"
        for attempt in range(self._retries + 1):
            if attempt:
                self._sleep(self._rng.uniform(0.0, min(OPENAI_RETRY_BACKOFF_CAP_SECONDS, 0.25 * 2 ** attempt)))
            try:
                response = self._client.post(self._url, json=body)
            except httpx.TimeoutException:
                code = "CLASSIFIER_TIMEOUT"
                continue
            except httpx.TransportError:
                code = "CLASSIFIER_UNAVAILABLE"
                continue
            if response.is_success:
                self._on_model_call()
                return response.content
            if response.status_code != 429 and response.status_code < 500:
                raise TransientError("the classifier endpoint refused the request", code="CLASSIFIER_REJECTED")
            code = "CLASSIFIER_UNAVAILABLE"
        raise TransientError("the classifier endpoint did not answer", code=code)


def build_classifier(settings: Any, metrics: Any) -> ConflictClassifier:
    if settings.escalation_classifier == "openai":
        return OpenAICompatibleClassifier(
            settings.escalation_openai_base_url, settings.escalation_openai_model,
            settings.escalation_openai_api_key.get_secret_value(),
            timeout=settings.escalation_openai_timeout_seconds, retries=settings.escalation_openai_retries,
            on_model_call=metrics.llm_call)
    return RulesClassifier()
