"""Prometheus metrics. Worker processes write them in multiprocess mode when
``PROMETHEUS_MULTIPROC_DIR`` is set (``ibex up`` sets it), so one scrape sees every process.
Labels are bounded sets (stages, outcomes, entity types): never ids or content.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from prometheus_client import Counter, Gauge, Histogram


class Metrics:
    def __init__(self) -> None:
        self.dedup = Counter("ibex_memory_dedup_total", "Write outcomes by dedup result", ["result"])
        self.conflicts = Counter("ibex_memory_conflicts_total", "Conflict decisions by outcome", ["outcome"])
        self.llm_calls = Counter("ibex_memory_conflict_llm_calls_total", "Conflict classifier calls that reach a model")
        self.stage_seconds = Histogram("ibex_stage_duration_seconds", "Per-job stage time", ["stage"],
                                       buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
        self.jobs = Counter("ibex_jobs_finished_total", "Finished jobs", ["status", "outcome"])
        self.pii = Counter("ibex_pii_findings_total", "PII findings by entity type", ["entity_type"])
        self.embedded = Counter("ibex_embedding_texts_total", "Texts sent to the embedding model")
        self.purged = Counter("ibex_purged_rows_total", "Rows removed by retention, by table", ["table"])
        # A sample of bucketed near-duplicate searches compared with the whole-agent search
        # (ibex_worker.adapters.vector_store): "missed" when the buckets lost a candidate.
        self.bucket_audits = Counter("ibex_near_dedup_bucket_audits_total",
                                     "Bucketed near-duplicate searches checked against the whole agent", ["outcome"])
        # Escalation worker. The backlog is counted by one query; in multiprocess mode the most
        # recent value of a live process wins, so several pollers do not add up.
        self.escalation_backlog = Gauge("ibex_memory_conflict_escalations", "Escalations not yet resolved, by status",
                                        ["status"], multiprocess_mode="livemostrecent")
        self.escalation_failures = Counter("ibex_memory_conflict_escalation_failures_total",
                                           "Failed escalation attempts by error code", ["code"])
        self.escalations_dead = Counter("ibex_memory_conflict_escalations_dead_total",
                                        "Escalations given up after their last attempt")
        # Loop processes (sweeper, escalation worker): when each last finished a round; a
        # healthcheck (``ibex_worker.probe``) reads it from the process's own /metrics.
        self.last_round = Gauge("ibex_process_last_round_timestamp_seconds",
                                "When a loop process last finished a round (Unix time)", ["process"],
                                multiprocess_mode="livemax")

    def round_done(self, process: str) -> None:
        self.last_round.labels(process=process).set_to_current_time()

    def stage_completed(self, stage: str, seconds: float) -> None:
        self.stage_seconds.labels(stage=stage).observe(seconds)

    def pii_findings(self, counts: dict[str, int]) -> None:
        for entity_type, count in counts.items():
            self.pii.labels(entity_type=entity_type).inc(count)

    def rows_purged(self, *, jobs: int, idempotency_keys: int) -> None:
        self.purged.labels(table="memory_write_jobs").inc(jobs)
        self.purged.labels(table="memory_idempotency_keys").inc(idempotency_keys)

    def bucket_audit(self, missed: bool) -> None:
        self.bucket_audits.labels(outcome="missed" if missed else "same").inc()

    def embedding_calls(self, texts: int) -> None:
        self.embedded.inc(texts)

    def conflict_decided(self, outcome: str) -> None:
        """An escalation decided (supersedes, contradicts, compatible or needs_review)."""
        self.conflicts.labels(outcome=outcome).inc()

    def llm_call(self) -> None:
        """A classifier request that reached a model and got its answer (2xx)."""
        self.llm_calls.inc()

    def escalation_failed(self, code: str, *, dead: bool) -> None:
        self.escalation_failures.labels(code=code).inc()
        if dead:
            self.escalations_dead.inc()

    def escalation_backlog_counts(self, counts: dict[str, int]) -> None:
        for status, count in counts.items():
            self.escalation_backlog.labels(status=status).set(count)

    def job_finished(self, status: str, outcome: str | None, ctx: Any) -> None:
        self.jobs.labels(status=status, outcome=outcome or "none").inc()
        if status != "succeeded":
            return
        if outcome == "exact_duplicate":
            self.dedup.labels(result="exact_duplicate").inc()
            return
        self.dedup.labels(result="near_duplicate" if ctx.near_duplicates else "novel").inc()
        plan = ctx.conflict or {}
        for key, label in (("supersedes", "supersedes"), ("superseded_by", "supersedes"),
                           ("escalations", "escalated")):
            if plan.get(key):
                self.conflicts.labels(outcome=label).inc(len(plan[key]))


@lru_cache(maxsize=1)
def get_metrics() -> Metrics:
    return Metrics()


def serve(settings: Any, process: str) -> bool:
    """Serve /metrics on ``IBEX_WORKER_METRICS_HOST``:``IBEX_WORKER_METRICS_PORT`` from this
    process (a thread): every process writing to ``PROMETHEUS_MULTIPROC_DIR`` when that is set
    (a worker's pool), else this process's own registry. False when no port is set (on one
    host the API's /metrics reads the shared folder)."""
    import os

    import structlog
    from prometheus_client import REGISTRY, CollectorRegistry, start_http_server

    if not settings.worker_metrics_port:
        return False
    registry = REGISTRY
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder:
        from prometheus_client.multiprocess import MultiProcessCollector

        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=folder)
    start_http_server(settings.worker_metrics_port, addr=settings.worker_metrics_host, registry=registry)
    structlog.get_logger("ibex.metrics").info("metrics_serving", process=process, port=settings.worker_metrics_port)
    return True
