"""`ibex worker` serves Prometheus metrics for all its pool processes (multiprocess mode):
the endpoint compose's Prometheus scrapes."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import isolated_queues, make_settings, memory, new_scope, start_worker, submit_and_wait
from ibex_worker.celery_app import create_app
from ibex_worker.devstack.ports import free_port


def test_the_worker_metrics_endpoint_shows_the_stages_its_pool_processes_ran(infra, engine):
    queues = isolated_queues("wmetrics")
    settings = make_settings(infra, **queues)
    port = free_port()
    worker = start_worker(infra, "wmetrics", queues=",".join(settings.all_queues), concurrency=2,
                          worker_metrics_port=port, **queues)
    try:
        view = submit_and_wait(engine, create_app(settings), settings,
                               memory(new_scope(), new_scope("agent"), "Deploys are frozen during the holidays."))
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    finally:
        worker.stop()
    assert view["status"] == "succeeded"
    counts = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "ibex_stage_duration_seconds_count":
                counts[sample.labels["stage"]] = counts.get(sample.labels["stage"], 0) + sample.value
            if sample.name == "ibex_memory_dedup_total":
                counts[f"dedup:{sample.labels['result']}"] = sample.value
    assert {stage: counts.get(stage) for stage in ("validate", "pii", "embed", "persist")} == \
        {"validate": 1, "pii": 1, "embed": 1, "persist": 1}
    assert counts.get("dedup:novel") == 1
