"""POST /v1/memories and /v1/memories:batch through a real uvicorn process, real
PostgreSQL, Redis and pipeline worker: the answers of API.md and the idempotency ledger."""

from __future__ import annotations

import json
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from tests.api_support import UUID_RE, api, assert_envelope, make_key, new_key, wait_for_job  # noqa: F401
from tests.conftest import memory, new_scope, query


def _burst(api, key: str, requests: list[tuple[dict[str, Any], dict[str, str]]]) -> list[httpx.Response]:
    """Send every request at once: threads released together by a barrier."""
    barrier = threading.Barrier(len(requests))
    with api.client(key, limits=httpx.Limits(max_connections=len(requests))) as client:
        def send(item: tuple[dict[str, Any], dict[str, str]]) -> httpx.Response:
            body, headers = item
            barrier.wait()
            return client.post("/v1/memories", json=body, headers=headers)

        with ThreadPoolExecutor(max_workers=len(requests)) as pool:
            return list(pool.map(send, requests))


def test_a_write_is_accepted_with_202_and_its_job_reports_the_final_201_body(api, make_key, pipeline):
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org)) as client:
        response = client.post("/v1/memories", json=memory(org, agent, "User prefers Python for data work."))
        assert response.status_code == 202
        accepted = response.json()
        assert set(accepted) == {"job_id", "status"} and accepted["status"] == "queued"
        assert response.headers["location"] == f"/v1/jobs/{accepted['job_id']}"
        job = wait_for_job(client, accepted["job_id"])
    assert job["status"] == "succeeded" and job["outcome"] == "created"
    result = job["result"]
    assert result["job_id"] == accepted["job_id"] and result["memory_id"] == job["memory_id"]
    assert result["status"] == "active" and result["outcome"] == "created"
    assert result["near_duplicates"] == [] and result["supersedes"] == [] and result["escalations"] == []


def test_prefer_wait_answers_the_final_201_with_preference_applied(api, engine, make_key, pipeline):
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org)) as client:
        response = client.post("/v1/memories", json=memory(org, agent, "The nightly backup runs at 02:00 UTC."),
                               headers={"Prefer": "wait=30"})
    assert response.status_code == 201, response.text
    assert response.headers["preference-applied"] == "wait=30"
    created = response.json()
    assert created["outcome"] == "created" and created["status"] == "active"
    assert response.headers["location"] == f"/v1/memories/{created['memory_id']}"
    assert query(engine, "SELECT status FROM memories WHERE id = :id", id=created["memory_id"])[0].status == "active"


def test_an_exact_duplicate_with_wait_answers_409_duplicate_content_with_the_existing_id(api, make_key, pipeline):
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org), headers={"Prefer": "wait=30"}) as client:
        first = client.post("/v1/memories", json=memory(org, agent, "Deploys freeze on Fridays after 15:00."))
        again = client.post("/v1/memories", json=memory(org, agent, "  deploys FREEZE on fridays after 15:00. "))
    assert first.status_code == 201, first.text
    body = assert_envelope(again, 409, "DUPLICATE_CONTENT")
    assert body["memory_id"] == first.json()["memory_id"]
    assert body["outcome"] == "exact_duplicate" and body["job_id"] != first.json()["job_id"]
    assert again.headers["preference-applied"] == "wait=30"


def test_a_replay_returns_the_stored_final_answer_with_idempotent_replayed(api, engine, make_key, pipeline):
    org, agent, key = new_scope(), new_scope("agent"), new_key()
    body = memory(org, agent, "Standup is at 09:30 on weekdays.")
    with api.client(make_key(org)) as client:
        first = client.post("/v1/memories", json=body, headers={"X-Idempotency-Key": key})
        assert first.status_code == 202
        wait_for_job(client, first.json()["job_id"])
        replay = client.post("/v1/memories", json=body, headers={"X-Idempotency-Key": key})
        alias = client.post("/v1/memories", json=body, headers={"Idempotency-Key": key})
    assert replay.status_code == 201 and alias.status_code == 201
    assert replay.headers["idempotent-replayed"] == "true" and alias.headers["idempotent-replayed"] == "true"
    assert replay.json() == alias.json()
    assert replay.json()["job_id"] == first.json()["job_id"]
    stored = query(engine, "SELECT response_status, response_body FROM memory_idempotency_keys "
                                   "WHERE org_id = :o AND key = :k", o=org, k=key)
    assert [(r.response_status, r.response_body) for r in stored] == [(201, replay.json())]
    assert len(query(engine, "SELECT id FROM memory_write_jobs WHERE org_id = :o", o=org)) == 1


def test_reordered_keys_and_other_whitespace_replay_under_the_same_key(api, make_key, pipeline):
    org, agent, key = new_scope(), new_scope("agent"), new_key()
    body = memory(org, agent, "Invoices go out on the first business day.",
                  labels=[{"label": "billing", "confidence": 0.9}], metadata={"b": 1, "a": [1, 2]})
    compact = json.dumps(body, separators=(",", ":"))
    reordered = json.dumps(dict(reversed(list(body.items()))), indent=4)
    headers = {"X-Idempotency-Key": key, "Content-Type": "application/json"}
    with api.client(make_key(org)) as client:
        first = client.post("/v1/memories", content=compact, headers={**headers, "Prefer": "wait=30"})
        again = client.post("/v1/memories", content="\n  " + reordered + "\n", headers=headers)
    assert first.status_code == 201, first.text
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json()


def test_a_key_reused_with_a_different_body_answers_idempotency_conflict(api, make_key):
    org, agent, key = new_scope(), new_scope("agent"), new_key()
    with api.client(make_key(org), headers={"X-Idempotency-Key": key}) as client:
        first = client.post("/v1/memories", json=memory(org, agent, "Office closes at 18:00."))
        other = client.post("/v1/memories", json=memory(org, agent, "Office closes at 19:00."))
        running = client.post("/v1/memories", json=memory(org, agent, "Office closes at 18:00."))
    assert first.status_code == 202
    body = assert_envelope(other, 409, "IDEMPOTENCY_CONFLICT")
    assert "19:00" not in other.text and "job_id" not in body
    if running.status_code == 201:  # the session's worker already finished it: a replay
        assert running.headers["idempotent-replayed"] == "true"
        assert running.json()["job_id"] == first.json()["job_id"]
    else:
        assert assert_envelope(running, 409, "IDEMPOTENCY_IN_PROGRESS")["job_id"] == first.json()["job_id"]
        assert 1 <= int(running.headers["retry-after"]) <= 5


def test_the_same_key_in_two_orgs_and_two_agents_gives_independent_results(api, make_key, pipeline):
    org_a, org_b, agent, other_agent, key = new_scope(), new_scope(), new_scope("agent"), new_scope("agent"), new_key()
    text = "The VPN rotates certificates every 90 days."
    answers = []
    for org, who in ((org_a, agent), (org_b, agent), (org_a, other_agent)):
        with api.client(make_key(org), headers={"X-Idempotency-Key": key, "Prefer": "wait=30"}) as client:
            answers.append(client.post("/v1/memories", json=memory(org, who, text)))
    assert [a.status_code for a in answers] == [201, 201, 201]
    assert all("idempotent-replayed" not in a.headers for a in answers)
    assert len({a.json()["job_id"] for a in answers}) == 3
    assert len({a.json()["memory_id"] for a in answers}) == 3


def test_fifty_concurrent_identical_keyed_posts_make_one_job_and_one_memory(api, engine, make_key, pipeline):
    org = new_scope()
    api_key = make_key(org)
    for round_no in range(10):
        agent, key = new_scope("agent"), new_key()
        body = memory(org, agent, f"Round {round_no}: the build cache is purged every Sunday.")
        responses = _burst(api, api_key, [(body, {"X-Idempotency-Key": key})] * 50)
        statuses = sorted(r.status_code for r in responses)
        assert all(s < 500 for s in statuses), statuses
        accepted = [r for r in responses if r.status_code == 202]
        assert len(accepted) == 1, statuses
        job_id = accepted[0].json()["job_id"]
        for r in responses:
            if r.status_code == 409:
                assert assert_envelope(r, 409, "IDEMPOTENCY_IN_PROGRESS")["job_id"] == job_id
            elif r.status_code != 202:  # the job finished within the burst: a replay of it
                assert r.headers["idempotent-replayed"] == "true" and r.json()["job_id"] == job_id, r.text
        with api.client(api_key) as client:
            assert wait_for_job(client, job_id)["outcome"] == "created"
        assert len(query(engine, "SELECT id FROM memory_write_jobs WHERE org_id = :o AND agent_id = :a",
                         o=org, a=agent)) == 1
        assert len(query(engine, "SELECT id FROM memories WHERE org_id = :o AND agent_id = :a", o=org, a=agent)) == 1
        replays = _burst(api, api_key, [(body, {"X-Idempotency-Key": key})] * 50)
        assert {(r.status_code, r.headers.get("idempotent-replayed"), r.json()["job_id"]) for r in replays} == \
            {(201, "true", job_id)}


def test_twenty_five_against_twenty_five_bodies_one_wins_and_the_other_creates_nothing(api, engine, make_key, pipeline):
    org = new_scope()
    api_key = make_key(org)
    for round_no in range(10):  # released together, repeated like the same-body burst
        agent, key = new_scope("agent"), new_key()
        bodies = {"A": memory(org, agent, f"Round {round_no}: the on-call phone is the red one."),
                  "B": memory(org, agent, f"Round {round_no}: the on-call phone is the blue one.")}
        plan = ["A", "B"] * 25
        responses = _burst(api, api_key, [(bodies[p], {"X-Idempotency-Key": key}) for p in plan])
        assert all(r.status_code < 500 for r in responses)
        accepted = [(p, r) for p, r in zip(plan, responses) if r.status_code == 202]
        assert len(accepted) == 1
        winner, job_id = accepted[0][0], accepted[0][1].json()["job_id"]
        for p, r in zip(plan, responses):
            if p != winner:
                assert_envelope(r, 409, "IDEMPOTENCY_CONFLICT")
            elif r.status_code == 409:
                assert assert_envelope(r, 409, "IDEMPOTENCY_IN_PROGRESS")["job_id"] == job_id
            else:
                assert r.status_code == 202 or r.headers.get("idempotent-replayed") == "true", r.text
        with api.client(api_key) as client:
            view = wait_for_job(client, job_id)
        jobs = query(engine, "SELECT id FROM memory_write_jobs WHERE org_id = :o AND agent_id = :a", o=org, a=agent)
        assert [str(j.id) for j in jobs] == [job_id]
        stored = query(engine, "SELECT id, content FROM memories WHERE org_id = :o AND agent_id = :a", o=org, a=agent)
        assert [(str(m.id), m.content) for m in stored] == [(view["memory_id"], bodies[winner]["content"])]


def test_a_batch_answers_each_item_and_207_when_some_are_refused(api, make_key, pipeline):
    org, agent, key = new_scope(), new_scope("agent"), new_key()
    good = memory(org, agent, "Lunch is ordered at 11:45.")
    items = [
        {**good, "idempotency_key": key},
        memory(org, agent, "Parking passes renew in January."),
        memory(org, agent, "secret-canary-7f3a", labels=[]),       # invalid: empty labels
        memory(new_scope(), agent, "Another org's memory."),         # outside the key's scope
        {**memory(org, agent, "Lunch is ordered at 12:00."), "idempotency_key": key},  # same key, other body
    ]
    with api.client(make_key(org)) as client:
        response = client.post("/v1/memories:batch", json={"items": items})
        assert response.status_code == 207, response.text
        results = response.json()["results"]
        assert [r["index"] for r in results] == [0, 1, 2, 3, 4]
        assert results[0]["status"] == "queued" and results[1]["status"] == "queued"
        assert results[2]["error"]["code"] == "VALIDATION_ERROR"
        assert results[2]["error"]["details"] == [{"field": "labels", "issue": "must hold 1 to 5 labels when given"}]
        assert results[3]["error"]["code"] == "FORBIDDEN"
        assert results[4]["error"]["code"] == "IDEMPOTENCY_CONFLICT"  # items run in order: item 0 holds the key
        assert "secret-canary" not in response.text
        views = [wait_for_job(client, results[i]["job_id"]) for i in (0, 1)]
        assert [v["outcome"] for v in views] == ["created", "created"]

        again = client.post("/v1/memories:batch", json={"items": [{**good, "idempotency_key": key}]})
    assert again.status_code == 202
    replayed = again.json()["results"][0]
    assert replayed["replayed"] is True and replayed["job_id"] == results[0]["job_id"]
    assert replayed["response_status"] == 201 and replayed["response"]["memory_id"] == views[0]["memory_id"]


def test_a_batch_over_100_items_or_with_a_header_key_is_refused_whole(api, engine, make_key):
    org, agent = new_scope(), new_scope("agent")
    items = [memory(org, agent, f"Item {i}") for i in range(101)]
    with api.client(make_key(org)) as client:
        too_many = client.post("/v1/memories:batch", json={"items": items})
        empty = client.post("/v1/memories:batch", json={"items": []})
        header_key = client.post("/v1/memories:batch", json={"items": items[:1]}, headers={"X-Idempotency-Key": "k"})
    assert assert_envelope(too_many, 422, "VALIDATION_ERROR")["error"]["details"][0]["field"] == "items"
    assert_envelope(empty, 422, "VALIDATION_ERROR")
    assert assert_envelope(header_key, 422, "VALIDATION_ERROR")["error"]["details"][0]["field"] == "X-Idempotency-Key"
    assert query(engine, "SELECT id FROM memory_write_jobs WHERE org_id = :o", o=org) == []


def test_validation_errors_name_the_fields_and_never_echo_what_was_sent(api, engine, make_key):
    org, agent = new_scope(), new_scope("agent")
    canary = f"canary-{uuid.uuid4().hex}"
    bad = [
        ({**memory(org, agent, canary), "valid_from": canary, canary: 1, "labels": [{"label": canary}]}, {}),
        (memory(org, agent, canary, metadata={"note": canary + "\x00"}), {}),
        (memory(org, agent, canary), {"X-Idempotency-Key": canary * 10}),
        (memory(org, agent, canary), {"X-Idempotency-Key": "a", "Idempotency-Key": canary}),
    ]
    with api.client(make_key(org)) as client:
        answers = [client.post("/v1/memories", json=body, headers=headers) for body, headers in bad]
        not_json = client.post("/v1/memories", content=b"{" + canary.encode(),
                               headers={"Content-Type": "application/json"})
    fields = [{d["field"] for d in assert_envelope(a, 422, "VALIDATION_ERROR")["error"]["details"]} for a in answers]
    assert fields[0] == {"valid_from", "labels[0].confidence", "body"}
    assert fields[1] == {"metadata"}
    assert fields[2] == {"X-Idempotency-Key"}
    assert fields[3] == {"Idempotency-Key"}
    assert {d["field"] for d in assert_envelope(not_json, 422, "VALIDATION_ERROR")["error"]["details"]} == {"body"}
    for answer in [*answers, not_json]:
        assert canary not in answer.text
    assert canary not in api.log_text()
    assert query(engine, "SELECT id FROM memory_write_jobs WHERE org_id = :o", o=org) == []


def test_bodies_over_the_limit_answer_413_whether_declared_or_chunked(api, engine, make_key):
    org, agent = new_scope(), new_scope("agent")
    huge = json.dumps(memory(org, agent, "x" * (3 * 1024 * 1024))).encode()

    def chunks():
        for start in range(0, len(huge), 65536):
            yield huge[start:start + 65536]

    with api.client(make_key(org)) as client:
        declared = client.post("/v1/memories", content=huge, headers={"Content-Type": "application/json"})
        chunked = client.post("/v1/memories", content=chunks(), headers={"Content-Type": "application/json"})
    assert_envelope(declared, 413, "PAYLOAD_TOO_LARGE")
    assert_envelope(chunked, 413, "PAYLOAD_TOO_LARGE")
    assert query(engine, "SELECT id FROM memory_write_jobs WHERE org_id = :o", o=org) == []
