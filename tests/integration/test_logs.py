"""Logs carry identifiers, outcomes and timings, never content: a run whose writes carry
canary values leaves none of them in any worker, sweeper, PostgreSQL or Redis log."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_settings, memory, new_scope, start_sweeper, start_worker
from ibex_worker.errors import ValidationFailed

# Every stage on queues only the canary worker consumes, so that worker runs every job
# (its log must show them all) and its short analyzer limit decides the failing write.
CANARY_QUEUES = {"queue_validate": "canary.pipeline", "queue_exact_dedup": "canary.pipeline",
                 "queue_near_dedup": "canary.pipeline", "queue_conflict": "canary.pipeline",
                 "queue_labels": "canary.pipeline", "queue_persist": "canary.pipeline",
                 "queue_pii": "canary.pii", "queue_embed": "canary.embed"}
PII_MAX_CHARS = 150


def _events(path: Path) -> list[dict[str, Any]]:
    events = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # Celery's start-up banner
        if isinstance(event, dict):
            events.append(event)
    return events


def _wait_for_events(path: Path, wanted: set[tuple[str, str]], timeout: float = 30.0) -> list[dict[str, Any]]:
    """Wait until every (event, job_id) pair was logged: a job row is final before its
    worker writes the log line that follows the commit."""
    deadline = time.monotonic() + timeout
    while True:
        events = _events(path)
        seen = {(e.get("event"), e.get("job_id")) for e in events}
        if wanted <= seen or time.monotonic() > deadline:
            return events
        time.sleep(0.2)


def test_canary_values_leave_no_trace_in_any_log(infra, engine, pipeline):
    from ibex_worker.celery_app import create_app
    from ibex_worker.submit import submit, wait_for_job

    tag = uuid.uuid4().hex[:12]
    email, phone, name = f"canary.{tag}@example.com", "+1 415 555 0176", "Margaret Thornbury"
    canaries = (email, f"canary.{tag}", tag, phone, "415 555 0176", "4155550176", name, "Thornbury",
                "4111 1111 1111 1112", "1111 1112")

    org, agent = new_scope(), new_scope("agent")
    base = f"{name} can be reached at {email} or {phone}."
    bodies = {
        "created": memory(org, agent, base),
        "exact_duplicate": memory(org, agent, base),
        "near_duplicate": memory(org, agent, base[:-1] + " today."),
        "other": memory(org, agent, f"{name} prefers email; write to {email}, or call {phone}.",
                        labels=[{"label": "contact", "confidence": 0.9}]),
        "quarantined": memory(org, agent, f"{name}'s number is 4111 1111 1111 1112."),
        "analyzer_fails": memory(org, agent, " ".join([base] * 3)),
    }
    assert all(len(b["content"]) < PII_MAX_CHARS for k, b in bodies.items() if k != "analyzer_fails")
    assert len(bodies["analyzer_fails"]["content"]) > PII_MAX_CHARS

    canary_settings = make_settings(infra, **CANARY_QUEUES)
    app = create_app(canary_settings)
    worker = start_worker(infra, "canary", concurrency=1, queues=",".join(canary_settings.all_queues),
                          pii_max_chars=PII_MAX_CHARS, stage_max_retries=1, retry_backoff_base=0.05,
                          retry_backoff_cap=0.1, **CANARY_QUEUES)
    sweeper = None
    try:
        sweeper = start_sweeper(infra, "canary-sweeper", **CANARY_QUEUES)
        # Rejected at submit: the error names fields, never their values.
        with pytest.raises(ValidationFailed) as rejected:
            submit(engine, app, canary_settings,
                   memory(org, agent, base * 100, valid_from="2026-02-01T00:00:00Z",
                          valid_until="2026-01-01T00:00:00Z"))
        answer = f"{rejected.value} {rejected.value.message} {json.dumps(rejected.value.as_dict())}"
        assert {d["field"] for d in rejected.value.as_dict()["details"]} == {"content", "valid_until"}

        views = {}
        for kind, body in bodies.items():
            key = f"key-{uuid.uuid4()}" if kind == "other" else None
            job_id = submit(engine, app, canary_settings, body, key).job_id
            views[kind] = wait_for_job(engine, org, job_id, timeout=90)
            if kind == "other":  # a replay of the same key answers from the ledger
                replay = submit(engine, app, canary_settings, body, key)
                assert replay.replayed and replay.job_id == job_id
        outcomes = {kind: (v["status"], v["outcome"]) for kind, v in views.items()}
        assert outcomes == {
            "created": ("succeeded", "created"), "exact_duplicate": ("succeeded", "exact_duplicate"),
            "near_duplicate": ("succeeded", "created"), "other": ("succeeded", "created"),
            "quarantined": ("succeeded", "created"), "analyzer_fails": ("failed", None)}
        assert views["near_duplicate"]["result"]["near_duplicates"] != []
        assert views["quarantined"]["result"]["status"] == "quarantined"
        assert views["analyzer_fails"]["error"]["code"] == "PII_ANALYSIS_FAILED"

        succeeded = {v["job_id"] for v in views.values() if v["status"] == "succeeded"}
        failed = views["analyzer_fails"]["job_id"]
        events = _wait_for_events(worker.log_path, {("job_succeeded", j) for j in succeeded}
                                  | {("job_failed", failed)})
    finally:
        if sweeper is not None:
            sweeper.stop()
        worker.stop()
        app.close()

    # The logs were captured and carry identifiers.
    completed = {(e["stage"], e["job_id"]) for e in events if e.get("event") == "stage_completed"}
    for job_id in succeeded:
        assert ("pii", job_id) in completed and ("persist", job_id) in completed
    assert {e["job_id"] for e in events if e.get("event") == "job_succeeded"} >= succeeded
    assert any(e.get("event") == "job_failed" and e.get("job_id") == failed
               and e.get("error_code") == "PII_ANALYSIS_FAILED" for e in events)
    assert any(e.get("event") == "stage_retrying" and e.get("stage") == "pii" for e in events)

    logs = sorted((infra.root / "logs").glob("*.log")) + [infra.pg.log_path, infra.redis.log_path]
    names = {path.name for path in logs}
    assert {"canary.log", "canary-sweeper.log", "pipeline.log", "postgresql.log", "redis.log"} <= names
    for path in logs:
        text = path.read_text(errors="replace").lower()
        found = [c for c in canaries if c.lower() in text]
        assert found == [], f"{path} holds canary values {found}"
    assert [c for c in canaries if c.lower() in answer.lower()] == []
