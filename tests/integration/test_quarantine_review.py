"""Quarantine that hides, every field scanned, and the review flow, through the real API and
worker: a quarantined value is readable through no route, log, Redis key or table; a
release runs the masked text through the pipeline and is audited; a delete leaves a
tombstone with nothing of the memory in it."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.api_support import api, assert_envelope, make_key  # noqa: F401 (fixtures)
from tests.conftest import (TENANT_TABLES, make_settings, memory, new_scope, query, redis_text, submit_and_wait,
                            tenant_rows)
from ibex_worker.pii.checksums import luhn_valid

ROOT = Path(__file__).resolve().parents[2]
WAIT = {"Prefer": "wait=30"}


def _mistyped_card(rng: random.Random) -> str:
    """A Visa number with a wrong check digit, grouped 4-4-4-4: uncertain, so masked."""
    while True:
        digits = "4" + "".join(str(rng.randrange(10)) for _ in range(15))
        if not luhn_valid(digits):
            return " ".join(digits[i:i + 4] for i in range(0, 16, 4))


def _fragments(card: str) -> list[str]:
    """The whole value and the pieces a partial mask would leave readable."""
    groups = card.split()
    return [card, card.replace(" ", ""), " ".join(groups[1:]), " ".join(groups[2:]), groups[1] + groups[2]]


def _rows_text(engine, org: str) -> str:
    return "\n".join(row for table in TENANT_TABLES for row in tenant_rows(engine, table, org))


def _found(haystacks: dict[str, str], needles: list[str]) -> list[tuple[str, str]]:
    return [(where, needle) for where, text in haystacks.items() for needle in needles if needle in text]


def test_a_quarantined_value_is_readable_through_no_route_log_redis_key_or_table(
        api, make_key, infra, engine, pipeline):
    rng = random.Random()
    card, meta_card = _mistyped_card(rng), _mistyped_card(rng)
    tag = uuid.uuid4().hex[:10]
    email, reviewer = f"canary.{tag}@example.com", "Margaret Thornbury"
    canaries = [*_fragments(card), *_fragments(meta_card), email, f"canary.{tag}", reviewer, "Thornbury"]
    org, agent = new_scope(), new_scope("agent")
    body = memory(org, agent, f"The number {card} came up again on the refund call.",
                  metadata={"callback": {"card": meta_card, "contact": email}},
                  labels=[{"label": "billing", "confidence": 0.9}])
    responses: dict[str, str] = {}
    with api.client(make_key(org)) as client:
        created = client.post("/v1/memories", json=body, headers=WAIT)
        responses["write"] = created.text
        assert created.status_code == 201, created.text
        assert created.json()["status"] == "quarantined"
        memory_id, job_id = created.json()["memory_id"], created.json()["job_id"]
        for route in (f"/v1/jobs/{job_id}", f"/v1/memories/{memory_id}", f"/v1/memories/{memory_id}/relationships",
                      "/v1/quarantine", "/v1/escalations", "/metrics"):
            response = client.get(route)
            assert response.status_code == 200, (route, response.text)
            responses[route] = response.text
        view = client.get(f"/v1/memories/{memory_id}").json()
        listed = client.get("/v1/quarantine").json()["memories"]
        release = client.post(f"/v1/memories/{memory_id}/release", json={"note": f"Checked with {reviewer}."},
                              headers=WAIT)
        responses["release"] = release.text
        responses["after release"] = client.get(f"/v1/memories/{memory_id}").text
        audit = query(engine, "SELECT note, decided_by FROM memory_review_decisions WHERE org_id = :o", o=org)

    assert view["status"] == "quarantined"
    assert view["content"] == "The number [CREDIT_CARD?] came up again on the refund call."
    assert view["metadata"] == {"callback": {"card": "[CREDIT_CARD?]", "contact": "[EMAIL_ADDRESS]"}}
    assert view["pii"]["quarantine_reasons"] == ["low_confidence:CREDIT_CARD"]
    assert [m["memory_id"] for m in listed] == [memory_id]
    assert listed[0]["content"] == view["content"]
    assert release.status_code == 201, release.text
    assert release.json()["outcome"] == "released" and release.json()["memory_id"] == memory_id
    assert [(a.note, a.decided_by.startswith("api_key:")) for a in audit] == [("Checked with [PERSON].", True)]

    haystacks = {**responses, "tables": _rows_text(engine, org), "redis": redis_text(infra),
                 "api log": api.log_text(), "worker log": pipeline.log_text()}
    assert _found(haystacks, canaries) == []


def test_personal_data_in_labels_category_source_or_a_metadata_key_is_refused_naming_the_field(
        api, make_key, infra, engine, pipeline):
    tag = uuid.uuid4().hex[:10]
    email, phone = f"field.{tag}@example.com", "+44 20 7946 0958"
    org, agent = new_scope(), new_scope("agent")
    cases = {
        "labels[0].label": memory(org, agent, "Weekly sync moved to Thursday.",
                                  labels=[{"label": email, "confidence": 0.9}]),
        "category": memory(org, agent, "Weekly sync moved to Friday.", category=f"call {phone}"),
        "source": memory(org, agent, "Weekly sync moved to Monday.", source=email),
        "metadata": memory(org, agent, "Weekly sync moved to Tuesday.", metadata={email: "owner"}),
    }
    answers = {}
    with api.client(make_key(org)) as client:
        for field, body in cases.items():
            answers[field] = client.post("/v1/memories", json=body, headers=WAIT)
        kept = client.post("/v1/memories", json=memory(org, agent, "Weekly sync moved to Wednesday.",
                                                       metadata={"owner": email, "phones": [phone]}), headers=WAIT)
        kept_view = client.get(f"/v1/memories/{kept.json()['memory_id']}").json()
    for field, response in answers.items():
        error = assert_envelope(response, 422, "PII_IN_FIELD")["error"]
        assert [d["field"] for d in error["details"]] == [field]
        assert email not in response.text and phone not in response.text
    assert kept.status_code == 201
    assert kept_view["metadata"] == {"owner": "[EMAIL_ADDRESS]", "phones": ["[PHONE_NUMBER]"]}
    assert kept_view["pii"]["fields"] == {"metadata": {"EMAIL_ADDRESS": 1, "PHONE_NUMBER": 1}}
    assert query(engine, "SELECT count(*) AS n FROM memories WHERE org_id = :o", o=org)[0].n == 1
    haystacks = {"tables": _rows_text(engine, org), "redis": redis_text(infra), "api log": api.log_text(),
                 "worker log": pipeline.log_text()}
    assert _found(haystacks, [email, f"field.{tag}", phone, "7946 0958"]) == []


def test_a_release_runs_the_masked_text_through_dedup_and_conflict_and_is_audited(api, make_key, engine, pipeline):
    org, agent, other_agent = new_scope(), new_scope("agent"), new_scope("agent")
    text = "The number 4111 1111 1111 1112 was read out on the support call."
    with api.client(make_key(org), headers=WAIT) as client:
        first = client.post("/v1/memories", json=memory(org, agent, text)).json()
        twin = client.post("/v1/memories", json=memory(org, agent, text)).json()
        elsewhere = client.post("/v1/memories", json=memory(org, other_agent, text)).json()
        assert [first["status"], twin["status"], elsewhere["status"]] == ["quarantined"] * 3
        released = client.post(f"/v1/memories/{first['memory_id']}/release")
        duplicate = client.post(f"/v1/memories/{twin['memory_id']}/release", json={})
        again = client.post(f"/v1/memories/{first['memory_id']}/release")
        listed = client.get("/v1/quarantine").json()
        twin_read = client.get(f"/v1/memories/{twin['memory_id']}")
    with api.client(make_key(org, [other_agent])) as scoped:
        foreign = scoped.post(f"/v1/memories/{first['memory_id']}/release")
        scoped_list = scoped.get("/v1/quarantine").json()
    with api.client(make_key(new_scope())) as stranger:
        other_tenant = stranger.post(f"/v1/memories/{elsewhere['memory_id']}/release")
        malformed = stranger.post("/v1/memories/not-a-uuid/release")

    assert released.status_code == 201, released.text
    assert released.json()["outcome"] == "released" and released.json()["status"] == "active"
    row = query(engine, "SELECT status, embedding IS NOT NULL AS embedded, content FROM memories WHERE id = :m",
                m=first["memory_id"])[0]
    assert (row.status, row.embedded, row.content) == ("active", True, "The number [CREDIT_CARD?] was read out "
                                                                        "on the support call.")
    dup = assert_envelope(duplicate, 409, "DUPLICATE_CONTENT")
    assert dup["memory_id"] == first["memory_id"]
    assert twin_read.status_code == 404
    assert_envelope(again, 409, "NOT_QUARANTINED")
    assert [m["memory_id"] for m in listed["memories"]] == [elsewhere["memory_id"]]
    assert listed["next_cursor"] is None
    assert_envelope(foreign, 404, "NOT_FOUND")
    assert [m["memory_id"] for m in scoped_list["memories"]] == [elsewhere["memory_id"]]
    assert_envelope(other_tenant, 404, "NOT_FOUND")
    assert_envelope(malformed, 404, "NOT_FOUND")
    audit = query(engine, "SELECT memory_id, outcome, result_memory_id FROM memory_review_decisions "
                          "WHERE org_id = :o AND action = 'release' ORDER BY decided_at", o=org)
    assert [(str(a.memory_id), a.outcome, str(a.result_memory_id)) for a in audit] == [
        (first["memory_id"], "released", first["memory_id"]),
        (twin["memory_id"], "exact_duplicate", first["memory_id"])]


def test_the_quarantine_list_pages_oldest_first(api, make_key, pipeline):
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org), headers=WAIT) as client:
        ids = [client.post("/v1/memories", json=memory(org, agent, f"Card {n} is 4111 1111 1111 1112.")).json()
               ["memory_id"] for n in ("one", "two", "three")]
        first = client.get("/v1/quarantine", params={"limit": 2}).json()
        second = client.get("/v1/quarantine", params={"limit": 2, "cursor": first["next_cursor"]}).json()
        bad = client.get("/v1/quarantine", params={"cursor": "bm90IGEgY3Vyc29y"})
    assert [m["memory_id"] for m in first["memories"]] == ids[:2] and first["next_cursor"]
    assert [m["memory_id"] for m in second["memories"]] == ids[2:] and second["next_cursor"] is None
    assert_envelope(bad, 422, "VALIDATION_ERROR")


def test_only_one_release_of_a_memory_runs_at_a_time(infra, engine, producer, settings, pipeline):
    from ibex_worker import review
    from ibex_worker.celery_app import create_app

    org, agent = new_scope(), new_scope("agent")
    view = submit_and_wait(engine, producer, settings, memory(org, agent, "The number 4111 1111 1111 1112 came up."))
    assert view["result"]["status"] == "quarantined"
    parked = make_settings(infra, queue_pii="release-parked.pii")  # nobody consumes it: the release waits
    app = create_app(parked)
    try:
        job_id = review.release(engine, app, parked, org, view["memory_id"], None, "cli:tester")
        with pytest.raises(review.ReleaseInProgress) as caught:
            review.release(engine, app, parked, org, view["memory_id"], "again", "cli:tester")
        assert caught.value.job_id == job_id
    finally:
        app.close()
        with engine.begin() as conn:  # the parked release would wait for ever: take it away
            conn.execute(text("DELETE FROM memory_write_jobs WHERE id = :j"), {"j": job_id})


def test_a_delete_leaves_a_tombstone_and_withdraws_what_names_the_memory(api, make_key, engine, pipeline):
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org), headers=WAIT) as client:
        old = client.post("/v1/memories", json=memory(org, agent, "The staging server uses port 8080.")).json()
        new = client.post("/v1/memories", json=memory(org, agent, "The staging server uses port 8081.",
                                                      metadata={"ticket": "84898"})).json()
        assert [n["memory_id"] for n in new["near_duplicates"]] == [old["memory_id"]] and new["escalations"]
        deleted = client.delete(f"/v1/memories/{new['memory_id']}")
        read = client.get(f"/v1/memories/{new['memory_id']}")
        links = client.get(f"/v1/memories/{old['memory_id']}/relationships").json()["relationships"]
        escalations = client.get("/v1/escalations").json()["escalations"]
        rewritten = client.post("/v1/memories", json=memory(org, agent, "The staging server uses port 8081."))
        twice = client.delete(f"/v1/memories/{new['memory_id']}")
        malformed = client.delete("/v1/memories/nope")
    with api.client(make_key(new_scope())) as stranger:
        foreign = stranger.delete(f"/v1/memories/{old['memory_id']}")

    assert deleted.status_code == 204 and twice.status_code == 204
    assert_envelope(read, 404, "NOT_FOUND")
    assert links == []
    assert [(e["status"], e["outcome"], e["decided_by"]) for e in escalations] == \
        [("resolved", "withdrawn", "system:memory_deleted")]
    assert rewritten.status_code == 201 and rewritten.json()["memory_id"] != new["memory_id"]
    assert_envelope(malformed, 404, "NOT_FOUND")
    assert_envelope(foreign, 404, "NOT_FOUND")
    [tomb] = query(engine, "SELECT status, content, embedding, subject_key, metadata, deleted_at FROM memories "
                           "WHERE id = :m", m=new["memory_id"])
    assert (tomb.status, tomb.content, tomb.embedding, tomb.subject_key, tomb.metadata) == \
        ("deleted", "", None, None, {})
    assert tomb.deleted_at is not None
    assert query(engine, "SELECT count(*) AS n FROM memory_labels WHERE memory_id = :m", m=new["memory_id"])[0].n == 0
    jobs = query(engine, "SELECT request, context FROM memory_write_jobs WHERE memory_id = :m", m=new["memory_id"])
    assert [(j.request, j.context) for j in jobs] == [({}, {})]
    text = json.dumps([r.row_text for r in query(engine, "SELECT r::text AS row_text FROM memory_review_decisions r "
                                                         "WHERE org_id = :o", o=org)])
    assert re.search(r"delete.*deleted", text) and "port 8081" not in text


def test_case_variants_of_a_memory_are_exact_duplicates(api, make_key, pipeline):
    org, agent = new_scope(), new_scope("agent")
    text = "Contact Jane Doe at jane.doe@example.com about the Atlas support contract every September."
    with api.client(make_key(org), headers=WAIT) as client:
        answers = [client.post("/v1/memories", json=memory(org, agent, variant))
                   for variant in (text, text.upper(), text.lower(), "  " + text.replace(" ", "  "))]
    assert [a.status_code for a in answers] == [201, 409, 409, 409]
    assert {a.json()["memory_id"] for a in answers} == {answers[0].json()["memory_id"]}


def test_the_cli_deletes_a_memory_of_any_status_and_a_second_delete_is_a_no_op(infra, engine, producer, settings,
                                                                               pipeline):
    org, agent = new_scope(), new_scope("agent")
    stored = submit_and_wait(engine, producer, settings, memory(org, agent, "The archive moves to cold storage."))

    def ibex(*args):
        done = subprocess.run([sys.executable, "-m", "ibex_worker.cli", "memories", "delete", *args],
                              env=infra.env(), cwd=ROOT, capture_output=True, text=True, timeout=60)
        return done.returncode, json.loads(done.stdout)

    first = ibex(stored["memory_id"], "--org", org, "--user", "dpo")
    again = ibex(stored["memory_id"], "--org", org)
    elsewhere = ibex(stored["memory_id"], "--org", new_scope())
    assert first == (0, {"memory_id": stored["memory_id"], "deleted": True, "already": False})
    assert again == (0, {"memory_id": stored["memory_id"], "deleted": True, "already": True})
    assert elsewhere[0] == 2 and elsewhere[1]["error"]["code"] == "NOT_FOUND"
    assert query(engine, "SELECT status FROM memories WHERE id = :m", m=stored["memory_id"])[0].status == "deleted"
    assert [r.decided_by for r in query(engine, "SELECT decided_by FROM memory_review_decisions WHERE org_id = :o",
                                        o=org)] == ["cli:dpo"]
