"""End to end: facts written through the real pipeline, conflicts decided by a real
escalation worker. Sequential facts are settled by the pipeline and never reach a
classifier; an overlapping pair costs exactly one model call; two overlapping
contradictory facts end linked as contradicts, both active, the decision visible."""

from __future__ import annotations

from typing import Any

from tests.conftest import fetch_memory, memory, new_scope, read_counter, submit_and_wait
from tests.escalation_support import (
    FakeModel, Reply, completion, decisions, facts_sent, relationships, settled, start_poller, wait_until,
)
from ibex_worker.escalations import service

JAN = "2024-01-01T00:00:00Z"
JUN = "2024-06-01T00:00:00Z"
SEP = "2024-09-01T00:00:00Z"
# Near-duplicates under the real MiniLM model (see test_conflict.py).
PORT_OLD, PORT_NEW = "The staging server uses port 8080.", "The staging server uses port 8081."
STANDUP_OLD, STANDUP_NEW = "The team standup is at 9am on Mondays.", "The team standup is at 10am on Mondays."
TEA, COFFEE = "User prefers tea over coffee in the morning.", "User prefers coffee over tea in the morning."


def write(engine: Any, producer: Any, settings: Any, org: str, agent: str, content: str,
          **validity: Any) -> dict[str, Any]:
    view = submit_and_wait(engine, producer, settings, memory(org, agent, content, **validity))
    assert view["status"] == "succeeded", view["error"]
    return view


def test_overlapping_contradictory_facts_end_as_contradicts_with_both_active_and_the_decision_visible(
        infra, engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    poller = start_poller(infra, f"e2e-{org}", org=org)
    try:
        older = write(engine, producer, settings, org, agent, STANDUP_OLD, valid_from=JAN, valid_until=SEP)
        newer = write(engine, producer, settings, org, agent, STANDUP_NEW, valid_from=JUN)
        [escalation_id] = newer["result"]["escalations"]
        wait_until(settled(engine, org, 1))
    finally:
        poller.stop()

    shown = service.get_escalation(engine, org, escalation_id)
    assert (shown["status"], shown["outcome"], shown["decided_by"]) == ("resolved", "contradicts",
                                                                        "classifier:rules@4")
    assert (shown["memory_id"], shown["candidate_id"]) == (newer["memory_id"], older["memory_id"])
    assert shown["decision_reason"] and shown["decided_at"]
    assert [d["details"]["rule"] for d in shown["decisions"]] == ["different_numbers"]
    assert [e["escalation_id"] for e in service.list_escalations(engine, org, "resolved")["items"]] == [escalation_id]

    assert {fetch_memory(engine, v["memory_id"]).status for v in (older, newer)} == {"active"}
    links = {(str(r.source_memory_id), str(r.target_memory_id), r.relationship_type): r
             for r in relationships(engine, org)}
    assert set(links) == {(newer["memory_id"], older["memory_id"], "near_duplicate_of"),
                          (newer["memory_id"], older["memory_id"], "contradicts")}
    contradiction = links[(newer["memory_id"], older["memory_id"], "contradicts")]
    assert contradiction.decided_by == "classifier:rules@4"
    assert contradiction.evidence["escalation_id"] == escalation_id
    assert contradiction.evidence["reason"] == shown["decision_reason"]


def test_sequential_facts_never_reach_the_classifier_and_an_overlapping_pair_costs_one_call(
        infra, engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    with FakeModel(lambda body, n: Reply(body=completion("contradicts", "Opposite preferences."))) as model:
        poller = start_poller(infra, f"llm-{org}", org=org, escalation_classifier="openai",
                              escalation_openai_base_url=model.url, escalation_openai_model="fake-model")
        try:
            older = write(engine, producer, settings, org, agent, PORT_OLD, valid_from=JAN, valid_until=JUN)
            newer = write(engine, producer, settings, org, agent, PORT_NEW, valid_from=JUN)
            assert newer["result"]["supersedes"] == [older["memory_id"]]  # settled by the pipeline's rule
            tea = write(engine, producer, settings, org, agent, TEA, valid_from=JAN)
            coffee = write(engine, producer, settings, org, agent, COFFEE, valid_from=JUN)
            [escalation_id] = coffee["result"]["escalations"]
            wait_until(settled(engine, org, 1))
        finally:
            poller.stop()

    assert read_counter(poller.metrics_dir, "ibex_memory_conflict_llm_calls") == 1
    [request] = model.requests
    sent = facts_sent(request)
    assert (sent["older"]["content"], sent["newer"]["content"]) == (TEA, COFFEE)
    assert (fetch_memory(engine, older["memory_id"]).status, fetch_memory(engine, newer["memory_id"]).status) == \
        ("superseded", "active")
    [decision] = decisions(engine, escalation_id)
    assert (decision.outcome, decision.decided_by, decision.reason) == \
        ("contradicts", "classifier:openai@1/fake-model", "Opposite preferences.")
    assert {fetch_memory(engine, v["memory_id"]).status for v in (tea, coffee)} == {"active"}


def test_a_later_open_ended_preference_supersedes_the_older_one_through_the_rules(
        infra, engine, producer, settings, pipeline):
    """ADR-0056's sequential facts, both open-ended: the pipeline escalates the overlap, and
    the rules classifier (no model) settles it as a supersession by its subject and aspect."""
    org, agent = new_scope(), new_scope("agent")
    poller = start_poller(infra, f"later-{org}", org=org)
    try:
        older = write(engine, producer, settings, org, agent, "The user prefers Python for data work.", valid_from=JAN)
        newer = write(engine, producer, settings, org, agent, "The user prefers Go for data work.", valid_from=JUN)
        [escalation_id] = newer["result"]["escalations"]
        wait_until(settled(engine, org, 1))
    finally:
        poller.stop()

    shown = service.get_escalation(engine, org, escalation_id)
    assert (shown["outcome"], shown["decided_by"]) == ("supersedes", "classifier:rules@4")
    assert [d["details"]["rule"] for d in shown["decisions"]] == ["later_value"]
    superseded, current = fetch_memory(engine, older["memory_id"]), fetch_memory(engine, newer["memory_id"])
    assert (superseded.status, current.status) == ("superseded", "active")
    assert superseded.valid_until == current.valid_from
    assert (newer["memory_id"], older["memory_id"], "supersedes") in {
        (str(r.source_memory_id), str(r.target_memory_id), r.relationship_type) for r in relationships(engine, org)}
