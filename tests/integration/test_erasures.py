"""Erasures through the real API, worker, PostgreSQL and Redis: an agent's erasure leaves no
row or cache entry of it and spares every other agent and org; writes while it is open are
refused (at the API) or failed (in flight), none survives it; listed memories are deleted
like ``DELETE /v1/memories/{id}``; bad requests name the field; scope is the key's."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ibex_worker import erasures, runtime
from ibex_worker.celery_app import create_app
from ibex_worker.config import STAGES
from ibex_worker.errors import ErasureInProgress
from ibex_worker.publish import publish
from ibex_worker.submit import record, submit, wait_for_job
from tests.api_support import api, assert_envelope, make_key  # noqa: F401 (fixtures)
from tests.conftest import (isolated_queues, make_settings, memory, new_scope, query, redis_text, start_worker,
                            submit_and_wait)

ROOT = Path(__file__).resolve().parents[2]
WAIT = {"Prefer": "wait=30"}
PORT_OLD, PORT_NEW = "The staging server uses port 8080.", "The staging server uses port 8081."
TEA, COFFEE = "User prefers tea over coffee in the morning.", "User prefers coffee over tea in the morning."
AGENT_TABLES = ("memories", "memory_write_jobs", "memory_idempotency_keys", "memory_conflict_escalations",
                "memory_review_decisions", "memory_relationship_decisions", "memory_erasures")


def _wait_erasure(client, erasure_id: str, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        view = client.get(f"/v1/erasures/{erasure_id}")
        assert view.status_code == 200, view.text
        if view.json()["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
            return view.json()
        time.sleep(0.2)


def _agent_rows(engine, org: str, agent: str) -> dict[str, int]:
    counts = {table: query(engine, f"SELECT count(*) AS n FROM {table} WHERE org_id = :o AND agent_id = :a",
                           o=org, a=agent)[0].n for table in AGENT_TABLES if table != "memory_erasures"}
    return {table: n for table, n in counts.items() if n}


def _rows_naming(engine, org: str, memory_ids: list[str]) -> int:
    ids = list(memory_ids)
    return (query(engine, "SELECT count(*) AS n FROM memory_labels WHERE org_id = :o AND memory_id::text = ANY(:ids)",
                  o=org, ids=ids)[0].n
            + query(engine, "SELECT count(*) AS n FROM memory_relationships WHERE org_id = :o AND "
                            "(source_memory_id::text = ANY(:ids) OR target_memory_id::text = ANY(:ids))",
                    o=org, ids=ids)[0].n)


def test_erasing_an_agent_leaves_no_row_or_cache_entry_of_it_and_spares_everyone_else(
        api, make_key, engine, infra, pipeline):
    org, agent, neighbour = new_scope(), new_scope("agent"), new_scope("agent")
    tag, neighbour_tag = "zq" + uuid.uuid4().hex[:10], "zq" + uuid.uuid4().hex[:10]
    with api.client(make_key(org)) as client:
        mine = []
        for n, content in enumerate([PORT_OLD, PORT_NEW, TEA, COFFEE, f"Ticket {tag} was closed by the night shift."]):
            created = client.post("/v1/memories", json=memory(org, agent, content, metadata={"ref": tag},
                                                              labels=[{"label": "ops", "confidence": 0.8}]),
                                  headers={**WAIT, "Idempotency-Key": f"{tag}-{n}"})
            assert created.status_code == 201, created.text
            mine.append(created.json()["memory_id"])
        spared = client.post("/v1/memories", json=memory(org, neighbour, f"Ticket {neighbour_tag} stays open."),
                             headers=WAIT).json()["memory_id"]
        assert query(engine, "SELECT count(*) AS n FROM memory_conflict_escalations WHERE org_id = :o", o=org)[0].n
        assert any(m in redis_text(infra) for m in mine)  # the read cache holds them before
        removed = client.delete(f"/v1/memories/{mine[1]}/relationships/{mine[0]}", params={"type": "near_duplicate_of"})
        assert removed.status_code == 204, removed.text  # a person's removal is a row of the agent's too
        assert _agent_rows(engine, org, agent)["memory_relationship_decisions"] == 1

        accepted = client.post("/v1/erasures", json={"org_id": org, "agent_id": agent})
        assert accepted.status_code == 202, accepted.text
        erasure_id = accepted.json()["erasure_id"]
        assert accepted.headers["location"] == f"/v1/erasures/{erasure_id}"
        view = _wait_erasure(client, erasure_id)

        assert view["status"] == "succeeded", view
        counts = view["counts"]
        assert (counts["memories"], counts["labels"], counts["jobs"], counts["idempotency_keys"]) == (5, 5, 5, 5)
        assert counts["relationships"] >= 1 and counts["escalations"] >= 1 and counts["cache_keys"] >= 1
        assert view["finished_at"] and view["agent_id"] == agent and view["error"] is None
        assert _agent_rows(engine, org, agent) == {}
        assert _rows_naming(engine, org, mine) == 0
        stored = "\n".join(r.row_text for table in ("memories", "memory_write_jobs", "memory_erasures")
                           for r in query(engine, f"SELECT t::text AS row_text FROM {table} t WHERE org_id = :o", o=org))
        assert tag not in stored and neighbour_tag in stored
        cached = redis_text(infra)
        assert tag not in cached and not any(m in cached for m in mine)
        for memory_id in mine:
            assert_envelope(client.get(f"/v1/memories/{memory_id}"), 404, "NOT_FOUND")
        assert client.get(f"/v1/memories/{spared}").status_code == 200

        again = client.post("/v1/memories", json=memory(org, agent, PORT_OLD), headers=WAIT)
        assert again.status_code == 201 and again.json()["memory_id"] not in mine

    with api.client(make_key(new_scope())) as stranger:
        assert_envelope(stranger.get(f"/v1/erasures/{erasure_id}"), 404, "NOT_FOUND")


@pytest.fixture()
def parked(infra):
    """Settings whose queues (stages and erase) no running worker consumes, and their producer."""
    settings = make_settings(infra, **isolated_queues(f"ibex.test.erasure.{uuid.uuid4().hex[:8]}"))
    return settings, create_app(settings)


def test_writes_while_an_agent_is_erased_are_refused_or_failed_and_none_survives(
        infra, engine, producer, settings, pipeline, parked):
    own_settings, own_app = parked
    org, agent, other = new_scope(), new_scope("agent"), new_scope("agent")
    stored = submit_and_wait(engine, producer, settings, memory(org, agent, PORT_OLD))
    in_flight = record(engine, own_settings, memory(org, agent, TEA), "late-key").job_id
    never_taken = make_settings(infra, **isolated_queues(f"ibex.test.erasure-never.{uuid.uuid4().hex[:8]}"))
    left_queued = record(engine, never_taken, memory(org, agent, COFFEE)).job_id

    erasure_id, status = erasures.request(engine, own_app, own_settings, org, agent_id=agent, memory_ids=None,
                                          requested_by="cli:test")
    assert status == "queued"
    with pytest.raises(ErasureInProgress) as refused:
        submit(engine, producer, settings, memory(org, agent, "Written while the agent is erased."))
    assert refused.value.erasure_id == erasure_id
    assert erasures.request(engine, own_app, own_settings, org, agent_id=agent, memory_ids=None,
                            requested_by="cli:test") == (erasure_id, "queued")  # one open erasure per agent
    assert submit_and_wait(engine, producer, settings, memory(org, other, PORT_OLD))["status"] == "succeeded"

    stage_queues = ",".join(sorted({own_settings.queue_for(stage) for stage in STAGES}))
    worker = start_worker(infra, "erasure-inflight", queues=stage_queues,
                          **isolated_queues(own_settings.queue_validate.rsplit(".", 1)[0]))
    try:
        publish(own_app, own_settings, "validate", [in_flight])
        refused_at_persist = wait_for_job(engine, org, in_flight, timeout=90)
    finally:
        worker.stop()
    assert (refused_at_persist["status"], refused_at_persist["error"]["code"]) == ("failed", "ERASED")

    assert erasures.run(engine, own_settings, runtime.read_cache(own_settings), erasure_id) is None
    view = erasures.view(engine, org, erasure_id)
    assert view["status"] == "succeeded"
    assert (view["counts"]["memories"], view["counts"]["jobs"]) == (1, 3)
    assert query(engine, "SELECT count(*) AS n FROM memories WHERE org_id = :o AND agent_id = :a",
                 o=org, a=agent)[0].n == 0
    remaining = query(engine, "SELECT id, status, error, raw_content, request, context FROM memory_write_jobs "
                              "WHERE org_id = :o AND agent_id = :a", o=org, a=agent)
    assert [(str(r.id), r.status, r.error["code"], r.raw_content, r.request, r.context) for r in remaining] == \
        [(left_queued, "failed", "ERASED", None, {}, {})]
    assert _agent_rows(engine, org, agent) == {"memory_write_jobs": 1}
    assert stored["memory_id"] not in redis_text(infra)

    after = submit_and_wait(engine, producer, settings, memory(org, agent, PORT_OLD))
    assert (after["status"], after["outcome"]) == ("succeeded", "created")
    assert after["memory_id"] != stored["memory_id"]


def test_listed_memories_are_deleted_as_a_delete_would_and_others_are_kept(api, make_key, engine, pipeline):
    org, agent, other = new_scope(), new_scope("agent"), new_scope("agent")
    with api.client(make_key(org)) as client:
        old, new, tea = (client.post("/v1/memories", json=memory(org, agent, text), headers=WAIT).json()["memory_id"]
                         for text in (PORT_OLD, PORT_NEW, TEA))
        outside = client.post("/v1/memories", json=memory(org, other, TEA), headers=WAIT).json()["memory_id"]
    with api.client(make_key(org, [agent])) as limited:
        accepted = limited.post("/v1/erasures", json={"org_id": org, "memory_ids": [new, tea, outside,
                                                                                    str(uuid.uuid4())]})
        assert accepted.status_code == 202, accepted.text
        view = _wait_erasure(limited, accepted.json()["erasure_id"])
        assert view["status"] == "succeeded", view
        assert (view["memory_count"], view["agent_id"], view["counts"]["memories"]) == (4, None, 2)
        for gone in (new, tea):
            assert_envelope(limited.get(f"/v1/memories/{gone}"), 404, "NOT_FOUND")
        assert limited.get(f"/v1/memories/{old}/relationships").json()["relationships"] == []
    rows = {str(r.id): (r.status, r.content) for r in query(engine, "SELECT id, status, content FROM memories "
                                                                    "WHERE org_id = :o", o=org)}
    assert rows[new] == ("deleted", "") and rows[tea] == ("deleted", "")
    assert rows[old] == ("active", PORT_OLD) and rows[outside] == ("active", TEA)
    withdrawn = query(engine, "SELECT status, outcome, decided_by FROM memory_conflict_escalations "
                              "WHERE org_id = :o AND (memory_id::text = :m OR candidate_id::text = :m)", o=org, m=new)
    assert [(w.status, w.outcome, w.decided_by) for w in withdrawn] == [("resolved", "withdrawn",
                                                                         "system:memory_deleted")]


def test_bad_erasure_requests_name_the_field_and_scope_is_the_keys(api, make_key, engine, infra):
    org, agent = new_scope(), new_scope("agent")
    settings = make_settings(infra)
    with api.client(make_key(org, [agent])) as client:
        for body, field in (({"org_id": org}, "body"),
                            ({"org_id": org, "agent_id": agent, "memory_ids": [str(uuid.uuid4())]}, "body"),
                            ({"org_id": org, "memory_ids": ["not-a-uuid"]}, "memory_ids"),
                            ({"org_id": org, "memory_ids": [str(uuid.uuid4())] * (settings.erasure_max_ids + 1)},
                             "memory_ids"),
                            ({"org_id": org, "memory_ids": []}, "memory_ids"),
                            ({"org_id": org, "agent_id": "bad agent"}, "agent_id")):
            error = assert_envelope(client.post("/v1/erasures", json=body), 422, "VALIDATION_ERROR")
            assert [d["field"] for d in error["error"]["details"]] == [field], (body, error)
            assert "not-a-uuid" not in str(error)
        assert_envelope(client.post("/v1/erasures", json={"org_id": org, "agent_id": new_scope("agent")}),
                        403, "FORBIDDEN")
        assert_envelope(client.post("/v1/erasures", json={"org_id": new_scope(), "agent_id": agent}),
                        403, "FORBIDDEN")
        for erasure_id in ("nope", str(uuid.uuid4())):
            assert_envelope(client.get(f"/v1/erasures/{erasure_id}"), 404, "NOT_FOUND")
    assert query(engine, "SELECT count(*) AS n FROM memory_erasures WHERE org_id = :o", o=org)[0].n == 0


def _cli(infra, *args: str) -> tuple[int, dict]:
    done = subprocess.run([sys.executable, "-m", "ibex_worker.cli", "erasures", *args], env=infra.env(), cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    return done.returncode, json.loads(done.stdout)


def test_the_cli_requests_an_erasure_waits_for_it_and_shows_its_receipt(infra, engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    kept = submit_and_wait(engine, producer, settings, memory(org, agent, PORT_OLD))
    gone = submit_and_wait(engine, producer, settings, memory(org, agent, TEA))
    code, receipt = _cli(infra, "request", "--org", org, "--memory", gone["memory_id"], "--wait", "60",
                         "--user", "dpo")
    assert code == 0, receipt
    assert (receipt["status"], receipt["memory_count"], receipt["counts"]["memories"]) == ("succeeded", 1, 1)
    assert query(engine, "SELECT requested_by FROM memory_erasures WHERE id = :e",
                 e=receipt["erasure_id"])[0].requested_by == "cli:dpo"
    assert _cli(infra, "show", receipt["erasure_id"], "--org", org) == (0, receipt)
    assert _cli(infra, "show", receipt["erasure_id"], "--org", new_scope())[0] == 2
    statuses = {str(r.id): r.status for r in query(engine, "SELECT id, status FROM memories WHERE org_id = :o", o=org)}
    assert statuses == {kept["memory_id"]: "active", gone["memory_id"]: "deleted"}


def test_a_cache_entry_written_after_an_erasure_started_is_refused(infra):
    cache = runtime.read_cache(make_settings(infra))
    org, erased, other = new_scope(), new_scope("agent"), new_scope("agent")
    late, kept, listed = (str(uuid.uuid4()) for _ in range(3))
    cache.mark_erased(org, agent_id=erased)
    cache.mark_erased(org, memory_ids=[listed])
    entries = [{"memory_id": late, "org_id": org, "agent_id": erased, "content": "late", "status": "active"},
               {"memory_id": kept, "org_id": org, "agent_id": other, "content": "kept", "status": "active"},
               {"memory_id": listed, "org_id": org, "agent_id": other, "content": "listed", "status": "active"}]
    assert all(cache.put(entry) for entry in entries)  # refused quietly: a put never fails a write
    assert [cache.get(org, m) is not None for m in (late, kept, listed)] == [False, True, False]
    assert cache.drop(org, [late, kept, listed]) == 1
