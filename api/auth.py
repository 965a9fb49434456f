"""Bearer API keys: who is calling, and which org and agents they may touch.

No key, a malformed one, an unknown or a revoked one: 401 ``UNAUTHENTICATED``. A request
for an org or agent outside the key's scope: 403 ``FORBIDDEN`` (writes) or 404 (reads by
id, exactly as for an unknown id). The lookup needs PostgreSQL: when it is down the answer
is 503, never 401 (and ``IDEMPOTENCY_UNAVAILABLE`` for a keyed write, whose ledger could
not be consulted either). ``/metrics`` takes ``IBEX_METRICS_TOKEN`` instead, when one is set.
"""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ibex_api.deps import api_state, blocking
from ibex_api.errors import ApiError, unavailable
from ibex_worker import apikeys
from ibex_worker.apikeys import ApiKey
from ibex_worker.errors import TransientError

bearer = HTTPBearer(auto_error=False, description="An API key created with `ibex keys create`.")

IDEMPOTENCY_HEADERS = ("x-idempotency-key", "idempotency-key")


def _unauthenticated(message: str) -> ApiError:
    return ApiError(401, "UNAUTHENTICATED", message, headers={"WWW-Authenticate": "Bearer"})


def require_metrics_token(request: Request) -> None:
    """``/metrics`` behind ``IBEX_METRICS_TOKEN`` when one is set (compared in constant time).
    Read from the header here, not declared as a security scheme: without a token set the
    route is open, and the OpenAPI document must not say otherwise."""
    expected = api_state(request).settings.metrics_token.get_secret_value()
    if not expected:
        return
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected.encode()):
        raise _unauthenticated("a metrics token is required: Authorization: Bearer <IBEX_METRICS_TOKEN>")


async def _verify(request: Request, credentials: HTTPAuthorizationCredentials | None, *, keyed: bool) -> ApiKey:
    if credentials is None:
        raise _unauthenticated("an API key is required: Authorization: Bearer <key>")
    state = api_state(request)
    try:
        key = await blocking(apikeys.verify, state.engine, credentials.credentials)
    except TransientError:
        raise unavailable(state.settings, keyed=keyed) from None
    if key is None:
        raise _unauthenticated("the API key is unknown or revoked")
    request.state.api_key_id = key.id
    return key


async def authenticate(request: Request,
                       credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> ApiKey:
    return await _verify(request, credentials, keyed=False)


async def authenticate_write(request: Request,
                             credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> ApiKey:
    keyed = any(request.headers.get(name) is not None for name in IDEMPOTENCY_HEADERS)
    return await _verify(request, credentials, keyed=keyed)


def require_scope(key: ApiKey, org_id: Any, agent_id: Any) -> None:
    if not key.allows(org_id, agent_id):
        raise ApiError(403, "FORBIDDEN", "the API key does not cover this org_id and agent_id")


def agent_filter(key: ApiKey) -> list[str] | None:
    """For reads: the agents a key may see (None: every agent of its org)."""
    return list(key.agents) if key.agents is not None else None
