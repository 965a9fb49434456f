"""Coalesced wake-ups (``ibex_worker.publish.Waker``): a new job gets no message of its own while
one to its stage is still pending, the delivery of that message claims it, a burst larger
than a batch drains through chained wake-ups (no sweeper), and a lost wake-up holds new jobs
for no longer than the flag's lifetime. Real Redis, real Celery worker, real PostgreSQL."""

from __future__ import annotations

import time

import redis

from tests.conftest import isolated_queues, make_settings, memory, new_scope, start_worker
from ibex_worker import publish as publish_module
from ibex_worker.celery_app import create_app
from ibex_worker.publish import Waker, wake_flag
from ibex_worker.submit import submit, wait_for_job


def _setup(infra, prefix, **extra):
    queues = isolated_queues(prefix)
    settings = make_settings(infra, **queues, **extra)
    client = redis.Redis.from_url(infra.redis.url)
    return settings, {**queues, **extra}, client, Waker(create_app(settings), settings, client)


def _messages(client, settings):
    return client.llen(settings.queue_validate)


def _drain(infra, engine, name, settings, overrides, org, submissions):
    """A worker on the test's queues until every submitted job finished (no sweeper runs)."""
    worker = start_worker(infra, name, queues=",".join(settings.all_queues), **overrides)
    try:
        return worker, [wait_for_job(engine, org, s.job_id, timeout=90) for s in submissions]
    finally:
        worker.stop()


def _write(engine, settings, waker, org, i):
    body = memory(org, "agent", f"Standing order number {i}: water the office plants on day {i}.")
    return submit(engine, create_app(settings), settings, body, waker=waker)


def test_writes_while_a_wakeup_is_pending_share_its_message(infra, engine, monkeypatch):
    monkeypatch.setattr(publish_module, "WAKE_TTL_SECONDS", 120.0)  # outlives the worker's start
    settings, overrides, client, waker = _setup(infra, "wake-share")
    org = new_scope()
    submissions = [_write(engine, settings, waker, org, i) for i in range(6)]
    assert all(s.published for s in submissions)
    assert _messages(client, settings) == 1  # one wake-up for six jobs
    assert client.get(wake_flag("validate", settings.queue_validate)) is not None

    worker = start_worker(infra, "wake-share", queues=",".join(settings.all_queues), **overrides)
    try:
        views = [wait_for_job(engine, org, s.job_id, timeout=90) for s in submissions]
        assert [v["status"] for v in views] == ["succeeded"] * 6
        assert worker.deliveries("validate") == 1
        # The delivery took the flag down before claiming (it would live on for minutes
        # otherwise): the next write sends its own wake-up at once and is processed.
        assert client.get(wake_flag("validate", settings.queue_validate)) is None
        late = _write(engine, settings, waker, org, 99)
        assert wait_for_job(engine, org, late.job_id, timeout=30)["status"] == "succeeded"
        assert worker.deliveries("validate") == 2
    finally:
        worker.stop()


def test_a_burst_larger_than_a_batch_drains_through_chained_wakeups(infra, engine):
    # No sweeper runs and republish_after is long: only chained wake-ups can finish the burst.
    settings, overrides, client, waker = _setup(infra, "wake-chain", stage_batch_max=4,
                                                republish_after_seconds=600)
    org = new_scope()
    submissions = [_write(engine, settings, waker, org, i) for i in range(10)]
    assert _messages(client, settings) == 1

    worker, views = _drain(infra, engine, "wake-chain", settings, overrides, org, submissions)
    assert [v["status"] for v in views] == ["succeeded"] * 10
    # 4 + 4 + 2: the two full batches each woke the next delivery; the last one was not full.
    assert worker.deliveries("validate") == 3
    assert sorted(next(d for d in v["decisions"] if d["stage"] == "pii")["batch_size"] for v in views) == \
        [2, 2, 4, 4, 4, 4, 4, 4, 4, 4]


def test_a_wakeup_naming_more_than_a_batch_leaves_no_job_behind_without_a_sweeper(infra, engine):
    """A batch request travels as one message of all its ids; its delivery takes three quarters
    of a batch of them (the rest is other orgs' turn, here topped up from the same request) and
    chains wake-ups for the others: no job waits for the sweeper."""
    from ibex_worker.submit import submit_many

    settings, overrides, client, waker = _setup(infra, "wake-many", stage_batch_max=4, republish_after_seconds=600)
    org = new_scope()
    items = [(memory(org, "agent", f"Batch item {i}: the printer on floor {i} needs toner."), None) for i in range(10)]
    submissions = submit_many(engine, create_app(settings), settings, items, waker=waker)
    assert _messages(client, settings) == 1
    _, views = _drain(infra, engine, "wake-many", settings, overrides, org, submissions)
    assert [v["status"] for v in views] == ["succeeded"] * 10


def test_a_lost_wakeup_holds_new_jobs_no_longer_than_the_flag_lives(infra, engine, monkeypatch):
    monkeypatch.setattr(publish_module, "WAKE_TTL_SECONDS", 1.0)
    settings, overrides, client, waker = _setup(infra, "wake-lost", republish_after_seconds=600)
    org = new_scope()
    worker = start_worker(infra, "wake-lost", queues=",".join(settings.all_queues), **overrides)
    try:
        first = _write(engine, settings, waker, org, 1)
        assert wait_for_job(engine, org, first.job_id, timeout=30)["status"] == "succeeded"
        # A wake-up that was sent and then lost with the broker: the flag says "pending".
        client.set(wake_flag("validate", settings.queue_validate), "1", px=1000)
        stranded = _write(engine, settings, waker, org, 2)
        time.sleep(1.5)
        assert wait_for_job(engine, org, stranded.job_id, timeout=0)["status"] == "queued"
        rescuer = _write(engine, settings, waker, org, 3)  # the flag has expired: sends one
        views = [wait_for_job(engine, org, s.job_id, timeout=30) for s in (stranded, rescuer)]
    finally:
        worker.stop()
    assert [v["status"] for v in views] == ["succeeded", "succeeded"]


def test_with_batching_off_every_write_sends_its_own_message(infra, engine):
    settings, _, client, waker = _setup(infra, "wake-off", stage_batch_max=1)
    org = new_scope()
    for i in range(3):
        _write(engine, settings, waker, org, i)
    assert _messages(client, settings) == 3
    assert client.get(wake_flag("validate", settings.queue_validate)) is None


def test_a_failed_wakeup_leaves_no_flag_behind(infra, engine):
    settings, _, client, _ = _setup(infra, "wake-down", publish_timeout_seconds=0.5)
    dead = create_app(make_settings(infra, redis_url="redis://127.0.0.1:1/0", **isolated_queues("wake-down"),
                                    publish_timeout_seconds=0.5))
    waker = Waker(dead, settings, client)  # the flag store works, the broker does not
    org = new_scope()
    submission = submit(engine, dead, settings, memory(org, "agent", "The broker is away today."), waker=waker)
    assert submission.published is False
    assert client.get(wake_flag("validate", settings.queue_validate)) is None


def test_a_message_sent_to_the_front_is_delivered_before_the_waiting_ones(infra):
    """How the sweeper republishes a job whose holder died: next in line, not behind the backlog."""
    queues = isolated_queues("front")
    settings = make_settings(infra, **queues)
    app, client = create_app(settings), redis.Redis.from_url(infra.redis.url)
    for n in range(3):
        publish_module.publish(app, settings, "validate", [f"waiting-{n}"])
    publish_module.publish(app, settings, "validate", ["recovered"], front=True)
    with app.connection_for_write() as connection:
        consumer_queue = connection.SimpleQueue(settings.queue_validate)
        order = [consumer_queue.get(timeout=5) for _ in range(4)]
        for message in order:
            message.ack()
        consumer_queue.close()
    assert [m.payload[0][0] for m in order] == [["recovered"], ["waiting-0"], ["waiting-1"], ["waiting-2"]]
    assert client.llen(settings.queue_validate) == 0
