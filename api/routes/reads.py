"""Reads by id: ``GET /v1/jobs/{job_id}``, ``GET /v1/memories/{memory_id}`` and
``GET /v1/memories/{memory_id}/relationships``.

Each runs in the key's tenant transaction (row-level security on its org) and, for a key
limited to some agents, filters on them: another tenant's id, an id outside the key's
agents and a malformed id all answer the same 404 as an unknown id.
"""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Depends, Request

from ibex_api.auth import agent_filter, authenticate
from ibex_api.deps import api_state, blocking
from ibex_api.errors import ApiError, unavailable
from ibex_api.openapi import error_responses, success_headers
from ibex_api.schemas import JobView, MemoryView, RelationshipsView
from ibex_worker import reads
from ibex_worker.apikeys import ApiKey
from ibex_worker.errors import TransientError
from ibex_worker.submit import job_view

_ERRORS = error_responses(401, 404, 500, 503)


def router() -> APIRouter:
    r = APIRouter(tags=["reads"])
    r.add_api_route("/v1/jobs/{job_id}", get_job, methods=["GET"], response_model=JobView, operation_id="getJob",
                    summary="A write job: status, final result, decision receipt and stage timings",
                    responses={200: {"headers": success_headers()}, **_ERRORS})
    r.add_api_route("/v1/memories/{memory_id}", get_memory, methods=["GET"], response_model=MemoryView,
                    operation_id="getMemory",
                    summary="A stored (redacted) memory",
                    responses={200: {"headers": success_headers()}, **_ERRORS})
    r.add_api_route("/v1/memories/{memory_id}/relationships", get_relationships, methods=["GET"],
                    response_model=RelationshipsView, operation_id="getMemoryRelationships",
                    summary="near_duplicate_of, supersedes and contradicts links, both directions, with evidence",
                    responses={200: {"headers": success_headers()}, **_ERRORS})
    return r


def _not_found(what: str) -> ApiError:
    return ApiError(404, "NOT_FOUND", f"no such {what}")


def _canonical_id(value: str, what: str) -> str:
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise _not_found(what) from None


async def _read(request: Request, key: ApiKey, func: Any, raw_id: str, what: str) -> Any:
    state = api_state(request)
    object_id = _canonical_id(raw_id, what)
    try:
        view = await blocking(func, state.engine, key.org_id, object_id, agent_filter(key))
    except TransientError:
        raise unavailable(state.settings, keyed=False) from None
    if view is None:
        raise _not_found(what)
    return view


async def get_job(job_id: str, request: Request, key: ApiKey = Depends(authenticate)) -> Any:
    return await _read(request, key, job_view, job_id, "job")


async def get_memory(memory_id: str, request: Request, key: ApiKey = Depends(authenticate)) -> Any:
    return await _read(request, key, reads.memory_view, memory_id, "memory")


async def get_relationships(memory_id: str, request: Request, key: ApiKey = Depends(authenticate)) -> Any:
    return await _read(request, key, reads.relationships_view, memory_id, "memory")
