"""The Celery app declares at-least-once semantics and routes every stage to its queue."""

from __future__ import annotations

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from tests.conftest import make_settings
from ibex_worker.broker import Channel, Transport
from ibex_worker.config import STAGES
from ibex_worker.publish import ERASURE_TASK, REEMBED_TASK, task_name
from ibex_worker.tasks import worker_app


def test_delivery_safety_defaults_are_set():
    settings = make_settings()
    conf = worker_app(settings).conf
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.task_ignore_result is True and conf.result_backend is None
    visibility = conf.broker_transport_options["visibility_timeout"]
    assert conf.task_time_limit < visibility and settings.job_lease_seconds < visibility
    assert conf.worker_proc_alive_timeout == settings.worker_start_timeout > 60
    assert conf.accept_content == ["json"]


def test_every_stage_has_a_task_routed_to_its_configured_queue():
    settings = make_settings(queue_pii="gpu.pii", queue_embed="gpu.embed", queue_erase="slow.erase")
    app = worker_app(settings)
    for stage in STAGES:
        assert task_name(stage) in app.tasks
        assert app.conf.task_routes[task_name(stage)] == {"queue": settings.queue_for(stage)}
    assert ERASURE_TASK in app.tasks and REEMBED_TASK in app.tasks
    assert app.conf.task_routes[ERASURE_TASK] == {"queue": "slow.erase"}
    assert app.conf.task_routes[REEMBED_TASK] == {"queue": "gpu.embed"}  # where the embedder is loaded
    assert {"gpu.pii", "gpu.embed", "ibex.pipeline", "slow.erase"} == {q.name for q in app.conf.task_queues}


def test_a_channel_whose_connection_is_gone_raises_a_connection_error_the_consumer_recovers_from():
    """kombu reads the closed connection's parameters while it restores unacknowledged
    messages; that must be an error the consumer treats as a lost connection."""
    app = worker_app(make_settings(redis_url="redis://127.0.0.1:1/0"))
    connection = app.connection_for_write()
    assert isinstance(connection.transport, Transport)
    channel = Channel.__new__(Channel)
    channel.connection = connection.transport
    connection.transport.client = None
    with pytest.raises(RedisConnectionError):
        channel._connparams()
    assert RedisConnectionError in Transport.connection_errors
