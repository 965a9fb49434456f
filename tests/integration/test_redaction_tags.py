"""Keyed tags of redacted values, through real worker processes and a real escalation
worker: one sentence about two people is two memories, a near duplicate about another
person is neither linked nor escalated, the same person's moved deadline is decided by the
rules, and the tags hold no value and go with their memory."""

from __future__ import annotations

from typing import Any

from tests.conftest import memory, new_scope, query, submit_and_wait
from tests.escalation_support import settled, start_poller, wait_until
from ibex_worker import review
from ibex_worker.escalations import service

GUIDE = "The onboarding guide for {name} is due on {day}."


def write(engine: Any, producer: Any, settings: Any, org: str, agent: str, content: str) -> dict[str, Any]:
    view = submit_and_wait(engine, producer, settings, memory(org, agent, content))
    assert view["status"] == "succeeded", view["error"]
    return view


def stored(engine: Any, memory_id: str) -> Any:
    [row] = query(engine, "SELECT content, content_hash, redaction_tags, status FROM memories WHERE id = :i",
                  i=memory_id)
    return row


def test_one_sentence_about_two_people_is_two_memories_and_about_one_person_twice_is_one(
        engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    maria = write(engine, producer, settings, org, agent, "Call Maria Lopez back about the refund.")
    james = write(engine, producer, settings, org, agent, "Call James Whitfield back about the refund.")
    again = write(engine, producer, settings, org, agent, "Call maria  LOPEZ back about the refund.")

    assert (maria["outcome"], james["outcome"], again["outcome"]) == ("created", "created", "exact_duplicate")
    assert again["memory_id"] == maria["memory_id"]
    first, second = stored(engine, maria["memory_id"]), stored(engine, james["memory_id"])
    assert first.content == second.content == "Call [PERSON] back about the refund."
    assert first.content_hash != second.content_hash
    assert [t.partition(":")[0] for t in first.redaction_tags] == ["PERSON"]
    assert first.redaction_tags[0].split(":")[3] == "s"  # the name is the imperative's first noun phrase
    assert first.redaction_tags != second.redaction_tags
    for tag in (*first.redaction_tags, *second.redaction_tags):
        assert not any(part in tag.lower() for part in ("maria", "lopez", "james", "whitfield"))
    near = [d for d in james["decisions"] if d["stage"] == "near_dedup"][-1]
    assert near["candidates"] == []
    assert near["left_out"] == [{"memory_id": maria["memory_id"], "why": "different_people"}]


def test_a_name_spelt_another_way_is_linked_as_possibly_one_person_and_another_name_is_left_out(
        engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    smyth = write(engine, producer, settings, org, agent, "Jon Smyth asked to be called back after 3 pm.")
    smith = write(engine, producer, settings, org, agent, "John Smith asked to be called back after 3 pm.")
    jane = write(engine, producer, settings, org, agent, "Jane Smith asked to be called back after 3 pm.")

    assert (smyth["outcome"], smith["outcome"], jane["outcome"]) == ("created", "created", "created")
    assert [n["memory_id"] for n in smith["result"]["near_duplicates"]] == [smyth["memory_id"]]
    [link] = query(engine, "SELECT evidence FROM memory_relationships WHERE org_id = :o AND source_memory_id = :s",
                   o=org, s=smith["memory_id"])
    assert link.evidence["signals"]["names"] == {"sound_alike": True}
    near = [d for d in jane["decisions"] if d["stage"] == "near_dedup"][-1]
    assert near["candidates"] == []
    assert sorted(o["memory_id"] for o in near["left_out"] if o["why"] == "different_people") == \
        sorted([smyth["memory_id"], smith["memory_id"]])
    for view in (smyth, smith):
        tags = stored(engine, view["memory_id"]).redaction_tags
        assert len(tags) == 1 and tags[0].count(":") == 4
        assert not any(part in tags[0].lower() for part in ("smyth", "smith", "jon", "ojn", "esmt"))


def test_another_persons_deadline_is_left_out_and_the_same_persons_moved_deadline_is_a_contradiction(
        infra, engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    poller = start_poller(infra, f"tags-{org}", org=org)
    try:
        maria = write(engine, producer, settings, org, agent, GUIDE.format(name="Maria Lopez", day="Monday"))
        james = write(engine, producer, settings, org, agent, GUIDE.format(name="James Whitfield", day="Friday"))
        moved = write(engine, producer, settings, org, agent, GUIDE.format(name="Maria Lopez", day="Friday"))
        assert james["result"]["escalations"] == [] and james["result"]["near_duplicates"] == []
        [escalation_id] = moved["result"]["escalations"]
        wait_until(settled(engine, org, 1))
    finally:
        poller.stop()

    assert stored(engine, moved["memory_id"]).content == GUIDE.format(name="[PERSON]", day="Friday")
    shown = service.get_escalation(engine, org, escalation_id)
    assert (shown["memory_id"], shown["candidate_id"]) == (moved["memory_id"], maria["memory_id"])
    assert (shown["outcome"], [d["details"]["rule"] for d in shown["decisions"]]) == \
        ("contradicts", ["different_values"])


def test_another_name_outside_the_subject_is_another_value_linked_and_decided(infra, engine, producer, settings,
                                                                              pipeline):
    org, agent = new_scope(), new_scope("agent")
    poller = start_poller(infra, f"tags-value-{org}", org=org)
    try:
        first = write(engine, producer, settings, org, agent, "The user's manager is Maria Lopez.")
        second = write(engine, producer, settings, org, agent, "The user's manager is James Whitfield.")
        assert [n["memory_id"] for n in second["result"]["near_duplicates"]] == [first["memory_id"]]
        [escalation_id] = second["result"]["escalations"]
        wait_until(settled(engine, org, 1))
    finally:
        poller.stop()

    assert stored(engine, first["memory_id"]).redaction_tags[0].split(":")[3] == "v"  # the complement, no subject
    shown = service.get_escalation(engine, org, escalation_id)
    assert (shown["outcome"], [d["details"]["rule"] for d in shown["decisions"]]) == \
        ("contradicts", ["different_values"])


def test_a_deleted_memory_keeps_no_tags(engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    view = write(engine, producer, settings, org, agent, "Call Maria Lopez back about the refund.")
    assert stored(engine, view["memory_id"]).redaction_tags

    assert review.delete(engine, org, view["memory_id"], "cli:test") is True
    row = stored(engine, view["memory_id"])
    assert (row.status, row.content, row.redaction_tags) == ("deleted", "", None)
