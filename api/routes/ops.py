"""Operations: ``/healthz`` (the process answers), ``/readyz`` (PostgreSQL and Redis
reachable, migrations current; how the pipeline keeps up) and ``/metrics`` (Prometheus text
format). No API key needed; ``/metrics`` takes ``IBEX_METRICS_TOKEN`` when one is set."""

from __future__ import annotations

from typing import Any

import structlog
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from ibex_api.auth import require_metrics_token
from ibex_api.deps import api_state, blocking
from ibex_api.errors import request_id_of
from ibex_api.metrics import exposition
from ibex_api.openapi import error_responses
from ibex_api.schemas import Health, Readiness
from ibex_worker.migrate import clean_version, discover

log = structlog.get_logger("ibex.api")


def router() -> APIRouter:
    r = APIRouter(tags=["operations"])
    r.add_api_route("/healthz", healthz, methods=["GET"], response_model=Health, operation_id="healthz",
                    summary="The process is up")
    r.add_api_route("/readyz", readyz, methods=["GET"], response_model=Readiness, operation_id="readyz",
                    summary="PostgreSQL and Redis reachable, migrations current",
                    responses={503: error_responses(503)[503]})
    r.add_api_route("/metrics", metrics, methods=["GET"], response_class=Response, operation_id="metrics",
                    summary="Prometheus metrics (behind IBEX_METRICS_TOKEN when one is set)",
                    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}},
                               401: error_responses(401)[401]})
    return r


async def healthz() -> dict[str, str]:
    return {"status": "ok"}


async def readyz(request: Request) -> Any:
    state = api_state(request)
    checks = {"postgres": False, "migrations": False, "redis": False}
    try:
        version = await blocking(clean_version, state.engine)
        checks["postgres"] = True
        checks["migrations"] = version == max((m.version for m in discover()), default=None)
    except Exception as exc:  # unreachable, or never migrated: not ready, whatever the driver raised
        log.info("readiness_check_failed", check="postgres", error=type(exc).__name__)
    checks["redis"] = await blocking(_redis_ok, state.redis)
    if all(checks.values()):
        try:
            return {"status": "ready", "checks": checks, "pipeline": await blocking(_pipeline, state)}
        except Exception as exc:  # lost between the two reads: not ready, like any unreachable database
            log.info("readiness_check_failed", check="postgres", error=type(exc).__name__)
            checks["postgres"] = False
    failing = ", ".join(name for name, ok in checks.items() if not ok)
    return JSONResponse({"error": {"code": "UNAVAILABLE", "message": f"not ready: {failing}"},
                         "request_id": request_id_of(request), "status": "unavailable", "checks": checks},
                        status_code=503, headers={"Retry-After": str(state.settings.unavailable_retry_after_seconds)})


def _pipeline(state: Any) -> dict[str, Any]:
    """Whether the workers are getting through the work: reported, not a readiness failure
    (taking this API out of rotation would restart no worker)."""
    from ibex_worker.backlog import seconds_without_progress

    seconds = seconds_without_progress(state.engine)
    return {"stalled": seconds >= state.settings.pipeline_stall_seconds, "seconds_without_progress": round(seconds, 1)}


def _redis_ok(client: Any) -> bool:
    try:
        return bool(client.ping())
    except Exception as exc:  # any client error means "not reachable" here
        log.info("readiness_check_failed", check="redis", error=type(exc).__name__)
        return False


async def metrics(request: Request) -> Response:
    require_metrics_token(request)
    payload, content_type = exposition()
    try:
        payload += await blocking(_backlog_exposition, api_state(request).engine)
    except Exception as exc:  # the database is down: the process metrics still answer
        log.info("backlog_metrics_skipped", error=type(exc).__name__)
    return Response(payload, media_type=content_type)


def _backlog_exposition(engine: Any) -> bytes:
    """Gauges read from PostgreSQL at scrape time: jobs waiting per stage, escalations per status,
    seconds without progress."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.core import GaugeMetricFamily

    from ibex_worker.backlog import snapshot
    from ibex_worker.config import STAGES

    counts = snapshot(engine)

    class _Backlog:
        def collect(self) -> Any:
            jobs = GaugeMetricFamily("ibex_jobs_backlog", "Unfinished jobs by the stage they wait for", labels=["stage"])
            for stage in STAGES:
                jobs.add_metric([stage], counts["stages"].get(stage, 0))
            yield jobs
            esc = GaugeMetricFamily("ibex_escalations_backlog", "Unresolved escalations by status", labels=["status"])
            for status in ("pending", "claimed", "needs_review", "dead"):
                esc.add_metric([status], counts["escalations"].get(status, 0))
            yield esc
            yield GaugeMetricFamily("ibex_pipeline_stalled_seconds",
                                    "Seconds the pipeline has had unfinished jobs and finished none (0 when idle)",
                                    value=counts["stalled_seconds"])

    registry = CollectorRegistry()
    registry.register(_Backlog())
    return generate_latest(registry)
