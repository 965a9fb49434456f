"""Escalations over HTTP: listing by status with pagination, a person's decision applied at
once and visible on the memories' relationships, the final 409 on a second decision, the
same 404 for another tenant, an agent outside the key and an unknown id, field-level 422s
that never echo the note, and the whole loop end to end: two contradictory facts written
through the API, decided by a real escalation worker, the decision read back over the API."""

from __future__ import annotations

import base64
import json
import re
import uuid
from typing import Any

from tests.api_support import api, assert_envelope, make_key  # noqa: F401
from tests.conftest import TENANT_TABLES, memory, new_scope, tenant_rows
from tests.escalation_support import (
    COMPATIBLE, CONTRADICTS, JAN, JUN, NEGATED, SEP, UNDECIDED, decisions, escalate_pairs, escalation, numbered,
    settled, start_poller, wait_until,
)
from ibex_worker import apikeys

UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"
STANDUP_OLD, STANDUP_NEW = "The team standup is at 9am on Mondays.", "The team standup is at 10am on Mondays."


def key_with_id(engine: Any, org: str, agents: list[str] | None = None) -> tuple[str, str]:
    """A key and its id (what ``decided_by`` records as ``api_key:<id>``)."""
    key, record = apikeys.create(engine, org, agents)
    return key, record["id"]


def _cursor(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def resolve(client: Any, escalation_id: str, outcome: str, note: str | None = None) -> Any:
    body: dict[str, Any] = {"outcome": outcome}
    if note is not None:
        body["note"] = note
    return client.post(f"/v1/escalations/{escalation_id}/resolve", json=body)


def listed(client: Any, **params: Any) -> list[str]:
    response = client.get("/v1/escalations", params=params)
    assert response.status_code == 200, response.text
    return [e["escalation_id"] for e in response.json()["escalations"]]


def test_escalations_are_listed_by_status_a_page_at_a_time_without_content(api, engine, make_key):
    org, agent = new_scope(), new_scope("agent")
    pairs = [numbered(CONTRADICTS, 1), numbered(NEGATED, 2), numbered(COMPATIBLE, 3)]
    escalated = escalate_pairs(engine, org, agent, pairs)
    ids = [e.escalation_id for e in escalated]
    with api.client(make_key(org)) as client:
        assert resolve(client, ids[1], "compatible").status_code == 200
        everything = client.get("/v1/escalations")
        pending = listed(client, status="pending")
        resolved = listed(client, status="resolved")
        first = client.get("/v1/escalations", params={"limit": 2}).json()
        second = client.get("/v1/escalations", params={"limit": 2, "cursor": first["next_cursor"]}).json()
        assert listed(client, status="dead") == []

    assert everything.status_code == 200
    assert sorted(e["escalation_id"] for e in everything.json()["escalations"]) == sorted(ids)
    assert everything.json()["next_cursor"] is None
    assert sorted(pending) == sorted([ids[0], ids[2]]) and resolved == [ids[1]]
    assert [e["escalation_id"] for e in first["escalations"] + second["escalations"]] == \
        [e["escalation_id"] for e in everything.json()["escalations"]]
    assert len(first["escalations"]) == 2 and first["next_cursor"] and second["next_cursor"] is None

    shown = {e["escalation_id"]: e for e in everything.json()["escalations"]}
    one = shown[ids[0]]
    assert (one["org_id"], one["agent_id"], one["memory_id"], one["candidate_id"]) == \
        (org, agent, escalated[0].newer_id, escalated[0].older_id)
    assert (one["status"], one["reason"], one["evidence"]) == ("pending", "overlapping_intervals",
                                                               {"similarity": 0.95})
    assert (one["outcome"], one["decided_by"], one["decision_reason"], one["decided_at"]) == (None,) * 4
    assert shown[ids[1]]["decision_reason"] == "resolved by a person"  # no note: the default reason
    for side in (c for pair in pairs for c in pair):
        assert side not in everything.text  # identifiers, statuses and numbers only


def test_list_parameters_are_validated_field_by_field(api, make_key):
    with api.client(make_key(new_scope())) as client:
        bad_status = client.get("/v1/escalations", params={"status": "claimedish"})
        bad_limit = client.get("/v1/escalations", params={"limit": 201})
        zero_limit = client.get("/v1/escalations", params={"limit": 0})
        bad_cursor = client.get("/v1/escalations", params={"cursor": "not-a-cursor"})
        # The service's own decoding would raise past its checks on this one (a number for the id).
        crafted = client.get("/v1/escalations", params={"cursor": _cursor(["2024-01-01T00:00:00+00:00", 5])})
        far_offset = client.get("/v1/escalations", params={"cursor": _cursor(["2024-01-01T00:00:00+20:00",
                                                                              UNKNOWN_ID])})
        empty_cursor = client.get("/v1/escalations", params={"cursor": ""})
        no_key = client.get("/v1/escalations", headers={"Authorization": ""})
    assert assert_envelope(bad_status, 422, "VALIDATION_ERROR")["error"]["details"][0]["field"] == "status"
    assert "claimedish" not in bad_status.text
    for response in (bad_limit, zero_limit):
        assert [d["field"] for d in assert_envelope(response, 422, "VALIDATION_ERROR")["error"]["details"]] == \
            ["limit"]
    for response in (bad_cursor, crafted, far_offset):
        assert assert_envelope(response, 422, "VALIDATION_ERROR")["error"]["details"] == \
            [{"field": "cursor", "issue": "is not a cursor this service returned"}]
    assert empty_cursor.json() == {"escalations": [], "next_cursor": None}  # as no cursor
    assert_envelope(no_key, 401, "UNAUTHENTICATED")


def test_resolving_contradicts_links_the_pair_as_the_key_with_both_memories_active(api, engine):
    org, agent = new_scope(), new_scope("agent")
    [pair] = escalate_pairs(engine, org, agent, [numbered(CONTRADICTS, 1)])
    key, key_id = key_with_id(engine, org)
    note = "Both ports were in use that quarter."
    with api.client(key) as client:
        response = resolve(client, pair.escalation_id, "contradicts", note)
        from_newer = client.get(f"/v1/memories/{pair.newer_id}/relationships").json()
        from_older = client.get(f"/v1/memories/{pair.older_id}/relationships").json()
        memories = [client.get(f"/v1/memories/{m}").json() for m in (pair.newer_id, pair.older_id)]
        assert listed(client, status="resolved") == [pair.escalation_id]

    assert response.status_code == 200, response.text
    shown = response.json()
    assert (shown["escalation_id"], shown["status"], shown["outcome"]) == (pair.escalation_id, "resolved",
                                                                           "contradicts")
    assert (shown["decided_by"], shown["decision_reason"]) == (f"api_key:{key_id}", note)
    assert shown["decided_at"] and shown["memory_id"] == pair.newer_id and shown["candidate_id"] == pair.older_id
    assert [(d["outcome"], d["decided_by"], d["reason"], d["details"]) for d in shown["decisions"]] == \
        [("contradicts", f"api_key:{key_id}", note, {"decided_by_person": True})]

    [link] = from_newer["relationships"]
    assert (link["type"], link["direction"], link["memory_id"]) == ("contradicts", "outgoing", pair.older_id)
    assert link["decided_by"] == f"api_key:{key_id}"
    assert (link["evidence"]["escalation_id"], link["evidence"]["reason"]) == (pair.escalation_id, note)
    [back] = from_older["relationships"]
    assert (back["type"], back["direction"], back["memory_id"]) == ("contradicts", "incoming", pair.newer_id)
    assert [m["status"] for m in memories] == ["active", "active"]


def test_resolving_supersedes_closes_the_older_interval_and_links_newer_to_older(api, engine):
    org, agent = new_scope(), new_scope("agent")
    [pair] = escalate_pairs(engine, org, agent, [numbered(UNDECIDED, 1)], older_validity=(JAN, SEP))
    key, key_id = key_with_id(engine, org)
    with api.client(key) as client:
        response = resolve(client, pair.escalation_id, "supersedes")
        older = client.get(f"/v1/memories/{pair.older_id}").json()
        newer = client.get(f"/v1/memories/{pair.newer_id}").json()
        [link] = client.get(f"/v1/memories/{pair.newer_id}/relationships").json()["relationships"]
    assert response.status_code == 200 and response.json()["outcome"] == "supersedes"
    assert (older["status"], older["valid_until"]) == ("superseded", "2024-06-01T00:00:00+00:00")
    assert newer["status"] == "active"
    assert (link["type"], link["direction"], link["memory_id"], link["decided_by"]) == \
        ("supersedes", "outgoing", pair.older_id, f"api_key:{key_id}")


def test_a_resolved_escalation_is_final_a_second_decision_is_a_409(api, engine):
    org, agent = new_scope(), new_scope("agent")
    [pair] = escalate_pairs(engine, org, agent, [numbered(NEGATED, 1)])
    key, key_id = key_with_id(engine, org)
    with api.client(key) as client:
        first = resolve(client, pair.escalation_id, "contradicts", "first look")
        again = resolve(client, pair.escalation_id, "compatible", "second thoughts")
        same = resolve(client, pair.escalation_id, "contradicts", "first look")
        links = client.get(f"/v1/memories/{pair.newer_id}/relationships").json()["relationships"]
    assert first.status_code == 200
    for response in (again, same):
        body = assert_envelope(response, 409, "ESCALATION_ALREADY_RESOLVED")
        assert "second thoughts" not in response.text and "first look" not in body["error"]["message"]
    row = escalation(engine, pair.escalation_id)
    assert (row.status, row.outcome, row.decided_by, row.decision_reason) == \
        ("resolved", "contradicts", f"api_key:{key_id}", "first look")
    assert [d.outcome for d in decisions(engine, pair.escalation_id)] == ["contradicts"]
    assert [link["type"] for link in links] == ["contradicts"]


def test_another_tenants_escalation_answers_404_like_an_unknown_id_and_is_never_listed(api, engine, make_key):
    org, agent = new_scope(), new_scope("agent")
    [pair] = escalate_pairs(engine, org, agent, [numbered(CONTRADICTS, 1)])
    with api.client(make_key(new_scope())) as stranger:
        theirs = resolve(stranger, pair.escalation_id, "contradicts")
        unknown = resolve(stranger, UNKNOWN_ID, "contradicts")
        malformed = resolve(stranger, "not-an-id", "contradicts")
        upper = resolve(stranger, pair.escalation_id.upper(), "compatible")
        assert listed(stranger) == [] and listed(stranger, status="pending") == []
    bodies = [assert_envelope(r, 404, "NOT_FOUND") for r in (theirs, unknown, malformed, upper)]
    assert {b["error"]["message"] for b in bodies} == {"no such escalation"}
    assert escalation(engine, pair.escalation_id).status == "pending"
    assert decisions(engine, pair.escalation_id) == []


def test_a_key_limited_to_other_agents_gets_404_and_sees_none_of_the_agents_escalations(api, engine, make_key):
    org, agent, other = new_scope(), new_scope("agent"), new_scope("agent")
    [pair] = escalate_pairs(engine, org, agent, [numbered(CONTRADICTS, 1)])
    [others] = escalate_pairs(engine, org, other, [numbered(NEGATED, 2)])
    with api.client(make_key(org, [other])) as limited:
        refused = resolve(limited, pair.escalation_id, "contradicts")
        assert listed(limited) == [others.escalation_id]
    with api.client(make_key(org, [agent])) as covering:
        assert listed(covering) == [pair.escalation_id]
        assert resolve(covering, pair.escalation_id, "compatible").status_code == 200
    assert assert_envelope(refused, 404, "NOT_FOUND")["error"]["message"] == "no such escalation"


def test_a_bad_decision_is_a_422_naming_the_field_and_never_echoing_the_note(api, engine, make_key):
    org, agent = new_scope(), new_scope("agent")
    [pair] = escalate_pairs(engine, org, agent, [numbered(CONTRADICTS, 1)])
    canary = f"canary-{uuid.uuid4().hex}"
    url = f"/v1/escalations/{pair.escalation_id}/resolve"
    with api.client(make_key(org)) as client:
        bad_outcome = client.post(url, json={"outcome": "superseded", "note": canary})
        needs_review = client.post(url, json={"outcome": "needs_review", "note": canary})
        no_outcome = client.post(url, json={"note": canary})
        long_note = client.post(url, json={"outcome": "contradicts", "note": canary * 100})
        nul_note = client.post(url, json={"outcome": "contradicts", "note": f"{canary}\u0000"})
        extra = client.post(url, json={"outcome": "contradicts", "note": canary, "decided_by": "cli:me"})
        not_json = client.post(url, content=f'{{"outcome": "contradicts", "note": "{canary}'.encode())
        no_key = client.post(url, json={"outcome": "superseded", "note": canary}, headers={"Authorization": ""})

    for response, field in ((bad_outcome, "outcome"), (needs_review, "outcome"), (no_outcome, "outcome"),
                            (long_note, "note"), (nul_note, "note"), (extra, "decided_by"), (not_json, "body")):
        body = assert_envelope(response, 422, "VALIDATION_ERROR")
        assert [d["field"] for d in body["error"]["details"]] == [field], body
        assert field in body["error"]["message"]
        assert canary not in response.text and "superseded" not in response.text
    assert_envelope(no_key, 401, "UNAUTHENTICATED")  # the key is checked before the body
    assert escalation(engine, pair.escalation_id).status == "pending"
    assert decisions(engine, pair.escalation_id) == []


def test_a_note_is_stored_and_answered_with_its_personal_data_as_placeholders(api, engine):
    org, agent = new_scope(), new_scope("agent")
    [pair] = escalate_pairs(engine, org, agent, [numbered(CONTRADICTS, 1)])
    key, _ = key_with_id(engine, org)
    name, phone, card = "Wanjiru Kamau", "+44 7700 938217", "4929 5812 7734 0061"  # the card's check digit is wrong
    note = f"Checked with {name} on {phone}; the card {card} is not hers."
    with api.client(key) as client:
        response = resolve(client, pair.escalation_id, "contradicts", note)
        relationships = client.get(f"/v1/memories/{pair.newer_id}/relationships").text
        shown = client.get("/v1/escalations?status=resolved").text

    assert response.status_code == 200, response.text
    assert response.json()["decision_reason"] == "Checked with [PERSON] on [PHONE_NUMBER]; the card [CREDIT_CARD?] " \
                                                 "is not hers."
    # The API's log is the whole session's: its timestamps' microseconds may spell any six digits.
    haystacks = {"response": response.text, "relationships": relationships, "list": shown,
                 "api log": re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+", "", api.log_text()),
                 **{table: "\n".join(tenant_rows(engine, table, org)) for table in TENANT_TABLES}}
    pieces = (name, "Wanjiru", "Kamau", phone, "938217", card, "58127734")
    assert [(where, piece) for where, text in haystacks.items() for piece in pieces if piece in text] == []


def test_contradictory_facts_written_over_http_are_decided_by_the_worker_and_a_person_finishes_the_rest(
        api, engine, infra, pipeline):
    org, agent = new_scope(), new_scope("agent")
    key, key_id = key_with_id(engine, org)
    poller = start_poller(infra, f"api-e2e-{org}", org=org)
    try:
        with api.client(key, headers={"Prefer": "wait=30"}) as client:
            older = client.post("/v1/memories", json=memory(org, agent, STANDUP_OLD, valid_from=JAN,
                                                            valid_until=SEP))
            newer = client.post("/v1/memories", json=memory(org, agent, STANDUP_NEW, valid_from=JUN))
        assert (older.status_code, newer.status_code) == (201, 201), (older.text, newer.text)
        [escalation_id] = newer.json()["escalations"]
        # One the rules cannot decide, so that it waits for a person.
        [undecided] = escalate_pairs(engine, org, agent, [numbered(UNDECIDED, 1)])
        wait_until(settled(engine, org, 2), timeout=60)
    finally:
        poller.stop()

    older_id, newer_id = older.json()["memory_id"], newer.json()["memory_id"]
    with api.client(key) as client:
        resolved = client.get("/v1/escalations", params={"status": "resolved"}).json()
        waiting = listed(client, status="needs_review")
        links = client.get(f"/v1/memories/{newer_id}/relationships").json()["relationships"]
        statuses = [client.get(f"/v1/memories/{m}").json()["status"] for m in (older_id, newer_id)]
        decided = resolve(client, undecided.escalation_id, "compatible", "Both are used, for different pages.")
        assert sorted(listed(client, status="resolved")) == sorted([escalation_id, undecided.escalation_id])
        assert listed(client, status="needs_review") == []

    [shown] = resolved["escalations"]
    assert (shown["escalation_id"], shown["status"], shown["outcome"], shown["decided_by"]) == \
        (escalation_id, "resolved", "contradicts", "classifier:rules@5")
    assert (shown["memory_id"], shown["candidate_id"]) == (newer_id, older_id)
    assert shown["decision_reason"] and shown["decided_at"] and shown["evidence"]["similarity"] > 0.92
    assert STANDUP_OLD not in str(resolved) and STANDUP_NEW not in str(resolved)
    assert statuses == ["active", "active"]
    assert {(link["type"], link["direction"], link["memory_id"], link["decided_by"]) for link in links} == {
        ("near_duplicate_of", "outgoing", older_id, "pipeline"),
        ("contradicts", "outgoing", older_id, "classifier:rules@5")}
    contradiction = next(link for link in links if link["type"] == "contradicts")
    assert contradiction["evidence"]["escalation_id"] == escalation_id
    assert contradiction["evidence"]["rule"] == "different_numbers"

    assert waiting == [undecided.escalation_id]
    assert decided.status_code == 200, decided.text
    body = decided.json()
    assert (body["status"], body["outcome"], body["decided_by"]) == ("resolved", "compatible", f"api_key:{key_id}")
    assert [d["outcome"] for d in body["decisions"]] == ["needs_review", "compatible"]
    assert [d["decided_by"] for d in body["decisions"]] == ["classifier:rules@5", f"api_key:{key_id}"]
