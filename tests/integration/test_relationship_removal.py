"""Undoable links (issue 14, item 3; the seed's "deleting the edge undoes the call"), through
the real API and worker: ``DELETE /v1/memories/{id}/relationships/{other_id}?type=...``
removes the link, audits who, when and why (the reason redacted), leaves the same pair of
texts unlinked when they are written again, and undoes a supersession; every refusal names
the field or answers the same 404, and is refused before the reason meets the PII model."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from tests.api_support import api, assert_envelope, make_key  # noqa: F401 (fixtures)
from tests.conftest import memory, new_scope, query

WAIT = {"Prefer": "wait=30"}
# Measured with the real MiniLM model: near duplicates of each other (cosine > 0.92).
PORT_OLD, PORT_NEW = "The staging server uses port 8080.", "The staging server uses port 8081."
PORT_THIRD = "The staging server uses port 8082."
JAN, JUN = "2024-01-01T00:00:00Z", "2024-06-01T00:00:00Z"


def _write(client, org: str, agent: str, content: str, **fields) -> dict:
    created = client.post("/v1/memories", json=memory(org, agent, content, **fields), headers=WAIT)
    assert created.status_code == 201, created.text
    return created.json()


def _links(client, memory_id: str) -> list[tuple[str, str, str]]:
    view = client.get(f"/v1/memories/{memory_id}/relationships")
    assert view.status_code == 200, view.text
    return sorted((r["type"], r["direction"], r["memory_id"]) for r in view.json()["relationships"])


def _removals(engine, org: str) -> list:
    return query(engine, "SELECT * FROM memory_relationship_decisions WHERE org_id = :o ORDER BY decided_at", o=org)


def _near_dedup(client, job_id: str) -> dict:
    decisions = [d for d in client.get(f"/v1/jobs/{job_id}").json()["decisions"] if d["stage"] == "near_dedup"]
    return decisions[-1]


def test_a_removed_near_duplicate_link_is_audited_and_the_same_texts_are_not_linked_again(
        api, make_key, engine, pipeline):
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org)) as client:
        a = _write(client, org, agent, PORT_OLD)
        b = _write(client, org, agent, PORT_NEW)
        assert _links(client, b["memory_id"]) == [("near_duplicate_of", "outgoing", a["memory_id"])]

        removed = client.request("DELETE", f"/v1/memories/{a['memory_id']}/relationships/{b['memory_id']}",
                                 params={"type": "near_duplicate_of"},
                                 json={"reason": "Two customers of Margaret Thornbury's team, not one."})
        assert removed.status_code == 204, removed.text
        assert _links(client, a["memory_id"]) == _links(client, b["memory_id"]) == []
        [audit] = _removals(engine, org)
        assert (str(audit.source_memory_id), str(audit.target_memory_id), audit.relationship_type, audit.action) == \
            (b["memory_id"], a["memory_id"], "near_duplicate_of", "removed")
        assert audit.decided_by.startswith("api_key:") and audit.decided_at is not None
        assert "Thornbury" not in audit.reason and "[PERSON]" in audit.reason
        assert audit.evidence["decided_by"] == "pipeline"
        assert audit.evidence["evidence"]["signals"]["embedding"]["fired"]
        assert_envelope(client.delete(f"/v1/memories/{a['memory_id']}/relationships/{b['memory_id']}",
                                      params={"type": "near_duplicate_of"}), 404, "NOT_FOUND")

        # The escalation the pair raised as near duplicates (both undated) ends with the link.
        [escalation] = query(engine, "SELECT * FROM memory_conflict_escalations WHERE org_id = :o", o=org)
        assert (escalation.status, escalation.outcome, escalation.decided_by) == \
            ("resolved", "withdrawn", audit.decided_by)

        # The same text stated again (the first statement superseded meanwhile) is not linked to the same text.
        with engine.begin() as conn:
            conn.execute(text("UPDATE memories SET status = 'superseded' WHERE org_id = :o AND id = :i"),
                         {"o": org, "i": b["memory_id"]})
        again = _write(client, org, agent, PORT_NEW)
        assert again["memory_id"] != b["memory_id"]
        assert _links(client, again["memory_id"]) == []
        decision = _near_dedup(client, again["job_id"])
        assert decision["left_out"] == [{"memory_id": a["memory_id"], "why": "unlinked_by_a_person"}]
        assert decision["candidates"] == []

        # A different text is a new pair: it is linked as usual.
        other = _write(client, org, agent, PORT_THIRD)
        assert ("near_duplicate_of", "outgoing", a["memory_id"]) in _links(client, other["memory_id"])

        # Deleting a memory of the pair keeps the audit but not its content hashes.
        assert client.delete(f"/v1/memories/{b['memory_id']}").status_code == 204
        [audit] = _removals(engine, org)
        assert (audit.source_content_hash, audit.target_content_hash) == (None, None)
        assert audit.decided_by.startswith("api_key:") and str(audit.source_memory_id) == b["memory_id"]


def test_undoing_a_supersession_makes_the_older_memory_active_again(api, make_key, engine, pipeline):
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org)) as client:
        older = _write(client, org, agent, PORT_OLD, valid_from=JAN, valid_until=JUN)
        newer = _write(client, org, agent, PORT_NEW, valid_from=JUN)
        assert newer["supersedes"] == [older["memory_id"]]
        assert client.get(f"/v1/memories/{older['memory_id']}").json()["status"] == "superseded"

        removed = client.delete(f"/v1/memories/{older['memory_id']}/relationships/{newer['memory_id']}",
                                params={"type": "supersedes"})
        assert removed.status_code == 204, removed.text
        view = client.get(f"/v1/memories/{older['memory_id']}").json()
        assert view["status"] == "active" and view["valid_until"].startswith("2024-06-01")
        assert [t for t, _, _ in _links(client, older["memory_id"])] == ["near_duplicate_of"]
        [audit] = _removals(engine, org)
        assert (audit.relationship_type, audit.reason) == ("supersedes", None)
        assert audit.evidence["evidence"]["rule"] == "non_overlapping_same_subject_newer_valid_from"
        searchable = query(engine, "SELECT searchable_since FROM memories WHERE org_id = :o AND id = :i",
                           o=org, i=older["memory_id"])[0].searchable_since
        corpus = query(engine, "SELECT version FROM memory_agent_corpus WHERE org_id = :o AND agent_id = :a",
                       o=org, a=agent)[0].version
        assert searchable == corpus  # searchable again for the writes that check the corpus since


def test_undoing_a_supersession_the_pipeline_decided_on_overlapping_facts_reopens_the_older_interval(
        api, make_key, engine, pipeline):
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org)) as client:
        older = _write(client, org, agent, "The user prefers Python for data work.", valid_from=JAN)
        newer = _write(client, org, agent, "The user prefers Go for data work.", valid_from=JUN)
        assert newer["supersedes"] == [older["memory_id"]]
        assert client.get(f"/v1/memories/{older['memory_id']}").json()["valid_until"].startswith("2024-06-01")

        removed = client.delete(f"/v1/memories/{older['memory_id']}/relationships/{newer['memory_id']}",
                                params={"type": "supersedes"})
        assert removed.status_code == 204, removed.text
        view = client.get(f"/v1/memories/{older['memory_id']}").json()
        assert (view["status"], view["valid_until"]) == ("active", None)


@pytest.mark.parametrize(("params", "body", "field"), [
    pytest.param({}, None, "type", id="no type"),
    pytest.param({"type": "similar_to"}, None, "type", id="an unknown type"),
    pytest.param({"type": "near_duplicate_of"}, {"reason": "x" * 2001}, "reason", id="a reason too long"),
    pytest.param({"type": "near_duplicate_of"}, {"why": "no"}, "why", id="an unknown field"),
])
def test_a_bad_removal_names_the_field_and_echoes_nothing(api, make_key, params, body, field):
    org = new_scope()
    with api.client(make_key(org)) as client:
        response = client.request("DELETE", "/v1/memories/00000000-0000-0000-0000-000000000001/relationships/"
                                            "00000000-0000-0000-0000-000000000002", params=params, json=body)
    assert_envelope(response, 422, "VALIDATION_ERROR")
    assert field in [d["field"].split(".")[-1] for d in response.json()["error"]["details"]]
    assert "xxxx" not in response.text


def test_another_tenant_another_agent_and_unknown_pairs_answer_the_same_404_before_any_analysis(
        api, make_key, engine, pipeline):
    from ibex_worker import links

    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org)) as client:
        a = _write(client, org, agent, PORT_OLD)
        b = _write(client, org, agent, PORT_NEW)
        elsewhere = _write(client, org, new_scope("agent"), PORT_THIRD)
    pair = f"/v1/memories/{a['memory_id']}/relationships/{b['memory_id']}"
    refused = [(make_key(new_scope()), pair, "near_duplicate_of"),
               (make_key(org, [new_scope("agent")]), pair, "near_duplicate_of"),
               (make_key(org), pair, "contradicts"),
               (make_key(org), f"/v1/memories/{a['memory_id']}/relationships/{elsewhere['memory_id']}",
                "near_duplicate_of"),
               (make_key(org), f"/v1/memories/{a['memory_id']}/relationships/{a['memory_id']}", "near_duplicate_of"),
               (make_key(org), f"/v1/memories/{a['memory_id']}/relationships/not-a-uuid", "near_duplicate_of")]
    for key, route, kind in refused:
        with api.client(key) as client:
            assert_envelope(client.request("DELETE", route, params={"type": kind}, json={"reason": "checked"}),
                            404, "NOT_FOUND")
    assert len(_removals(engine, org)) == 0

    loads: list[int] = []
    counted = (lambda: loads.append(1))
    a_id, b_id = a["memory_id"], b["memory_id"]
    for org_id, other, kind, agents in ((new_scope(), b_id, "near_duplicate_of", None),
                                        (org, b_id, "near_duplicate_of", [new_scope("agent")]),
                                        (org, b_id, "contradicts", None),
                                        (org, elsewhere["memory_id"], "near_duplicate_of", None)):
        with pytest.raises(links.LinkNotFound):
            links.remove(engine, org_id, a_id, other, kind, "checked", "cli:tester", agents, reason_redactor=counted)
    assert loads == []  # each refused before the reason met the PII model
    with api.client(make_key(org)) as client:
        assert client.delete(pair, params={"type": "near_duplicate_of"}).status_code == 204
