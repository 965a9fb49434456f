"""Entities and their aliases: ``GET/POST /v1/entities``, ``GET/DELETE /v1/entities/{id}``,
``GET/POST /v1/entities/{id}/aliases`` and ``DELETE /v1/entities/{id}/aliases/{alias}``.

Thin over ``ibex_worker.entities``. Entities are org-wide, so a key limited to some agents is
refused (403 ``FORBIDDEN``). Each call runs in the key's tenant transaction: another tenant's
entity, an unknown id and a malformed id all answer the same 404. A name or alias that holds
personal data is a 422 ``PII_IN_FIELD`` naming the field, never echoing it; one whose key
already names an entity is a 409 ``ENTITY_EXISTS`` with that entity's id. Nothing merges
entities: an alias is how a person says two spellings are one.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from ibex_api.auth import authenticate
from ibex_api.deps import api_state, blocking
from ibex_api.errors import ApiError, from_ibex_error, unavailable
from ibex_api.openapi import error_responses, success_headers
from ibex_api.routes.escalations import CURSOR_MAX_CHARS
from ibex_api.routes.memories import parse_model
from ibex_api.schemas import AliasIn, AliasList, EntityAlias, EntityIn, EntityList, EntityView
from ibex_worker import entities
from ibex_worker.apikeys import ApiKey
from ibex_worker.errors import IbexError, TransientError, ValidationFailed
from ibex_worker.limits import LIST_LIMIT_MAX
from ibex_worker.runtime import shared_redactor

DEFAULT_LIMIT = 50
_403 = {**error_responses(403)[403], "description": "FORBIDDEN: entities are org-wide; the key is limited to "
                                                    "some agents"}
_409 = {**error_responses(409)[409], "description": "ENTITY_EXISTS (with entity_id): the name's key already "
                                                    "names that entity; nothing changed"}
_ENTITY_BODY = {"requestBody": {"required": True, "content": {"application/json": {
    "schema": EntityIn.model_json_schema(),
    "example": {"name": "Atlas support contract", "kind": "contract", "aliases": ["Atlas contract"]}}}}}
_ALIAS_BODY = {"requestBody": {"required": True, "content": {"application/json": {
    "schema": AliasIn.model_json_schema(), "example": {"alias": "color scheme"}}}}}


def router() -> APIRouter:
    r = APIRouter(tags=["entities"])
    ok = {200: {"headers": success_headers()}}
    r.add_api_route("/v1/entities", list_entities, methods=["GET"], response_model=EntityList,
                    operation_id="listEntities", summary="The org's entities, oldest first, one page at a time",
                    responses={**ok, 403: _403, **error_responses(401, 422, 500, 503)})
    r.add_api_route("/v1/entities", create_entity, methods=["POST"], status_code=201, response_model=EntityView,
                    operation_id="createEntity",
                    summary="Name an entity, with aliases; resemblances to existing ones are recorded as "
                            "possibly_same_as, never merged",
                    responses={201: {"headers": success_headers()}, 403: _403, 409: _409,
                               **error_responses(401, 413, 422, 500, 503)},
                    openapi_extra=_ENTITY_BODY)
    r.add_api_route("/v1/entities/{entity_id}", read_entity, methods=["GET"], response_model=EntityView,
                    operation_id="readEntity", summary="An entity with its aliases and resemblances",
                    responses={**ok, 403: _403, **error_responses(401, 404, 500, 503)})
    r.add_api_route("/v1/entities/{entity_id}", delete_entity, methods=["DELETE"], status_code=204,
                    response_class=Response, operation_id="deleteEntity",
                    summary="Delete an entity with its aliases and resemblances; its memories keep no entity",
                    responses={204: {"description": "Deleted", "headers": success_headers()}, 403: _403,
                               **error_responses(401, 404, 500, 503)})
    r.add_api_route("/v1/entities/{entity_id}/aliases", list_aliases, methods=["GET"], response_model=AliasList,
                    operation_id="listEntityAliases", summary="An entity's aliases, oldest first",
                    responses={**ok, 403: _403, **error_responses(401, 404, 500, 503)})
    r.add_api_route("/v1/entities/{entity_id}/aliases", add_alias, methods=["POST"], status_code=201,
                    response_model=EntityAlias, operation_id="addEntityAlias",
                    summary="Record another spelling of an entity: later subjects of its key resolve to it",
                    responses={201: {"headers": success_headers()}, 403: _403, 409: _409,
                               **error_responses(401, 404, 413, 422, 500, 503)},
                    openapi_extra=_ALIAS_BODY)
    r.add_api_route("/v1/entities/{entity_id}/aliases/{alias}", remove_alias, methods=["DELETE"], status_code=204,
                    response_class=Response, operation_id="removeEntityAlias",
                    summary="Remove an alias (matched by its key)",
                    responses={204: {"description": "Removed", "headers": success_headers()}, 403: _403,
                               **error_responses(401, 404, 500, 503)})
    return r


def _org_wide(key: ApiKey) -> None:
    if key.agents is not None:
        raise ApiError(403, "FORBIDDEN", "entities are org-wide; this key is limited to some agents")


async def _call(request: Request, fn: Any, *args: Any) -> Any:
    state = api_state(request)
    try:
        return await blocking(fn, *args)
    except entities.EntityNotFound as exc:
        raise ApiError(404, "NOT_FOUND", exc.message) from None
    except entities.NameTaken as exc:
        raise ApiError(409, exc.code, exc.message, extra={"entity_id": exc.entity_id}) from None
    except ValidationFailed as exc:
        raise from_ibex_error(exc, state.settings) from None
    except TransientError:
        raise unavailable(state.settings, keyed=False) from None
    except IbexError as exc:
        raise from_ibex_error(exc, state.settings) from None


async def list_entities(
    request: Request, key: ApiKey = Depends(authenticate),
    limit: int = Query(DEFAULT_LIMIT, ge=1, le=LIST_LIMIT_MAX, description="page size"),
    cursor: str | None = Query(None, max_length=CURSOR_MAX_CHARS, description="the `next_cursor` of the previous page"),
) -> Any:
    _org_wide(key)
    page = await _call(request, entities.list_entities, api_state(request).engine, key.org_id, limit, cursor or None)
    return {"entities": page["items"], "next_cursor": page["next_cursor"]}


async def create_entity(request: Request, key: ApiKey = Depends(authenticate)) -> Any:
    _org_wide(key)
    body = parse_model(EntityIn, await request.body())
    state = api_state(request)
    view = await _call(request, entities.create, state.engine, key.org_id, body.name, body.kind, body.aliases,
                       state.settings.entity_fuzzy_threshold, f"api_key:{key.id}",
                       lambda: shared_redactor(state.settings))
    return JSONResponse(view, status_code=201)


async def read_entity(entity_id: str, request: Request, key: ApiKey = Depends(authenticate)) -> Any:
    _org_wide(key)
    return await _call(request, entities.read, api_state(request).engine, key.org_id, entity_id)


async def delete_entity(entity_id: str, request: Request, key: ApiKey = Depends(authenticate)) -> Response:
    _org_wide(key)
    await _call(request, entities.delete, api_state(request).engine, key.org_id, entity_id, f"api_key:{key.id}")
    return Response(status_code=204)


async def list_aliases(entity_id: str, request: Request, key: ApiKey = Depends(authenticate)) -> Any:
    _org_wide(key)
    return {"aliases": await _call(request, entities.list_aliases, api_state(request).engine, key.org_id, entity_id)}


async def add_alias(entity_id: str, request: Request, key: ApiKey = Depends(authenticate)) -> Any:
    _org_wide(key)
    body = parse_model(AliasIn, await request.body())
    state = api_state(request)
    alias = await _call(request, entities.add_alias, state.engine, key.org_id, entity_id, body.alias,
                        f"api_key:{key.id}", lambda: shared_redactor(state.settings))
    return JSONResponse(alias, status_code=201)


async def remove_alias(entity_id: str, alias: str, request: Request, key: ApiKey = Depends(authenticate)) -> Response:
    _org_wide(key)
    await _call(request, entities.remove_alias, api_state(request).engine, key.org_id, entity_id, alias,
                f"api_key:{key.id}")
    return Response(status_code=204)
