"""Entity resolution (issue 14, item 2; MemCastle ADR-025 "Entities"), through the real API,
worker and PostgreSQL: a memory's subject resolves to an org's entity by key, then alias;
a new spelling is a new entity with `possibly_same_as` evidence, never a merge; a person's
alias makes two spellings one subject, so dated facts about it supersede with no classifier
call; names are PII-checked, org-wide keys only, and another tenant's entity is a 404."""

from __future__ import annotations

import io
import time
from typing import Any

import pytest

from tests.api_support import api, make_key  # noqa: F401 (fixtures)
from tests.conftest import memory, new_scope, query

WAIT = {"Prefer": "wait=30"}
JAN, JUN = "2024-01-01T00:00:00Z", "2024-06-01T00:00:00Z"
# Measured with the real MiniLM model: near duplicates (cosine 0.938) whose subject keys
# differ ("orion project deadline|be", "project orion deadline|be").
ORION_MARCH = "The Orion project deadline is in March."
ORION_MAY = "The project Orion deadline is in May."
CANARY = "Margaret Thornbury"


def _write(client: Any, org: str, agent: str, content: str, **fields: Any) -> dict[str, Any]:
    created = client.post("/v1/memories", json=memory(org, agent, content, **fields), headers=WAIT)
    assert created.status_code == 201, created.text
    return created.json()


def _decision(client: Any, job_id: str, stage: str) -> dict[str, Any]:
    decisions = [d for d in client.get(f"/v1/jobs/{job_id}").json()["decisions"] if d["stage"] == stage]
    assert decisions, stage
    return decisions[-1]


def _entity_named(client: Any, name: str) -> dict[str, Any]:
    listed = client.get("/v1/entities", params={"limit": 200})
    assert listed.status_code == 200, listed.text
    [found] = [e for e in listed.json()["entities"] if e["name"] == name]
    return client.get(f"/v1/entities/{found['id']}").json()


def test_an_alias_makes_two_spellings_one_subject_and_the_newer_dated_fact_supersedes(api, make_key, pipeline):
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org)) as client:
        march = _write(client, org, agent, ORION_MARCH, valid_from=JAN, valid_until=JUN)
        resolved = _decision(client, march["job_id"], "persist")["subject_entity"]
        entity = _entity_named(client, "orion project deadline")
        assert (entity["id"], entity["created_by"], entity["memories"], entity["possibly_same_as"]) == \
            (resolved, "system:pipeline", 1, [])

        alias = client.post(f"/v1/entities/{entity['id']}/aliases", json={"alias": "Project Orion deadline"})
        assert alias.status_code == 201, alias.text
        assert alias.json()["key"] == "project orion deadline" and alias.json()["created_by"].startswith("api_key:")

        may = _write(client, org, agent, ORION_MAY, valid_from=JUN)
        assert _decision(client, may["job_id"], "persist")["subject_entity"] == entity["id"]
        conflict = _decision(client, may["job_id"], "conflict")
        assert (conflict["result"], conflict["supersedes"], conflict["subjects"], conflict["classifier_calls"]) == \
            ("supersedes", [march["memory_id"]], {march["memory_id"]: "entity"}, 0)
        assert client.get(f"/v1/memories/{march['memory_id']}").json()["status"] == "superseded"
        [link] = [r for r in client.get(f"/v1/memories/{may['memory_id']}/relationships").json()["relationships"]
                  if r["type"] == "supersedes"]
        assert link["memory_id"] == march["memory_id"] and link["evidence"]["subject"] == "entity"
        assert client.get(f"/v1/entities/{entity['id']}").json()["memories"] == 2


def test_another_spelling_without_an_alias_is_a_new_entity_possibly_the_same_and_no_conflict(
        api, make_key, pipeline, settings):
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org)) as client:
        march = _write(client, org, agent, ORION_MARCH, valid_from=JAN, valid_until=JUN)
        first = _decision(client, march["job_id"], "persist")["subject_entity"]
        may = _write(client, org, agent, ORION_MAY, valid_from=JUN)
        second = _decision(client, may["job_id"], "persist")["subject_entity"]
        assert second != first

        assert _decision(client, may["job_id"], "conflict")["result"] == "no_conflict"
        assert client.get(f"/v1/memories/{march['memory_id']}").json()["status"] == "active"
        view = client.get(f"/v1/entities/{second}").json()
        [resemblance] = view["possibly_same_as"]
        assert (resemblance["entity_id"], resemblance["direction"], resemblance["type"]) == \
            (first, "outgoing", "possibly_same_as")
        evidence = resemblance["evidence"]
        assert evidence["rule"] == "trigram" and evidence["threshold"] == settings.entity_similarity_threshold
        assert settings.entity_similarity_threshold <= evidence["similarity"] < 1.0
        other = client.get(f"/v1/entities/{first}").json()
        assert [(r["entity_id"], r["direction"]) for r in other["possibly_same_as"]] == [(second, "incoming")]
        assert other["name"] == "orion project deadline", "a canonical name is never rewritten"


def test_the_same_subject_resolves_to_one_entity_and_a_redacted_subject_to_none(api, make_key, pipeline, engine):
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org)) as client:
        first = _write(client, org, agent, "The billing service retries failed payments twice.")
        again = _write(client, org, agent, "The Billing Service sends receipts by e-mail.")
        one = _decision(client, first["job_id"], "persist")["subject_entity"]
        assert _decision(client, again["job_id"], "persist")["subject_entity"] == one
        person = _write(client, org, agent, f"{CANARY} asked for a call back on Monday.")
        assert "subject_entity" not in _decision(client, person["job_id"], "persist")
    names = [r.name for r in query(engine, "SELECT name FROM entities WHERE org_id = :o", o=org)]
    assert names == ["billing service"]


def test_names_are_checked_for_personal_data_and_taken_names_are_refused(api, make_key, engine):
    org = new_scope()
    with api.client(make_key(org)) as client:
        refused = client.post("/v1/entities", json={"name": f"{CANARY} account", "kind": "account"})
        assert refused.status_code == 422, refused.text
        body = refused.json()
        assert body["error"]["code"] == "PII_IN_FIELD" and [d["field"] for d in body["error"]["details"]] == ["name"]
        assert "Thornbury" not in refused.text
        alias_refused = client.post("/v1/entities", json={"name": "Atlas contract", "aliases": ["ok", CANARY]})
        assert alias_refused.status_code == 422 and "Thornbury" not in alias_refused.text
        assert [d["field"] for d in alias_refused.json()["error"]["details"]] == ["aliases[1]"]
        assert query(engine, "SELECT * FROM entities WHERE org_id = :o", o=org) == []

        created = client.post("/v1/entities", json={"name": "Atlas support contract", "kind": "contract",
                                                     "aliases": ["Atlas contract"]})
        assert created.status_code == 201, created.text
        entity = created.json()
        assert (entity["key"], entity["kind"], [a["alias"] for a in entity["aliases"]]) == \
            ("atlas support contract", "contract", ["Atlas contract"])
        for name in ("ATLAS  support contract", "atlas contract"):
            taken = client.post("/v1/entities", json={"name": name})
            assert taken.status_code == 409 and taken.json()["error"]["code"] == "ENTITY_EXISTS"
            assert taken.json()["entity_id"] == entity["id"]
        assert client.post(f"/v1/entities/{entity['id']}/aliases", json={"alias": "atlas.contract"}).status_code == 201
        for same_key in ("AtlasContract", "Atlas Contract", "atlas support-contract"):
            again = client.post(f"/v1/entities/{entity['id']}/aliases", json={"alias": same_key})
            assert again.status_code == 409 and again.json()["entity_id"] == entity["id"], same_key
        twice = client.post("/v1/entities", json={"name": "Ledger", "aliases": ["General ledger", "general-ledger",
                                                                             "LEDGER"]})
        assert twice.status_code == 201, twice.text
        assert [a["key"] for a in twice.json()["aliases"]] == ["general ledger"], "one alias per key, none the name's"
        personal_kind = client.post("/v1/entities", json={"name": "Northwind", "kind": "margaret_thornbury"})
        assert personal_kind.status_code == 422 and "thornbury" not in personal_kind.text.lower()
        assert [d["field"] for d in personal_kind.json()["error"]["details"]] == ["kind"]
        bad = client.post("/v1/entities", json={"name": "x", "kind": "Not A Kind", "surprise": 1})
        assert bad.status_code == 422 and {d["field"] for d in bad.json()["error"]["details"]} >= {"kind"}

        aliases = client.get(f"/v1/entities/{entity['id']}/aliases").json()["aliases"]
        assert [a["key"] for a in aliases] == ["atlas contract", "atlascontract"]
        assert client.delete(f"/v1/entities/{entity['id']}/aliases/Atlas%20CONTRACT").status_code == 204
        assert client.delete(f"/v1/entities/{entity['id']}/aliases/atlas%20contract").status_code == 404
        assert [a["key"] for a in client.get(f"/v1/entities/{entity['id']}/aliases").json()["aliases"]] == \
            ["atlascontract"]
        assert client.delete(f"/v1/entities/{entity['id']}").status_code == 204
        assert client.get(f"/v1/entities/{entity['id']}").status_code == 404
    assert [r.key for r in query(engine, "SELECT key FROM entity_aliases WHERE org_id = :o", o=org)] == \
        ["general ledger"], "the deleted entity's aliases went with it"


def test_deleting_an_entity_leaves_its_memories_without_one(api, make_key, pipeline, engine):
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org)) as client:
        written = _write(client, org, agent, "The staging cluster runs on four nodes.")
        entity_id = _decision(client, written["job_id"], "persist")["subject_entity"]
        assert client.delete(f"/v1/entities/{entity_id}").status_code == 204
        assert client.get(f"/v1/memories/{written['memory_id']}").json()["status"] == "active"
    [row] = query(engine, "SELECT subject_entity_id FROM memories WHERE org_id = :o", o=org)
    assert row.subject_entity_id is None


def test_another_tenants_entity_is_a_404_and_a_key_limited_to_agents_is_refused(api, make_key, engine):
    mine, theirs = new_scope(), new_scope()
    with api.client(make_key(theirs)) as client:
        created = client.post("/v1/entities", json={"name": "Payments gateway"})
        assert created.status_code == 201
        their_id = created.json()["id"]
    with api.client(make_key(mine)) as client:
        assert client.get(f"/v1/entities/{their_id}").status_code == 404
        assert client.get(f"/v1/entities/{their_id}/aliases").status_code == 404
        assert client.post(f"/v1/entities/{their_id}/aliases", json={"alias": "gateway"}).status_code == 404
        assert client.delete(f"/v1/entities/{their_id}/aliases/payments%20gateway").status_code == 404
        assert client.delete(f"/v1/entities/{their_id}").status_code == 404
        assert client.get("/v1/entities/not-a-uuid").status_code == 404
        assert client.get("/v1/entities").json()["entities"] == []
        same_name = client.post("/v1/entities", json={"name": "Payments gateway"})
        assert same_name.status_code == 201 and same_name.json()["id"] != their_id, "keys are unique per org only"
    assert len(query(engine, "SELECT * FROM entities WHERE org_id = :o", o=theirs)) == 1
    assert query(engine, "SELECT * FROM entity_aliases WHERE org_id = :o", o=theirs) == []
    with api.client(make_key(mine, agents=[new_scope("agent")])) as limited:
        mine_id = same_name.json()["id"]
        for method, path in (("GET", "/v1/entities"), ("POST", "/v1/entities"),
                             ("GET", f"/v1/entities/{mine_id}"), ("DELETE", f"/v1/entities/{mine_id}"),
                             ("GET", f"/v1/entities/{mine_id}/aliases"), ("POST", f"/v1/entities/{mine_id}/aliases"),
                             ("DELETE", f"/v1/entities/{mine_id}/aliases/gateway")):
            body = {"name": "Ledger"} if path == "/v1/entities" else {"alias": "gateway"}
            answer = limited.request(method, path, json=body if method == "POST" else None)
            assert answer.status_code == 403 and answer.json()["error"]["code"] == "FORBIDDEN", (method, path)


def test_entity_pages_follow_the_cursor_without_repeats(api, make_key):
    org = new_scope()
    with api.client(make_key(org)) as client:
        names = [f"Service number {i}" for i in range(5)]
        for name in names:
            assert client.post("/v1/entities", json={"name": name}).status_code == 201
        seen, cursor = [], None
        while True:
            page = client.get("/v1/entities", params={"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
            seen += [e["name"] for e in page["entities"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert seen == names
        assert client.get("/v1/entities", params={"cursor": "garbage"}).status_code == 422


@pytest.mark.parametrize("batch", [1, 500])
def test_backfill_resolves_the_subjects_of_memories_stored_before_entities(api, make_key, pipeline, engine, batch):
    from ibex_worker import backfill

    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org)) as client:
        for content in ("The reporting job runs every night.", "The reporting job sends a summary to finance.",
                        "The search index is rebuilt weekly."):
            _write(client, org, agent, content)
    with engine.begin() as conn:  # as rows stored before migration 000013 read
        from sqlalchemy import text
        conn.execute(text("UPDATE memories SET subject_entity_id = NULL WHERE org_id = :o"), {"o": org})
        conn.execute(text("DELETE FROM entities WHERE org_id = :o"), {"o": org})
    out = io.StringIO()
    result = backfill.run(engine, org, batch=batch, out=out)
    assert (result["entities_filled"], result["entities_left"]) == (3, 0)
    assert "subjects resolved to entities" in out.getvalue()
    rows = query(engine, "SELECT e.name, count(*) AS n FROM memories m JOIN entities e ON e.org_id = m.org_id "
                         "AND e.id = m.subject_entity_id WHERE m.org_id = :o GROUP BY e.name ORDER BY e.name", o=org)
    assert [(r.name, r.n) for r in rows] == [("reporting job", 2), ("search index", 1)]
    assert backfill.run(engine, org, batch=batch, out=io.StringIO())["entities_filled"] == 0


def test_dated_facts_about_one_entity_in_one_aspect_are_compared_though_not_near_duplicates(
        api, make_key, pipeline, engine):
    org, agent, other_agent = new_scope(), new_scope("agent"), new_scope("agent")
    with api.client(make_key(org)) as client:
        python = _write(client, org, agent, "The user prefers Python for data work.", valid_from=JAN, valid_until=JUN)
        elsewhere = _write(client, org, other_agent, "The user prefers Python for data work.", valid_from=JAN,
                           valid_until=JUN)
        go = _write(client, org, agent, "The user is switching to Go for data work.", valid_from=JUN)
        assert _decision(client, go["job_id"], "near_dedup")["result"] == "novel"
        conflict = _decision(client, go["job_id"], "conflict")
        assert (conflict["result"], conflict["supersedes"], conflict["same_aspect"], conflict["subjects"]) == \
            ("supersedes", [python["memory_id"]], [python["memory_id"]], {python["memory_id"]: "entity_aspect"})
        assert client.get(f"/v1/memories/{python['memory_id']}").json()["status"] == "superseded"
        assert client.get(f"/v1/memories/{elsewhere['memory_id']}").json()["status"] == "active", \
            "another agent's fact is never a candidate"
        links = client.get(f"/v1/memories/{go['memory_id']}/relationships").json()["relationships"]
        assert [(r["type"], r["memory_id"]) for r in links] == [("supersedes", python["memory_id"])]

        tea = _write(client, org, agent, "The user prefers tea for breakfast.", valid_from=JUN)
        assert _decision(client, tea["job_id"], "conflict")["reason"] == "no_candidates", "another aspect"
        undated = _write(client, org, agent, "The user prefers Rust for data work.")
        assert _decision(client, undated["job_id"], "conflict")["reason"] == "no_candidates", "undated"

        rust = _write(client, org, agent, "The user prefers Rust for systems work.", valid_from=JAN)
        zig = _write(client, org, agent, "The user now uses Zig for systems work.", valid_from=JUN)
        conflict = _decision(client, zig["job_id"], "conflict")
        assert conflict["result"] == "escalated" and conflict["escalations"] == [
            {"candidate_id": rust["memory_id"], "reason": "overlapping_intervals"}]
    [row] = query(engine, "SELECT memory_id, candidate_id, evidence FROM memory_conflict_escalations "
                          "WHERE org_id = :o", o=org)
    assert (str(row.memory_id), str(row.candidate_id)) == (zig["memory_id"], rust["memory_id"])
    assert row.evidence["candidate"] == "same_aspect" and row.evidence["similarity"] is None


def test_an_entity_the_pipeline_made_goes_with_the_last_memory_that_names_it(api, make_key, pipeline, engine):
    org, agent, erased_agent = new_scope(), new_scope("agent"), new_scope("agent")
    with api.client(make_key(org)) as client:
        kept = client.post("/v1/entities", json={"name": "Release train"}).json()
        first = _write(client, org, agent, "The invoice archive is kept for ten years.")
        second = _write(client, org, agent, "The invoice archive lives in the cold bucket.")
        shared = _decision(client, first["job_id"], "persist")["subject_entity"]
        assert client.delete(f"/v1/memories/{first['memory_id']}").status_code == 204
        assert client.get(f"/v1/entities/{shared}").json()["memories"] == 1, "another memory still names it"
        assert client.delete(f"/v1/memories/{second['memory_id']}").status_code == 204
        assert client.get(f"/v1/entities/{shared}").status_code == 404

        _write(client, org, erased_agent, "The release train leaves every second Tuesday.")
        only_theirs = _write(client, org, erased_agent, "The onboarding checklist has twelve steps.")
        theirs = _decision(client, only_theirs["job_id"], "persist")["subject_entity"]
        accepted = client.post("/v1/erasures", json={"org_id": org, "agent_id": erased_agent})
        assert accepted.status_code == 202, accepted.text
        erasure_id = accepted.json()["erasure_id"]
        for _ in range(300):
            status = client.get(f"/v1/erasures/{erasure_id}").json()["status"]
            if status in ("succeeded", "failed"):
                break
            time.sleep(0.2)
        assert status == "succeeded"
        assert client.get(f"/v1/entities/{theirs}").status_code == 404
        assert client.get(f"/v1/entities/{kept['id']}").json()["memories"] == 0, "a person's entity stays"
    assert query(engine, "SELECT name FROM entities WHERE org_id = :o", o=org)[0].name == "Release train"
    assert len(query(engine, "SELECT * FROM entities WHERE org_id = :o", o=org)) == 1


def test_as_a_tenant_the_app_login_sees_and_writes_only_its_orgs_entities(api, make_key, infra):
    import psycopg

    from ibex_worker.migrate import libpq_url

    mine, other = new_scope(), new_scope()
    for org in (mine, other):
        with api.client(make_key(org)) as client:
            assert client.post("/v1/entities", json={"name": "Payments gateway",
                                                     "aliases": ["gateway"]}).status_code == 201
    with psycopg.connect(libpq_url(infra.pg.app_url), autocommit=True) as conn, conn.transaction():
        conn.execute("SELECT set_config('role', 'ibex_tenant', true)")
        conn.execute("SELECT set_config('ibex.org_id', %s, true)", (mine,))
        for table in ("entities", "entity_aliases"):
            orgs = {r[0] for r in conn.execute(f"SELECT org_id FROM {table} WHERE org_id IN (%s, %s)", (mine, other))}
            assert orgs == {mine}, table
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            with conn.transaction():
                conn.execute("INSERT INTO entities (org_id, name, key, created_by) "
                             "VALUES (%s, 'x', 'x', 'api_key:k')", (other,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            with conn.transaction():
                conn.execute("UPDATE entities SET name = 'renamed'")


def test_a_misspelt_subject_converges_on_its_entity_and_its_spelling_becomes_an_alias(api, make_key, pipeline):
    """ADR-025 rule 4: exactly one entity one misspelt word away, in a name of six characters
    or more, is the entity; the spelling is added to its aliases (rule 6)."""
    org, agent = new_scope(), new_scope("agent")
    with api.client(make_key(org)) as client:
        first = _write(client, org, agent, "The Atlas support contract renews every September.")
        entity = _decision(client, first["job_id"], "persist")["subject_entity"]
        typo = _write(client, org, agent, "The Atlas suport contract includes phone support.")
        assert _decision(client, typo["job_id"], "persist")["subject_entity"] == entity
        view = client.get(f"/v1/entities/{entity}").json()
        assert view["name"] == "atlas support contract", "a canonical name is never rewritten"
        assert [(a["key"], a["created_by"]) for a in view["aliases"]] == [("atlas suport contract", "system:pipeline")]
        assert (view["memories"], view["possibly_same_as"]) == (2, [])

        # The spelling came from that memory's text: it goes with the memory.
        assert client.delete(f"/v1/memories/{typo['memory_id']}").status_code in (200, 204)
        after = client.get(f"/v1/entities/{entity}").json()
        assert (after["aliases"], after["memories"]) == ([], 1)


def test_a_name_one_typo_from_two_entities_or_with_fuzzy_matching_off_converges_on_none(engine):
    from ibex_worker.db import tenant_tx
    from ibex_worker.pipeline import entities
    from ibex_worker.store import entities as store

    org = new_scope()
    with tenant_tx(engine, org) as conn:
        first = entities.resolve_or_create(conn, org, "zorbax gateway", 0.6)
        second = entities.resolve_or_create(conn, org, "zorbox gatewey", 0.6)  # two words apart: another
        assert (first.rule, second.rule) == ("new", "new") and first.entity_id != second.entity_id
        between = entities.resolve_or_create(conn, org, "zorbox gateway", 0.6)  # one typo from each
        assert between.rule == "new" and between.entity_id not in (first.entity_id, second.entity_id)
        off = entities.resolve_or_create(conn, org, "zorbax gatewai", None)  # fuzzy matching off
        assert (off.rule, off.possibly_same_as) == ("new", [])
        assert entities.resolve(conn, org, "zorbax gateeway", fuzzy=False) is None
        typo = entities.resolve_or_create(conn, org, "zorbax gateeway", 0.6)
        assert (typo.rule, typo.entity_id) == ("typo", first.entity_id)
        assert [a.key for a in store.aliases(conn, org, first.entity_id)] == ["zorbax gateeway"]
        assert entities.resolve(conn, org, "zorbax gateeway").rule == "alias"


def test_an_entity_deleted_before_the_write_that_records_it_is_resolved_again(engine):
    from ibex_worker import entity_keys
    from ibex_worker.db import tenant_tx
    from ibex_worker.pipeline import entities
    from ibex_worker.store import entities as store

    org = new_scope()
    with tenant_tx(engine, org) as conn:
        first = entities.resolve_or_create(conn, org, "quillon relay", None).entity_id
    attempts: list[str] = []

    def write(entity_id: str) -> bool:  # a row that refers to the entity, as a memory's insert does
        attempts.append(entity_id)
        if len(attempts) == 1:  # another transaction deletes the entity the name resolved to
            with tenant_tx(engine, org) as other:
                assert store.delete(other, org, entity_id)
        return store.add_alias(conn, org, entity_id, "Quillon Relais", entity_keys.key("Quillon Relais"),
                               entities.PIPELINE)

    with tenant_tx(engine, org) as conn:
        written, resolution = entities.recorded(conn, org, "quillon relay", None, write)
    assert written and resolution.rule == "new"
    assert attempts == [first, resolution.entity_id] and resolution.entity_id != first
    with tenant_tx(engine, org) as conn:
        assert store.get(conn, org, first) is None
        assert [a.key for a in store.aliases(conn, org, resolution.entity_id)] == ["quillon relais"]
