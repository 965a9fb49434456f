"""The producers' client (``client/``, ``ibex_client``) against a real ``ibex api`` process,
PostgreSQL, Redis and pipeline worker: typed results, derived idempotency keys, batches,
typed errors that never echo content, and ``Retry-After`` followed on back-pressure."""

from __future__ import annotations

import asyncio
import time
import uuid

import httpx
import pytest
from ibex_client import (AsyncIbexClient, AuthenticationError, IbexClient, NotFoundError, PermissionDeniedError,
                         RateLimitedError, RetryPolicy, ValidationError, derived_key)

from tests.api_support import ApiServer, api, make_key  # noqa: F401
from tests.conftest import new_scope, query


class CountingTransport(httpx.HTTPTransport):
    """Counts the requests the client really sent (its retries included)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        return super().handle_request(request)


def test_add_with_wait_returns_the_typed_final_result_and_a_resend_is_the_same_write(api, make_key, pipeline, engine):
    org, agent = new_scope(), new_scope("agent")
    with IbexClient(api.url, make_key(org), org_id=org, agent_id=agent) as ibex:
        first = ibex.add("The on-call rotation changes every Monday at 09:00.", source="chat",
                         labels=["process"], wait=30)
        again = ibex.add("The on-call rotation changes every Monday at 09:00.", source="chat",
                         labels=["process"], wait=30)
        copy = ibex.add("The on-call rotation changes every Monday at 09:00.", source="chat",
                        labels=["process"], wait=30, idempotency_key=f"copy-{uuid.uuid4().hex}")
        stored = ibex.get(first.memory_id)
    assert (first.status, first.outcome, first.replayed) == ("active", "created", False)
    assert first.idempotency_key == derived_key({"org_id": org, "agent_id": agent, "source": "chat",
                                                 "content": "The on-call rotation changes every Monday at 09:00.",
                                                 "labels": [{"label": "process", "confidence": 1.0}]})
    assert again.replayed and again.memory_id == first.memory_id and again.job_id == first.job_id
    assert copy.outcome == "exact_duplicate" and copy.memory_id == first.memory_id and copy.job_id != first.job_id
    assert stored["memory_id"] == first.memory_id and stored["status"] == "active"
    assert query(engine, "SELECT count(*) AS n FROM memories WHERE org_id = :o", o=org)[0].n == 1


def test_a_queued_write_is_followed_through_its_job_and_relationships(api, make_key, pipeline):
    org, agent = new_scope(), new_scope("agent")
    with IbexClient(api.url, make_key(org), org_id=org, agent_id=agent) as ibex:
        queued = ibex.add("Invoices for the Berlin office go out on the 3rd of each month.", source="email")
        job = ibex.wait_for_job(queued.job_id, timeout=90)
        links = ibex.relationships(job.result.memory_id)
        escalations = ibex.escalations()
    assert queued.queued and queued.job_id and queued.memory_id is None
    assert job.status == "succeeded" and job.result.outcome == "created" and job.timings_ms
    assert isinstance(links, dict) and escalations == []


def test_add_many_sends_batches_of_a_hundred_and_a_rerun_records_nothing_new(api, make_key, pipeline, engine):
    org, agent = new_scope(), new_scope("agent")
    items = [{"content": f"Shelf {n} in the Leeds warehouse holds part number PN-{n:05d}.", "source": "import"}
             for n in range(150)]
    items[7] = {"content": "", "source": "import"}  # refused alone, by its field
    with IbexClient(api.url, make_key(org), org_id=org, agent_id=agent) as ibex:
        first = ibex.add_many(items)
        rerun = ibex.add_many(items)
    assert [r.index for r in first] == list(range(150))
    assert isinstance(first[7].error, ValidationError) and first[7].error.details
    assert all(r.ok and r.result.queued for i, r in enumerate(first) if i != 7)
    assert all(r.ok and r.result.replayed for i, r in enumerate(rerun) if i != 7)
    assert [r.result.job_id for i, r in enumerate(rerun) if i != 7] == [
        r.result.job_id for i, r in enumerate(first) if i != 7]
    assert query(engine, "SELECT count(*) AS n FROM memory_write_jobs WHERE org_id = :o", o=org)[0].n == 149


def test_refusals_are_typed_errors_that_name_the_field_and_never_echo_content(api, make_key, pipeline):
    org, other, agent = new_scope(), new_scope(), new_scope("agent")
    email = f"sam.{uuid.uuid4().hex[:6]}@example.org"
    key = make_key(org)
    with IbexClient(api.url, "not-a-key", org_id=org, agent_id=agent) as anonymous:
        with pytest.raises(AuthenticationError) as unauthenticated:
            anonymous.add("The gate code changes on Fridays.")
    with IbexClient(api.url, key, org_id=org, agent_id=agent) as ibex:
        with pytest.raises(PermissionDeniedError):
            ibex.add("The gate code changes on Fridays.", org_id=other)
        with pytest.raises(NotFoundError) as missing:
            ibex.get(str(uuid.uuid4()))
        with pytest.raises(ValidationError) as in_label:
            ibex.add("The gate code changes on Fridays.", labels=[email], wait=30)
    assert unauthenticated.value.code == "UNAUTHENTICATED" and unauthenticated.value.status == 401
    assert missing.value.code == "NOT_FOUND" and missing.value.request_id
    error = in_label.value
    assert error.code == "PII_IN_FIELD" and [d["field"] for d in error.details] == ["labels[0].label"]
    assert email not in str(error) and email not in repr(error.details)


def test_back_pressure_is_retried_after_retry_after_then_raised_as_rate_limited(infra, make_key):
    org, agent = new_scope(), new_scope("agent")
    server = ApiServer(infra, "api-client-limit", org_backlog_limit=1, queue_validate=f"ibex.test.{org}.validate")
    transport = CountingTransport()
    try:
        with IbexClient(server.url, make_key(org), org_id=org, agent_id=agent, transport=transport,
                        retry=RetryPolicy(max_retries=2, max_delay=0.3, jitter=0.0)) as ibex:
            accepted = ibex.add("Nobody works this queue: the job waits.")
            started = time.monotonic()
            with pytest.raises(RateLimitedError) as refused:
                ibex.add("A second write finds the org at its limit.")
            waited = time.monotonic() - started
    finally:
        server.stop()
    assert accepted.queued
    assert refused.value.code == "BACKPRESSURE" and refused.value.retry_after is not None
    assert transport.sent == 1 + 3  # the accepted write, then the refused one and its two retries
    assert waited >= 2 * 0.3  # each retry waited Retry-After, capped at max_delay


def test_the_async_client_makes_the_same_calls(api, make_key, pipeline):
    org, agent = new_scope(), new_scope("agent")

    async def run() -> tuple:
        async with AsyncIbexClient(api.url, make_key(org), org_id=org, agent_id=agent) as ibex:
            created = await ibex.add("The Lisbon team's stand-up is at 10:15 local time.", source="chat", wait=30)
            queued = await ibex.add("The Lisbon team's retro is every second Thursday.", source="chat")
            job = await ibex.wait_for_job(queued.job_id, timeout=90)
            batch = await ibex.add_many([{"content": "The Lisbon office closes at 19:00.", "source": "chat"}])
            return created, job, batch, await ibex.get(created.memory_id)

    created, job, batch, stored = asyncio.run(run())
    assert created.outcome == "created" and created.status == "active"
    assert job.status == "succeeded" and job.result.memory_id
    assert len(batch) == 1 and batch[0].ok and batch[0].result.queued
    assert stored["memory_id"] == created.memory_id
