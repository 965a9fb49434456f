"""`ibex worker` serves Prometheus metrics for all its pool processes (multiprocess mode):
the endpoint compose's Prometheus scrapes."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import isolated_queues, make_settings, memory, new_scope, start_worker, submit_and_wait
from ibex_worker.celery_app import create_app
from ibex_worker.devstack.ports import free_port, free_ports


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


def test_the_sweeper_and_the_escalation_worker_serve_their_last_round_and_the_probe_reads_it(infra, tmp_path):
    """What compose's healthchecks run: healthy while the loop turns, unhealthy once it is gone."""
    from tests.conftest import Proc, start_sweeper
    from ibex_worker import probe

    ports = dict(zip(("sweeper", "escalations"), free_ports(2)))
    sweeper = start_sweeper(infra, "probe-sweeper", worker_metrics_port=ports["sweeper"],
                            **isolated_queues("probe"))
    escalations = Proc(infra, ["escalations", "run", "--name", "probe-poller"], "probe-escalations",
                       {**infra.env(worker_metrics_port=ports["escalations"], escalation_org_ids="org-probe-none"),
                        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)})
    urls = {name: f"http://127.0.0.1:{port}/metrics" for name, port in ports.items()}
    try:
        healthy = {name: wait_for(lambda n=name: probe.check(n, 30, urls[n]) is None) for name in urls}
        stale = probe.check("sweeper", 0, urls["sweeper"])
        wrong = probe.check("escalations", 30, urls["sweeper"])
    finally:
        sweeper.stop()
        escalations.stop()
    assert healthy == {"sweeper": True, "escalations": True}
    assert stale and "last round" in stale
    assert wrong == "escalations has not finished a round yet"
    assert probe.check("sweeper", 30, urls["sweeper"]).startswith("no metrics at")
    assert probe.main(["sweeper", "30", urls["sweeper"]]) == 1


def wait_for(predicate, timeout: float = 60.0) -> bool:
    from tests.conftest import wait_until

    return wait_until(predicate, timeout=timeout, interval=0.5)
