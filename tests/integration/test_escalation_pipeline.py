"""End to end: facts written through the real pipeline, conflicts decided by a real
escalation worker. Sequential facts are settled by the pipeline and never reach a
classifier; an overlapping pair costs exactly one model call; two overlapping
contradictory facts end linked as contradicts, both active, the decision visible."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import fetch_memory, memory, new_scope, query, read_counter, submit_and_wait
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
                                                                        "classifier:rules@5")
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
    assert contradiction.decided_by == "classifier:rules@5"
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
            tea = write(engine, producer, settings, org, agent, TEA, valid_from=JAN, valid_until=SEP)
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


@pytest.mark.parametrize("late", [False, True], ids=["in order", "the older one arrives late"])
def test_a_later_open_ended_preference_supersedes_the_older_one_in_the_pipeline_by_the_rules(
        engine, producer, settings, pipeline, late):
    """ADR-0056's sequential facts, both open-ended: they overlap, but the rules (no model)
    order them, so the pipeline supersedes and closes the older interval; nothing is queued."""
    org, agent = new_scope(), new_scope("agent")
    python = ("The user prefers Python for data work.", JAN)
    go = ("The user prefers Go for data work.", JUN)
    first, second = (go, python) if late else (python, go)
    views = {text: write(engine, producer, settings, org, agent, text, valid_from=start)
             for text, start in (first, second)}
    older, newer = views[python[0]], views[go[0]]

    assert query(engine, "SELECT id FROM memory_conflict_escalations WHERE org_id = :o", o=org) == []
    decision = [d for d in views[second[0]]["decisions"] if d["stage"] == "conflict"][-1]
    assert (decision["result"], decision["rule"], decision["classifier_calls"]) == (
        "superseded" if late else "supersedes", "open_ended_same_subject_later_value", 0)
    superseded, current = fetch_memory(engine, older["memory_id"]), fetch_memory(engine, newer["memory_id"])
    assert (superseded.status, current.status) == ("superseded", "active")
    assert superseded.valid_until == current.valid_from and current.valid_until is None
    [link] = [r for r in relationships(engine, org) if r.relationship_type == "supersedes"]
    assert (str(link.source_memory_id), str(link.target_memory_id)) == (newer["memory_id"], older["memory_id"])
    assert (link.evidence["rule"], link.evidence["rules_verdict"], link.evidence["classifier_calls"]) == (
        "open_ended_same_subject_later_value", "later_value", 0)
