"""Inline continuation against the real database: a job carried past the stage its delivery
was for, failing there, is written back at the failing model stage with its lease released
and handed back for a retry of *that* stage; the retry finishes it from there.

The stage adapters are stand-ins (an embedder that fails, then one that returns a fixed
unit vector); the claims, write-backs, vector search and persist run on PostgreSQL."""

from __future__ import annotations

import json
import math
from collections import defaultdict

from sqlalchemy import text

from tests.conftest import isolated_queues, make_settings, new_scope, query
from ibex_worker.store import jobs
from ibex_worker.adapters.vector_store import PgVectorStore
from ibex_worker.config import STAGES
from ibex_worker.db import tenant_tx
from ibex_worker.pipeline import carrying
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.pipeline.runner import run_stage
from ibex_worker.pipeline.settling import StageReport


class FailingEmbedder:
    model_name = "stand-in"

    def embed_many(self, texts):
        raise RuntimeError("model crashed")


class FixedEmbedder:
    model_name = "stand-in"

    def embed_many(self, texts):
        return [[1.0 / math.sqrt(384)] * 384 for _ in texts]


def _deps(settings, engine, embedder):
    return StageDeps(settings=settings, engine=engine, vector_store=PgVectorStore(64), embedder=embedder,
                     consumed_queues=frozenset(settings.all_queues))


def _after_pii(engine, settings, org, agent, content):
    """A job as the PII stage leaves it: redacted content in its context, raw content gone."""
    with tenant_tx(engine, org) as conn:
        job_id = jobs.insert_job(conn, org, agent, content, {"source": "chat"}, None,
                                 queue=settings.queue_exact_dedup)
        conn.execute(text("UPDATE memory_write_jobs SET stage = 'exact_dedup', raw_content = NULL, "
                          "context = CAST(:c AS jsonb) WHERE id = :j"),
                     {"j": job_id, "c": json.dumps({"content": content})})
    return job_id


def test_a_model_failure_reached_inline_is_retried_at_that_stage(infra, engine):
    settings = make_settings(infra, stage_batch_wait_ms=0, **isolated_queues("inline-retry"))
    org, agent = new_scope(), new_scope("agent")
    job_id = _after_pii(engine, settings, org, agent, "The release train leaves every second Tuesday.")

    report = run_stage("exact_dedup", [job_id], _deps(settings, engine, FailingEmbedder()),
                       queue=settings.queue_exact_dedup)

    assert dict(report.retry) == {"embed": [job_id]} and report.retry_error.code == "EMBEDDING_FAILED"
    assert not report.publish and not report.failed
    [row] = query(engine, "SELECT stage, status, lease_token, context FROM memory_write_jobs WHERE id = :j",
                  j=job_id)
    assert (row.stage, row.status, row.lease_token) == ("embed", "running", None)
    assert row.context["content_hash"]  # exact_dedup's result was written before the model stage

    report = run_stage("embed", [job_id], _deps(settings, engine, FixedEmbedder()), queue=settings.queue_embed)

    assert not report.retry and not report.publish and not report.failed
    [row] = query(engine, "SELECT status, outcome, timings_ms FROM memory_write_jobs WHERE id = :j", j=job_id)
    assert (row.status, row.outcome) == ("succeeded", "created")
    assert set(row.timings_ms) == set(STAGES) - {"validate", "pii"}
    assert len(query(engine, "SELECT id FROM memories WHERE org_id = :o", o=org)) == 1


def test_a_delivery_for_a_stage_the_job_has_left_does_nothing(infra, engine):
    settings = make_settings(infra, stage_batch_wait_ms=0, **isolated_queues("inline-left"))
    org, agent = new_scope(), new_scope("agent")
    job_id = _after_pii(engine, settings, org, agent, "Standups are at 09:30 on weekdays.")
    report = run_stage("validate", [job_id], _deps(settings, engine, FixedEmbedder()), queue=settings.queue_validate)
    assert report.dropped == 1 and not report.publish and not report.retry
    [row] = query(engine, "SELECT stage, status FROM memory_write_jobs WHERE id = :j", j=job_id)
    assert (row.stage, row.status) == ("exact_dedup", "queued")


def test_a_write_back_that_crashes_hands_the_whole_batch_back_for_a_retry(infra, engine):
    settings = make_settings(infra, stage_batch_wait_ms=0, **isolated_queues("inline-crash"))
    org, agent = new_scope(), new_scope("agent")
    ids = [_after_pii(engine, settings, org, agent, f"Fact {i}: the office closes at 18:00.") for i in range(2)]
    deps = _deps(settings, engine, FixedEmbedder())
    with tenant_tx(engine, org) as conn:
        rows = jobs.claim(conn, ids, "exact_dedup", 60)
    ctxs = [WriteContext.from_row(row) for row in rows]
    ctxs[1].labels = [{"label": object()}]  # cannot be written: the write-back raises TypeError
    report, pending = StageReport(), defaultdict(list)

    carrying._hand_on("exact_dedup", ctxs, deps, report, pending)  # next: embed, inline, written first

    assert not pending and not report.publish
    assert sorted(report.retry["exact_dedup"]) == sorted(ids) and report.retry_error.code == "STAGE_CRASHED"
    rows = query(engine, "SELECT stage, lease_token FROM memory_write_jobs WHERE id = ANY(CAST(:ids AS uuid[]))",
                 ids=ids)
    assert [(r.stage, r.lease_token) for r in rows] == [("exact_dedup", None)] * 2  # neither was half-saved
