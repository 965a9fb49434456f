"""Quarantine review and deletion: ``GET /v1/quarantine``, ``POST /v1/memories/{id}/release``,
``DELETE /v1/memories/{id}`` and ``DELETE /v1/memories/{id}/relationships/{other_id}``.

Thin over ``ibex_worker.review``. Each call runs in the key's tenant transaction and, for a key
limited to some agents, on those agents only: another tenant's memory, one outside the
key's agents, an unknown id and a malformed id all answer the same 404. A quarantined
memory is listed with its masked content only; no route returns a raw finding. Decisions are
recorded as ``api_key:<key id>``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import Response

from ibex_api.auth import agent_filter, authenticate
from ibex_api.deps import api_state, blocking
from ibex_api.errors import ApiError, from_ibex_error, unavailable
from ibex_api.openapi import error_responses, success_headers
from ibex_api.routes.escalations import CURSOR_MAX_CHARS, invalid_field, well_formed_cursor
from ibex_api.routes.memories import accepted_or_final, parse_model
from ibex_api.schemas import Accepted, Created, QuarantineList, RelationshipRemovalIn, ReleaseIn
from ibex_worker import links, review
from ibex_worker.apikeys import ApiKey
from ibex_worker.errors import TransientError, ValidationFailed
from ibex_worker.limits import LIST_LIMIT_MAX
from ibex_worker.runtime import shared_redactor

DEFAULT_LIMIT = 50
_RELEASE_BODY = {"requestBody": {"required": False, "content": {"application/json": {
    "schema": ReleaseIn.model_json_schema(), "example": {"note": "The number is our office switchboard."}}}}}
_REMOVAL_BODY = {"requestBody": {"required": False, "content": {"application/json": {
    "schema": RelationshipRemovalIn.model_json_schema(),
    "example": {"reason": "Two different customers; the template made them look alike."}}}}}
_REMOVAL_409 = {**error_responses(409)[409],
                "description": "DUPLICATE_CONTENT (with memory_id): undoing the supersession would make the "
                               "superseded memory active beside an identical active one; nothing changed"}
_409 = {**error_responses(409)[409],
        "description": "NOT_QUARANTINED: the memory is not quarantined (any more); RELEASE_IN_PROGRESS (with "
                       "job_id): a release of it is running; DUPLICATE_CONTENT (final answer, with memory_id): "
                       "the released text is an active memory already, which was kept"}


def router() -> APIRouter:
    r = APIRouter(tags=["review"])
    r.add_api_route("/v1/quarantine", list_quarantine, methods=["GET"], response_model=QuarantineList,
                    operation_id="listQuarantine",
                    summary="The key's quarantined memories, oldest first, masked, one page at a time",
                    responses={200: {"headers": success_headers()}, **error_responses(401, 422, 500, 503)})
    r.add_api_route("/v1/memories/{memory_id}/release", release_memory, methods=["POST"], status_code=202,
                    response_model=None, operation_id="releaseMemory",
                    summary="Release a quarantined memory: its masked text becomes an active memory through "
                            "the pipeline (dedup, embedding, conflict); audited",
                    responses={202: {"model": Accepted, "headers": success_headers(location=True)},
                               201: {"model": Created, "description": "The final answer (Prefer: wait)",
                                     "headers": success_headers(location=True, replay=True)},
                               409: _409, **error_responses(401, 404, 413, 422, 500, 503)},
                    openapi_extra=_RELEASE_BODY)
    r.add_api_route("/v1/memories/{memory_id}", delete_memory, methods=["DELETE"], status_code=204,
                    response_class=Response, operation_id="deleteMemory",
                    summary="Delete a memory: content, labels, relationships, vector and cache entry gone; "
                            "open escalations naming it end withdrawn; audited. Deleting again is a 204.",
                    responses={204: {"description": "Deleted (or deleted already)", "headers": success_headers()},
                               **error_responses(401, 404, 500, 503)})
    r.add_api_route("/v1/memories/{memory_id}/relationships/{other_id}", remove_relationship, methods=["DELETE"],
                    status_code=204, response_class=Response, operation_id="removeRelationship",
                    summary="Undo a relationship between two memories (either direction): the link goes, the "
                            "removal is audited, the same texts are not linked again; undoing a supersession "
                            "makes the superseded memory active again",
                    responses={204: {"description": "Removed", "headers": success_headers()},
                               409: _REMOVAL_409, **error_responses(401, 404, 413, 422, 500, 503)},
                    openapi_extra=_REMOVAL_BODY)
    return r


async def list_quarantine(
    request: Request,
    key: ApiKey = Depends(authenticate),
    limit: int = Query(DEFAULT_LIMIT, ge=1, le=LIST_LIMIT_MAX, description="page size"),
    cursor: str | None = Query(None, max_length=CURSOR_MAX_CHARS, description="the `next_cursor` of the previous page"),
) -> Any:
    state = api_state(request)
    if cursor and not well_formed_cursor(cursor):
        raise invalid_field("cursor", "is not a cursor this service returned")
    try:
        page = await blocking(review.list_quarantined, state.engine, key.org_id, limit, cursor or None,
                              agent_filter(key))
    except ValidationFailed as exc:
        raise from_ibex_error(exc, state.settings) from None
    except TransientError:
        raise unavailable(state.settings, keyed=False) from None
    return {"memories": page["items"], "next_cursor": page["next_cursor"]}


async def release_memory(
    memory_id: str, request: Request, key: ApiKey = Depends(authenticate),
    prefer: str | None = Header(None, alias="Prefer", examples=["wait=5"],
                                description="`wait=N`: answer the final 201/409 if the release finishes within N "
                                            "seconds (at most 30), else 202"),
) -> Response:
    state = api_state(request)
    body = _release_body(await request.body())
    try:
        job_id = await blocking(review.release, state.engine, state.producer, state.settings, key.org_id,
                                memory_id, body.note, f"api_key:{key.id}", agent_filter(key))
    except review.MemoryNotFound:
        raise ApiError(404, "NOT_FOUND", "no such memory") from None
    except review.NotQuarantined as exc:
        raise ApiError(409, exc.code, exc.message) from None
    except review.ReleaseInProgress as exc:
        raise ApiError(409, exc.code, exc.message, headers={"Retry-After": "2"}, extra={"job_id": exc.job_id}) from None
    except ValidationFailed as exc:
        raise from_ibex_error(exc, state.settings) from None
    except TransientError:
        raise unavailable(state.settings, keyed=False) from None
    return await accepted_or_final(request, state, key.org_id, job_id, prefer)


async def delete_memory(memory_id: str, request: Request, key: ApiKey = Depends(authenticate)) -> Response:
    state = api_state(request)
    try:
        await blocking(review.delete, state.engine, key.org_id, memory_id, f"api_key:{key.id}", agent_filter(key),
                       state.cache)
    except review.MemoryNotFound:
        raise ApiError(404, "NOT_FOUND", "no such memory") from None
    except TransientError:
        raise unavailable(state.settings, keyed=False) from None
    return Response(status_code=204)


async def remove_relationship(
    memory_id: str, other_id: str, request: Request, key: ApiKey = Depends(authenticate),
    kind: str = Query(..., alias="type", description="near_duplicate_of, supersedes or contradicts"),
) -> Response:
    state = api_state(request)
    raw = await request.body()
    body = parse_model(RelationshipRemovalIn, raw) if raw.strip() else RelationshipRemovalIn()
    try:
        await blocking(links.remove, state.engine, key.org_id, memory_id, other_id, kind, body.reason,
                       f"api_key:{key.id}", agent_filter(key), lambda: shared_redactor(state.settings))
    except links.LinkNotFound:
        raise ApiError(404, "NOT_FOUND", "no such relationship") from None
    except links.ReactivationBlocked as exc:  # nothing changed
        raise ApiError(409, exc.code, exc.message, extra={"memory_id": exc.memory_id}) from None
    except ValidationFailed as exc:
        raise from_ibex_error(exc, state.settings) from None
    except TransientError:
        raise unavailable(state.settings, keyed=False) from None
    return Response(status_code=204)


def _release_body(raw: bytes) -> ReleaseIn:
    """An empty body is a release without a note."""
    return parse_model(ReleaseIn, raw) if raw.strip() else ReleaseIn()

