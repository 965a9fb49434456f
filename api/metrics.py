"""The API's Prometheus metrics and the ``/metrics`` exposition.

Labels are bounded: the route template (never a raw path with ids), the method, the status
and the write result. With ``PROMETHEUS_MULTIPROC_DIR`` set (``ibex up`` sets it) one scrape
of the API shows every process of the stack: workers, sweeper and the API itself.
"""

from __future__ import annotations

import os
from functools import lru_cache

from prometheus_client import (CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Gauge, Histogram,
                               generate_latest)
from prometheus_client.multiprocess import MultiProcessCollector

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class ApiMetrics:
    def __init__(self) -> None:
        self.requests = Counter("ibex_api_requests_total", "HTTP requests by route and status",
                                ["method", "route", "status"])
        self.latency = Histogram("ibex_api_request_duration_seconds", "HTTP request time", ["method", "route"],
                                 buckets=_LATENCY_BUCKETS)
        self.writes = Counter("ibex_api_writes_total", "Write requests by result (per item for batches)",
                              ["result"])
        self.backlog = Gauge("ibex_api_backlog_jobs", "Unfinished jobs seen by the last back-pressure check",
                             multiprocess_mode="max")

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.labels(method=method, route=route, status=str(status)).inc()
        self.latency.labels(method=method, route=route).observe(seconds)

    def write(self, result: str, count: int = 1) -> None:
        self.writes.labels(result=result).inc(count)


@lru_cache(maxsize=1)
def get_api_metrics() -> ApiMetrics:
    """Once per process: the default registry refuses a second copy of each metric."""
    return ApiMetrics()


def exposition() -> tuple[bytes, str]:
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder:
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=folder)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
