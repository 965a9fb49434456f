"""The stack ``ibex up`` runs in the foreground until Ctrl-C.

Embedded PostgreSQL and Redis (unless IBEX_DATABASE_URL / IBEX_REDIS_URL point elsewhere),
migrations, then one ``Proc`` each for a worker on every queue, the sweeper, the escalation
worker, the HTTP API and Flower; their output goes to this terminal.  In development an API
key is created (or reused) and printed.  If any of them exits, or on SIGINT/SIGTERM, all are
stopped (SIGTERM to each process group, SIGKILL after a grace period) and then the servers.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ibex_worker import apikeys, migrate
from ibex_worker.db import make_engine
from ibex_worker.devstack.lock import StackLock
from ibex_worker.devstack.ports import bindable_port
from ibex_worker.devstack.postgres import EmbeddedPostgres
from ibex_worker.devstack.process import Proc
from ibex_worker.devstack.redis import EmbeddedRedis

DEV_ORG = "acme"  # the org of the development API key `ibex up` creates
SHUTDOWN_GRACE_S = 20.0  # from SIGTERM to SIGKILL, shared by every child
SUPERVISE_INTERVAL_S = 0.5  # how often the children are checked for an exit


class Stack:
    """Embedded PostgreSQL + Redis (unless IBEX_DATABASE_URL / IBEX_REDIS_URL point elsewhere),
    migrations, a worker on every queue and the sweeper, in the foreground until Ctrl-C.
    Also the HTTP API; in development, an API key created (or reused) and printed."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.root = Path(settings.data_dir).resolve()
        self.children: list[Proc] = []
        self.services: list[Any] = []
        self.stopping = False
        self.api_url = ""
        self.dev_key: str | None = None

    def run(self) -> int:
        """Start everything, print where it is, and supervise it; 0 after Ctrl-C, 1 when a
        child exited. Raises StackAlreadyRunning if another stack holds the data folder."""
        self.root.mkdir(parents=True, exist_ok=True)
        lock = StackLock(self.root)
        lock.acquire()
        try:
            env = self._start_infrastructure()
            migrate.up(env.get("IBEX_MIGRATE_DATABASE_URL") or env["IBEX_DATABASE_URL"])
            self.dev_key = self._dev_api_key(env["IBEX_DATABASE_URL"])
            self._start_processes(env)
            self._announce(env)
            return self._supervise()
        finally:
            self._shutdown()
            lock.release()

    def _start_infrastructure(self) -> dict[str, str]:
        env = dict(os.environ)
        if "IBEX_DATABASE_URL" not in os.environ:
            pg = EmbeddedPostgres(self.root / "pgdata", self.settings.embedded_pg_port)
            pg.start()
            self.services.append(pg)
            env["IBEX_MIGRATE_DATABASE_URL"] = pg.url  # the owner, for migrations alone
            env["IBEX_DATABASE_URL"] = pg.app_url
        if "IBEX_REDIS_URL" not in os.environ:
            rd = EmbeddedRedis(self.root / "redis", self.settings.embedded_redis_port)
            rd.start()
            self.services.append(rd)
            env["IBEX_REDIS_URL"] = rd.url
        metrics_dir = self.root / "metrics"
        metrics_dir.mkdir(exist_ok=True)
        for stale in metrics_dir.glob("*.db"):
            stale.unlink()
        env.setdefault("PROMETHEUS_MULTIPROC_DIR", str(metrics_dir))
        return env

    def _start_processes(self, env: dict[str, str]) -> None:
        if not self.settings.idempotency_fingerprint_key.get_secret_value():
            key = self._dev_secret("fingerprint-key", lambda: _token() + _token())
            env = {**env, "IBEX_IDEMPOTENCY_FINGERPRINT_KEY": key}
        if not self.settings.pii_tag_key.get_secret_value():
            env = {**env, "IBEX_PII_TAG_KEY": self._dev_secret("pii-tag-key", lambda: _token() + _token())}
        self.worker = self._spawn("worker", ["worker"], env)
        self.sweeper = self._spawn("sweeper", ["sweeper"], env)
        self.escalation_worker = self._spawn("escalations", ["escalations", "run"], env)
        self._start_api(env)
        self._start_flower(env)

    def _spawn(self, name: str, command: list[str], env: dict[str, str]) -> Proc:
        proc = Proc(name, command, env)
        self.children.append(proc)
        return proc

    def _start_flower(self, env: dict[str, str]) -> None:
        """Flower on localhost with basic auth: the configured credentials, or in development a
        generated pair kept in <data_dir>/flower-auth (mode 0600)."""
        auth = (self.settings.flower_basic_auth.get_secret_value()
                or self._dev_secret("flower-auth", lambda: f"ibex:{_token()}"))
        port = self.settings.flower_port
        if "IBEX_FLOWER_PORT" not in os.environ and not bindable_port(self.settings.flower_address, port):
            port = bindable_port(self.settings.flower_address, 0) or port
        self.flower_url = f"http://{self.settings.flower_address}:{port}"
        self.flower_user = auth.split(":", 1)[0]
        self.flower_auth = auth
        self.flower_process = self._spawn(
            "flower", ["flower"], {**env, "IBEX_FLOWER_BASIC_AUTH": auth, "IBEX_FLOWER_PORT": str(port)})

    def _dev_secret(self, name: str, make: Callable[[], str]) -> str:
        path = self.root / name
        if path.exists():
            return path.read_text().strip()
        value = make()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(value + "\n")
        return value

    def _start_api(self, env: dict[str, str]) -> None:
        port = self._api_port()
        self.api_url = f"http://{self.settings.api_host}:{port}"
        self.api_process = self._spawn("api", ["api"], {**env, "IBEX_API_PORT": str(port)})

    def _api_port(self) -> int:
        """IBEX_API_PORT when set explicitly or free; otherwise a free port (a second stack
        on another data folder must not fail on the default)."""
        port = self.settings.api_port
        if "IBEX_API_PORT" in os.environ or bindable_port(self.settings.api_host, port):
            return port
        return bindable_port(self.settings.api_host, 0) or port

    def _dev_api_key(self, database_url: str) -> str | None:
        """Development only: the key kept in <data_dir>/dev-api-key (mode 0600) if it is still
        valid, else a new one for org ``acme`` and every agent."""
        if self.settings.environment != "development":
            return None
        path = self.root / "dev-api-key"
        engine = make_engine(database_url, pool_size=1)
        try:
            if path.exists():
                key = path.read_text().strip()
                if apikeys.verify(engine, key) is not None:
                    return key
            key, _ = apikeys.create(engine, DEV_ORG, None, "development key created by ibex up")
        finally:
            engine.dispose()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(key + "\n")
        path.chmod(0o600)
        return key

    def _announce(self, env: dict[str, str]) -> None:
        print("\nIBEX stack is up", flush=True)
        print(f"  PostgreSQL  {_redact_url(env['IBEX_DATABASE_URL'])}", flush=True)
        print(f"  Redis       {_redact_url(env['IBEX_REDIS_URL'])}", flush=True)
        print(f"  worker      pid {self.worker.popen.pid}, queues {','.join(self.settings.all_queues)}", flush=True)
        print(f"  sweeper     pid {self.sweeper.popen.pid}", flush=True)
        print(f"  escalations pid {self.escalation_worker.popen.pid}, classifier "
              f"{self.settings.escalation_classifier}", flush=True)
        print(f"  API         {self.api_url}  (docs {self.api_url}/docs), pid {self.api_process.popen.pid}",
              flush=True)
        print(f"  Flower      {self.flower_url}  (user {self.flower_user}, password in "
              f"{self.root / 'flower-auth'} or IBEX_FLOWER_BASIC_AUTH), pid {self.flower_process.popen.pid}",
              flush=True)
        if self.dev_key:
            print(f"  API key     {self.dev_key}  (org {DEV_ORG}, every agent; kept in "
                  f"{self.root / 'dev-api-key'})", flush=True)
        print("  try:  ibex submit --org acme --agent support-bot --source chat "
              "--content 'User prefers Python for data work' --wait 30", flush=True)
        if self.dev_key:
            print(f"   or:  curl -s {self.api_url}/v1/memories -H 'Authorization: Bearer {self.dev_key}' "
                  "-H 'Prefer: wait=30' -H 'Content-Type: application/json' -d '{\"org_id\": \"acme\", "
                  "\"agent_id\": \"support-bot\", \"source\": \"chat\", \"content\": \"User prefers Python "
                  "for data work\"}'", flush=True)
        print("  Ctrl-C stops everything.\n", flush=True)

    def _supervise(self) -> int:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_signal)
        while not self.stopping:
            for child in self.children:
                if child.popen.poll() is not None:
                    print(f"ibex up: process {child.popen.args[-1]} exited with {child.popen.returncode}; "
                          "stopping", file=sys.stderr)
                    return 1
            time.sleep(SUPERVISE_INTERVAL_S)
        return 0

    def _on_signal(self, *_: Any) -> None:
        self.stopping = True

    def _shutdown(self) -> None:
        for child in self.children:
            child.terminate()
        deadline = time.monotonic() + SHUTDOWN_GRACE_S
        for child in self.children:
            try:
                child.wait_or_kill(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:  # not gone even after SIGKILL: still stop the servers
                print(f"ibex up: process {child.popen.args[-1]} did not exit after SIGKILL", file=sys.stderr)
        for service in reversed(self.services):
            service.stop()


def _token() -> str:
    return secrets.token_urlsafe(18)


def _redact_url(url: str) -> str:
    return re.sub(r"://([^:@/]+):[^@/]*@", r"://\1:***@", url)
