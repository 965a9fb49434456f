"""Erasures: ``POST /v1/erasures`` and ``GET /v1/erasures/{id}``.

Thin over ``ibex_worker.erasures``. Scope as for writes: an org or agent outside the key's
scope is a 403; a key limited to some agents erases listed memories of those agents only
(others are skipped as unknown). Reads of another org's erasure, of one the key's agents do
not cover, of an unknown id and of a malformed id answer the same 404.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from ibex_api.auth import agent_filter, authenticate, require_scope
from ibex_api.deps import api_state, blocking
from ibex_api.errors import ApiError, from_ibex_error, unavailable
from ibex_api.openapi import error_responses, success_headers
from ibex_api.routes.memories import parse_model
from ibex_api.schemas import ErasureAccepted, ErasureIn, ErasureView
from ibex_worker import erasures
from ibex_worker.apikeys import ApiKey
from ibex_worker.errors import TransientError, ValidationFailed

_BODY = {"requestBody": {"required": True, "content": {"application/json": {
    "schema": ErasureIn.model_json_schema(),
    "examples": {"agent": {"value": {"org_id": "acme", "agent_id": "support-bot"}},
                 "memories": {"value": {"org_id": "acme",
                                        "memory_ids": ["8b0f3c52-5d1e-4a8e-9a43-2f6f1c7b9d10"]}}}}}}}


def router() -> APIRouter:
    r = APIRouter(tags=["erasures"])
    r.add_api_route("/v1/erasures", create_erasure, methods=["POST"], status_code=202, response_model=None,
                    operation_id="createErasure",
                    summary="Erase every memory of an agent, or listed memories, in the background; a receipt "
                            "keeps ids and counts only",
                    responses={202: {"model": ErasureAccepted, "headers": success_headers(location=True)},
                               **error_responses(401, 403, 413, 422, 500, 503)},
                    openapi_extra=_BODY)
    r.add_api_route("/v1/erasures/{erasure_id}", read_erasure, methods=["GET"], response_model=ErasureView,
                    operation_id="getErasure", summary="An erasure's status and counts",
                    responses={200: {"headers": success_headers()}, **error_responses(401, 404, 500, 503)})
    return r


async def create_erasure(request: Request, key: ApiKey = Depends(authenticate)) -> JSONResponse:
    state = api_state(request)
    body = parse_model(ErasureIn, await request.body())
    try:
        erasures.check_request(state.settings, body.org_id, body.agent_id, body.memory_ids)
    except ValidationFailed as exc:
        raise from_ibex_error(exc, state.settings) from None
    if body.agent_id is not None:
        require_scope(key, body.org_id, body.agent_id)
    elif body.org_id != key.org_id:
        raise ApiError(403, "FORBIDDEN", "the API key does not cover this org_id")
    try:
        erasure_id, status = await blocking(erasures.request, state.engine, state.producer, state.settings,
                                            body.org_id, agent_id=body.agent_id, memory_ids=body.memory_ids,
                                            requested_by=f"api_key:{key.id}", agent_scope=agent_filter(key))
    except ValidationFailed as exc:
        raise from_ibex_error(exc, state.settings) from None
    except TransientError:
        raise unavailable(state.settings, keyed=False) from None
    return JSONResponse({"erasure_id": erasure_id, "status": status}, status_code=202,
                        headers={"Location": f"/v1/erasures/{erasure_id}"})


async def read_erasure(erasure_id: str, request: Request, key: ApiKey = Depends(authenticate)) -> Any:
    state = api_state(request)
    try:
        return await blocking(erasures.view, state.engine, key.org_id, erasure_id, agent_filter(key))
    except erasures.ErasureNotFound:
        raise ApiError(404, "NOT_FOUND", "no such erasure") from None
    except TransientError:
        raise unavailable(state.settings, keyed=False) from None
