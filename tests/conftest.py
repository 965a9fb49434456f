"""Shared test infrastructure: real PostgreSQL + pgvector and a real Redis started for the
session, real Celery worker processes, and helpers to submit and wait.

Nothing here fakes infrastructure: unit tests (tests/unit) use no fixture from this file
but ``settings``.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ibex_worker.devstack import process

# Tests never inherit a developer's IBEX_* settings.
for _name in [n for n in os.environ if n.startswith("IBEX_") or n == "PROMETHEUS_MULTIPROC_DIR"]:
    del os.environ[_name]

ROOT = Path(__file__).resolve().parent.parent
MARKERS = {"unit": "unit", "integration": "integration", "migration": "migration", "fault": "fault"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = Path(str(item.fspath)).parent.name
        if folder in MARKERS:
            item.add_marker(getattr(pytest.mark, MARKERS[folder]))


# ---------------------------------------------------------------- infrastructure


TEST_TAG_KEY = "test-key-of-the-redaction-tags-0123456789"  # as `ibex up` generates one


class Infra:
    def __init__(self, root: Path, *, durable: bool = False) -> None:
        """``durable``: PostgreSQL flushes every commit as in production (the tests' default
        acknowledges commits before their WAL is written: fast, but a crash loses them)."""
        from ibex_worker.devstack.postgres import EmbeddedPostgres
        from ibex_worker.devstack.redis import EmbeddedRedis

        self.root = root
        self.pg = EmbeddedPostgres(root / "pgdata", fsync=durable)
        self.redis = EmbeddedRedis(root / "redis", appendonly=True)

    def start(self) -> None:
        from ibex_worker import migrate

        self.pg.start()
        self.redis.start()
        migrate.up(self.pg.url)

    def stop(self) -> None:
        self.redis.stop()
        self.pg.stop()

    def env(self, **overrides: Any) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("IBEX_")}
        env.update({
            "IBEX_ENVIRONMENT": "test", "IBEX_DATABASE_URL": self.pg.app_url, "IBEX_REDIS_URL": self.redis.url,
            "IBEX_MIGRATE_DATABASE_URL": self.pg.url,
            "IBEX_LOG_FORMAT": "json", "IBEX_SWEEPER_INTERVAL_SECONDS": "1", "IBEX_PII_TAG_KEY": TEST_TAG_KEY,
        })
        env.update({f"IBEX_{k.upper()}": str(v) for k, v in overrides.items()})
        return env


@contextmanager
def servers_folder(name: str) -> Iterator[Path]:
    """A folder for embedded servers' data outside pytest's temporary base: another pytest
    session started as root resets that base to mode 0700 (pytest's own hardening), and the
    unprivileged user PostgreSQL runs as could then no longer reach its files."""
    root = Path(tempfile.mkdtemp(prefix=f"ibex-{name}-"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def servers_path(request: pytest.FixtureRequest) -> Iterator[Path]:
    """``tmp_path`` for a test's own embedded servers (see ``servers_folder``)."""
    with servers_folder(re.sub(r"\W", "_", request.node.name)[:40]) as root:
        yield root


@pytest.fixture(scope="session")
def infra() -> Iterator[Infra]:
    with servers_folder("session") as root:
        stack = Infra(root)
        stack.start()
        yield stack
        stack.stop()


def make_settings(infra: Infra | None = None, **overrides: Any) -> Any:
    from ibex_worker.config import Settings

    base: dict[str, Any] = {"environment": "test", "pii_tag_key": TEST_TAG_KEY}
    if infra is not None:
        base.update(database_url=infra.pg.app_url, redis_url=infra.redis.url)
    return Settings(**{**base, **overrides})


@pytest.fixture
def own_infra(servers_path: Path) -> Iterator[Infra]:
    """A PostgreSQL and Redis of the test's own, for tests that stop, restart or starve servers
    or count every org's rows (the session's servers are shared and stay up)."""
    stack = Infra(servers_path / "own")
    stack.start()
    yield stack
    stack.stop()


@pytest.fixture
def own_engine(own_infra: Infra) -> Iterator[Any]:
    from ibex_worker.db import make_engine

    engine = make_engine(own_infra.pg.url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def settings(infra: Infra) -> Any:
    return make_settings(infra)


@pytest.fixture(scope="session")
def engine(infra: Infra) -> Iterator[Any]:
    from ibex_worker.db import make_engine

    eng = make_engine(infra.pg.url)
    yield eng
    eng.dispose()


@pytest.fixture(scope="session")
def producer(settings: Any) -> Any:
    from ibex_worker.celery_app import create_app

    return create_app(settings)


# ---------------------------------------------------------------- processes


class Proc(process.Proc):
    """A project process (worker, sweeper, API, poller) logging to <infra root>/logs/<name>.log."""

    def __init__(self, infra: Infra, command: list[str], name: str, env: dict[str, str]) -> None:
        super().__init__(name, command, env, log_path=infra.root / "logs" / f"{name}.log", cwd=ROOT)

    def deliveries(self, stage: str) -> int:
        """Deliveries of ``stage``'s task this worker received (from Celery's own log line)."""
        return len(re.findall(rf"Task ibex\.stage\.{stage}\[[0-9a-f-]+\] received", self.log_text()))


def start_worker(infra: Infra, name: str, *, queues: str | None = None, concurrency: int = 1,
                 metrics_dir: Path | None = None, **overrides: Any) -> Proc:
    env = infra.env(**overrides)
    metrics_dir = metrics_dir or infra.root / "metrics" / name
    metrics_dir.mkdir(parents=True, exist_ok=True)
    env["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir)
    command = ["worker", "--hostname", f"{name}@%h", "--concurrency", str(concurrency)]
    if queues:
        command += ["--queues", queues]
    proc = Proc(infra, command, name, env)
    proc.metrics_dir = metrics_dir  # type: ignore[attr-defined]
    proc.wait_for_log(" ready.")
    return proc


def start_sweeper(infra: Infra, name: str = "sweeper", **overrides: Any) -> Proc:
    proc = Proc(infra, ["sweeper"], name, infra.env(**overrides))
    proc.wait_for_log("sweeper_started")
    return proc


@pytest.fixture(scope="session")
def pipeline(infra: Infra) -> Iterator[Proc]:
    """The default worker: every queue, default settings. No sweeper: a test that needs one
    starts its own, with its own queue names, so it never re-publishes another test's jobs."""
    worker = start_worker(infra, "pipeline", concurrency=2)
    yield worker
    worker.stop()


# ---------------------------------------------------------------- helpers


def new_scope(prefix: str = "org") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def memory(org: str, agent: str, content: str, **fields: Any) -> dict[str, Any]:
    return {"org_id": org, "agent_id": agent, "content": content, "source": "chat", **fields}


def submit_and_wait(engine: Any, producer: Any, settings: Any, body: dict[str, Any], *,
                    key: str | None = None, timeout: float = 90.0) -> dict[str, Any]:
    from ibex_worker.submit import submit, wait_for_job

    submission = submit(engine, producer, settings, body, key)
    view = wait_for_job(engine, body["org_id"], submission.job_id, timeout=timeout)
    assert view is not None
    assert view["status"] in ("succeeded", "failed"), f"job did not finish in {timeout}s: {view}"
    return view


def fetch_memory(engine: Any, memory_id: str) -> Any:
    from sqlalchemy import text

    with engine.connect() as conn:
        return conn.execute(text("SELECT * FROM memories WHERE id = :id"), {"id": memory_id}).first()


def query(engine: Any, sql: str, **params: Any) -> list[Any]:
    from sqlalchemy import text

    with engine.connect() as conn:
        return list(conn.execute(text(sql), params))


# Every table that holds a tenant's rows (org_id column): where a leak test looks for values.
TENANT_TABLES = ("memories", "memory_write_jobs", "memory_labels", "memory_relationships",
                 "memory_conflict_escalations", "memory_conflict_decisions", "memory_idempotency_keys",
                 "memory_review_decisions", "memory_relationship_decisions")


def tenant_rows(engine: Any, table: str, org: str) -> list[str]:
    """The org's rows of ``table``, each as PostgreSQL's text form of the whole row."""
    return [row.row_text for row in query(engine, f"SELECT r::text AS row_text FROM {table} r WHERE org_id = :o",
                                          o=org)]


def wait_until(predicate: Any, timeout: float = 30.0, interval: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true (True) or ``timeout`` seconds passed (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


def redis_text(infra: Infra) -> str:
    """Every Redis key, every string value and the append-only file, as one text to grep
    (after any append-only-file rewrite in progress has finished)."""
    import redis

    client = redis.Redis.from_url(infra.redis.url)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            persistence = client.info("persistence")
            if not persistence.get("aof_rewrite_in_progress") and not persistence.get("aof_rewrite_scheduled"):
                break
            time.sleep(0.1)
        parts = []
        for key in client.scan_iter(count=1000):
            parts.append(key.decode(errors="replace"))
            if client.type(key) == b"string":
                parts.append((client.get(key) or b"").decode(errors="replace"))
    finally:
        client.close()
    aof = b"".join(path.read_bytes() for path in infra.redis.data_dir.rglob("*.aof"))
    return "\n".join(parts) + aof.decode(errors="replace")


def read_counter(metrics_dir: Path, name: str) -> float:
    """Sum a counter across every process that wrote to a multiprocess metrics folder."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(metrics_dir))
    total = 0.0
    for family in registry.collect():
        for sample in family.samples:
            if sample.name == f"{name}_total" or sample.name == name:
                total += sample.value
    return total


def isolated_queues(prefix: str) -> dict[str, str]:
    """Queue settings no other test's worker consumes (``queue_<stage>=<prefix>.<stage>``, and
    the erase queue)."""
    from ibex_worker.config import STAGES

    return {**{f"queue_{stage}": f"{prefix}.{stage}" for stage in STAGES}, "queue_erase": f"{prefix}.erase"}


def wait_until_healthy(url: str, timeout: float = 60.0) -> None:
    """Wait for an ``ibex api`` process to answer ``/healthz``."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass  # not listening yet
        time.sleep(0.2)
    raise TimeoutError(f"{url} never answered /healthz")
