"""Thin tasks: one Celery task per stage, each taking a list of job ids, and the erasure task.

A task binds its log context and hands the delivery to ``ibex_worker.pipeline.runner``, which
claims, computes, publishes and decides retries; when the runner says the delivery itself is
to be retried, the task raises Celery's retry for it. No business logic lives here.
"""

from __future__ import annotations

import os
import time
from typing import Any

import redis
import structlog
from celery import Celery, signals

from ibex_worker import erasures, reembed, runtime
from ibex_worker.celery_app import consumed_queues, create_app
from ibex_worker.config import STAGES, Settings, get_settings
from ibex_worker.db import dispose_engines
from ibex_worker.logs import configure_logging
from ibex_worker.metrics import serve
from ibex_worker.errors import TransientError
from ibex_worker.pipeline.runner import run_delivery
from ibex_worker.publish import ERASURE_TASK, REEMBED_TASK, Waker, publish_erasure, task_name
from ibex_worker.retry import backoff_seconds

log = structlog.get_logger("ibex.tasks")


def worker_app(settings: Settings | None = None) -> Celery:
    settings = settings or get_settings()
    app = create_app(settings)
    for stage in STAGES:
        app.task(name=task_name(stage), bind=True, shared=False, max_retries=settings.stage_max_retries)(_stage_task(stage))
    app.task(name=ERASURE_TASK, bind=True, shared=False)(_erasure_task)
    app.task(name=REEMBED_TASK, bind=True, shared=False, max_retries=settings.stage_max_retries)(_reembed_task)
    _connect_signals(app, settings)
    return app


def _stage_task(stage: str) -> Any:
    def stage_task(self: Any, job_ids: list[str]) -> None:
        structlog.contextvars.bind_contextvars(task=stage, delivery=self.request.id)
        try:
            _run(self, stage, job_ids)
        finally:
            structlog.contextvars.clear_contextvars()

    stage_task.__name__ = f"stage_{stage}"
    return stage_task


def _run(task: Any, stage: str, job_ids: list[str]) -> None:
    deps = runtime.current()
    request = task.request
    again = run_delivery(task.app, stage, job_ids, deps, queue=(request.delivery_info or {}).get("routing_key"),
                         retries=request.retries, max_retries=task.max_retries)
    if again is not None:
        raise task.retry(args=[again.job_ids], countdown=again.countdown, exc=None)


def _erasure_task(self: Any, erasure_id: str) -> None:
    """Carry an erasure on; publish its next delivery when it handed its lease over."""
    structlog.contextvars.bind_contextvars(task="erasure", delivery=self.request.id)
    try:
        deps = runtime.current()
        due = erasures.run(deps.engine, deps.settings, deps.cache, erasure_id)
        if due is not None:
            publish_erasure(self.app, deps.settings, erasure_id, countdown=due or None)
    finally:
        structlog.contextvars.clear_contextvars()


def _reembed_task(self: Any, org_id: str, memory_ids: list[str], model: str) -> None:
    """Give these memories a vector of ``model`` (``ibex reembed``), if this worker embeds with it."""
    structlog.contextvars.bind_contextvars(task="reembed", delivery=self.request.id)
    try:
        deps = runtime.current()
        if deps.embedder is None:  # routed to the embed queue, whose workers load the embedder
            log.error("reembed_without_embedder", org_id=org_id)
            return
        if deps.embedder.model_name != model:  # left stale: the command stops and names the model
            log.error("reembed_model_mismatch", org_id=org_id, asked=model, loaded=deps.embedder.model_name)
            return
        try:
            reembed.reembed_batch(deps.engine, deps.embedder, org_id, memory_ids)
        except TransientError as exc:
            countdown = backoff_seconds(self.request.retries + 1, base=deps.settings.retry_backoff_base,
                                        cap=deps.settings.retry_backoff_cap)
            raise self.retry(countdown=countdown, exc=None) from exc
    finally:
        structlog.contextvars.clear_contextvars()


def _start_metrics_endpoint(settings: Settings) -> None:
    """In the worker's main process: /metrics over every pool process's multiprocess files."""
    if settings.worker_metrics_port and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        log.warning("worker_metrics_disabled", reason="PROMETHEUS_MULTIPROC_DIR unset")
        return
    serve(settings, "worker")


def _connect_signals(app: Celery, settings: Settings) -> None:
    @signals.setup_logging.connect(weak=False)
    def _logging(**_: Any) -> None:
        configure_logging(settings.log_format, settings.log_level)

    @signals.worker_init.connect(weak=False)
    def _serve_metrics(**_: Any) -> None:
        _start_metrics_endpoint(settings)

    @signals.worker_init.connect(weak=False)
    def _prepare_models(**_: Any) -> None:
        if settings.queue_embed in consumed_queues(app):
            runtime.prepare_embedder(settings)

    @signals.worker_process_shutdown.connect(weak=False)
    def _forget_process(pid: int | None = None, **_: Any) -> None:
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            from prometheus_client import multiprocess

            multiprocess.mark_process_dead(pid or os.getpid())

    @signals.worker_process_init.connect(weak=False)
    def _init_process(**_: Any) -> None:
        started = time.monotonic()
        dispose_engines()
        queues = consumed_queues(app)
        try:
            waker = Waker(app, settings, redis.Redis.from_url(settings.redis_url, socket_timeout=1,
                                                              socket_connect_timeout=1))
            deps = runtime.build_deps(settings, with_pii=settings.queue_pii in queues,
                                      with_embedder=settings.queue_embed in queues,
                                      consumed_queues=frozenset(queues), waker=waker)
        except Exception:
            log.critical("model_load_failed", exc_info=True)
            raise SystemExit(1)
        runtime.install(deps)
        log.info("process_ready", pid=os.getpid(), seconds=round(time.monotonic() - started, 2),
                 start_timeout=settings.worker_start_timeout)
