"""The error envelope of every failure, and the mapping from the project's error taxonomy.

``{"error": {"code", "message", "details"?}, "request_id", ...}``. Messages and details name
fields and limits, never submitted values: FastAPI's own validation errors (whose default
body quotes the input) are rewritten here, and an unhandled exception answers a bare 500.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ibex_worker.backlog import BacklogFull
from ibex_worker.errors import (ErasureInProgress, IbexError, IdempotencyConflict, IdempotencyInProgress, TransientError,
                               ValidationFailed)

_STATUS_CODES = {400: "BAD_REQUEST", 401: "UNAUTHENTICATED", 403: "FORBIDDEN", 404: "NOT_FOUND",
                 405: "METHOD_NOT_ALLOWED", 406: "NOT_ACCEPTABLE", 413: "PAYLOAD_TOO_LARGE",
                 415: "UNSUPPORTED_MEDIA_TYPE", 422: "VALIDATION_ERROR", 429: "BACKPRESSURE",
                 500: "INTERNAL", 503: "UNAVAILABLE"}
_PLAIN_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")


class ApiError(Exception):
    """An answer other than success, raised anywhere in a request and rendered as the envelope."""

    def __init__(self, status: int, code: str, message: str, *, details: list[dict[str, str]] | None = None,
                 headers: dict[str, str] | None = None, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers or {}
        self.extra = extra or {}

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            error["details"] = self.details
        return {"error": error, **self.extra}


def request_id_of(request: Request) -> str:
    return str(getattr(request.state, "request_id", ""))


def envelope_response(request: Request, exc: ApiError) -> JSONResponse:
    return JSONResponse({**exc.body(), "request_id": request_id_of(request)}, status_code=exc.status,
                        headers=exc.headers)


def from_ibex_error(exc: IbexError, settings: Any, *, keyed: bool = False) -> ApiError:
    """The HTTP answer for an error of the write path."""
    if isinstance(exc, ValidationFailed):
        return ApiError(422, exc.code, exc.message, details=[issue.as_dict() for issue in exc.issues])
    if isinstance(exc, IdempotencyInProgress):
        return ApiError(409, exc.code, exc.message, headers={"Retry-After": str(max(1, exc.retry_after))},
                        extra={"job_id": exc.job_id})
    if isinstance(exc, IdempotencyConflict):
        return ApiError(409, exc.code, exc.message)
    if isinstance(exc, ErasureInProgress):
        return ApiError(409, exc.code, exc.message, headers={"Retry-After": str(exc.retry_after)},
                        extra={"erasure_id": exc.erasure_id})
    if isinstance(exc, BacklogFull):
        return ApiError(429, exc.code, exc.message, headers={"Retry-After": str(exc.retry_after)})
    if isinstance(exc, TransientError):
        return unavailable(settings, keyed=keyed or exc.code == "IDEMPOTENCY_UNAVAILABLE")
    return ApiError(500, "INTERNAL", "internal error")


def unavailable(settings: Any, *, keyed: bool) -> ApiError:
    """PostgreSQL could not be reached, or its connections stayed busy. Usually nothing was
    recorded, but a connection lost during COMMIT leaves that unknown: the message says so, and
    how a keyed retry finds out."""
    headers = {"Retry-After": str(settings.unavailable_retry_after_seconds)}
    if keyed:
        return ApiError(503, "IDEMPOTENCY_UNAVAILABLE",
                        "the idempotency ledger is unavailable; the request may not have been recorded: retry with "
                        "the same key (a recorded write answers with its outcome and never runs twice)",
                        headers=headers)
    return ApiError(503, "UNAVAILABLE", "the store is unavailable; the request may not have been recorded: retry "
                                        "later (a write sent with an Idempotency-Key cannot be stored twice)",
                    headers=headers)


def _field_of(loc: tuple[Any, ...] | list[Any]) -> str:
    """A field path from a validation error location, naming only plain identifiers (a
    client-chosen key is submitted text and is never echoed)."""
    parts = [str(p) for p in loc if not (isinstance(p, str) and p in ("body", "query", "path", "header", "cookie"))]
    shown = [p if (_PLAIN_NAME.fullmatch(p) or p.isdigit()) else "?" for p in parts]
    return ".".join(shown) or "request"


def _validation_details(exc: RequestValidationError) -> list[dict[str, str]]:
    details = []
    for err in exc.errors():
        # pydantic messages are templates with limits ("String should have at most 255
        # characters"), never the input; the input itself is dropped here.
        details.append({"field": _field_of(err.get("loc", ())), "issue": str(err.get("msg", "invalid"))})
    return details


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return envelope_response(request, exc)

    @app.exception_handler(RequestValidationError)
    async def _request_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        details = _validation_details(exc)
        fields = ", ".join(sorted({d["field"] for d in details}))
        return envelope_response(request, ApiError(422, "VALIDATION_ERROR", f"invalid fields: {fields}",
                                                   details=details))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _STATUS_CODES.get(exc.status_code, f"HTTP_{exc.status_code}")
        message = exc.detail if isinstance(exc.detail, str) else code.lower().replace("_", " ")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = _allowed_methods(request)
        return envelope_response(request, ApiError(exc.status_code, code, message, headers=headers))


def _allowed_methods(request: Request) -> str:
    """Every method some route serves at this path (Starlette names only the first route's,
    and GET and DELETE of one path are two routes, in two routers)."""
    methods: set[str] = set()
    for route in _leaf_routes(request.app.routes):
        regex = getattr(route, "path_regex", None)
        if regex is not None and regex.match(request.url.path):
            methods.update(getattr(route, "methods", None) or ())
    return ", ".join(sorted(methods - {"HEAD"}))


def _leaf_routes(routes: Any) -> Any:
    for route in routes:
        router = getattr(route, "original_router", None)
        if router is not None:
            yield from _leaf_routes(router.routes)
        else:
            yield route
