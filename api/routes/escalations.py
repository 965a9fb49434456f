"""Escalations for reviewers: ``GET /v1/escalations`` and
``POST /v1/escalations/{escalation_id}/resolve``.

Thin over ``ibex_worker.escalations.service``: each call runs in the key's tenant transaction
(row-level security on its org) and, for a key limited to some agents, on those agents
only. Another tenant's escalation, one of an agent outside the key's agents, an unknown id
and a malformed id all answer the same 404 (as reads by id do); they are never listed.
A person's decision is applied at once, recorded as ``api_key:<key id>``, and is final:
resolving a resolved escalation again is a 409 ``ESCALATION_ALREADY_RESOLVED``.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from datetime import datetime, timedelta
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request

from ibex_api.auth import agent_filter, authenticate
from ibex_api.deps import api_state, blocking
from ibex_api.errors import ApiError, from_ibex_error, unavailable
from ibex_api.openapi import error_responses, success_headers
from ibex_api.routes.memories import parse_model
from ibex_api.schemas import EscalationList, ResolvedEscalation, ResolveIn
from ibex_worker.apikeys import ApiKey
from ibex_worker.errors import TransientError, ValidationFailed
from ibex_worker.escalations import service
from ibex_worker.limits import LIST_LIMIT_MAX
from ibex_worker.runtime import shared_redactor

DEFAULT_LIMIT = 50
CURSOR_MAX_CHARS = 256
_MAX_CURSOR_OFFSET = timedelta(hours=14)  # real offsets only; PostgreSQL refuses some Python accepts

_409 = {**error_responses(404)[404],
        "description": "ESCALATION_ALREADY_RESOLVED: the escalation is resolved already; its decision is final"}
_RESOLVE_BODY = {"requestBody": {"required": True, "content": {"application/json": {
    "schema": ResolveIn.model_json_schema(),
    "example": {"outcome": "contradicts", "note": "Both held at the time; the rota changed in June."}}}}}


def router() -> APIRouter:
    r = APIRouter(tags=["escalations"])
    r.add_api_route("/v1/escalations", list_escalations, methods=["GET"], response_model=EscalationList,
                    operation_id="listEscalations",
                    summary="The key's escalations, oldest first, one page at a time",
                    responses={200: {"headers": success_headers()}, **error_responses(401, 422, 500, 503)})
    r.add_api_route("/v1/escalations/{escalation_id}/resolve", resolve_escalation, methods=["POST"],
                    response_model=ResolvedEscalation, operation_id="resolveEscalation",
                    summary="Decide an escalation as a person (applied at once; final)",
                    responses={200: {"headers": success_headers()}, 409: _409,
                               **error_responses(401, 404, 413, 422, 500, 503)},
                    openapi_extra=_RESOLVE_BODY)
    return r


async def list_escalations(
    request: Request,
    key: ApiKey = Depends(authenticate),
    status: Literal["pending", "claimed", "needs_review", "resolved", "dead"] | None = Query(
        None, description="only escalations in this state (default: every state)"),
    limit: int = Query(DEFAULT_LIMIT, ge=1, le=LIST_LIMIT_MAX, description="page size"),
    cursor: str | None = Query(None, max_length=CURSOR_MAX_CHARS,
                               description="the `next_cursor` of the previous page"),
) -> Any:
    state = api_state(request)
    if cursor and not well_formed_cursor(cursor):
        raise invalid_field("cursor", "is not a cursor this service returned")
    try:
        page = await blocking(service.list_escalations, state.engine, key.org_id, status, limit, cursor or None,
                              agent_filter(key))
    except ValidationFailed as exc:
        raise from_ibex_error(exc, state.settings) from None
    except TransientError:
        raise unavailable(state.settings, keyed=False) from None
    return {"escalations": page["items"], "next_cursor": page["next_cursor"]}


async def resolve_escalation(escalation_id: str, request: Request, key: ApiKey = Depends(authenticate)) -> Any:
    state = api_state(request)
    body = parse_model(ResolveIn, await request.body())
    try:
        return await blocking(service.resolve, state.engine, key.org_id, escalation_id, body.outcome, body.note,
                              f"api_key:{key.id}", state.cache, agent_filter(key),
                              note_redactor=lambda: shared_redactor(state.settings))
    except service.EscalationNotFound:
        raise ApiError(404, "NOT_FOUND", "no such escalation") from None
    except service.EscalationAlreadyResolved as exc:
        raise ApiError(409, exc.code, exc.message) from None
    except ValidationFailed as exc:
        raise from_ibex_error(exc, state.settings) from None
    except TransientError:
        raise unavailable(state.settings, keyed=False) from None


def invalid_field(field: str, issue: str) -> ApiError:
    return ApiError(422, "VALIDATION_ERROR", f"invalid fields: {field}", details=[{"field": field, "issue": issue}])


def well_formed_cursor(cursor: str) -> bool:
    """The shape the service encodes (``[created_at, id]``, base64url JSON), checked before
    it is decoded there, so that no hand-made cursor reaches PostgreSQL as a value it refuses."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        decoded = json.loads(raw)
    except (ValueError, binascii.Error, RecursionError):
        return False
    if not (isinstance(decoded, list) and len(decoded) == 2 and all(isinstance(v, str) for v in decoded)):
        return False
    try:
        at = datetime.fromisoformat(decoded[0])
        uuid.UUID(decoded[1])
    except ValueError:
        return False
    offset = at.utcoffset()
    return offset is None or abs(offset) <= _MAX_CURSOR_OFFSET
