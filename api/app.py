"""The HTTP API's app factory. ``create_app(settings)`` builds everything a request needs
(engine, Celery producer, back-pressure counter) and nothing exists at import time.

Importing this module loads FastAPI and the light parts of ``worker`` only: never spaCy,
Presidio, torch or sentence-transformers (a test checks ``sys.modules``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import redis
from fastapi import FastAPI

from ibex_api import errors
from ibex_api.deps import ApiState
from ibex_api.metrics import get_api_metrics
from ibex_api.middleware import RequestContext
from ibex_api.routes import entities, erasures, escalations, memories, ops, reads, review
from ibex_api.schemas import request_components
from ibex_worker.backlog import Backlog, OrgBacklogs
from ibex_worker.celery_app import create_app as create_celery_app
from ibex_worker.config import Settings, get_settings
from ibex_worker.db import make_engine
from ibex_worker.logs import configure_logging
from ibex_worker.publish import Waker
from ibex_worker.runtime import read_cache

API_VERSION = "1.0.0"
_DESCRIPTION = (
    "The write path of the IBEX memory store. Writes are accepted as durable jobs (202) and "
    "processed by the pipeline; `Prefer: wait=N` waits for the final answer. Every failure "
    "answers the error envelope; error bodies never echo submitted content."
)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    engine = make_engine(settings.database_url, pool_size=settings.api_db_pool_size)
    state = ApiState(settings=settings, engine=engine, producer=_producer(settings),
                     backlog=Backlog(engine, settings.backlog_cache_seconds),
                     org_backlogs=OrgBacklogs(engine, settings.backlog_cache_seconds), metrics=get_api_metrics(),
                     redis=redis.Redis.from_url(settings.redis_url, socket_timeout=1, socket_connect_timeout=1),
                     cache=read_cache(settings))
    state.waker = Waker(state.producer, settings, state.redis)
    app = FastAPI(title="IBEX memory write API", version=API_VERSION, description=_DESCRIPTION,
                  lifespan=_lifespan, docs_url="/docs", redoc_url=None, openapi_url="/openapi.json")
    app.state.ibex = state
    errors.install(app)
    app.include_router(memories.router())
    app.include_router(reads.router())
    app.include_router(review.router())
    app.include_router(escalations.router())
    app.include_router(erasures.router())
    app.include_router(entities.router())
    app.include_router(ops.router())
    app.add_middleware(RequestContext, max_body_bytes=settings.max_request_bytes, metrics=state.metrics)
    app.openapi = lambda: _openapi(app, settings)  # type: ignore[method-assign]
    return app


def factory() -> FastAPI:
    """The entry point of an API process (``ibex api``, ``uvicorn --factory ibex_api.app:factory``):
    settings from the environment, logging configured, then the app."""
    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level)
    return create_app(settings)


def _producer(settings: Settings) -> Any:
    """The Celery app, publishing only, with broker timeouts short enough that a Redis
    outage costs a write about a second: the job row is durable and the sweeper publishes it."""
    app = create_celery_app(settings)
    timeout = settings.publish_timeout_seconds
    app.conf.broker_connection_timeout = timeout
    app.conf.broker_transport_options = {**app.conf.broker_transport_options,
                                         "socket_timeout": timeout, "socket_connect_timeout": timeout}
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    state: ApiState = app.state.ibex
    state.engine.dispose()
    state.producer.close()
    state.redis.close()
    if state.cache is not None:
        state.cache.close()


def _openapi(app: FastAPI, settings: Settings) -> dict[str, Any]:
    """FastAPI's document, plus the request-body schemas built from settings, and with its
    default 422 (a body quoting the input) replaced by the envelope this API answers."""
    if app.openapi_schema:
        return app.openapi_schema
    from fastapi.openapi.utils import get_openapi

    schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            response = operation.get("responses", {}).get("422")
            if response and "HTTPValidationError" in str(response):
                response.clear()
                envelope = {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}
                response.update({"description": "VALIDATION_ERROR: details name each bad field, never its value",
                                 "content": {"application/json": envelope}})
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    components.update(request_components(settings))
    app.openapi_schema = schema
    return schema
