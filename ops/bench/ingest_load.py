"""Ingest throughput and latency of the HTTP API's 202 path: authenticate, validate, claim
the idempotency key and insert the job row in one transaction, publish the job id.

    python -m ops.bench.ingest_load --requests 2000 --rate 200 --saturation-requests 2000 --concurrency 32

Two runs against one ``ibex api`` (uvicorn, ``--api-workers`` processes), on its own embedded
PostgreSQL (fsync on) and Redis in a temporary folder, with no pipeline worker: the jobs
stay queued, so only the write path is measured (back-pressure raised out of the way).
1. Open loop: ``--requests`` POSTs at a fixed ``--rate`` (half with an idempotency key),
   latency per request from its scheduled start (so a stalled server cannot hide queueing).
2. Closed loop: ``--concurrency`` clients send ``--saturation-requests`` POSTs back to back:
   the most this process accepts per second.
Client and server share the machine (2 cores here). Only 127.0.0.1 is contacted; every loop
is bounded by its request count. Writes JSON to ops/bench/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from ibex_worker import apikeys, migrate
from ibex_worker.db import make_engine
from ibex_worker.devstack.ports import free_port
from ibex_worker.devstack.postgres import EmbeddedPostgres
from ibex_worker.devstack.process import Proc
from ibex_worker.devstack.redis import EmbeddedRedis

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
ORG = "bench"


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100.0 * (len(ordered) - 1))))
    return ordered[index]


def summarise(latencies: list[float], statuses: list[int], seconds: float) -> dict[str, Any]:
    ok = [lat for lat, status in zip(latencies, statuses) if status == 202]
    return {
        "requests": len(statuses), "accepted_202": len(ok),
        "other_statuses": {str(s): statuses.count(s) for s in sorted(set(statuses)) if s != 202},
        "wall_seconds": round(seconds, 3), "throughput_per_s": round(len(ok) / seconds, 1),
        "latency_ms": {"p50": round(percentile(ok, 50) * 1000, 2), "p90": round(percentile(ok, 90) * 1000, 2),
                       "p99": round(percentile(ok, 99) * 1000, 2), "max": round(max(ok) * 1000, 2),
                       "mean": round(statistics.fmean(ok) * 1000, 2)} if ok else None,
    }


def body(i: int, run: str) -> dict[str, Any]:
    return {"org_id": ORG, "agent_id": f"agent-{i % 50}", "source": "bench",
            "content": f"Benchmark memory {run}-{i}: the user prefers dark mode in every editor.",
            "labels": [{"label": "preference", "confidence": 0.9}]}


def headers_for(i: int) -> dict[str, str]:
    return {"X-Idempotency-Key": f"bench-{uuid.uuid4().hex}"} if i % 2 else {}


async def open_loop(client: httpx.AsyncClient, requests: int, rate: float) -> dict[str, Any]:
    """Request i starts at t0 + i/rate whatever happened before it (no coordinated omission)."""
    latencies: list[float] = [0.0] * requests
    statuses: list[int] = [0] * requests
    started = time.perf_counter()

    async def one(i: int) -> None:
        scheduled = started + i / rate
        await asyncio.sleep(max(0.0, scheduled - time.perf_counter()))
        response = await client.post("/v1/memories", json=body(i, "open"), headers=headers_for(i))
        latencies[i] = time.perf_counter() - scheduled
        statuses[i] = response.status_code

    await asyncio.gather(*(one(i) for i in range(requests)))
    return summarise(latencies, statuses, time.perf_counter() - started)


async def closed_loop(client: httpx.AsyncClient, requests: int, concurrency: int) -> dict[str, Any]:
    latencies: list[float] = []
    statuses: list[int] = []
    counter = iter(range(requests))
    started = time.perf_counter()

    async def lane() -> None:
        for i in counter:
            sent = time.perf_counter()
            response = await client.post("/v1/memories", json=body(i, "closed"), headers=headers_for(i))
            latencies.append(time.perf_counter() - sent)
            statuses.append(response.status_code)

    await asyncio.gather(*(lane() for _ in range(concurrency)))
    return summarise(latencies, statuses, time.perf_counter() - started)


async def drive(url: str, key: str, args: argparse.Namespace) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=max(args.concurrency, 256), max_keepalive_connections=256)
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"}, limits=limits,
                                 timeout=60.0) as client:
        await closed_loop(client, 100, 8)  # warm-up: connection pools, first imports
        opened = await open_loop(client, args.requests, args.rate)
        closed = await closed_loop(client, args.saturation_requests, args.concurrency)
    return {"open_loop": opened, "closed_loop": closed}


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the API exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise SystemExit("the API never answered /healthz")


def run(args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="ibex-ingest-bench-"))
    pg, redis = EmbeddedPostgres(folder / "pgdata"), EmbeddedRedis(folder / "redis")
    api = None
    try:
        pg.start()
        redis.start()
        migrate.up(pg.url)
        engine = make_engine(pg.url)
        key, _ = apikeys.create(engine, ORG)
        engine.dispose()
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("IBEX_")}
        env.update(IBEX_ENVIRONMENT="test", IBEX_DATABASE_URL=pg.app_url, IBEX_REDIS_URL=redis.url,
                   IBEX_LOG_FORMAT="json", IBEX_LOG_LEVEL="WARNING", IBEX_BACKLOG_LIMIT="1000000",
                   IBEX_API_WORKERS=str(args.api_workers))
        api = Proc("api", ["api", "--port", str(port)], env, log_path=folder / "api.log", cwd=ROOT)
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, api.popen)
        figures = asyncio.run(drive(url, key, args))
    finally:
        if api is not None:
            api.stop()
        redis.stop()
        pg.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "benchmark": "ingest_load", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version()},
        "setup": {"api_processes": args.api_workers, "postgres_fsync": True, "pipeline_worker": False,
                  "keyed_share": 0.5, "rate_per_s": args.rate, "concurrency": args.concurrency},
        **figures,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000, help="open-loop requests")
    parser.add_argument("--rate", type=float, default=200.0, help="open-loop requests per second")
    parser.add_argument("--saturation-requests", type=int, default=2000, help="closed-loop requests")
    parser.add_argument("--concurrency", type=int, default=32, help="closed-loop clients")
    parser.add_argument("--api-workers", type=int, default=1, help="uvicorn processes (IBEX_API_WORKERS)")
    parser.add_argument("--out", type=Path, default=RESULTS / "ingest_load.json")
    args = parser.parse_args()
    result = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
