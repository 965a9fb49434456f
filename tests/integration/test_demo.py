"""`make demo` against a running stack (API, pipeline worker, escalation worker, one shared
metrics folder): every write ends as the demo expects, and the API's /metrics shows the
counter values the demo implies."""

from __future__ import annotations

import uuid
from collections import Counter

import httpx
from prometheus_client.parser import text_string_to_metric_families

from ops import demo
from tests.conftest import Proc, isolated_queues, make_settings, start_worker, wait_until_healthy
from tests.escalation_support import start_poller
from ibex_worker.devstack.ports import free_port


def _metric(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total


def test_the_demo_ends_as_expected_and_metrics_show_what_it_did(infra, engine, tmp_path):
    run = uuid.uuid4().hex[:6]
    orgs = {"a": f"demo-acme-{run}", "b": f"demo-globex-{run}"}
    queues = isolated_queues("demo")
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    worker = start_worker(infra, "demo-worker", queues=",".join(make_settings(infra, **queues).all_queues),
                          concurrency=2, metrics_dir=metrics_dir, **queues)
    poller = start_poller(infra, "demo-poller", org=",".join(orgs.values()), metrics_dir=metrics_dir)
    port = free_port()
    api = Proc(infra, ["api", "--port", str(port)], "demo-api",
               {**infra.env(**queues), "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url)
        keys = demo.make_keys(infra.pg.url, list(orgs.values()))
        rows = demo.run_demo(url, keys, orgs)
        metrics = httpx.get(f"{url}/metrics", timeout=10).text
    finally:
        api.stop()
        poller.stop()
        worker.stop()

    table = demo.render(rows)
    unexpected = [(r.index, r.kind, r.expected, r.observed) for r in rows if not r.ok]
    assert unexpected == [], table
    assert len(rows) >= 45 and {r.org_id for r in rows} == set(orgs.values())
    kinds = {r.kind: r for r in rows}
    # The escalation worker decided every escalated pair: the overlapping claim about a bounded
    # period contradicts and the near-twins are compatible and stay unlinked by it; the
    # open-ended later value was superseded by the pipeline's rules, never queued.
    assert any(link.startswith("contradicts") for link in kinds["contradiction 2/2 (overlapping)"].links)
    assert "supersedes:outgoing" in kinds["replaced later 2/2 (overlapping)"].links
    assert kinds["replaced later 1/2 (open-ended)"].final_status == "superseded"
    assert not any(link.startswith(("contradicts", "supersedes")) for link in kinds["near duplicate"].links)

    created = [r for r in rows if r.outcome == "created"]
    assert _metric(metrics, "ibex_memory_dedup_total", result="exact_duplicate") == \
        sum(r.outcome == "exact_duplicate" for r in rows)
    assert _metric(metrics, "ibex_memory_dedup_total", result="near_duplicate") == sum(r.near > 0 for r in created)
    assert _metric(metrics, "ibex_memory_dedup_total", result="novel") == sum(r.near == 0 for r in created)
    # Supersessions decided at write time, plus those the escalation worker decided.
    assert _metric(metrics, "ibex_memory_conflicts_total", outcome="supersedes") == \
        sum(r.supersedes for r in rows) + sum(r.expect_link == "supersedes:outgoing" for r in rows if r.escalations)
    assert _metric(metrics, "ibex_memory_conflicts_total", outcome="contradicts") == \
        sum(r.expect_link == "contradicts:outgoing" for r in rows)
    assert _metric(metrics, "ibex_memory_conflicts_total", outcome="escalated") == \
        sum(len(r.escalations) for r in rows)
    assert _metric(metrics, "ibex_memory_conflict_llm_calls_total") == 0  # rules classifier: no model
    jobs = len(rows)
    stage_counts = Counter()
    for family in text_string_to_metric_families(metrics):
        for sample in family.samples:
            if sample.name == "ibex_stage_duration_seconds_count":
                stage_counts[sample.labels["stage"]] += sample.value
    assert stage_counts["validate"] == jobs and stage_counts["pii"] == jobs and stage_counts["persist"] == jobs
    # An exact duplicate jumps from exact_dedup to persist; a quarantined write passes the
    # embed stage without a model call.
    assert stage_counts["embed"] == jobs - sum(r.outcome == "exact_duplicate" for r in rows)
    assert _metric(metrics, "ibex_embedding_texts_total") == stage_counts["embed"] - sum(
        r.final_status == "quarantined" for r in rows)
