"""What a request handler needs, built once per app by ``create_app`` and kept on
``app.state``: settings, the database engine, the Celery producer, the backlog counter and
the metrics. Nothing here exists at import time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from ibex_api.metrics import ApiMetrics
from ibex_worker.backlog import Backlog, OrgBacklogs
from ibex_worker.config import Settings


@dataclass
class ApiState:
    settings: Settings
    engine: Any
    producer: Any  # a Celery app, used to publish job ids only
    backlog: Backlog
    org_backlogs: OrgBacklogs
    metrics: ApiMetrics
    redis: Any  # for /readyz
    cache: Any = None  # the read cache: a person's supersedes decision evicts the older memory
    waker: Any = None  # coalesced wake-ups for new jobs (ibex_worker.publish.Waker)


def api_state(request: Request) -> ApiState:
    return request.app.state.ibex


async def blocking(func: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a database or broker call (synchronous drivers) off the event loop."""
    return await run_in_threadpool(func, *args, **kwargs)
