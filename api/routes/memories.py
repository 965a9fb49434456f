"""Writes: ``POST /v1/memories`` and ``POST /v1/memories:batch``.

Thin on purpose: authenticate, parse, check scope, take the back-pressure reading, then
``ibex_worker.submit`` validates, claims the idempotency key and inserts the job row in one
transaction and publishes the job id after commit. With ``Prefer: wait=N`` the handler
polls the job (and, for a keyed write, its ledger entry) until it is final or N runs out.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, TypeVar

import structlog
from fastapi import APIRouter, Depends, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ValidationError

from ibex_api.auth import authenticate, authenticate_write, require_scope
from ibex_api.deps import ApiState, api_state, blocking
from ibex_api.errors import ApiError, from_ibex_error, request_id_of
from ibex_api.openapi import error_responses, json_body, success_headers
from ibex_api.schemas import BATCH_MAX_ITEMS, IDEMPOTENCY_KEY_PATTERN, Accepted, BatchResult, Created
from ibex_worker.apikeys import ApiKey
from ibex_worker.backlog import BacklogFull, admission
from ibex_worker.errors import (ErasureInProgress, FieldIssue, IbexError, IdempotencyConflict, IdempotencyInProgress,
                               TransientError, ValidationFailed)
from ibex_worker.submit import (IDEMPOTENCY_KEY_RE, FinalAnswer, Submission, check_idempotency_key, final_answer, submit,
                           submit_many)

log = structlog.get_logger("ibex.api")

_FIRST_POLL, _MAX_POLL = 0.05, 0.5  # seconds between looks at a job while a producer waits
_EXAMPLE = {"org_id": "acme", "agent_id": "support-bot", "content": "User prefers Python for data work",
            "source": "chat", "valid_from": "2024-03-01T00:00:00Z", "valid_until": None,
            "category": "preference", "confidence": 0.9,
            "labels": [{"label": "preference", "confidence": 0.9}], "metadata": {}}


def router() -> APIRouter:
    r = APIRouter(tags=["writes"])
    r.add_api_route(
        "/v1/memories", create_memory, methods=["POST"], status_code=202, response_model=None,
        operation_id="createMemory", summary="Submit one memory",
        response_description="Accepted: the job row is committed",
        responses={202: {"model": Accepted, "headers": success_headers(location=True), "links": _JOB_LINK},
                   201: {"model": Created, "description": "The final answer (Prefer: wait, or a replay)",
                         "headers": success_headers(location=True, replay=True)},
                   **error_responses(401, 403, 409, 413, 422, 429, 500, 503)},
        openapi_extra=json_body("MemoryIn", example=_EXAMPLE))
    r.add_api_route(
        "/v1/memories:batch", create_memories, methods=["POST"], status_code=202, response_model=None,
        operation_id="createMemories",
        summary=f"Submit up to {BATCH_MAX_ITEMS} memories, each with its own idempotency_key",
        response_description="Every item accepted (or replayed)",
        responses={202: {"model": BatchResult, "headers": success_headers()},
                   207: {"model": BatchResult, "description": "Some items refused: see each item's error",
                         "headers": success_headers()},
                   **error_responses(401, 413, 422, 500, 503)},
        openapi_extra=json_body("BatchIn", example={"items": [{**_EXAMPLE, "idempotency_key": "k-1"}]}))
    return r


_JOB_LINK = {"GetJob": {"operationId": "getJob", "parameters": {"job_id": "$response.body#/job_id"}}}


# ---------------------------------------------------------------- POST /v1/memories

_KEY_DOC = ("1-255 visible ASCII characters; scoped by (org_id, agent_id, key). `Idempotency-Key` is accepted as "
            "the same header; sending both with different values is a 422")


async def create_memory(
    request: Request,
    key: ApiKey = Depends(authenticate_write),
    x_idempotency_key: str | None = Header(None, alias="X-Idempotency-Key", description=_KEY_DOC,
                                           pattern=IDEMPOTENCY_KEY_PATTERN),
    prefer: str | None = Header(None, alias="Prefer", examples=["wait=5"],
                                description="`wait=N`: answer the final 201/409 if the job finishes within N "
                                            "seconds (at most 30), else 202"),
) -> Response:
    state = api_state(request)
    idem = _one_key(x_idempotency_key, request.headers.get("idempotency-key"))
    body = parse_json(await request.body())
    _check_scope(key, body)
    try:
        submission = await blocking(_admit_and_submit, state, body, idem)
    except IbexError as exc:
        state.metrics.write(_result_of(exc))
        raise from_ibex_error(exc, state.settings, keyed=idem is not None) from None
    finally:
        state.metrics.backlog.set(state.backlog.last)
    if submission.replayed:
        state.metrics.write("replayed")
        return _replay(request, submission)
    state.metrics.write("accepted")
    log.info("write_accepted", job_id=submission.job_id, org_id=body["org_id"], agent_id=body["agent_id"],
             keyed=idem is not None, published=submission.published)
    return await accepted_or_final(request, state, body["org_id"], submission.job_id, prefer)


async def accepted_or_final(request: Request, state: ApiState, org_id: str, job_id: str,
                            prefer: str | None) -> Response:
    """202 for a job of record, or its final answer when ``Prefer: wait=N`` and it finished in time."""
    wait = prefer_wait(prefer, state.settings.prefer_wait_max)
    if wait:
        answer = await _wait_for_final(request, state, org_id, job_id, wait)
        if answer is not None:
            return _final(request, answer, {"Preference-Applied": f"wait={wait}"})
    return _accepted(job_id)


def _admit_and_submit(state: ApiState, body: dict[str, Any], key: str | None) -> Submission:
    """One trip to the thread pool: the back-pressure reading (its own short transaction,
    before the write's), then ``submit``, which consults it only if a new job is needed."""
    admit = admission(state.backlog, state.org_backlogs, state.settings, _orgs([body]))
    return submit(state.engine, state.producer, state.settings, body, key, admit=admit, waker=state.waker)


def _one_key(x_key: str | None, key: str | None) -> str | None:
    """``Idempotency-Key`` is the same header as ``X-Idempotency-Key`` (documented there, not
    as a second parameter: two optional headers that must agree cannot be stated in OpenAPI)."""
    problem = None
    if key is not None and not IDEMPOTENCY_KEY_RE.fullmatch(key):
        problem = "1 to 255 visible ASCII characters"
    elif x_key is not None and key is not None and x_key != key:
        problem = "differs from X-Idempotency-Key; send one"
    if problem:
        raise ApiError(422, "VALIDATION_ERROR", "invalid fields: Idempotency-Key",
                       details=[{"field": "Idempotency-Key", "issue": problem}])
    return x_key if x_key is not None else key


Body = TypeVar("Body", bound=BaseModel)


def parse_json(raw: bytes) -> Any:
    """The body as JSON, or 422 naming the body (never quoting it)."""
    try:
        return json.loads(raw, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ApiError(422, "VALIDATION_ERROR", "invalid fields: body",
                       details=[{"field": "body", "issue": "must be a JSON document in UTF-8"}]) from None


def parse_model(model: type[Body], raw: bytes) -> Body:
    """The body as ``model``. Read after authentication (a request without a key is a 401
    whatever its body); a bad body answers FastAPI's 422, rewritten to name fields only."""
    try:
        return model.model_validate(parse_json(raw))
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in errors]) from None


def _refuse_constant(name: str) -> Any:
    raise ValueError("NaN and Infinity are not JSON")


def _orgs(bodies: list[Any]) -> set[str]:
    """The orgs whose back-pressure the bodies need (a malformed one is refused by validation)."""
    return {body["org_id"] for body in bodies if isinstance(body, dict) and isinstance(body.get("org_id"), str)}


def _check_scope(key: ApiKey, body: Any) -> None:
    """403 for a well-formed org_id/agent_id outside the key's scope; anything malformed is
    left to validation (422)."""
    if isinstance(body, dict) and isinstance(body.get("org_id"), str) and isinstance(body.get("agent_id"), str):
        require_scope(key, body["org_id"], body["agent_id"])


def prefer_wait(header: str | None, cap: int) -> int | None:
    """The ``wait`` preference of an RFC 7240 ``Prefer`` header, capped; None when absent,
    zero or malformed (an unusable preference is ignored, as the RFC asks)."""
    for preference in (header or "").split(","):
        token, _, value = preference.split(";")[0].strip().partition("=")
        if token.strip().lower() != "wait":
            continue
        value = value.strip().strip('"')
        if value.isascii() and value.isdigit() and len(value) <= 6:
            return min(int(value), cap) or None
        return None
    return None


async def _wait_for_final(request: Request, state: ApiState, org_id: str, job_id: str,
                          seconds: float) -> FinalAnswer | None:
    deadline = time.monotonic() + seconds
    poll = _FIRST_POLL
    while True:
        try:
            answer = await blocking(final_answer, state.engine, org_id, job_id)
        except TransientError:  # the write is durably accepted already: a 202 is still true
            return None
        if answer is not None or time.monotonic() >= deadline or await request.is_disconnected():
            return answer
        await asyncio.sleep(min(poll, max(0.0, deadline - time.monotonic())))
        poll = min(poll * 1.5, _MAX_POLL)


def _accepted(job_id: str) -> JSONResponse:
    return JSONResponse({"job_id": job_id, "status": "queued"}, status_code=202,
                        headers={"Location": f"/v1/jobs/{job_id}"})


def _final(request: Request, answer: FinalAnswer, headers: dict[str, str]) -> JSONResponse:
    body = dict(answer.body)
    headers = dict(headers)
    if "error" in body:
        body["request_id"] = request_id_of(request)
    if answer.status == 201 and body.get("memory_id"):
        headers["Location"] = f"/v1/memories/{body['memory_id']}"
    if answer.status == 503:
        headers["Retry-After"] = str(api_state(request).settings.unavailable_retry_after_seconds)
        headers.pop("Preference-Applied", None)
    return JSONResponse(body, status_code=answer.status, headers=headers)


def _replay(request: Request, submission: Submission) -> JSONResponse:
    answer = FinalAnswer(int(submission.response_status or 500), dict(submission.response_body or {}))
    return _final(request, answer, {"Idempotent-Replayed": "true"})


def _result_of(exc: IbexError) -> str:
    if isinstance(exc, ValidationFailed):
        return "invalid"
    if isinstance(exc, IdempotencyConflict):
        return "conflict"
    if isinstance(exc, IdempotencyInProgress):
        return "in_progress"
    if isinstance(exc, ErasureInProgress):
        return "erasure_in_progress"
    if isinstance(exc, BacklogFull):
        return "backpressure"
    if isinstance(exc, TransientError):
        return "unavailable"
    return "error"


# ---------------------------------------------------------------- POST /v1/memories:batch


async def create_memories(request: Request, key: ApiKey = Depends(authenticate)) -> Response:
    state = api_state(request)
    if any(request.headers.get(h) is not None for h in ("x-idempotency-key", "idempotency-key")):
        raise ApiError(422, "VALIDATION_ERROR", "invalid fields: X-Idempotency-Key", details=[
            {"field": "X-Idempotency-Key", "issue": "a batch takes an idempotency_key per item, not a header"}])
    items = _batch_items(parse_json(await request.body()))
    results: list[dict[str, Any] | None] = [None] * len(items)
    todo: list[tuple[int, dict[str, Any], str | None]] = []
    for index, item in enumerate(items):
        try:
            body, item_key = _batch_item(key, index, item)
        except ApiError as exc:
            results[index] = _item_error(index, exc)
            continue
        todo.append((index, body, item_key))
    if todo:
        await _submit_batch(state, todo, results)
    final = [r for r in results if r is not None]
    refused = [r for r in final if "error" in r]
    headers = {}
    retry_after = [r.pop("retry_after") for r in final if "retry_after" in r]
    if retry_after:
        headers["Retry-After"] = str(max(retry_after))
    return JSONResponse({"results": final}, status_code=207 if refused else 202, headers=headers)


async def _submit_batch(state: ApiState, todo: list[tuple[int, dict[str, Any], str | None]],
                        results: list[dict[str, Any] | None]) -> None:
    try:
        admit = await blocking(admission, state.backlog, state.org_backlogs, state.settings,
                               _orgs([body for _, body, _ in todo]))
        outcomes = await blocking(submit_many, state.engine, state.producer, state.settings,
                                  [(body, item_key) for _, body, item_key in todo], admit=admit,
                                  waker=state.waker)
    except TransientError as exc:  # the back-pressure reading failed: the database is down
        outcomes = [exc] * len(todo)
    finally:
        state.metrics.backlog.set(state.backlog.last)
    for (index, _, item_key), outcome in zip(todo, outcomes):
        if isinstance(outcome, Submission):
            state.metrics.write("replayed" if outcome.replayed else "accepted")
            results[index] = _item_submitted(index, outcome)
        else:
            state.metrics.write(_result_of(outcome))
            results[index] = _item_error(index, from_ibex_error(outcome, state.settings, keyed=item_key is not None))
    accepted = sum(1 for r in results if r is not None and r.get("status") == "queued")
    log.info("batch_accepted", items=len(results), accepted=accepted)


def _batch_items(body: Any) -> list[Any]:
    issues = []
    if not isinstance(body, dict):
        issues.append(FieldIssue("body", "must be a JSON object with items"))
    else:
        extra = [k for k in body if k != "items"]
        if extra:
            issues.append(FieldIssue("body", f"{len(extra)} unknown field(s); only items is allowed"))
        items = body.get("items")
        if not isinstance(items, list) or not 1 <= len(items) <= BATCH_MAX_ITEMS:
            issues.append(FieldIssue("items", f"a list of 1 to {BATCH_MAX_ITEMS} memories"))
    if issues:
        raise ApiError(422, "VALIDATION_ERROR", "invalid fields: " + ", ".join(sorted({i.field for i in issues})),
                       details=[i.as_dict() for i in issues])
    return list(body["items"])


def _batch_item(key: ApiKey, index: int, item: Any) -> tuple[dict[str, Any], str | None]:
    if not isinstance(item, dict):
        raise ApiError(422, "VALIDATION_ERROR", f"invalid fields: items[{index}]",
                       details=[{"field": f"items[{index}]", "issue": "must be a JSON object"}])
    body = {k: v for k, v in item.items() if k != "idempotency_key"}
    item_key = item.get("idempotency_key")
    field = f"items[{index}].idempotency_key"
    try:
        if item_key is not None and not isinstance(item_key, str):
            raise ValidationFailed([FieldIssue(field, "must be a string")])
        check_idempotency_key(item_key, field)
    except ValidationFailed as exc:
        raise ApiError(422, exc.code, exc.message, details=[i.as_dict() for i in exc.issues]) from None
    _check_scope(key, body)
    return body, item_key


def _item_submitted(index: int, submission: Submission) -> dict[str, Any]:
    if submission.replayed:
        return {"index": index, "job_id": submission.job_id, "replayed": True,
                "response_status": submission.response_status, "response": submission.response_body}
    return {"index": index, "job_id": submission.job_id, "status": "queued"}


def _item_error(index: int, exc: ApiError) -> dict[str, Any]:
    body = exc.body()
    result = {"index": index, **body}
    if "Retry-After" in exc.headers:
        result["retry_after"] = int(exc.headers["Retry-After"])
    return result
