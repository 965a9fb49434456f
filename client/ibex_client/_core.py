"""What the sync and async clients share: request bodies, idempotency keys, retry timing,
and turning answers into results or typed errors. No I/O here."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

BATCH_MAX = 100  # items per POST /v1/memories:batch
RETRYABLE_STATUS = frozenset({429, 503})
RETRYABLE_CODES = frozenset({"BACKPRESSURE", "UNAVAILABLE", "IDEMPOTENCY_UNAVAILABLE"})
KEY_PREFIX = "ibex-client-"


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class NearDuplicate:
    memory_id: str
    similarity: float | None          # embedding; None when only the lexical signal could compare
    lexical_similarity: float | None = None


@dataclass(frozen=True)
class WriteResult:
    """What became of one write. ``status`` is ``queued`` while the pipeline runs (only
    ``job_id`` is known), else the memory's status (``active`` or ``quarantined``).
    ``outcome``: ``created``, ``exact_duplicate`` (``memory_id`` is the existing memory) or
    ``released``; None while queued. ``replayed``: the answer came from the idempotency
    ledger (the same key and body were sent before)."""

    job_id: str | None
    status: str
    idempotency_key: str | None = None
    memory_id: str | None = None
    outcome: str | None = None
    near_duplicates: tuple[NearDuplicate, ...] = ()
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()
    escalations: tuple[str, ...] = ()
    replayed: bool = False

    @property
    def queued(self) -> bool:
        return self.status == "queued"


@dataclass(frozen=True)
class BatchItemResult:
    """One item of ``add_many``: a ``result`` or an ``error``, never both."""

    index: int
    idempotency_key: str | None
    result: WriteResult | None = None
    error: IbexError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Job:
    job_id: str
    status: str
    stage: str | None
    attempts: int
    result: WriteResult | None
    error: dict[str, Any] | None
    decisions: list[Any] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    created_at: str | None = None
    finished_at: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in ("succeeded", "failed")


# ---------------------------------------------------------------- errors


class IbexError(Exception):
    """An answer the API refused, with its error envelope: ``code`` (``VALIDATION_ERROR``,
    ``BACKPRESSURE`` ...), ``message``, ``details`` (fields, never content), ``status`` and
    ``request_id``."""

    def __init__(self, code: str, message: str, *, status: int | None = None, details: Sequence[Any] = (),
                 request_id: str | None = None, job_id: str | None = None, retry_after: float | None = None) -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.message = message
        self.status = status
        self.details = list(details)
        self.request_id = request_id
        self.job_id = job_id
        self.retry_after = retry_after


class AuthenticationError(IbexError):
    """401: no key or an unknown one."""


class PermissionDeniedError(IbexError):
    """403: the org or agent is outside the key's scope."""


class NotFoundError(IbexError):
    """404: unknown, another tenant's, or deleted."""


class ValidationError(IbexError):
    """422: a field is invalid (``details`` names it), or a label, category or source holds
    personal data (``PII_IN_FIELD``)."""


class ConflictError(IbexError):
    """409 ``IDEMPOTENCY_CONFLICT``: the key was used with another body."""


class PayloadTooLargeError(IbexError):
    """413."""


class RateLimitedError(IbexError):
    """429 ``BACKPRESSURE`` after the client's retries."""


class UnavailableError(IbexError):
    """503 after the client's retries, or the API could not be reached. A keyed write may
    have been recorded: send it again with the same key to find out."""


_BY_STATUS: dict[int, type[IbexError]] = {401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError,
                                          409: ConflictError, 413: PayloadTooLargeError, 422: ValidationError,
                                          429: RateLimitedError, 503: UnavailableError}


# A batch item's error carries a code, not an HTTP status: the status its code has alone.
_CODE_STATUS = {"VALIDATION_ERROR": 422, "PII_IN_FIELD": 422, "FORBIDDEN": 403, "IDEMPOTENCY_CONFLICT": 409,
                "IDEMPOTENCY_IN_PROGRESS": 409, "ERASURE_IN_PROGRESS": 409, "BACKPRESSURE": 429, "UNAVAILABLE": 503,
                "IDEMPOTENCY_UNAVAILABLE": 503, "PAYLOAD_TOO_LARGE": 413}


def error_from(status: int | None, body: Any, headers: Mapping[str, str] | None = None) -> IbexError:
    """The typed error of an answer; ``status`` None for a batch item (typed by its code)."""
    envelope = body.get("error") if isinstance(body, dict) else None
    if isinstance(envelope, dict) and status is None:
        status = _CODE_STATUS.get(str(envelope.get("code")))
        kind = _BY_STATUS.get(status or 0, IbexError)
    else:
        kind = _BY_STATUS.get(status or 0, UnavailableError if status is None or status >= 500 else IbexError)
    if not isinstance(envelope, dict):
        envelope = {"code": "UNAVAILABLE" if status is None or status >= 500 else "ERROR",
                    "message": f"unexpected answer (HTTP {status})"}
    return kind(str(envelope.get("code", "ERROR")), str(envelope.get("message", "")), status=status,
                details=envelope.get("details") or (), request_id=body.get("request_id") if isinstance(body, dict) else None,
                job_id=body.get("job_id") if isinstance(body, dict) else None,
                retry_after=retry_after_of(headers) if headers is not None else None)


# ---------------------------------------------------------------- requests


def memory_body(content: str, *, org_id: str, agent_id: str, source: str, labels: Sequence[Any] | None,
                valid_from: datetime | str | None, valid_until: datetime | str | None, category: str | None,
                confidence: float | None, metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """The JSON body of one write; optional fields left out when not given."""
    body: dict[str, Any] = {"org_id": org_id, "agent_id": agent_id, "content": content, "source": source}
    optional = {"labels": [_label(label) for label in labels] if labels is not None else None,
                "valid_from": _time(valid_from), "valid_until": _time(valid_until), "category": category,
                "confidence": confidence, "metadata": dict(metadata) if metadata is not None else None}
    body.update({name: value for name, value in optional.items() if value is not None})
    return body


def _label(label: Any) -> dict[str, Any]:
    """A label as the API takes it; a bare string is a label the producer is sure of (1.0)."""
    if isinstance(label, str):
        return {"label": label, "confidence": 1.0}
    return dict(label)


def _time(value: datetime | str | None) -> str | None:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError("valid_from and valid_until need a time zone (RFC 3339 with an offset)")
        return value.isoformat()
    return value


def derived_key(body: Mapping[str, Any]) -> str:
    """The idempotency key of a write sent without one: a hash of its canonical JSON (key order
    and whitespace do not matter). The same write sent twice is one write: a retry after a
    lost answer never stores it twice. To store the very same body twice on purpose, pass
    distinct keys (an identical active memory is reported as ``exact_duplicate`` anyway)."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return KEY_PREFIX + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:48]


def retry_after_of(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` more tries after the first; each waits ``Retry-After`` when the answer
    gives one (at most ``max_delay``), else an exponential backoff from ``base_delay``; both
    with up to ``jitter`` of the delay added at random, so many clients do not come back at
    the same moment."""

    max_retries: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.25

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random | None = None) -> float:
        base = retry_after if retry_after is not None else self.base_delay * (2 ** attempt)
        base = min(base, self.max_delay)
        return base + base * self.jitter * (rng or random).random()


# ---------------------------------------------------------------- answers


def write_result(status: int, body: Mapping[str, Any], headers: Mapping[str, str], key: str | None) -> WriteResult:
    """A 201, 202, or the 409s that are outcomes rather than failures: ``DUPLICATE_CONTENT``
    (an identical active memory exists) and ``IDEMPOTENCY_IN_PROGRESS`` (this key's job is
    running: the write is queued)."""
    replayed = headers.get("idempotent-replayed") == "true"
    if status == 202:
        return WriteResult(job_id=body.get("job_id"), status="queued", idempotency_key=key, replayed=replayed)
    code = (body.get("error") or {}).get("code") if isinstance(body.get("error"), dict) else None
    if status == 409 and code == "IDEMPOTENCY_IN_PROGRESS":
        return WriteResult(job_id=body.get("job_id"), status="queued", idempotency_key=key, replayed=True)
    if status == 201 or status == 409 and code == "DUPLICATE_CONTENT":
        return result_from_final(body, key, replayed=replayed)
    raise error_from(status, body, headers)


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def result_from_final(body: Mapping[str, Any], key: str | None, *, replayed: bool = False) -> WriteResult:
    return WriteResult(
        job_id=body.get("job_id"), status=str(body.get("status", "active")), idempotency_key=key,
        memory_id=body.get("memory_id"), outcome=body.get("outcome"),
        near_duplicates=tuple(NearDuplicate(str(n["memory_id"]), _number(n.get("similarity")),
                                            _number(n.get("lexical_similarity")))
                              for n in body.get("near_duplicates") or ()),
        supersedes=tuple(body.get("supersedes") or ()), superseded_by=tuple(body.get("superseded_by") or ()),
        escalations=tuple(str(e) for e in body.get("escalations") or ()), replayed=replayed)


def batch_item_result(item: Mapping[str, Any], key: str | None) -> BatchItemResult:
    index = int(item["index"])
    if "error" in item and item["error"].get("code") == "IDEMPOTENCY_IN_PROGRESS":  # sent before, still running
        return BatchItemResult(index, key, result=WriteResult(job_id=item.get("job_id"), status="queued",
                                                              idempotency_key=key, replayed=True))
    if "error" in item:
        return BatchItemResult(index, key, error=error_from(None, dict(item)))
    if item.get("replayed"):
        answer = item.get("response") or {}
        try:
            result = write_result(int(item.get("response_status") or 202), answer, {"idempotent-replayed": "true"},
                                  key)
        except IbexError as exc:
            return BatchItemResult(index, key, error=exc)
        return BatchItemResult(index, key, result=result)
    return BatchItemResult(index, key, result=WriteResult(job_id=item.get("job_id"), status="queued",
                                                          idempotency_key=key))



def job_from(body: Mapping[str, Any]) -> Job:
    result = body.get("result")
    return Job(job_id=str(body["job_id"]), status=str(body["status"]), stage=body.get("stage"),
               attempts=int(body.get("attempts") or 0),
               result=result_from_final(result, None) if isinstance(result, dict) and result.get("job_id") else None,
               error=body.get("error"), decisions=list(body.get("decisions") or []),
               timings_ms=dict(body.get("timings_ms") or {}), created_at=body.get("created_at"),
               finished_at=body.get("finished_at"))


# ---------------------------------------------------------------- flows
# Each call is a generator that yields the I/O it needs (``Send``, ``Sleep``) and returns its
# result; the sync client and the async one drive the same flows.


@dataclass(frozen=True)
class Send:
    method: str
    path: str
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class Sleep:
    seconds: float


Flow = Generator[Send | Sleep, Any, Any]


def request_flow(method: str, path: str, policy: RetryPolicy, rng: random.Random, *,
                 retry_statuses: bool = True, **kwargs: Any) -> Flow:
    """Send, retrying a lost connection and (``retry_statuses``) a 429 or 503; the response."""
    for attempt in range(policy.max_retries + 1):
        last = attempt == policy.max_retries
        answer = yield Send(method, path, kwargs)
        if isinstance(answer, httpx.TransportError):
            if last:
                raise UnavailableError("UNAVAILABLE", f"the API could not be reached ({type(answer).__name__})")
            yield Sleep(policy.delay(attempt, None, rng))
            continue
        if not (retry_statuses and retryable(answer)) or last:
            return answer
        yield Sleep(policy.delay(attempt, retry_after_of(answer.headers), rng))
    raise AssertionError("unreachable: the last attempt returns or raises")


def get_flow(path: str, policy: RetryPolicy, rng: random.Random, params: Mapping[str, Any] | None = None) -> Flow:
    response = yield from request_flow("GET", path, policy, rng, params=params)
    body = decode(response)
    if response.status_code != 200:
        raise error_from(response.status_code, body, response.headers)
    return body


def batch_flow(prepared: list[dict[str, Any]], indexes: list[int], results: list[BatchItemResult | None],
               policy: RetryPolicy, rng: random.Random) -> Flow:
    """One batch request of ``indexes``; items refused for back-pressure or unavailability
    are sent again after ``Retry-After``."""
    for attempt in range(policy.max_retries + 1):
        response = yield from request_flow("POST", "/v1/memories:batch", policy, rng, retry_statuses=False,
                                           json={"items": [prepared[i] for i in indexes]})
        body = decode(response)
        if response.status_code not in (202, 207) or not isinstance(body, dict):
            raise error_from(response.status_code, body, response.headers)
        again = []
        for item in body.get("results", []):
            index = indexes[int(item["index"])]
            result = batch_item_result({**item, "index": index}, prepared[index]["idempotency_key"])
            results[index] = result
            if result.error is not None and result.error.code in RETRYABLE_CODES:
                again.append(index)
        if not again or attempt == policy.max_retries:
            return None
        yield Sleep(policy.delay(attempt, retry_after_of(response.headers), rng))
        indexes = again
    return None


def decode(response: httpx.Response) -> Any:
    if not response.content:
        return {}
    try:
        return response.json()
    except ValueError:
        return {}


def retryable(response: httpx.Response | None) -> bool:
    return response is None or response.status_code in RETRYABLE_STATUS
