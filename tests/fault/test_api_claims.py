"""A request killed between committing its idempotency claim and publishing its job: the
key answers IN_PROGRESS, before its claim's lease runs out and after (an unfinished job is
never replaced), and once the job is published again (the sweeper's work) it answers the key;
exactly one job and one memory result. And a write that fails after its retries answers 503
and releases its key."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from tests.api_support import api, assert_envelope, make_key, new_key, wait_for_job  # noqa: F401
from ibex_worker.publish import publish
from tests.conftest import ROOT, memory, new_scope, query

LEASE_SECONDS = 4

# What a request process does up to the commit of its claim and job row, and no further:
# it is killed before it publishes (so nothing will ever run that job).
_CLAIM_THEN_HANG = """
import json, sys, time
from ibex_worker.config import get_settings
from ibex_worker.db import get_engine
from ibex_worker.submit import record
settings = get_settings()
body, key = json.loads(sys.argv[1]), sys.argv[2]
print(record(get_engine(settings.database_url), settings, body, key).job_id, flush=True)
time.sleep(600)
"""


def test_a_claim_left_by_a_killed_request_stays_in_progress_and_its_job_answers_it_once_republished(
        infra, api, engine, make_key, producer, settings, pipeline):
    org, agent, key = new_scope(), new_scope("agent"), new_key()
    body = memory(org, agent, "Visitors sign in at the front desk.")
    holder = subprocess.Popen([sys.executable, "-c", _CLAIM_THEN_HANG, json.dumps(body), key], cwd=ROOT,
                              env=infra.env(idempotency_lease_seconds=LEASE_SECONDS), stdout=subprocess.PIPE,
                              text=True)
    try:
        lost_job = holder.stdout.readline().strip()
        claimed_at = time.monotonic()
    finally:
        holder.kill()
        holder.wait(30)
        holder.stdout.close()
    assert lost_job, "the claiming process printed no job id"

    answers = []
    with api.client(make_key(org)) as client:
        while time.monotonic() - claimed_at < LEASE_SECONDS + 3:  # past the claim's lease
            response = client.post("/v1/memories", json=body, headers={"X-Idempotency-Key": key})
            answers.append((time.monotonic() - claimed_at, response))
            time.sleep(0.5)
        publish(producer, settings, "validate", [lost_job])  # what the sweeper does with a job whose message was lost
        view = wait_for_job(client, lost_job)
        replay = client.post("/v1/memories", json=body, headers={"X-Idempotency-Key": key})

    assert answers[-1][0] >= LEASE_SECONDS + 1
    for _, response in answers:  # never taken over: the job is durable and will run
        assert assert_envelope(response, 409, "IDEMPOTENCY_IN_PROGRESS")["job_id"] == lost_job
        assert 1 <= int(response.headers["retry-after"]) <= 5
    assert view["status"] == "succeeded" and view["outcome"] == "created"
    assert replay.status_code == 201 and replay.json()["job_id"] == lost_job
    assert len(query(engine, "SELECT id FROM memory_write_jobs WHERE org_id = :o", o=org)) == 1
    assert len(query(engine, "SELECT id FROM memories WHERE org_id = :o", o=org)) == 1
    [claim] = query(engine, "SELECT job_id, state FROM memory_idempotency_keys WHERE org_id = :o", o=org)
    assert (str(claim.job_id), claim.state) == (lost_job, "completed")


def test_a_write_that_fails_after_its_retries_answers_503_and_its_key_is_released(infra, engine, make_key):
    from tests.api_support import ApiServer
    from tests.conftest import start_worker
    from ibex_worker.config import STAGES

    queues = {f"queue_{stage}": f"apifail.{stage}" for stage in STAGES}
    # The analyzer warms up on 30 characters; the write is longer than its limit, so PII fails closed.
    failing = dict(pii_max_chars=40, stage_max_retries=1, retry_backoff_base=0.05, retry_backoff_cap=0.1)
    org, agent, key = new_scope(), new_scope("agent"), new_key()
    body = memory(org, agent, "A memory far longer than the analyzer accepts in this test.")
    worker = start_worker(infra, "apifail-worker", queues=",".join(sorted(set(queues.values()))), **queues, **failing)
    server = ApiServer(infra, "api-apifail", **queues)
    try:
        with server.client(make_key(org), headers={"X-Idempotency-Key": key}) as client:
            failed = client.post("/v1/memories", json=body, headers={"Prefer": "wait=30"})
            again = client.post("/v1/memories", json=body)
    finally:
        server.stop()
        worker.stop()
    answer = assert_envelope(failed, 503, "UNAVAILABLE")
    assert "PII_ANALYSIS_FAILED" in answer["error"]["message"] and failed.headers["retry-after"]
    assert "preference-applied" not in failed.headers
    assert again.status_code == 202 and again.json()["job_id"] != answer["job_id"]  # not replayed: released
    [job] = query(engine, "SELECT status, error FROM memory_write_jobs WHERE id = :j", j=answer["job_id"])
    assert job.status == "failed" and job.error["code"] == "PII_ANALYSIS_FAILED"
    assert query(engine, "SELECT id FROM memories WHERE org_id = :o", o=org) == []
