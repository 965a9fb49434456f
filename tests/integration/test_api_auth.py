"""API keys and scope: 401 without a live key, 403 for a write outside the key's org or
agents, 404 for another tenant's ids exactly as for unknown ones; keys made by the CLI are
shown once and stored as a hash."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

from tests.api_support import api, assert_envelope, make_key  # noqa: F401
from tests.conftest import ROOT, memory, new_scope, query

ZERO_ID = "00000000-0000-0000-0000-000000000000"


def _ibex(infra, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ibex_worker.cli", *args], env=infra.env(), cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_a_missing_malformed_unknown_or_revoked_key_answers_401(api, engine, make_key):
    from ibex_worker import apikeys

    org, agent = new_scope(), new_scope("agent")
    key = make_key(org)
    body = memory(org, agent, "Backups are encrypted at rest.")
    with api.client() as client:
        answers = {
            "missing": client.post("/v1/memories", json=body),
            "not bearer": client.post("/v1/memories", json=body, headers={"Authorization": f"Basic {key}"}),
            "malformed": client.post("/v1/memories", json=body, headers={"Authorization": "Bearer nonsense"}),
            "unknown": client.post("/v1/memories", json=body, headers={"Authorization": f"Bearer {key[:-4]}AAAA"}),
            "read": client.get(f"/v1/jobs/{ZERO_ID}"),
        }
        [record] = [k for k in apikeys.list_keys(engine, org)]
        assert client.post("/v1/memories", json=body, headers={"Authorization": f"Bearer {key}"}).status_code == 202
        assert apikeys.revoke(engine, record["id"]) is True
        answers["revoked"] = client.post("/v1/memories", json=body, headers={"Authorization": f"Bearer {key}"})
    for name, answer in answers.items():
        assert_envelope(answer, 401, "UNAUTHENTICATED")
        assert answer.headers["www-authenticate"] == "Bearer", name
    assert len(query(engine, "SELECT id FROM memory_write_jobs WHERE org_id = :o", o=org)) == 1


def test_a_write_outside_the_keys_org_or_agents_answers_403(api, engine, make_key):
    org, other_org = new_scope(), new_scope()
    agent, other_agent = new_scope("agent"), new_scope("agent")
    with api.client(make_key(org, agents=[agent])) as client:
        mine = client.post("/v1/memories", json=memory(org, agent, "Tickets close after 7 idle days."))
        other_agent_answer = client.post("/v1/memories", json=memory(org, other_agent, "Not my agent."))
        other_org_answer = client.post("/v1/memories", json=memory(other_org, agent, "Not my org."),
                                       headers={"X-Idempotency-Key": "k-403"})
    assert mine.status_code == 202
    assert_envelope(other_agent_answer, 403, "FORBIDDEN")
    assert_envelope(other_org_answer, 403, "FORBIDDEN")
    assert len(query(engine, "SELECT id FROM memory_write_jobs WHERE org_id IN (:a, :b)", a=org, b=other_org)) == 1


def test_another_tenants_ids_answer_404_exactly_like_unknown_ones(api, make_key, pipeline):
    org, other_org, agent, other_agent = new_scope(), new_scope(), new_scope("agent"), new_scope("agent")
    with api.client(make_key(org), headers={"Prefer": "wait=30"}) as owner:
        created = owner.post("/v1/memories", json=memory(org, agent, "The release train leaves on Thursdays."))
        assert created.status_code == 201, created.text
        ids = created.json()
        assert owner.get(f"/v1/memories/{ids['memory_id']}").status_code == 200
    paths = [f"/v1/jobs/{ids['job_id']}", f"/v1/memories/{ids['memory_id']}",
             f"/v1/memories/{ids['memory_id']}/relationships"]
    unknown = [f"/v1/jobs/{ZERO_ID}", f"/v1/memories/{ZERO_ID}", f"/v1/memories/{ZERO_ID}/relationships"]
    for key in (make_key(other_org), make_key(org, agents=[other_agent])):
        with api.client(key) as stranger:
            for path, twin in zip(paths, unknown):
                theirs, nobodys = stranger.get(path), stranger.get(twin)
                assert_envelope(theirs, 404, "NOT_FOUND")
                assert_envelope(nobodys, 404, "NOT_FOUND")
                assert theirs.json()["error"] == nobodys.json()["error"]
            assert_envelope(stranger.get("/v1/jobs/not-a-uuid"), 404, "NOT_FOUND")


def test_the_keys_cli_shows_a_key_once_and_stores_only_its_hash(infra, api, engine):
    org = new_scope()
    created = _ibex(infra, "keys", "create", "--org", org, "--agents", "bot-a,bot-b", "--description", "ci")
    assert created.returncode == 0, created.stderr
    record = json.loads(created.stdout)
    key = record["key"]
    assert key.startswith("ibex_") and len(key) == 48 and record["agents"] == ["bot-a", "bot-b"]
    [row] = query(engine, "SELECT * FROM api_keys WHERE org_id = :o", o=org)
    assert row.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert key not in json.dumps({k: str(v) for k, v in row._mapping.items()})
    assert row.prefix == key[:12]

    listed = json.loads(_ibex(infra, "keys", "list", "--org", org).stdout)
    assert [(k["id"], k["prefix"], k["revoked_at"]) for k in listed] == [(record["id"], key[:12], None)]
    assert key not in json.dumps(listed)

    with api.client(key) as client:
        assert client.post("/v1/memories", json=memory(org, "bot-a", "Allowed agent.")).status_code == 202
        assert client.post("/v1/memories", json=memory(org, "bot-c", "Other agent.")).status_code == 403
        assert _ibex(infra, "keys", "revoke", record["id"]).returncode == 0
        assert client.post("/v1/memories", json=memory(org, "bot-a", "After revocation.")).status_code == 401
    assert _ibex(infra, "keys", "revoke", record["id"]).returncode == 1  # already revoked
    bad = _ibex(infra, "keys", "create", "--org", "not ok!")
    assert bad.returncode != 0 and "org must be" in bad.stderr
