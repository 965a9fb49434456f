"""The ``ibex`` command: up, migrate, worker, sweeper, api, keys, submit, job, escalations, quarantine."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from worker.config import get_settings
from worker.escalations.cli import register as register_escalations
from worker.review_cli import register as register_quarantine


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Any]]:
    """The argument parser and the handler of each subcommand."""
    parser = argparse.ArgumentParser(prog="ibex", description="IBEX memory write worker")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("up", help="run the whole stack in the foreground (embedded PostgreSQL and Redis by default)")
    mig = sub.add_parser("migrate", help="apply (or revert) schema migrations")
    mig.add_argument("direction", nargs="?", choices=["up", "down"], default="up")
    mig.add_argument("--steps", type=int, default=None, help="with down: how many migrations to revert")
    wrk = sub.add_parser("worker", help="run a pipeline worker")
    wrk.add_argument("--queues", default=None, help="comma-separated queues (default: every stage queue)")
    wrk.add_argument("--concurrency", type=int, default=None)
    wrk.add_argument("--hostname", default=None)
    sub.add_parser("sweeper", help="re-publish jobs whose message was lost")
    sub.add_parser("flower", help="run Flower on the broker (basic auth required; IBEX_FLOWER_*)")
    api = sub.add_parser("api", help="run the HTTP API (uvicorn)")
    api.add_argument("--host", default=None, help="default: IBEX_API_HOST")
    api.add_argument("--port", type=int, default=None, help="default: IBEX_API_PORT")
    _keys_parser(sub.add_parser("keys", help="create, list or revoke API keys"))
    _submit_parser(sub.add_parser("submit", help="submit one memory and print the job"))
    job = sub.add_parser("job", help="print a job as JSON")
    job.add_argument("job_id")
    job.add_argument("--org", required=True)
    return parser, {**COMMANDS, **register_escalations(sub), **register_quarantine(sub)}


def main(argv: list[str] | None = None) -> int:
    parser, commands = build_parser()
    args = parser.parse_args(argv)
    return int(commands[args.command](args) or 0)


def _keys_parser(p: argparse.ArgumentParser) -> None:
    keys = p.add_subparsers(dest="keys_command", required=True)
    create = keys.add_parser("create", help="create a key and print it (shown once: only its hash is stored)")
    create.add_argument("--org", required=True)
    create.add_argument("--agents", default=None, help="comma-separated agents; default: every agent of the org")
    create.add_argument("--description", default=None)
    listing = keys.add_parser("list", help="list keys: id, org, visible prefix, agents, revocation")
    listing.add_argument("--org", default=None)
    revoke = keys.add_parser("revoke", help="revoke a key by its id")
    revoke.add_argument("key_id")


def _submit_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--org", required=True)
    p.add_argument("--agent", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--content", required=True)
    p.add_argument("--valid-from")
    p.add_argument("--valid-until")
    p.add_argument("--label", action="append", default=[], metavar="NAME:CONF")
    p.add_argument("--category")
    p.add_argument("--confidence", type=float)
    p.add_argument("--metadata", help="a JSON object")
    p.add_argument("--idempotency-key")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS")


def _init_logging() -> None:
    from worker.logs import configure_logging

    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level)


def cmd_migrate(args: argparse.Namespace) -> int:
    from worker import migrate

    _init_logging()
    url = get_settings().database_url
    done = migrate.up(url) if args.direction == "up" else migrate.down(url, args.steps)
    print(json.dumps({"direction": args.direction, "migrations": done}))
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from worker.tasks import worker_app

    settings = get_settings()
    _preflight_models(settings)
    app = worker_app(settings)
    queues = args.queues or ",".join(settings.all_queues)
    argv = ["worker", "--loglevel", settings.log_level, "-Q", queues, "--pool", "prefork",
            "--concurrency", str(args.concurrency or settings.worker_concurrency), "--without-heartbeat",
            "--without-mingle", "--without-gossip"]
    if args.hostname:
        argv += ["--hostname", args.hostname]
    app.worker_main(argv)
    return 0


def _preflight_models(settings: Any) -> None:
    """Fail loudly in the main process before forking children that would die one by one."""
    import importlib.util

    if importlib.util.find_spec(settings.spacy_model) is None:
        raise SystemExit(f"spaCy model package {settings.spacy_model!r} is not installed")
    if settings.embedding_model_path and not Path(settings.embedding_model_path).exists():
        raise SystemExit("IBEX_EMBEDDING_MODEL_PATH does not exist")


def cmd_sweeper(args: argparse.Namespace) -> int:
    from worker.celery_app import get_app
    from worker.db import get_engine
    from worker.sweeper import run_forever

    _init_logging()
    settings = get_settings()
    run_forever(get_engine(settings.database_url), get_app(), settings)
    return 0


def cmd_flower(args: argparse.Namespace) -> int:
    """Flower on the broker, with basic auth from IBEX_FLOWER_BASIC_AUTH (never on argv, where
    `ps` would show it). Task arguments it displays are job ids only."""
    settings = get_settings()
    auth = settings.flower_basic_auth.get_secret_value()
    if ":" not in auth:
        print("ibex flower: set IBEX_FLOWER_BASIC_AUTH=user:password; Flower never runs without auth",
              file=sys.stderr)
        return 2
    env = {**os.environ, "FLOWER_BASIC_AUTH": auth, "FLOWER_PERSISTENT": "False", "FLOWER_PURGE_OFFLINE_WORKERS": "60"}
    argv = [sys.executable, "-m", "celery", "--broker", settings.redis_url, "flower",
            f"--address={settings.flower_address}", f"--port={settings.flower_port}"]
    os.execve(sys.executable, argv, env)
    return 0  # not reached


def cmd_api(args: argparse.Namespace) -> int:
    import uvicorn

    _init_logging()
    settings = get_settings()
    # The factory builds the app (and configures logging) in each uvicorn process.
    uvicorn.run("api.app:factory", factory=True, host=args.host or settings.api_host,
                port=args.port or settings.api_port, workers=settings.api_workers, log_config=None,
                loop="uvloop", http="httptools",
                access_log=False, server_header=False, timeout_graceful_shutdown=10)
    return 0


def cmd_keys(args: argparse.Namespace) -> int:
    from worker import apikeys
    from worker.db import get_engine

    engine = get_engine(get_settings().database_url)
    if args.keys_command == "create":
        agents = [a.strip() for a in args.agents.split(",") if a.strip()] if args.agents else None
        try:
            key, record = apikeys.create(engine, args.org, agents, args.description)
        except ValueError as exc:
            raise SystemExit(f"ibex keys create: {exc}") from None
        print(json.dumps({**record, "key": key}, indent=2))
        print("The key is shown once; only its SHA-256 is stored.", file=sys.stderr)
        return 0
    if args.keys_command == "list":
        print(json.dumps(apikeys.list_keys(engine, args.org), indent=2))
        return 0
    revoked = apikeys.revoke(engine, args.key_id)
    print(json.dumps({"id": args.key_id, "revoked": revoked}))
    return 0 if revoked else 1


def _request_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {"org_id": args.org, "agent_id": args.agent, "source": args.source, "content": args.content}
    for name in ("valid_from", "valid_until", "category", "confidence"):
        if getattr(args, name) is not None:
            body[name] = getattr(args, name)
    if args.label:
        body["labels"] = [_parse_label(item) for item in args.label]
    if args.metadata:
        body["metadata"] = json.loads(args.metadata)
    return body


def _parse_label(item: str) -> dict[str, Any]:
    name, _, conf = item.rpartition(":")
    if not name:
        raise SystemExit("--label takes NAME:CONFIDENCE")
    try:
        return {"label": name, "confidence": float(conf)}
    except ValueError:
        raise SystemExit("--label takes NAME:CONFIDENCE with a number") from None


def cmd_submit(args: argparse.Namespace) -> int:
    from worker.celery_app import get_app
    from worker.db import get_engine
    from worker.errors import IbexError
    from worker.submit import submit, wait_for_job

    _init_logging()
    settings = get_settings()
    engine = get_engine(settings.database_url)
    try:
        submission = submit(engine, get_app(), settings, _request_body(args), args.idempotency_key)
    except IbexError as exc:
        print(json.dumps({"error": exc.as_dict()}, indent=2))
        return 2
    view = wait_for_job(engine, args.org, submission.job_id, timeout=min(args.wait, 300.0))
    if submission.replayed and view is not None:
        view["idempotent_replayed"] = True
    print(json.dumps(view, indent=2, default=str))
    return 0 if view and view["status"] != "failed" else 1


def cmd_job(args: argparse.Namespace) -> int:
    from worker.db import get_engine
    from worker.submit import job_view

    view = job_view(get_engine(get_settings().database_url), args.org, args.job_id)
    print(json.dumps(view, indent=2, default=str))
    return 0 if view else 1


def cmd_up(args: argparse.Namespace) -> int:
    from worker.devstack import StackAlreadyRunning

    _init_logging()
    try:
        return _Stack(get_settings()).run()
    except StackAlreadyRunning as exc:
        print(f"ibex up: a stack is already running on this data folder ({exc}); not starting another.",
              file=sys.stderr)
        return 3


DEV_ORG = "acme"  # the org of the development API key `ibex up` creates


class _Stack:
    """Embedded PostgreSQL + Redis (unless IBEX_DATABASE_URL / IBEX_REDIS_URL point elsewhere),
    migrations, a worker on every queue and the sweeper, in the foreground until Ctrl-C.
    Also the HTTP API; in development, an API key created (or reused) and printed."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.root = Path(settings.data_dir).resolve()
        self.children: list[subprocess.Popen[bytes]] = []
        self.services: list[Any] = []
        self.stopping = False
        self.api_url = ""
        self.dev_key: str | None = None

    def run(self) -> int:
        from worker import migrate
        from worker.devstack import StackLock

        self.root.mkdir(parents=True, exist_ok=True)
        lock = StackLock(self.root)
        lock.acquire()
        try:
            env = self._start_infrastructure()
            migrate.up(env["IBEX_DATABASE_URL"])
            self.dev_key = self._dev_api_key(env["IBEX_DATABASE_URL"])
            self._start_processes(env)
            self._announce(env)
            return self._supervise()
        finally:
            self._shutdown()
            lock.release()

    def _start_infrastructure(self) -> dict[str, str]:
        from worker.devstack import EmbeddedPostgres, EmbeddedRedis

        env = dict(os.environ)
        if "IBEX_DATABASE_URL" not in os.environ:
            pg = EmbeddedPostgres(self.root / "pgdata", self.settings.embedded_pg_port)
            pg.start()
            self.services.append(pg)
            env["IBEX_DATABASE_URL"] = pg.url
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
        cli = [sys.executable, "-m", "worker.cli"]
        if not self.settings.idempotency_fingerprint_key.get_secret_value():
            key = self._dev_secret("fingerprint-key", lambda: _token() + _token())
            env = {**env, "IBEX_IDEMPOTENCY_FINGERPRINT_KEY": key}
        for name in ("worker", "sweeper"):
            self.children.append(subprocess.Popen([*cli, name], env=env, start_new_session=True))
        self.escalation_worker = subprocess.Popen([*cli, "escalations", "run"], env=env, start_new_session=True)
        self.children.append(self.escalation_worker)
        self._start_api(cli, env)
        self._start_flower(cli, env)

    def _start_flower(self, cli: list[str], env: dict[str, str]) -> None:
        """Flower on localhost with basic auth: the configured credentials, or in development a
        generated pair kept in <data_dir>/flower-auth (mode 0600)."""
        auth = (self.settings.flower_basic_auth.get_secret_value()
                or self._dev_secret("flower-auth", lambda: f"ibex:{_token()}"))
        port = self.settings.flower_port
        if "IBEX_FLOWER_PORT" not in os.environ and not _port_free(self.settings.flower_address, port):
            port = _port_free(self.settings.flower_address, 0) or port
        self.flower_url = f"http://{self.settings.flower_address}:{port}"
        self.flower_user = auth.split(":", 1)[0]
        self.flower_auth = auth
        self.flower_process = subprocess.Popen(
            [*cli, "flower"], env={**env, "IBEX_FLOWER_BASIC_AUTH": auth, "IBEX_FLOWER_PORT": str(port)},
            start_new_session=True)
        self.children.append(self.flower_process)

    def _dev_secret(self, name: str, make: Any) -> str:
        path = self.root / name
        if path.exists():
            return path.read_text().strip()
        value = make()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(value + "\n")
        return value

    def _start_api(self, cli: list[str], env: dict[str, str]) -> None:
        port = self._api_port()
        self.api_url = f"http://{self.settings.api_host}:{port}"
        self.api_process = subprocess.Popen([*cli, "api"], env={**env, "IBEX_API_PORT": str(port)},
                                            start_new_session=True)
        self.children.append(self.api_process)

    def _api_port(self) -> int:
        """IBEX_API_PORT when set explicitly or free; otherwise a free port (a second stack
        on another data folder must not fail on the default)."""
        port = self.settings.api_port
        if "IBEX_API_PORT" in os.environ or _port_free(self.settings.api_host, port):
            return port
        return _port_free(self.settings.api_host, 0) or port

    def _dev_api_key(self, database_url: str) -> str | None:
        """Development only: the key kept in <data_dir>/dev-api-key (mode 0600) if it is still
        valid, else a new one for org ``acme`` and every agent."""
        if self.settings.environment != "development":
            return None
        from worker import apikeys
        from worker.db import make_engine

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
        print(f"  worker      pid {self.children[0].pid}, queues {','.join(self.settings.all_queues)}", flush=True)
        print(f"  sweeper     pid {self.children[1].pid}", flush=True)
        print(f"  escalations pid {self.escalation_worker.pid}, classifier {self.settings.escalation_classifier}",
              flush=True)
        print(f"  API         {self.api_url}  (docs {self.api_url}/docs), pid {self.api_process.pid}", flush=True)
        print(f"  Flower      {self.flower_url}  (user {self.flower_user}, password in "
              f"{self.root / 'flower-auth'} or IBEX_FLOWER_BASIC_AUTH), pid {self.flower_process.pid}", flush=True)
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
                if child.poll() is not None:
                    print(f"ibex up: process {child.args[-1]} exited with {child.returncode}; stopping",
                          file=sys.stderr)
                    return 1
            time.sleep(0.5)
        return 0

    def _on_signal(self, *_: Any) -> None:
        self.stopping = True

    def _shutdown(self) -> None:
        for child in self.children:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for child in self.children:
            try:
                child.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
        for service in reversed(self.services):
            service.stop()


def _token() -> str:
    import secrets

    return secrets.token_urlsafe(18)


def _port_free(host: str, port: int) -> int:
    """``port`` (or, for 0, some free port) if it can be bound on ``host`` now, else 0."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return 0
        return int(sock.getsockname()[1])


def _redact_url(url: str) -> str:
    import re

    return re.sub(r"://([^:@/]+):[^@/]*@", r"://\1:***@", url)


COMMANDS = {"up": cmd_up, "migrate": cmd_migrate, "worker": cmd_worker, "sweeper": cmd_sweeper,
            "flower": cmd_flower, "api": cmd_api, "keys": cmd_keys, "submit": cmd_submit, "job": cmd_job}

if __name__ == "__main__":
    sys.exit(main())
