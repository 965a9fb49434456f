"""The whole stack's log streams - API, pipeline worker, escalation worker, sweeper,
PostgreSQL, Redis - after writes carrying canary values through HTTP, the pipeline and the
escalation worker: no canary, no embedding vector, no API key in any of them."""

from __future__ import annotations

import re
import time
import uuid

import httpx

from tests.conftest import Proc, isolated_queues, make_settings, start_sweeper, start_worker, wait_until_healthy
from tests.escalation_support import start_poller
from ibex_worker import apikeys
from ibex_worker.devstack.ports import free_port

# Ten or more comma-separated floats in a row: an embedding (or part of one) in a log line.
VECTOR_RE = re.compile(r"(-?\d+\.\d+(e-?\d+)?\s*,\s*){9,}-?\d+\.\d+")


def _wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    raise TimeoutError("condition never held")


def test_no_canary_vector_or_api_key_reaches_any_log_stream(infra, engine):
    tag = uuid.uuid4().hex[:10]          # in the canary email only
    run = uuid.uuid4().hex[:8]           # in process and org names, which logs may carry
    org, agent = f"logs-{run}", "support-bot"
    email, phone, name = f"zq.{tag}@example.com", "+1 415 555 0143", "Rosalind Featherstone"
    canaries = [email, tag + "@", phone, "415 555 0143", name, "Featherstone"]
    queues = isolated_queues("logs")
    worker = start_worker(infra, f"logs-worker-{run}", queues=",".join(make_settings(infra, **queues).all_queues),
                          **queues)
    poller = start_poller(infra, f"logs-poller-{run}", org=org)
    sweeper = start_sweeper(infra, f"logs-sweeper-{run}", **queues)
    port = free_port()
    api = Proc(infra, ["api", "--port", str(port)], f"logs-api-{run}", infra.env(**queues))
    url = f"http://127.0.0.1:{port}"
    key, _ = apikeys.create(engine, org, None, "log canary test")
    try:
        wait_until_healthy(url)
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
            first = f"{name} ({email}, {phone}) says the team standup is at 9am on Mondays."
            second = f"{name} ({email}, {phone}) says the team standup is at 10am on Mondays."
            answers = [
                client.post("/v1/memories", headers={"Prefer": "wait=30", "X-Idempotency-Key": f"k-{tag}"},
                            json={"org_id": org, "agent_id": agent, "source": "chat", "content": first,
                                  "valid_from": "2024-01-01T00:00:00Z"}),
                client.post("/v1/memories", headers={"Prefer": "wait=30", "X-Idempotency-Key": f"k-{tag}"},
                            json={"org_id": org, "agent_id": agent, "source": "chat", "content": first,
                                  "valid_from": "2024-01-01T00:00:00Z"}),  # replay
                client.post("/v1/memories", headers={"Prefer": "wait=30"},
                            json={"org_id": org, "agent_id": agent, "source": "chat", "content": second,
                                  "valid_from": "2024-03-01T00:00:00Z"}),  # overlapping: escalated
                client.post("/v1/memories", headers={"Prefer": "wait=30"},
                            json={"org_id": org, "agent_id": agent, "source": "chat", "content": first.upper(),
                                  "valid_from": "2024-01-01T00:00:00Z"}),  # exact duplicate after redaction?
                client.post("/v1/memories", json={"org_id": org, "agent_id": agent, "source": "chat",
                                                  "content": first, "labels": []}),  # 422
                client.post("/v1/memories", json={"org_id": "other-org", "agent_id": agent, "source": "chat",
                                                  "content": first}),  # 403
            ]
            statuses = [a.status_code for a in answers]
            assert statuses[:3] == [201, 201, 201] and statuses[4:] == [422, 403], statuses
            assert answers[1].headers.get("Idempotent-Replayed") == "true"
            for answer in answers[4:]:
                assert not any(c in answer.text for c in canaries)
            escalation_ids = answers[2].json()["escalations"]
            assert escalation_ids
            # The same person, e-mail and phone (equal tags), another time: the rules decide it.
            _wait_for(lambda: client.get("/v1/escalations", params={"status": "resolved"}).json()["escalations"])
            memory = client.get(f"/v1/memories/{answers[2].json()['memory_id']}").json()
            assert email not in str(memory) and "[EMAIL_ADDRESS]" in memory["content"]
        time.sleep(1.0)  # let the processes flush their last lines
    finally:
        api.stop()
        sweeper.stop()
        poller.stop()
        worker.stop()

    streams = {"api": api.log_path, "worker": worker.log_path, "escalations": poller.log_path,
               "sweeper": sweeper.log_path, "postgresql": infra.pg.log_path, "redis": infra.redis.log_path}
    texts = {name: path.read_text(errors="replace") for name, path in streams.items()}
    assert all(texts[name] for name in ("api", "worker", "escalations", "sweeper")), "a log stream is empty"
    assert escalation_ids[0] in texts["escalations"] and '"escalation_resolved"' in texts["escalations"]
    assert "stage_completed" in texts["worker"] and "/v1/memories" in texts["api"]
    for stream, content in texts.items():
        leaked = [c for c in canaries if c in content]
        assert leaked == [], f"{stream} log holds canary values {leaked}"
        assert key not in content and key[:16] not in content, f"{stream} log holds the API key"
        assert VECTOR_RE.search(content) is None, f"{stream} log holds an embedding-like vector"
