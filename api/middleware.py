"""The outermost layer of every request: a request id (bound to the log context, sent back
as ``X-Request-Id``), the request size limit, the last-resort 500, one log line and the
request metrics.

The size limit is enforced on the ASGI receive stream: a declared ``Content-Length`` over
the limit is answered 413 before a byte of the body is read, and a chunked body is cut off
as soon as it passes the limit.
"""

from __future__ import annotations

import json
import re
import time
import traceback
import uuid
from typing import Any

import structlog
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = structlog.get_logger("ibex.api")

_QUIET_ROUTES = {"/healthz", "/readyz", "/metrics"}  # probes and scrapes: metrics only, no log line
_SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")


class PayloadTooLarge(StarletteHTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than {limit} bytes")


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def _request_id(scope: Scope) -> str:
    """The caller's ``X-Request-Id`` when it is a plain token, else a fresh one."""
    incoming = _header(scope, b"x-request-id")
    if incoming and _SAFE_REQUEST_ID.fullmatch(incoming):
        return incoming
    return uuid.uuid4().hex


def _declared_length(scope: Scope) -> int | None:
    raw = _header(scope, b"content-length")
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def _route_of(scope: Scope) -> str:
    route = scope.get("route")
    return getattr(route, "path", None) or "unmatched"


class RequestContext:
    def __init__(self, app: ASGIApp, *, max_body_bytes: int, metrics: Any) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _request_id(scope)
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        response: dict[str, Any] = {"status": 500, "started": False}

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                response.update(status=message["status"], started=True)
                MutableHeaders(scope=message)["X-Request-Id"] = request_id
            await send(message)

        with structlog.contextvars.bound_contextvars(request_id=request_id):
            try:
                await self._dispatch(scope, receive, send_with_id, request_id)
            except Exception as exc:  # the last resort: never a traceback or a message in the answer
                self._crashed(exc)
                if not response["started"]:
                    await _send_json(send_with_id, 500, {"error": {"code": "INTERNAL", "message": "internal error"},
                                                         "request_id": request_id})
            finally:
                self._completed(scope, response["status"], time.perf_counter() - started)

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send, request_id: str) -> None:
        declared = _declared_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            message = f"the request body is larger than {self.max_body_bytes} bytes"
            await _send_json(send, 413, {"error": {"code": "PAYLOAD_TOO_LARGE", "message": message},
                                         "request_id": request_id}, close=True)
            return
        await self.app(scope, self._limited(receive), send)

    def _limited(self, receive: Receive) -> Receive:
        seen = 0

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body_bytes:
                    raise PayloadTooLarge(self.max_body_bytes)
            return message
        return limited_receive

    def _crashed(self, exc: Exception) -> None:
        # Frames only (file, line, function): an exception's message may quote submitted text.
        frames = [f"{f.filename}:{f.lineno}:{f.name}" for f in traceback.extract_tb(exc.__traceback__)[-8:]]
        log.error("request_crashed", error=type(exc).__name__, frames=frames)

    def _completed(self, scope: Scope, status: int, seconds: float) -> None:
        route = _route_of(scope)
        self.metrics.observe_request(scope["method"], route, status, seconds)
        if route in _QUIET_ROUTES:
            return
        log.info("request_completed", method=scope["method"], route=route, status=status,
                 duration_ms=round(seconds * 1000.0, 3))


async def _send_json(send: Send, status: int, body: dict[str, Any], *, close: bool = False) -> None:
    payload = json.dumps(body, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if close:  # the unread body stays on the wire: do not reuse the connection
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
