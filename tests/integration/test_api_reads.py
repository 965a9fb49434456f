"""Reads over HTTP: the job with its decision receipt and timings, the stored (redacted)
memory, its relationships from both ends, and the operations endpoints."""

from __future__ import annotations

import re
import uuid

from tests.api_support import ApiServer, api, assert_envelope, make_key, wait_for_job  # noqa: F401
from tests.conftest import memory, new_scope

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$")


def test_a_job_shows_its_decision_receipt_and_stage_timings(api, make_key, pipeline):
    org, agent = new_scope(), new_scope("agent")
    canary = f"canary{uuid.uuid4().hex[:8]}@example.com"
    with api.client(make_key(org)) as client:
        accepted = client.post("/v1/memories", json=memory(org, agent, f"Escalations go to {canary} first."))
        job = wait_for_job(client, accepted.json()["job_id"])
        again = client.get(f"/v1/jobs/{job['job_id']}")
    assert again.json() == job
    assert job["status"] == "succeeded" and job["stage"] == "done" and job["attempts"] >= 1
    assert job["error"] is None
    assert {d["stage"] for d in job["decisions"]} >= {"validate", "pii", "exact_dedup", "near_dedup", "persist"}
    near = next(d for d in job["decisions"] if d["stage"] == "near_dedup")
    assert near["result"] == "novel" and near["candidates"] == []
    assert {"pii", "embed", "persist"} <= set(job["timings_ms"])
    assert all(isinstance(ms, (int, float)) and ms >= 0 for ms in job["timings_ms"].values())
    assert RFC3339.match(job["created_at"]) and RFC3339.match(job["finished_at"])
    assert canary not in again.text  # the receipt holds identifiers and numbers only


def test_a_memory_shows_its_redacted_content_labels_and_pii_counts(api, make_key, pipeline):
    org, agent = new_scope(), new_scope("agent")
    email = f"canary{uuid.uuid4().hex[:8]}@example.com"
    body = memory(org, agent, f"Send the weekly report to {email} on Mondays.",
                  valid_from="2024-03-01T00:00:00Z", labels=[{"label": "Reporting", "confidence": 0.8},
                                                             {"label": "schedule", "confidence": 0.6}])
    with api.client(make_key(org)) as client:
        created = client.post("/v1/memories", json=body, headers={"Prefer": "wait=30"}).json()
        response = client.get(f"/v1/memories/{created['memory_id']}")
    assert response.status_code == 200
    view = response.json()
    assert email not in response.text
    assert view["content"] == "Send the weekly report to [EMAIL_ADDRESS] on Mondays."
    assert view["memory_id"] == created["memory_id"] and (view["org_id"], view["agent_id"]) == (org, agent)
    assert view["status"] == "active" and view["retrieval_count"] == 0 and view["last_retrieved_at"] is None
    assert view["labels"] == [{"label": "reporting", "confidence": 0.8}, {"label": "schedule", "confidence": 0.6}]
    assert (view["category"], view["confidence"]) == ("reporting", 0.8)
    assert view["valid_from"] == "2024-03-01T00:00:00+00:00" and view["valid_until"] is None
    assert view["pii"] == {"status": "redacted", "entities": {"EMAIL_ADDRESS": {"count": 1, "redacted": 1,
                                                                                "masked": 0}},
                           "fields": {}, "quarantine_reasons": []}
    assert view["created_by_job"] == created["job_id"]


def test_relationships_show_a_near_duplicate_from_both_ends(api, make_key, pipeline):
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org), headers={"Prefer": "wait=30"}) as client:
        older = client.post("/v1/memories", json=memory(org, agent, "The staging server uses port 8080.")).json()
        newer = client.post("/v1/memories", json=memory(org, agent, "The staging server uses port 8081.")).json()
        from_newer = client.get(f"/v1/memories/{newer['memory_id']}/relationships").json()
        from_older = client.get(f"/v1/memories/{older['memory_id']}/relationships").json()
    [link] = from_newer["relationships"]
    assert (link["type"], link["direction"], link["memory_id"]) == ("near_duplicate_of", "outgoing", older["memory_id"])
    assert link["evidence"]["threshold"] == 0.92 and link["evidence"]["similarity"] > 0.92
    assert link["evidence"]["model"] == "all-MiniLM-L6-v2" and link["decided_by"] == "pipeline"
    [back] = from_older["relationships"]
    assert (back["type"], back["direction"], back["memory_id"]) == ("near_duplicate_of", "incoming", newer["memory_id"])
    assert back["evidence"] == link["evidence"]


def test_health_readiness_and_metrics_answer_without_a_key(api):
    with api.client() as client:
        health = client.get("/healthz")
        ready = client.get("/readyz")
        client.get("/v1/jobs/00000000-0000-0000-0000-000000000000")  # a 401, counted by route
        metrics = client.get("/metrics")
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert ready.status_code == 200
    body = ready.json()
    assert (body["status"], body["checks"]) == ("ready", {"postgres": True, "migrations": True, "redis": True})
    assert set(body["pipeline"]) == {"stalled", "seconds_without_progress"}  # other tests' jobs decide the values
    assert body["pipeline"]["seconds_without_progress"] >= 0
    assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")
    assert 'ibex_api_requests_total{method="GET",route="/v1/jobs/{job_id}",status="401"}' in metrics.text
    assert "ibex_api_request_duration_seconds_bucket" in metrics.text


def test_with_a_metrics_token_set_metrics_answer_only_that_bearer(infra, make_key):
    token = "metrics-" + uuid.uuid4().hex
    server = ApiServer(infra, "api-metrics-token", metrics_token=token)
    try:
        with server.client() as client:
            bare = client.get("/metrics")
            wrong = client.get("/metrics", headers={"Authorization": "Bearer metrics-nope"})
            api_key = client.get("/metrics", headers={"Authorization": f"Bearer {make_key(new_scope())}"})
            right = client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
            ready = client.get("/readyz")
    finally:
        server.stop()
    for refused in (bare, wrong, api_key):
        assert_envelope(refused, 401, "UNAUTHENTICATED")
        assert token not in refused.text
    assert right.status_code == 200 and "ibex_pipeline_stalled_seconds" in right.text
    assert ready.status_code == 200  # probes stay open
