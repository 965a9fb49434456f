"""The Grafana dashboard is valid JSON whose queries name only metrics the project exports,
and the Prometheus config scrapes the endpoints the services serve."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SUFFIXES = ("_bucket", "_count", "_sum", "_total")
PROMQL_WORDS = {"sum", "by", "rate", "histogram_quantile", "le", "irate", "increase", "avg", "max", "min",
                "without", "on", "ignoring", "group_left", "group_right"}


def exported_metric_names() -> set[str]:
    """Every metric name declared in the code: Counter/Gauge/Histogram(...) and metric families."""
    names = set()
    for path in [*ROOT.glob("worker/**/*.py"), *ROOT.glob("api/**/*.py")]:
        for match in re.finditer(r"(?:Counter|Gauge|Histogram|GaugeMetricFamily|CounterMetricFamily)\(\s*\"(ibex_\w+)\"",
                                 path.read_text()):
            names.add(match.group(1))
    return names


def _base(name: str) -> str:
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def test_the_dashboard_is_valid_json_and_queries_only_exported_metrics():
    dashboard = json.loads((ROOT / "ops" / "grafana" / "ibex-dashboard.json").read_text())
    exported = exported_metric_names() | {f"{n}_total" for n in exported_metric_names()}
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert exprs, "a dashboard without queries"
    used = set()
    for expr in exprs:
        for token in re.findall(r"\b(ibex_\w+)", expr):
            used.add(token)
    assert used, "no ibex metric is queried"
    unknown = {name for name in used if name not in exported and _base(name) not in exported}
    assert unknown == set()
    for required in ("ibex_memory_dedup_total", "ibex_memory_conflicts_total", "ibex_memory_conflict_llm_calls_total",
                     "ibex_stage_duration_seconds_bucket", "ibex_jobs_backlog", "ibex_escalations_backlog",
                     "ibex_pii_findings_total"):
        assert any(required in e for e in exprs), required


def test_prometheus_scrapes_every_process_that_writes_metrics_on_the_ports_the_compose_file_gives():
    config = yaml.safe_load((ROOT / "ops" / "prometheus" / "prometheus.yml").read_text())
    targets = {t for job in config["scrape_configs"] for sc in job.get("static_configs", []) for t in sc["targets"]}
    targets |= {f"{name}:{sd['port']}" for job in config["scrape_configs"] for sd in job.get("dns_sd_configs", [])
                for name in sd["names"]}
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert f"api:{compose['api']['environment']['IBEX_API_PORT']}" in targets
    for name in ("worker", "escalations", "sweeper"):  # every replica: found by DNS, not a fixed address
        assert f"{name}:{compose[name]['environment']['IBEX_WORKER_METRICS_PORT']}" in targets, name
    assert {name: "monitoring" in svc.get("profiles", []) for name, svc in compose.items()
            if name in ("prometheus", "grafana")} == {"prometheus": True, "grafana": True}


def test_grafana_is_provisioned_with_prometheus_and_the_dashboard():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    mounts = " ".join(compose["grafana"]["volumes"])
    assert "./ops/grafana/ibex-dashboard.json:/var/lib/grafana/dashboards/" in mounts
    source = yaml.safe_load((ROOT / "ops/grafana/provisioning/datasources/prometheus.yml").read_text())
    assert source["datasources"][0]["url"] == "http://prometheus:9090"
    provider = yaml.safe_load((ROOT / "ops/grafana/provisioning/dashboards/ibex.yml").read_text())
    assert provider["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"


def test_alert_rules_are_loaded_and_query_only_exported_metrics():
    config = yaml.safe_load((ROOT / "ops" / "prometheus" / "prometheus.yml").read_text())
    assert config["rule_files"] == ["alerts.yml"]
    rules = yaml.safe_load((ROOT / "ops" / "prometheus" / "alerts.yml").read_text())
    alerts = {rule["alert"]: rule for group in rules["groups"] for rule in group["rules"]}
    assert {"IbexPipelineStalled", "IbexEscalationsDead", "IbexBacklogGrowing", "IbexStageFailures",
            "IbexLoopStuck"} <= set(alerts)
    exported = exported_metric_names()
    exported |= {_base(name) for name in exported}  # a counter declared as ..._total
    for rule in alerts.values():
        assert set(rule) >= {"expr", "for", "labels", "annotations"} and rule["annotations"]["summary"]
        used = set(re.findall(r"\b(ibex_\w+)", rule["expr"]))
        assert used and {_base(name) for name in used} <= exported, rule["alert"]


def test_the_stall_alert_fires_at_the_default_stall_threshold():
    from ibex_worker.config import Settings

    rules = yaml.safe_load((ROOT / "ops" / "prometheus" / "alerts.yml").read_text())
    [stalled] = [r for g in rules["groups"] for r in g["rules"] if r["alert"] == "IbexPipelineStalled"]
    threshold = float(re.search(r">=\s*([\d.]+)", stalled["expr"]).group(1))
    assert threshold == Settings.model_fields["pipeline_stall_seconds"].default
