"""The escalation worker under crashes and stops: a fleet of pollers with one killed by
SIGKILL in the middle of a batch still decides every escalation exactly once; SIGTERM lets
a poller finish the item in hand and hand the rest of its batch back."""

from __future__ import annotations

import threading
from collections import Counter

from sqlalchemy import text

from tests.conftest import new_scope, query, read_counter
from tests.escalation_support import (
    COMPATIBLE, CONTRADICTS, NEGATED, UNDECIDED, FakeModel, Reply, completion, escalate_pairs, escalation, log_events,
    numbered, read_labelled_counter, settled, start_poller, statuses, wait_until,
)

BATCH = 10
LEASE_SECONDS = 3  # the killed poller's claims come back quickly
KINDS = [(CONTRADICTS, "contradicts"), (NEGATED, "contradicts"), (COMPATIBLE, "compatible"),
         (UNDECIDED, "needs_review")]


def _waiting_on_a_lock(engine, poller_name):
    return query(engine, "SELECT pid FROM pg_stat_activity WHERE application_name = :n "
                         "AND wait_event_type = 'Lock'", n=f"ibex-escalations {poller_name}"[:63])


def test_four_pollers_one_killed_mid_batch_decide_every_escalation_exactly_once(infra, engine):
    org, agent = new_scope(), new_scope("agent")
    settings = dict(escalation_batch_size=BATCH, escalation_lease_seconds=LEASE_SECONDS)
    pollers = [start_poller(infra, f"fleet{n}-{org}", org=org, wait=False, **settings) for n in range(4)]
    doomed = pollers[0]
    blocker = engine.connect()
    try:
        for poller in pollers:  # the whole fleet is polling before the work arrives
            poller.wait_for_log("escalation_poller_started", timeout=60)
        items = escalate_pairs(engine, org, agent, [numbered(KINDS[i % 4][0], i) for i in range(1000)])
        expected = {item.escalation_id: KINDS[i % 4][1] for i, item in enumerate(items)}
        wait_until(lambda: sum(statuses(engine, org).get(s, 0) for s in ("resolved", "needs_review")) >= 100)
        # Freeze every relationship insert, so the doomed poller stops inside an apply
        # transaction (its escalation row locked), with the rest of its batch claimed. Where
        # in its batch it stops is chance: if on its last item, thaw and freeze again.
        for _ in range(10):
            tx = blocker.begin()
            blocker.execute(text("LOCK TABLE memory_relationships IN SHARE MODE"))
            wait_until(lambda: _waiting_on_a_lock(engine, doomed.name), timeout=30)
            held = [str(r.id) for r in query(engine, "SELECT id FROM memory_conflict_escalations "
                                                     "WHERE lease_owner = :n AND status = 'claimed'", n=doomed.name)]
            if len(held) >= 2:
                break
            tx.commit()
        doomed.kill()
        tx.commit()
        wait_until(settled(engine, org, 1000), timeout=90)
    finally:
        blocker.close()
        for poller in pollers:
            poller.stop()

    assert len(held) >= 2, "the doomed poller was not in the middle of a batch"
    rows = query(engine, "SELECT id, status, outcome, attempts, lease_token FROM memory_conflict_escalations "
                         "WHERE org_id = :o", o=org)
    assert {str(r.id): r.outcome for r in rows} == expected
    assert {r.status for r in rows if r.outcome != "needs_review"} == {"resolved"}
    assert all(r.lease_token is None for r in rows)
    # The killed poller's claims were taken over once their lease ran out.
    assert all(r.attempts == 2 for r in rows if str(r.id) in held)

    # Every side effect exactly once: one decision per escalation, one link per contradiction.
    per_escalation = Counter(str(r.escalation_id) for r in query(
        engine, "SELECT escalation_id FROM memory_conflict_decisions WHERE org_id = :o", o=org))
    assert per_escalation == Counter(set(expected))
    links = query(engine, "SELECT source_memory_id, target_memory_id, relationship_type, evidence "
                          "FROM memory_relationships WHERE org_id = :o", o=org)
    contradictions = {i.escalation_id for i in items if expected[i.escalation_id] == "contradicts"}
    assert sorted(link.evidence["escalation_id"] for link in links) == sorted(contradictions)
    assert {link.relationship_type for link in links} == {"contradicts"}
    assert query(engine, "SELECT count(*) AS n FROM memories WHERE org_id = :o AND status <> 'active'",
                 o=org)[0].n == 0

    # No batch ever exceeded its limit, and the fleet's counters add up to the decisions.
    claimed = [e["claimed"] for p in pollers for e in log_events(p, "escalation_batch_claimed")]
    assert claimed and max(claimed) <= BATCH
    outcomes: Counter[str] = Counter()
    for poller in pollers:
        outcomes.update(read_labelled_counter(poller.metrics_dir, "ibex_memory_conflicts"))
    assert outcomes == Counter(expected.values())
    assert sum(read_counter(p.metrics_dir, "ibex_memory_conflict_llm_calls") for p in pollers) == 0
    assert all(p.popen.returncode == 0 for p in pollers[1:])


def test_sigterm_finishes_the_item_in_hand_and_hands_the_rest_of_the_batch_back(infra, engine):
    org, agent = new_scope(), new_scope("agent")
    items = escalate_pairs(engine, org, agent, [numbered(CONTRADICTS, i) for i in range(5)])
    asked = threading.Event()

    def answer(body, n):
        asked.set()
        return Reply(body=completion("contradicts"), delay=1.0)

    with FakeModel(answer) as model:
        poller = start_poller(infra, f"stopping-{org}", org=org, escalation_batch_size=5,
                              escalation_classifier="openai", escalation_openai_base_url=model.url,
                              escalation_openai_model="fake-model")
        assert asked.wait(30), "the poller never asked the model"
        poller.stop(timeout=30)  # SIGTERM while the model is still thinking

    assert poller.popen.returncode == 0
    assert len(model.requests) == 1
    rows = [escalation(engine, i.escalation_id) for i in items]
    finished = [r for r in rows if r.status == "resolved"]
    assert [(r.outcome, r.decided_by) for r in finished] == [("contradicts", "classifier:openai@1/fake-model")]
    handed_back = [r for r in rows if r.status == "pending"]
    assert len(handed_back) == 4
    assert all((r.lease_token, r.lease_expires_at, r.lease_owner, r.attempts) == (None, None, None, 0)
               for r in handed_back)
    [released] = log_events(poller, "escalations_released")
    assert (released["released"], released["unreleased"]) == (4, 0)
    assert log_events(poller, "escalation_poller_stopped")
