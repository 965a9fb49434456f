"""The escalation worker against real PostgreSQL: real `ibex escalations run` processes
decide escalated pairs, record who decided what and why, keep going without Redis, retry a
failing classifier and then give the row up as dead; a person's decision wins."""

from __future__ import annotations

import threading
import uuid

import psycopg
import pytest
from sqlalchemy import text

from tests.conftest import fetch_memory, make_settings, new_scope, query, read_counter
from tests.escalation_support import (
    COMPATIBLE, CONTRADICTS, JAN, JUN, NEGATED, UNDECIDED, FakeModel, Reply, completion, decisions, escalate_pairs,
    escalation, log_events, read_gauge, read_labelled_counter, relationships, settled, start_poller, wait_until,
)
from ibex_worker.errors import TransientError, ValidationFailed
from ibex_worker.escalations import service
from ibex_worker.runtime import shared_redactor


def notes() -> object:
    """The PII redactor a person's note goes through (the real one, loaded once)."""
    return shared_redactor(make_settings())


def test_the_rules_classifier_decides_each_pair_and_records_who_decided_and_why(infra, engine):
    org, agent = new_scope(), new_scope("agent")
    contradicts, negated, compatible, undecided = escalate_pairs(
        engine, org, agent, [CONTRADICTS, NEGATED, COMPATIBLE, UNDECIDED])
    poller = start_poller(infra, f"rules-{org}", org=org)
    try:
        wait_until(settled(engine, org, 4))
    finally:
        poller.stop()

    for item, outcome, status, rule in ((contradicts, "contradicts", "resolved", "different_numbers"),
                                        (negated, "contradicts", "resolved", "negation_flip"),
                                        (compatible, "compatible", "resolved", "same_statement"),
                                        (undecided, "needs_review", "needs_review", "no_rule")):
        row = escalation(engine, item.escalation_id)
        assert (row.status, row.outcome, row.decided_by) == (status, outcome, "classifier:rules@5")
        assert row.decision_reason and row.decided_at is not None
        assert (row.lease_token, row.lease_owner, row.attempts) == (None, None, 1)
        [logged] = decisions(engine, item.escalation_id)
        assert (logged.outcome, logged.decided_by, logged.reason) == (outcome, row.decided_by, row.decision_reason)
        assert logged.details == {"classifier": "rules", "version": "5", "rule": rule, "poller": f"rules-{org}",
                                  "attempt": 1}

    # Contradictions are linked and both sides stay active; nothing else is linked.
    links = relationships(engine, org)
    assert sorted((str(r.source_memory_id), str(r.target_memory_id), r.relationship_type) for r in links) == \
        sorted((i.newer_id, i.older_id, "contradicts") for i in (contradicts, negated))
    link = next(r for r in links if str(r.source_memory_id) == contradicts.newer_id)
    assert link.decided_by == "classifier:rules@5"
    assert link.evidence == {"escalation_id": contradicts.escalation_id, "decided_by": "classifier:rules@5",
                             "reason": escalation(engine, contradicts.escalation_id).decision_reason,
                             "classifier": "rules", "version": "5", "rule": "different_numbers",
                             "poller": f"rules-{org}", "attempt": 1}
    assert {m.status for m in query(engine, "SELECT status FROM memories WHERE org_id = :o", o=org)} == {"active"}

    # Visible to the API layer, decision and history included.
    shown = service.get_escalation(engine, org, contradicts.escalation_id)
    assert (shown["status"], shown["outcome"], shown["decided_by"]) == ("resolved", "contradicts",
                                                                        "classifier:rules@5")
    assert [d["outcome"] for d in shown["decisions"]] == ["contradicts"]
    assert [e["escalation_id"] for e in service.list_escalations(engine, org, "needs_review")["items"]] == \
        [undecided.escalation_id]

    assert read_labelled_counter(poller.metrics_dir, "ibex_memory_conflicts") == \
        {"contradicts": 2.0, "compatible": 1.0, "needs_review": 1.0}
    assert read_counter(poller.metrics_dir, "ibex_memory_conflict_llm_calls") == 0
    claimed = log_events(poller, "escalation_batch_claimed")
    assert sum(e["claimed"] for e in claimed) == 4
    for event in log_events(poller):  # identifiers only: never a memory's content
        assert not any(side in str(event) for pair in (CONTRADICTS, NEGATED, COMPATIBLE, UNDECIDED) for side in pair)


def test_the_poller_keeps_resolving_with_redis_stopped(infra, engine):
    org, agent = new_scope(), new_scope("agent")
    items = escalate_pairs(engine, org, agent, [CONTRADICTS, NEGATED, COMPATIBLE])
    # Nothing listens on port 1: the poller must not need Redis at all.
    poller = start_poller(infra, f"offline-{org}", org=org, redis_url="redis://127.0.0.1:1/0")
    try:
        wait_until(settled(engine, org, 3))
        backlog_at_start = read_gauge(poller.metrics_dir, "ibex_memory_conflict_escalations")
    finally:
        poller.stop()
    assert poller.popen.returncode == 0
    assert [escalation(engine, i.escalation_id).status for i in items] == ["resolved"] * 3
    assert backlog_at_start["pending"] == 3  # counted before the first claim
    assert "redis" not in poller.log_text().lower()
    assert [e for e in log_events(poller) if e["level"] in ("warning", "error")] == []


def test_a_failing_classifier_is_retried_then_the_row_is_dead_and_the_poller_moves_on(infra, engine):
    org, agent = new_scope(), new_scope("agent")
    poisoned = ("BOOM The invoice run starts at 6.", "BOOM The invoice run starts at 7.")

    def answer(body, n):
        return Reply(500, {"error": "upstream exploded"}) if "BOOM" in body["messages"][-1]["content"] \
            else Reply(body=completion("contradicts"))

    with FakeModel(answer) as model:
        [bad] = escalate_pairs(engine, org, agent, [poisoned])
        good = escalate_pairs(engine, org, agent, [CONTRADICTS, NEGATED])
        poller = start_poller(infra, f"failing-{org}", org=org, escalation_classifier="openai",
                              escalation_openai_base_url=model.url, escalation_openai_model="fake-model",
                              escalation_openai_retries=0, escalation_max_attempts=3,
                              retry_backoff_base=0.05, retry_backoff_cap=0.2)
        try:
            wait_until(lambda: escalation(engine, bad.escalation_id).status == "dead")
            wait_until(settled(engine, org, 2))
        finally:
            poller.stop()

    row = escalation(engine, bad.escalation_id)
    assert (row.status, row.attempts, row.outcome, row.decided_by) == ("dead", 3, None, None)
    assert row.last_error == "CLASSIFIER_UNAVAILABLE: TransientError"  # a code and a type: no content
    assert (row.lease_token, row.lease_owner) == (None, None)
    assert sum("BOOM" in r["body"]["messages"][-1]["content"] for r in model.requests) == 3
    assert [escalation(engine, g.escalation_id).outcome for g in good] == ["contradicts", "contradicts"]
    assert decisions(engine, bad.escalation_id) == []
    [dead] = log_events(poller, "escalation_dead")
    assert (dead["escalation_id"], dead["code"], dead["attempt"]) == (bad.escalation_id, "CLASSIFIER_UNAVAILABLE", 3)
    assert len(log_events(poller, "escalation_retry_scheduled")) == 2
    assert read_counter(poller.metrics_dir, "ibex_memory_conflict_escalations_dead") == 1
    assert read_counter(poller.metrics_dir, "ibex_memory_conflict_llm_calls") == 2  # the 500s reached no model


def test_a_classifier_raising_anything_costs_an_attempt_with_its_type_and_never_its_message(engine, settings):
    """The poller in-process with a classifier that raises a plain exception."""
    from ibex_worker.escalations.classifiers import RulesClassifier
    from ibex_worker.escalations.poller import Poller
    from ibex_worker.metrics import get_metrics

    class Exploding(RulesClassifier):
        def classify(self, pair):
            raise RuntimeError(f"cannot handle {pair.older.content}")

    org, agent = new_scope(), new_scope("agent")
    [item] = escalate_pairs(engine, org, agent, [CONTRADICTS])
    tuned = settings.model_copy(update={"escalation_org_ids": (org,), "escalation_max_attempts": 2,
                                        "retry_backoff_base": 0.01, "retry_backoff_cap": 0.01})
    poller = Poller(engine, tuned, Exploding(), get_metrics(), owner="in-process")
    assert poller.poll_once() == 1
    first = escalation(engine, item.escalation_id)
    assert (first.status, first.attempts, first.last_error) == ("pending", 1, "CLASSIFIER_FAILED: RuntimeError")
    wait_until(lambda: poller.poll_once() == 1, timeout=5)
    final = escalation(engine, item.escalation_id)
    assert (final.status, final.attempts, final.last_error) == ("dead", 2, "CLASSIFIER_FAILED: RuntimeError")
    assert poller.poll_once() == 0  # dead rows are never claimed again

    # A person can still settle it.
    service.resolve(engine, org, item.escalation_id, "contradicts", None, "cli:alice")
    assert escalation(engine, item.escalation_id).status == "resolved"


def test_an_escalation_whose_claims_keep_expiring_goes_dead_instead_of_looping(engine, settings):
    """A poison pill that kills every poller taking it: each lost lease costs an attempt."""
    import time

    from ibex_worker.escalations import queue
    from ibex_worker.escalations.classifiers import RulesClassifier
    from ibex_worker.escalations.poller import Poller
    from ibex_worker.metrics import get_metrics

    org, agent = new_scope(), new_scope("agent")
    [item] = escalate_pairs(engine, org, agent, [CONTRADICTS])
    for _ in range(2):  # two pollers claim it and die without a word
        assert len(queue.claim_batch(engine, limit=5, lease_seconds=1, owner="doomed", org_ids=[org])) == 1
        time.sleep(1.1)
    tuned = settings.model_copy(update={"escalation_org_ids": (org,), "escalation_max_attempts": 2})
    assert Poller(engine, tuned, RulesClassifier(), get_metrics(), owner="survivor").poll_once() == 1
    row = escalation(engine, item.escalation_id)
    assert (row.status, row.attempts, row.last_error) == ("dead", 3, "ATTEMPTS_EXHAUSTED: LeaseExpired")


def test_a_quarantined_memory_is_never_sent_to_a_model_and_goes_to_a_person(engine, settings):
    from ibex_worker.escalations.classifiers import OpenAICompatibleClassifier
    from ibex_worker.escalations.poller import Poller
    from ibex_worker.metrics import get_metrics

    org, agent = new_scope(), new_scope("agent")
    [item] = escalate_pairs(engine, org, agent, [CONTRADICTS])
    with engine.begin() as conn:
        conn.execute(text("UPDATE memories SET status = 'quarantined' WHERE id = :id"), {"id": item.older_id})
    with FakeModel(lambda body, n: Reply(body=completion("contradicts"))) as model:
        classifier = OpenAICompatibleClassifier(model.url, "fake-model", "", timeout=2, retries=0)
        tuned = settings.model_copy(update={"escalation_org_ids": (org,)})
        try:
            assert Poller(engine, tuned, classifier, get_metrics(), owner="careful").poll_once() == 1
        finally:
            classifier.close()
    assert model.requests == []
    row = escalation(engine, item.escalation_id)
    assert (row.status, row.outcome) == ("needs_review", "needs_review")
    assert decisions(engine, item.escalation_id)[0].details["rule"] == "memory_quarantined"


def test_a_persons_decision_is_never_overridden_by_a_later_automatic_one(infra, engine):
    org, agent = new_scope(), new_scope("agent")
    [item] = escalate_pairs(engine, org, agent, [CONTRADICTS])
    notes()  # loaded before the race: the person's decision must land while the model is still thinking
    asked = threading.Event()

    def answer(body, n):
        asked.set()
        return Reply(body=completion("contradicts"), delay=2.0)  # the model is slow to answer

    with FakeModel(answer) as model:
        poller = start_poller(infra, f"override-{org}", org=org, escalation_classifier="openai",
                              escalation_openai_base_url=model.url, escalation_openai_model="fake-model")
        try:
            assert asked.wait(30), "the poller never asked the model"
            assert escalation(engine, item.escalation_id).status == "claimed"
            service.resolve(engine, org, item.escalation_id, "compatible", "Both ports are in use.",
                            "api_key:0f1e2d3c", note_redactor=notes)
            poller.wait_for_log("escalation_fenced", timeout=30)
        finally:
            poller.stop()

    row = escalation(engine, item.escalation_id)
    assert (row.status, row.outcome, row.decided_by, row.decision_reason) == \
        ("resolved", "compatible", "api_key:0f1e2d3c", "Both ports are in use.")
    assert [(d.outcome, d.decided_by) for d in decisions(engine, item.escalation_id)] == \
        [("compatible", "api_key:0f1e2d3c")]
    assert relationships(engine, org) == []  # the model's contradicts was dropped
    assert [e["step"] for e in log_events(poller, "escalation_fenced")] == ["apply"]
    assert len(model.requests) == 1
    assert read_counter(poller.metrics_dir, "ibex_memory_conflict_llm_calls") == 1


def test_the_database_refuses_a_second_final_decision_and_an_anonymous_one(engine):
    org, agent = new_scope(), new_scope("agent")
    [item] = escalate_pairs(engine, org, agent, [CONTRADICTS])
    service.resolve(engine, org, item.escalation_id, "contradicts", None, "cli:alice")
    insert = text("INSERT INTO memory_conflict_decisions (org_id, escalation_id, outcome, decided_by, reason) "
                  "VALUES (:o, :e, :outcome, :by, 'r')")
    with pytest.raises(Exception) as unique:
        with engine.begin() as conn:
            conn.execute(insert, {"o": org, "e": item.escalation_id, "outcome": "compatible", "by": "cli:bob"})
    assert isinstance(unique.value.orig, psycopg.errors.UniqueViolation)
    with pytest.raises(Exception) as anonymous:
        with engine.begin() as conn:
            conn.execute(text("UPDATE memory_conflict_escalations SET decided_by = 'somebody' WHERE id = :e"),
                         {"e": item.escalation_id})
    assert isinstance(anonymous.value.orig, psycopg.errors.CheckViolation)



def test_a_note_whose_analysis_fails_refuses_the_decision_and_stores_nothing(engine):
    class BrokenAnalyzer:
        def redact_many(self, texts):
            raise RuntimeError(f"model crashed on {texts[0]}")

    org, agent = new_scope(), new_scope("agent")
    [item] = escalate_pairs(engine, org, agent, [CONTRADICTS])
    canary = "Called Wanjiru Kamau about it."
    with pytest.raises(TransientError) as refused:
        service.resolve(engine, org, item.escalation_id, "contradicts", canary, "cli:alice",
                        note_redactor=BrokenAnalyzer)
    assert refused.value.code == "PII_ANALYSIS_FAILED" and "Wanjiru" not in str(refused.value)
    with pytest.raises(ValueError):
        service.resolve(engine, org, item.escalation_id, "contradicts", canary, "cli:alice")
    assert escalation(engine, item.escalation_id).status == "pending"
    assert decisions(engine, item.escalation_id) == []


def test_a_refused_decision_never_waits_for_the_note_analysis(engine):
    org, other, agent = new_scope(), new_scope(), new_scope("agent")
    [item] = escalate_pairs(engine, org, agent, [CONTRADICTS])
    loads = []

    def counting():
        loads.append(1)
        return notes()

    for tenant, escalation_id in ((org, str(uuid.uuid4())), (other, item.escalation_id)):
        with pytest.raises(service.EscalationNotFound):
            service.resolve(engine, tenant, escalation_id, "contradicts", "A note.", "cli:alice",
                            note_redactor=counting)
    with pytest.raises(service.EscalationNotFound):
        service.resolve(engine, org, item.escalation_id, "contradicts", "A note.", "cli:alice",
                        agent_ids=["someone-else"], note_redactor=counting)
    with pytest.raises(ValidationFailed):
        service.resolve(engine, org, item.escalation_id, "maybe", "A note.", "cli:alice", note_redactor=counting)
    assert loads == []
    service.resolve(engine, org, item.escalation_id, "contradicts", "A note.", "cli:alice", note_redactor=counting)
    with pytest.raises(service.EscalationAlreadyResolved):
        service.resolve(engine, org, item.escalation_id, "compatible", "Another note.", "cli:bob",
                        note_redactor=counting)
    assert loads == [1]

# ---------------------------------------------------------------- people


def test_a_person_resolving_supersedes_closes_the_older_interval_and_links_newer_to_older(engine):
    org, agent = new_scope(), new_scope("agent")
    [item] = escalate_pairs(engine, org, agent, [UNDECIDED])
    version_before = query(engine, "SELECT coalesce(max(version), 0) AS v FROM memory_agent_corpus "
                                   "WHERE org_id = :o AND agent_id = :a", o=org, a=agent)[0].v

    shown = service.resolve(engine, org, item.escalation_id, "supersedes", "The team moved to Vue in June.",
                            "cli:alice", note_redactor=notes)

    assert (shown["status"], shown["outcome"], shown["decided_by"], shown["decision_reason"]) == \
        ("resolved", "supersedes", "cli:alice", "The team moved to Vue in June.")
    older, newer = fetch_memory(engine, item.older_id), fetch_memory(engine, item.newer_id)
    assert (older.status, newer.status) == ("superseded", "active")
    assert older.valid_until == newer.valid_from  # [JAN, +inf) closed at JUN
    [link] = relationships(engine, org)
    assert (str(link.source_memory_id), str(link.target_memory_id), link.relationship_type, link.decided_by) == \
        (item.newer_id, item.older_id, "supersedes", "cli:alice")
    assert link.evidence["interval"] == {"previous_valid_until": None, "closed": True,
                                         "valid_until": "2024-06-01T00:00:00+00:00"}
    assert link.evidence["reason"] == "The team moved to Vue in June."
    assert link.evidence["older_status_before"] == "active"
    version_after = query(engine, "SELECT version FROM memory_agent_corpus WHERE org_id = :o AND agent_id = :a",
                          o=org, a=agent)[0].version
    assert version_after == version_before + 1  # the agent's active corpus changed

    with pytest.raises(service.EscalationAlreadyResolved) as again:
        service.resolve(engine, org, item.escalation_id, "contradicts", None, "cli:bob")
    assert again.value.code == "ESCALATION_ALREADY_RESOLVED"
    assert again.value.escalation["outcome"] == "supersedes"
    assert len(decisions(engine, item.escalation_id)) == 1


def test_a_needs_review_escalation_keeps_both_decisions_in_its_history(infra, engine):
    org, agent = new_scope(), new_scope("agent")
    [item] = escalate_pairs(engine, org, agent, [UNDECIDED])
    poller = start_poller(infra, f"review-{org}", org=org)
    try:
        wait_until(settled(engine, org, 1))
    finally:
        poller.stop()
    service.resolve(engine, org, item.escalation_id, "contradicts", "Only one framework is used.", "api_key:k-1",
                    note_redactor=notes)

    shown = service.get_escalation(engine, org, item.escalation_id)
    assert (shown["status"], shown["outcome"], shown["decided_by"]) == ("resolved", "contradicts", "api_key:k-1")
    assert [(d["outcome"], d["decided_by"]) for d in shown["decisions"]] == \
        [("needs_review", "classifier:rules@5"), ("contradicts", "api_key:k-1")]
    assert [r.relationship_type for r in relationships(engine, org)] == ["contradicts"]


def test_escalations_are_tenant_scoped_validated_and_paginated(engine):
    org, other, agent = new_scope(), new_scope(), new_scope("agent")
    mine = escalate_pairs(engine, org, agent, [CONTRADICTS, NEGATED, COMPATIBLE])
    [theirs] = escalate_pairs(engine, other, agent, [CONTRADICTS])

    first = service.list_escalations(engine, org, "pending", limit=2)
    second = service.list_escalations(engine, org, "pending", limit=2, cursor=first["next_cursor"])
    assert len(first["items"]) == 2 and first["next_cursor"] and second["next_cursor"] is None
    # Written in one statement, so one created_at: the id breaks the tie.
    assert [e["escalation_id"] for e in first["items"] + second["items"]] == sorted(m.escalation_id for m in mine)
    assert service.list_escalations(engine, org, "resolved")["items"] == []
    for entry in first["items"]:
        assert set(entry) >= {"escalation_id", "memory_id", "candidate_id", "status", "outcome", "decided_by",
                              "decision_reason", "decided_at", "reason", "evidence"}
        assert not any(side in str(entry) for side in CONTRADICTS + NEGATED + COMPATIBLE)

    with pytest.raises(service.EscalationNotFound):
        service.get_escalation(engine, org, theirs.escalation_id)
    with pytest.raises(service.EscalationNotFound):
        service.resolve(engine, org, theirs.escalation_id, "compatible", None, "api_key:k-1")
    with pytest.raises(service.EscalationNotFound):
        service.resolve(engine, org, "not-a-uuid", "compatible", None, "api_key:k-1")
    assert escalation(engine, theirs.escalation_id).status == "pending"

    # A key limited to some agents sees only their escalations.
    [elsewhere] = escalate_pairs(engine, org, new_scope("agent"), [UNDECIDED])
    assert [e["escalation_id"] for e in service.list_escalations(engine, org, agent_ids=[agent])["items"]] == \
        sorted(m.escalation_id for m in mine)
    with pytest.raises(service.EscalationNotFound):
        service.get_escalation(engine, org, elsewhere.escalation_id, agent_ids=[agent])
    with pytest.raises(service.EscalationNotFound):
        service.resolve(engine, org, elsewhere.escalation_id, "compatible", None, "api_key:k-1", agent_ids=[agent])
    assert service.get_escalation(engine, org, elsewhere.escalation_id)["status"] == "pending"

    from ibex_worker.errors import ValidationFailed

    with pytest.raises(ValidationFailed) as bad:
        service.list_escalations(engine, org, "waiting", limit=0, cursor="garbage!")
    assert sorted(i.field for i in bad.value.issues) == ["cursor", "limit", "status"]
    with pytest.raises(ValidationFailed) as bad_outcome:
        service.resolve(engine, org, mine[0].escalation_id, "needs_review", None, "api_key:k-1")
    assert [i.field for i in bad_outcome.value.issues] == ["outcome"]
    with pytest.raises(ValueError):
        service.resolve(engine, org, mine[0].escalation_id, "compatible", None, "classifier:rules@5")


def test_the_cli_lists_and_resolves_escalations(infra, engine):
    import json
    import subprocess
    import sys

    from tests.conftest import ROOT

    org, agent = new_scope(), new_scope("agent")
    [item] = escalate_pairs(engine, org, agent, [UNDECIDED], older_validity=(JAN, None),
                            newer_validity=(JUN, None))

    def ibex(*args):
        done = subprocess.run([sys.executable, "-m", "ibex_worker.cli", "escalations", *args], env=infra.env(),
                              cwd=ROOT, capture_output=True, text=True, timeout=60)
        return done.returncode, json.loads(done.stdout)

    code, listed = ibex("list", "--org", org, "--status", "pending")
    assert code == 0 and [e["escalation_id"] for e in listed["items"]] == [item.escalation_id]
    code, resolved = ibex("resolve", item.escalation_id, "--org", org, "--outcome", "compatible",
                          "--note", "Both are used.", "--user", "alice")
    assert code == 0
    assert (resolved["status"], resolved["outcome"], resolved["decided_by"]) == ("resolved", "compatible",
                                                                                "cli:alice")
    code, refused = ibex("resolve", item.escalation_id, "--org", org, "--outcome", "contradicts")
    assert code == 2 and refused["error"]["code"] == "ESCALATION_ALREADY_RESOLVED"
    code, missing = ibex("resolve", item.escalation_id, "--org", new_scope(), "--outcome", "contradicts")
    assert code == 2 and missing["error"]["code"] == "NOT_FOUND"
