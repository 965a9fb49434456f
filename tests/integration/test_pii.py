"""Stage 2, pii, through real worker processes: redaction before hashing and embedding,
no raw value left behind, quarantine of low-confidence findings, and failing closed."""

from __future__ import annotations

import base64
import json
import re
import time
import uuid

import pytest
import redis

from tests.conftest import (fetch_memory, make_settings, memory, new_scope, query, start_worker, tenant_rows,
                            submit_and_wait)
from ibex_worker import redaction_tags
from ibex_worker.adapters.cache import cache_key
from ibex_worker.pipeline.exact_dedup import content_hash

JANE = "Contact Jane Doe at jane.doe@example.com or +1 415 555 0132 about the invoice."
JANE_REDACTED = "Contact [PERSON] at [EMAIL_ADDRESS] or [PHONE_NUMBER] about the invoice."
# Every raw value of JANE, whole and in the fragments a partial redaction would leave.
JANE_VALUES = ("Jane Doe", "Jane", "jane.doe@example.com", "jane.doe", "@example.com",
               "+1 415 555 0132", "415 555 0132", "555 0132")
OMAR = "Contact Omar Haddad at omar.haddad@example.org or +1 212 555 0187 about the invoice."
OMAR_VALUES = ("Omar", "Haddad", "omar.haddad@example.org", "212 555 0187")

# Grouped like a Visa card with a wrong check digit: uncertain, so masked and quarantined.
UNCERTAIN = "The number 4111 1111 1111 1112 came up again."
UNCERTAIN_MASKED = "The number [CREDIT_CARD?] came up again."

LEAK_TABLES = ("memories", "memory_write_jobs", "memory_labels", "memory_relationships",
               "memory_conflict_escalations", "memory_idempotency_keys")


def _leaks(text: str, values: tuple[str, ...]) -> list[str]:
    lowered = text.lower()
    return [value for value in values if value.lower() in lowered]


def _decision(view: dict, stage: str) -> dict:
    return next(d for d in view["decisions"] if d["stage"] == stage)


# ---------------------------------------------------------------- redaction


def test_emails_phone_numbers_and_names_are_replaced_by_typed_placeholders_before_hashing(
        engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    view = submit_and_wait(engine, producer, settings, memory(org, agent, JANE))

    assert view["status"] == "succeeded" and view["outcome"] == "created"
    stored = fetch_memory(engine, view["memory_id"])
    assert stored.status == "active"
    assert stored.content == JANE_REDACTED
    assert _leaks(stored.content, JANE_VALUES) == []
    assert redaction_tags.types(stored.redaction_tags) == ["PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER"]
    assert stored.content_hash == content_hash(JANE_REDACTED, stored.redaction_tags)
    assert stored.content_hash not in (content_hash(JANE_REDACTED), content_hash(JANE))

    report = stored.pii_report
    assert report["status"] == "redacted"
    assert report["quarantine_reasons"] == []
    assert {etype: (entry["count"], entry["redacted"]) for etype, entry in report["entities"].items()} == \
        {"EMAIL_ADDRESS": (1, 1), "PHONE_NUMBER": (1, 1), "PERSON": (1, 1)}
    assert all(entry["max_score"] >= report["redaction_threshold"] for entry in report["entities"].values())
    assert _leaks(json.dumps(report), JANE_VALUES) == []

    pii = _decision(view, "pii")
    assert pii["result"] == "redacted"
    assert pii["entities"] == {"EMAIL_ADDRESS": 1, "PHONE_NUMBER": 1, "PERSON": 1}


def test_two_writes_differing_only_in_pii_values_are_two_memories_and_a_repeat_is_one(
        engine, producer, settings, pipeline):
    """The redacted texts are equal, but the keyed tags of their values are not: two people's
    facts. The same person's fact again is an exact duplicate."""
    org, agent = new_scope(), new_scope("agent")
    first = submit_and_wait(engine, producer, settings, memory(org, agent, JANE))
    second = submit_and_wait(engine, producer, settings, memory(org, agent, OMAR))
    again = submit_and_wait(engine, producer, settings, memory(org, agent, JANE.replace("Jane Doe", "JANE  DOE")))

    assert [first["outcome"], second["outcome"], again["outcome"]] == ["created", "created", "exact_duplicate"]
    assert again["memory_id"] == first["memory_id"]
    assert again["result"]["error"]["code"] == "DUPLICATE_CONTENT"
    assert {"stage": "exact_dedup", "result": "hit", "memory_id": first["memory_id"]} in again["decisions"]
    assert "embed" not in again["timings_ms"]
    near = _decision(second, "near_dedup")
    assert (near["candidates"], near["left_out"]) == ([], [{"memory_id": first["memory_id"],
                                                             "why": "different_people"}])
    rows = query(engine, "SELECT id, content, retrieval_count FROM memories WHERE org_id = :o", o=org)
    assert sorted((str(r.id), r.content, r.retrieval_count) for r in rows) == sorted(
        [(first["memory_id"], JANE_REDACTED, 1), (second["memory_id"], JANE_REDACTED, 0)])


def test_embedding_is_computed_from_the_redacted_text(engine, producer, settings, pipeline):
    # Two agents, so no exact dedup: each write is embedded on its own. Raw texts with
    # different names, addresses and numbers embed differently; redacted ones are equal.
    org, agent_a, agent_b = new_scope(), new_scope("agent"), new_scope("agent")
    views = [submit_and_wait(engine, producer, settings, memory(org, a, text))
             for a, text in ((agent_a, JANE), (agent_b, OMAR))]
    assert [v["outcome"] for v in views] == ["created", "created"]
    [pair] = query(engine,
                   "SELECT a.content AS a_content, b.content AS b_content, a.embedding <=> b.embedding AS distance "
                   "FROM memories a, memories b WHERE a.id = :a AND b.id = :b",
                   a=views[0]["memory_id"], b=views[1]["memory_id"])
    assert pair.a_content == pair.b_content == JANE_REDACTED
    assert pair.distance is not None
    assert pair.distance < 1e-5


def test_no_raw_value_is_left_in_any_stored_row_once_the_pii_stage_ran(engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    created = submit_and_wait(engine, producer, settings, memory(org, agent, JANE), key=f"k-{uuid.uuid4()}")
    duplicate = submit_and_wait(engine, producer, settings, memory(org, agent, JANE), key=f"k-{uuid.uuid4()}")
    other = submit_and_wait(engine, producer, settings, memory(org, agent, OMAR), key=f"k-{uuid.uuid4()}")
    # Near-identical, no valid_from: linked as a near duplicate and escalated as a conflict.
    near = submit_and_wait(engine, producer, settings,
                           memory(org, agent, JANE.replace("the invoice.", "the invoices.")),
                           key=f"k-{uuid.uuid4()}")
    assert [created["outcome"], duplicate["outcome"], other["outcome"], near["outcome"]] == \
        ["created", "exact_duplicate", "created", "created"]
    assert [n["memory_id"] for n in near["result"]["near_duplicates"]] == [created["memory_id"]]

    # Every table holds rows for this org, so scanning it is not vacuous.
    rows = {table: tenant_rows(engine, table, org) for table in LEAK_TABLES}
    assert {table: len(found) for table, found in rows.items()} == {
        "memories": 3, "memory_write_jobs": 4, "memory_labels": 3, "memory_relationships": 1,
        "memory_conflict_escalations": 1, "memory_idempotency_keys": 4}
    for table, found in rows.items():
        for row in found:
            assert _leaks(row, JANE_VALUES + OMAR_VALUES) == [], f"raw PII value in {table}: {row}"

    jobs = query(engine, "SELECT status, raw_content FROM memory_write_jobs WHERE org_id = :o", o=org)
    assert [(j.status, j.raw_content) for j in jobs] == [("succeeded", None)] * 4
    memories = query(engine, "SELECT subject_key FROM memories WHERE org_id = :o", o=org)
    for row in memories:
        assert row.subject_key is not None and "[PERSON]" in row.subject_key
        assert _leaks(row.subject_key, JANE_VALUES) == []


def _redis_payloads(client: redis.Redis) -> list[bytes]:
    """Every key and value Redis holds now."""
    payloads = []
    for key in client.scan_iter(count=1000):
        kind = client.type(key)
        if kind == b"string":
            payloads.append(client.get(key) or b"")
        elif kind == b"list":
            payloads.extend(client.lrange(key, 0, -1))
        elif kind == b"hash":
            payloads.extend(client.hvals(key))
        elif kind == b"set":
            payloads.extend(client.smembers(key))
        elif kind == b"zset":
            payloads.extend(client.zrange(key, 0, -1))
        payloads.append(key)
    return payloads


def _message_bodies(blob: bytes) -> list[bytes]:
    """kombu's Redis transport stores message bodies base64-encoded: decode them, or a
    message carrying content would hide it from a plain scan."""
    return [base64.b64decode(body) for body in re.findall(rb'"body": ?"([A-Za-z0-9+/=]+)"', blob)]


def test_no_raw_value_reaches_redis_neither_cache_nor_messages(infra, engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    email = f"jane.doe.{uuid.uuid4().hex[:10]}@example.com"
    view = submit_and_wait(engine, producer, settings,
                           memory(org, agent, JANE.replace("jane.doe@example.com", email)))
    assert view["outcome"] == "created"
    client = redis.Redis.from_url(infra.redis.url)
    try:
        cached = json.loads(client.get(cache_key(org, view["memory_id"])))
        live = _redis_payloads(client)
    finally:
        client.close()
    assert cached["content"] == JANE_REDACTED
    # The append-only file holds every message ever published, consumed or not.
    aof = b"".join(path.read_bytes() for path in infra.redis.data_dir.rglob("*.aof"))
    bodies = _message_bodies(aof) + [b for p in live for b in _message_bodies(p)]
    assert any(view["job_id"].encode() in body for body in bodies), "message bodies carry the job id"
    for payload in [aof, *live, *bodies]:
        assert email.encode() not in payload
        assert b"Jane Doe" not in payload
        assert b"555 0132" not in payload


# ---------------------------------------------------------------- quarantine


def test_low_confidence_finding_quarantines_the_memory_with_the_value_masked(infra, engine, producer, settings,
                                                                             pipeline):
    org, agent = new_scope(), new_scope("agent")
    view = submit_and_wait(engine, producer, settings, memory(org, agent, UNCERTAIN))

    assert view["status"] == "succeeded" and view["outcome"] == "created"
    assert view["result"]["status"] == "quarantined"
    stored = fetch_memory(engine, view["memory_id"])
    assert stored.status == "quarantined"
    assert stored.content == UNCERTAIN_MASKED
    assert stored.embedding is None
    assert stored.embedding_model is None
    report = stored.pii_report
    assert report["status"] == "quarantined"
    assert report["quarantine_reasons"] == ["low_confidence:CREDIT_CARD"]
    card = report["entities"]["CREDIT_CARD"]
    assert (card["redacted"], card["masked"]) == (0, 1)
    assert report["quarantine_floor"] <= card["max_score"] < report["redaction_threshold"]
    assert "1112" not in json.dumps(report)

    pii = _decision(view, "pii")
    assert pii["result"] == "quarantined"
    assert pii["quarantine_reasons"] == ["low_confidence:CREDIT_CARD"]
    assert {"stage": "embed", "result": "skipped", "reason": "quarantined"} in view["decisions"]
    client = redis.Redis.from_url(infra.redis.url)
    try:
        assert client.exists(cache_key(org, view["memory_id"])) == 0, "a quarantined memory must not be cached"
    finally:
        client.close()


def test_quarantined_memory_is_never_a_near_duplicate_candidate(engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    quarantined = submit_and_wait(engine, producer, settings, memory(org, agent, UNCERTAIN))
    assert fetch_memory(engine, quarantined["memory_id"]).status == "quarantined"

    # Redacted for certain and near-identical to the quarantined text.
    clean = submit_and_wait(engine, producer, settings,
                            memory(org, agent, "The number 4111 1111 1111 1111 came up again."))
    assert fetch_memory(engine, clean["memory_id"]).status == "active"
    assert clean["result"]["near_duplicates"] == []
    assert _decision(clean, "near_dedup")["candidates"] == []

    # Control: the same search does find an active near twin in this scope.
    control = submit_and_wait(engine, producer, settings,
                              memory(org, agent, "The number 4111 1111 1111 1111 came up once again."))
    assert fetch_memory(engine, control["memory_id"]).status == "active"
    assert [n["memory_id"] for n in control["result"]["near_duplicates"]] == [clean["memory_id"]]

    links = query(engine, "SELECT source_memory_id, target_memory_id FROM memory_relationships WHERE org_id = :o",
                  o=org)
    assert [(str(link.source_memory_id), str(link.target_memory_id)) for link in links] == \
        [(control["memory_id"], clean["memory_id"])]
    assert query(engine, "SELECT id FROM memory_conflict_escalations WHERE org_id = :o AND "
                         "(memory_id = :q OR candidate_id = :q)", o=org, q=quarantined["memory_id"]) == []


def test_the_same_quarantined_text_twice_gives_two_quarantined_rows(engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    views = [submit_and_wait(engine, producer, settings, memory(org, agent, UNCERTAIN)) for _ in range(2)]

    assert [v["status"] for v in views] == ["succeeded", "succeeded"]
    assert [v["outcome"] for v in views] == ["created", "created"]
    assert all("error" not in v["result"] for v in views)
    assert {"stage": "exact_dedup", "result": "skipped", "reason": "quarantined"} in views[1]["decisions"]
    rows = query(engine, "SELECT id, status, content_hash, retrieval_count FROM memories WHERE org_id = :o", o=org)
    assert sorted(str(r.id) for r in rows) == sorted(v["memory_id"] for v in views)
    assert [r.status for r in rows] == ["quarantined", "quarantined"]
    assert len({r.content_hash for r in rows}) == 1  # same hash: deduplication would have matched
    assert [r.retrieval_count for r in rows] == [0, 0]


# ---------------------------------------------------------------- failing closed


def test_analyzer_failure_fails_the_job_and_stores_nothing(infra, engine):
    from ibex_worker.celery_app import create_app
    from ibex_worker.submit import submit, wait_for_job

    # Validate and pii on queues only this worker consumes: the next stage is routed by the
    # publishing worker's settings, so the pipeline worker must see neither.
    queues = {"queue_validate": "pii-fails.validate", "queue_pii": "pii-fails.pii"}
    fail_settings = make_settings(infra, **queues)
    app = create_app(fail_settings)
    proc = start_worker(infra, "pii-fails", queues=",".join(queues.values()), pii_max_chars=60,
                        stage_max_retries=1, retry_backoff_base=0.05, retry_backoff_cap=0.1, **queues)
    org, agent = new_scope(), new_scope("agent")
    content = (JANE + " She asked that every reminder about the overdue invoice be sent on Monday mornings, "
               "never on weekends, and that the finance team be copied on each one.")
    assert len(content) > 60 * 3
    try:
        submission = submit(engine, app, fail_settings, memory(org, agent, content))
        view = wait_for_job(engine, org, submission.job_id, timeout=90)
    finally:
        proc.stop()
        app.close()

    assert view is not None
    assert view["status"] == "failed", view
    assert view["outcome"] is None and view["memory_id"] is None
    assert view["error"]["code"] == "PII_ANALYSIS_FAILED"
    assert _leaks(json.dumps(view["error"]), JANE_VALUES) == []
    assert "invoice" not in json.dumps(view["error"])
    assert query(engine, "SELECT id FROM memories WHERE org_id = :o", o=org) == []
    [job] = query(engine, "SELECT raw_content, stage, attempts FROM memory_write_jobs WHERE id = :j",
                  j=submission.job_id)
    assert job.raw_content is None
    assert job.stage == "pii"
    for row in tenant_rows(engine, "memory_write_jobs", org):
        assert _leaks(row, JANE_VALUES) == []


def _wait_for_stage(engine, org: str, job_ids: list[str], stage: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = query(engine, "SELECT stage FROM memory_write_jobs WHERE org_id = :o", o=org)
        if len(rows) == len(job_ids) and all(r.stage == stage for r in rows):
            return
        time.sleep(0.1)
    raise TimeoutError(f"jobs did not all reach {stage}: {[r.stage for r in rows]}")


def test_an_analyzer_failure_on_one_text_does_not_fail_the_other_jobs_of_its_batch(
        infra, engine, producer, settings, pipeline):
    from ibex_worker.celery_app import create_app
    from ibex_worker.publish import publish
    from ibex_worker.submit import submit, wait_for_job

    # A parking worker validates and leaves both jobs at stage pii (published to a queue
    # nobody reads); then one message carries both ids to the analyzing worker, the way the
    # sweeper re-publishes lost jobs of one stage together. Later stages go to `pipeline`.
    parked = {"queue_validate": "pii-batch.validate", "queue_pii": "pii-batch.parked"}
    batch = {"queue_validate": "pii-batch.validate", "queue_pii": "pii-batch.pii"}
    parked_settings, batch_settings = make_settings(infra, **parked), make_settings(infra, **batch)
    parked_app, batch_app = create_app(parked_settings), create_app(batch_settings)
    parker = start_worker(infra, "pii-batch-parker", queues=parked["queue_validate"], **parked)
    analyzer = None
    org, agent = new_scope(), new_scope("agent")
    good = memory(org, agent, "The nightly export runs at 01:30 UTC.")
    oversized = memory(org, agent, JANE + " " + JANE)
    try:
        job_ids = [submit(engine, parked_app, parked_settings, body).job_id for body in (good, oversized)]
        _wait_for_stage(engine, org, job_ids, "pii")
        analyzer = start_worker(infra, "pii-batch", queues=batch["queue_pii"], pii_max_chars=100,
                                stage_max_retries=1, retry_backoff_base=0.05, retry_backoff_cap=0.1, **batch)
        assert publish(batch_app, batch_settings, "pii", job_ids)
        views = [wait_for_job(engine, org, job_id, timeout=90) for job_id in job_ids]
    finally:
        for proc in (analyzer, parker):
            if proc is not None:
                proc.stop()
        parked_app.close()
        batch_app.close()

    assert views[1]["status"] == "failed"
    assert views[1]["error"]["code"] == "PII_ANALYSIS_FAILED"
    assert (views[0]["status"], views[0]["outcome"]) == ("succeeded", "created"), views[0]["error"]
    assert fetch_memory(engine, views[0]["memory_id"]).status == "active"
