"""Stage 6, conflict, through real worker processes (ADR-0056): sequential facts supersede
with no classifier call, in either arrival order; overlapping or undated facts escalate to a
durable row; different subjects and other tenants never conflict."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import fetch_memory, memory, new_scope, query, submit_and_wait

JAN = "2024-01-01T00:00:00Z"
JUN = "2024-06-01T00:00:00Z"
SEP = "2024-09-01T00:00:00Z"
RULE = "non_overlapping_same_subject_newer_valid_from"

# Measured with the real MiniLM model: every pair is a near duplicate (cosine > 0.92).
PORT_OLD, PORT_NEW = "The staging server uses port 8080.", "The staging server uses port 8081."
STANDUP_OLD, STANDUP_NEW = "The team standup is at 9am on Mondays.", "The team standup is at 10am on Mondays."
TEA, COFFEE = "User prefers tea over coffee in the morning.", "User prefers coffee over tea in the morning."
FRONTEND, BACKEND = "The frontend team uses React for the dashboard.", "The backend team uses React for the dashboard."
ACCOUNT_A = "Invoices for account 919413 are sent to the finance mailbox every month."  # 0.930
ACCOUNT_B = "Invoices for account 513692 are sent to the finance mailbox every month."
# 0.953
TICKET_3, TICKET_5 = "Ticket 84898 must be answered within 3 days.", "Ticket 84898 must be answered within 5 days."


def write(engine: Any, producer: Any, settings: Any, org: str, agent: str, content: str,
          **validity: Any) -> dict[str, Any]:
    view = submit_and_wait(engine, producer, settings, memory(org, agent, content, **validity))
    assert view["status"] == "succeeded", view["error"]
    assert view["outcome"] == "created"
    return view


def conflict_decision(view: dict[str, Any]) -> dict[str, Any]:
    """The conflict decision in force: persist may recompute it, the last one is final."""
    decisions = [d for d in view["decisions"] if d["stage"] == "conflict"]
    assert decisions, view["decisions"]
    return decisions[-1]


def escalations(engine: Any, *orgs: str) -> list[Any]:
    return query(engine, "SELECT * FROM memory_conflict_escalations WHERE org_id = ANY(:orgs) ORDER BY created_at",
                 orgs=list(orgs))


def relationships(engine: Any, org: str, kind: str) -> list[tuple[str, str]]:
    rows = query(engine, "SELECT source_memory_id, target_memory_id FROM memory_relationships "
                         "WHERE org_id = :o AND relationship_type = :k", o=org, k=kind)
    return [(str(r.source_memory_id), str(r.target_memory_id)) for r in rows]


def final_state(engine: Any, org: str) -> dict[str, Any]:
    """What a reader sees once the writes settled, by content (ids differ between orgs)."""
    rows = query(engine, "SELECT id, content, status FROM memories WHERE org_id = :o", o=org)
    content = {str(r.id): r.content for r in rows}
    return {"statuses": {r.content: r.status for r in rows},
            "supersedes": sorted((content[s], content[t]) for s, t in relationships(engine, org, "supersedes")),
            "escalations": len(escalations(engine, org))}


# ---------------------------------------------------------------- supersession


def test_a_newer_sequential_fact_supersedes_the_older_one_without_a_classifier_call(
        engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    older = write(engine, producer, settings, org, agent, PORT_OLD, valid_from=JAN, valid_until=JUN)
    newer = write(engine, producer, settings, org, agent, PORT_NEW, valid_from=JUN)  # touching: no overlap

    decision = conflict_decision(newer)
    assert decision["result"] == "supersedes"
    assert decision["rule"] == RULE
    assert decision["classifier_calls"] == 0
    assert decision["supersedes"] == [older["memory_id"]]
    assert decision["escalations"] == []
    result = newer["result"]
    assert (result["status"], result["supersedes"], result["superseded_by"], result["escalations"]) == \
        ("active", [older["memory_id"]], [], [])

    assert fetch_memory(engine, older["memory_id"]).status == "superseded"
    assert fetch_memory(engine, newer["memory_id"]).status == "active"
    assert fetch_memory(engine, older["memory_id"]).subject_key == \
        fetch_memory(engine, newer["memory_id"]).subject_key == "staging server|use"
    links = query(engine, "SELECT * FROM memory_relationships WHERE org_id = :o AND relationship_type = 'supersedes'",
                  o=org)
    assert [(str(r.source_memory_id), str(r.target_memory_id)) for r in links] == \
        [(newer["memory_id"], older["memory_id"])]
    assert links[0].evidence["rule"] == RULE
    assert links[0].evidence["classifier_calls"] == 0
    assert relationships(engine, org, "near_duplicate_of") == [(newer["memory_id"], older["memory_id"])]
    assert escalations(engine, org) == []


def test_a_late_arriving_older_fact_is_superseded_by_the_newer_one_already_stored(
        engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    newer = write(engine, producer, settings, org, agent, PORT_NEW, valid_from=JUN)
    older = write(engine, producer, settings, org, agent, PORT_OLD, valid_from=JAN, valid_until=JUN)

    decision = conflict_decision(older)
    assert (decision["result"], decision["rule"], decision["classifier_calls"]) == ("superseded", RULE, 0)
    assert decision["superseded_by"] == [newer["memory_id"]]
    assert older["result"]["status"] == "superseded"
    assert older["result"]["superseded_by"] == [newer["memory_id"]]
    assert older["result"]["escalations"] == []
    assert fetch_memory(engine, older["memory_id"]).status == "superseded"
    assert fetch_memory(engine, newer["memory_id"]).status == "active"
    assert relationships(engine, org, "supersedes") == [(newer["memory_id"], older["memory_id"])]
    assert escalations(engine, org) == []


def test_arrival_order_does_not_change_the_final_state(engine, producer, settings, pipeline):
    in_order, reversed_order, agent = new_scope(), new_scope(), new_scope("agent")
    write(engine, producer, settings, in_order, agent, STANDUP_OLD, valid_from=JAN, valid_until=JUN)
    write(engine, producer, settings, in_order, agent, STANDUP_NEW, valid_from=JUN)
    write(engine, producer, settings, reversed_order, agent, STANDUP_NEW, valid_from=JUN)
    write(engine, producer, settings, reversed_order, agent, STANDUP_OLD, valid_from=JAN, valid_until=JUN)

    expected = {"statuses": {STANDUP_OLD: "superseded", STANDUP_NEW: "active"},
                "supersedes": [(STANDUP_NEW, STANDUP_OLD)], "escalations": 0}
    assert final_state(engine, in_order) == expected
    assert final_state(engine, reversed_order) == expected


# ---------------------------------------------------------------- escalation


def test_overlapping_intervals_create_one_pending_escalation_and_both_stay_active(
        engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    older = write(engine, producer, settings, org, agent, STANDUP_OLD, valid_from=JAN, valid_until=SEP)
    newer = write(engine, producer, settings, org, agent, STANDUP_NEW, valid_from=JUN)

    rows = escalations(engine, org)
    assert len(rows) == 1
    row = rows[0]
    assert (row.reason, row.status, str(row.memory_id), str(row.candidate_id), row.agent_id) == \
        ("overlapping_intervals", "pending", newer["memory_id"], older["memory_id"], agent)
    assert str(row.created_by_job) == newer["job_id"]
    assert row.outcome is None and row.decided_at is None
    assert row.evidence["similarity"] == pytest.approx(newer["result"]["near_duplicates"][0]["similarity"])
    assert newer["result"]["escalations"] == [str(row.id)]
    assert newer["result"]["supersedes"] == [] and newer["result"]["superseded_by"] == []
    decision = conflict_decision(newer)
    assert (decision["result"], decision["rule"], decision["classifier_calls"]) == ("escalated", None, 0)
    assert decision["escalations"] == [{"candidate_id": older["memory_id"], "reason": "overlapping_intervals"}]
    assert {fetch_memory(engine, v["memory_id"]).status for v in (older, newer)} == {"active"}
    assert relationships(engine, org, "supersedes") == []


@pytest.mark.parametrize(("older_validity", "newer_validity"), [
    pytest.param({"valid_from": JAN, "valid_until": JUN}, {}, id="new memory has no valid_from"),
    pytest.param({}, {"valid_from": JUN}, id="candidate has no valid_from"),
])
def test_a_missing_valid_from_on_either_side_escalates(engine, producer, settings, pipeline,
                                                       older_validity, newer_validity):
    org, agent = new_scope(), new_scope("agent")
    older = write(engine, producer, settings, org, agent, TEA, **older_validity)
    newer = write(engine, producer, settings, org, agent, COFFEE, **newer_validity)

    rows = escalations(engine, org)
    assert [(r.reason, r.status, str(r.memory_id), str(r.candidate_id)) for r in rows] == \
        [("missing_valid_from", "pending", newer["memory_id"], older["memory_id"])]
    assert newer["result"]["escalations"] == [str(rows[0].id)]
    assert conflict_decision(newer)["result"] == "escalated"
    assert {fetch_memory(engine, v["memory_id"]).status for v in (older, newer)} == {"active"}
    assert relationships(engine, org, "supersedes") == []


# ---------------------------------------------------------------- no conflict


def test_sequential_facts_about_different_subjects_are_linked_but_not_in_conflict(
        engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    frontend = write(engine, producer, settings, org, agent, FRONTEND, valid_from=JAN, valid_until=JUN)
    backend = write(engine, producer, settings, org, agent, BACKEND, valid_from=JUN)

    assert fetch_memory(engine, frontend["memory_id"]).subject_key == "frontend team|use"
    assert fetch_memory(engine, backend["memory_id"]).subject_key == "backend team|use"
    assert relationships(engine, org, "near_duplicate_of") == [(backend["memory_id"], frontend["memory_id"])]
    assert relationships(engine, org, "supersedes") == []
    assert escalations(engine, org) == []
    decision = conflict_decision(backend)
    assert (decision["result"], decision["supersedes"], decision["superseded_by"], decision["escalations"]) == \
        ("no_conflict", [], [], [])
    assert {fetch_memory(engine, v["memory_id"]).status for v in (frontend, backend)} == {"active"}


def test_facts_about_two_records_are_neither_linked_nor_escalated(engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    first = write(engine, producer, settings, org, agent, ACCOUNT_A)
    second = write(engine, producer, settings, org, agent, ACCOUNT_B)

    assert relationships(engine, org, "near_duplicate_of") == []
    assert escalations(engine, org) == []
    near = [d for d in second["decisions"] if d["stage"] == "near_dedup"][-1]
    assert near["candidates"] == []
    assert near["left_out"] == [{"memory_id": first["memory_id"], "why": "different_records", "records": ["account"]}]
    assert second["result"]["near_duplicates"] == [] and second["result"]["escalations"] == []


def test_undated_facts_about_one_record_still_escalate(engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    first = write(engine, producer, settings, org, agent, TICKET_3)
    second = write(engine, producer, settings, org, agent, TICKET_5)

    rows = escalations(engine, org)
    assert [(r.reason, str(r.memory_id), str(r.candidate_id)) for r in rows] == \
        [("missing_valid_from", second["memory_id"], first["memory_id"])]


@pytest.mark.parametrize("boundary", ["org", "agent"])
def test_an_escalation_never_crosses_orgs_or_agents(engine, producer, settings, pipeline, boundary):
    org, agent = new_scope(), new_scope("agent")
    other_org, other_agent = (new_scope(), agent) if boundary == "org" else (org, new_scope("agent"))
    older = write(engine, producer, settings, org, agent, STANDUP_OLD, valid_from=JAN, valid_until=SEP)
    elsewhere = write(engine, producer, settings, other_org, other_agent, STANDUP_NEW, valid_from=JUN)

    assert escalations(engine, org, other_org) == []
    assert elsewhere["result"]["near_duplicates"] == [] and elsewhere["result"]["escalations"] == []
    assert (conflict_decision(elsewhere)["result"], conflict_decision(elsewhere)["reason"]) == \
        ("skipped", "no_candidates")

    # Control: the same pair inside one scope does escalate, against its own candidate only.
    same_scope = write(engine, producer, settings, org, agent, STANDUP_NEW, valid_from=JUN)
    rows = escalations(engine, org, other_org)
    assert [(r.org_id, r.agent_id, str(r.memory_id), str(r.candidate_id), r.reason) for r in rows] == \
        [(org, agent, same_scope["memory_id"], older["memory_id"], "overlapping_intervals")]
    assert {fetch_memory(engine, v["memory_id"]).status for v in (older, elsewhere, same_scope)} == {"active"}


def test_sequential_facts_written_concurrently_end_in_the_same_state(engine, producer, settings, pipeline):
    from ibex_worker.submit import submit, wait_for_job

    agent = new_scope("agent")
    orgs = [new_scope() for _ in range(4)]
    pairs = [(memory(org, agent, PORT_OLD, valid_from=JAN, valid_until=JUN),
              memory(org, agent, PORT_NEW, valid_from=JUN)) for org in orgs]
    jobs = []
    for i, (older, newer) in enumerate(pairs):  # both in flight at once, alternating which goes first
        for body in ((older, newer) if i % 2 == 0 else (newer, older)):
            jobs.append((body["org_id"], submit(engine, producer, settings, body).job_id))
    views = [wait_for_job(engine, org, job_id, timeout=90) for org, job_id in jobs]

    assert [v["status"] for v in views] == ["succeeded"] * len(jobs)
    expected = {"statuses": {PORT_OLD: "superseded", PORT_NEW: "active"},
                "supersedes": [(PORT_NEW, PORT_OLD)], "escalations": 0}
    assert [final_state(engine, org) for org in orgs] == [expected] * len(orgs)


def test_a_superseded_memory_is_not_left_active_in_the_read_cache(engine, producer, settings, pipeline):
    import json

    import redis

    from ibex_worker.adapters.cache import cache_key

    org, agent = new_scope(), new_scope("agent")
    older = write(engine, producer, settings, org, agent, PORT_OLD, valid_from=JAN, valid_until=JUN)
    client = redis.Redis.from_url(settings.redis_url)
    try:
        assert json.loads(client.get(cache_key(org, older["memory_id"])))["status"] == "active"
        write(engine, producer, settings, org, agent, PORT_NEW, valid_from=JUN)
        assert fetch_memory(engine, older["memory_id"]).status == "superseded"
        cached = client.get(cache_key(org, older["memory_id"]))
    finally:
        client.close()
    assert cached is None or json.loads(cached)["status"] == "superseded"
