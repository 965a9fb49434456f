"""OpenAPI pieces shared by the routes: the documented error answers with their headers,
and request bodies whose schema is built from settings."""

from __future__ import annotations

from typing import Any

from ibex_api.schemas import ErrorEnvelope

_ERRORS: dict[int, str] = {
    401: "UNAUTHENTICATED: no API key, or an unknown or revoked one",
    403: "FORBIDDEN: org_id or agent_id outside the key's scope",
    404: "NOT_FOUND: unknown id, another tenant's id, or a malformed id",
    409: "IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS (with job_id and Retry-After), ERASURE_IN_PROGRESS "
         "(with erasure_id and Retry-After: the agent is being erased; nothing was recorded), or a final answer: "
         "DUPLICATE_CONTENT (with memory_id), or ERASED (with job_id: the agent was erased while the write was in "
         "flight; nothing was stored)",
    413: "PAYLOAD_TOO_LARGE: the body is larger than IBEX_MAX_REQUEST_BYTES",
    422: "VALIDATION_ERROR: details name each bad field, never its value",
    429: "BACKPRESSURE: the pipeline's backlog is at IBEX_BACKLOG_LIMIT; retry after Retry-After seconds",
    500: "INTERNAL: an unexpected error (nothing about it is echoed)",
    503: "UNAVAILABLE, or IDEMPOTENCY_UNAVAILABLE for a keyed write: PostgreSQL cannot be reached; nothing "
         "was recorded or published",
}
_RETRY_AFTER = {"description": "seconds to wait before retrying", "schema": {"type": "integer", "minimum": 0}}
_REQUEST_ID = {"description": "the request's id, also in every error body", "schema": {"type": "string"}}
_REPLAYED = {"description": "`true` when the answer is the stored final answer of an earlier request with the "
                            "same idempotency key", "schema": {"type": "string", "enum": ["true"]}}
_PREFERENCE_APPLIED = {"description": "`wait=N` when the answer is final because the request waited",
                       "schema": {"type": "string"}}


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    out: dict[int | str, dict[str, Any]] = {}
    for code in codes:
        headers: dict[str, Any] = {"X-Request-Id": _REQUEST_ID}
        if code in (429, 503):
            headers["Retry-After"] = {**_RETRY_AFTER, "required": True}
        elif code == 409:
            headers["Retry-After"] = _RETRY_AFTER
            headers["Idempotent-Replayed"] = _REPLAYED
            headers["Preference-Applied"] = _PREFERENCE_APPLIED
        elif code == 422:
            headers["Idempotent-Replayed"] = _REPLAYED
            headers["Preference-Applied"] = _PREFERENCE_APPLIED
        elif code == 401:
            headers["WWW-Authenticate"] = {"schema": {"type": "string"}}
        out[code] = {"model": ErrorEnvelope, "description": _ERRORS[code], "headers": headers}
    return out


def success_headers(*, location: bool = False, replay: bool = False) -> dict[str, Any]:
    headers: dict[str, Any] = {"X-Request-Id": _REQUEST_ID}
    if location:
        headers["Location"] = {"description": "where to read the job (202) or the memory (201)",
                               "schema": {"type": "string"}, "required": True}
    if replay:
        headers["Idempotent-Replayed"] = _REPLAYED
        headers["Preference-Applied"] = _PREFERENCE_APPLIED
    return headers


def json_body(component: str, *, example: dict[str, Any] | None = None) -> dict[str, Any]:
    """A required JSON request body whose schema is ``components/schemas/<component>`` (added
    by the app, with the bounds of its settings: see ``ibex_api.schemas.request_components``)."""
    content: dict[str, Any] = {"schema": {"$ref": f"#/components/schemas/{component}"}}
    if example is not None:
        content["example"] = example
    return {"requestBody": {"required": True, "content": {"application/json": content}}}
