"""The Celery app: names, queues, routes and the delivery-safety defaults in one place.

At-least-once delivery with an exactly-once effect: late acks, re-delivery when a worker
process dies, prefetch 1, task time limits below the job lease, which is below the broker's
visibility timeout; results ignored (a job's status lives in PostgreSQL).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from celery import Celery
from kombu import Queue

from ibex_worker.broker import TRANSPORT
from ibex_worker.config import STAGES, Settings, get_settings
from ibex_worker.publish import ERASURE_TASK, REEMBED_TASK, task_name


def create_app(settings: Settings) -> Celery:
    app = Celery("ibex", broker=settings.redis_url, set_as_current=False)
    app.conf.update(
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=2,
        broker_transport=TRANSPORT,
        broker_transport_options={"visibility_timeout": settings.broker_visibility_timeout,
                                  "socket_timeout": 5, "socket_connect_timeout": 2},
        result_backend=None,
        task_ignore_result=True,
        task_store_errors_even_if_ignored=False,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        worker_prefetch_multiplier=1,
        task_time_limit=settings.task_time_limit,
        task_soft_time_limit=settings.task_soft_time_limit,
        task_serializer="json",
        accept_content=["json"],
        task_default_queue=settings.queue_validate,
        task_queues=[Queue(name) for name in settings.all_queues],
        task_routes={**{task_name(stage): {"queue": settings.queue_for(stage)} for stage in STAGES},
                     ERASURE_TASK: {"queue": settings.queue_erase}, REEMBED_TASK: {"queue": settings.queue_embed}},
        task_send_sent_event=True,
        worker_send_task_events=True,
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
        worker_concurrency=settings.worker_concurrency,
        worker_proc_alive_timeout=settings.worker_start_timeout,
        worker_max_memory_per_child=None,
    )
    return app


@lru_cache(maxsize=1)
def get_app() -> Celery:
    """The producer-side app (publishing only); workers build theirs in ``tasks.worker_app``."""
    return create_app(get_settings())


def consumed_queues(app: Any) -> set[str]:
    queues = app.amqp.queues
    names = set(queues.consume_from or {}) or set(queues)
    return names
