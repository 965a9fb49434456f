"""The ``ibex`` command: up, migrate, worker, sweeper, submit, job."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from worker.config import get_settings


def main(argv: list[str] | None = None) -> int:
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
    _submit_parser(sub.add_parser("submit", help="submit one memory and print the job"))
    job = sub.add_parser("job", help="print a job as JSON")
    job.add_argument("job_id")
    job.add_argument("--org", required=True)
    args = parser.parse_args(argv)
    return int(COMMANDS[args.command](args) or 0)


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


class _Stack:
    """Embedded PostgreSQL + Redis (unless IBEX_DATABASE_URL / IBEX_REDIS_URL point elsewhere),
    migrations, a worker on every queue and the sweeper, in the foreground until Ctrl-C."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.root = Path(settings.data_dir).resolve()
        self.children: list[subprocess.Popen[bytes]] = []
        self.services: list[Any] = []
        self.stopping = False

    def run(self) -> int:
        from worker import migrate
        from worker.devstack import StackLock

        self.root.mkdir(parents=True, exist_ok=True)
        lock = StackLock(self.root)
        lock.acquire()
        try:
            env = self._start_infrastructure()
            migrate.up(env["IBEX_DATABASE_URL"])
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
        for name in ("worker", "sweeper"):
            self.children.append(subprocess.Popen([*cli, name], env=env, start_new_session=True))

    def _announce(self, env: dict[str, str]) -> None:
        print("\nIBEX stack is up", flush=True)
        print(f"  PostgreSQL  {_redact_url(env['IBEX_DATABASE_URL'])}", flush=True)
        print(f"  Redis       {_redact_url(env['IBEX_REDIS_URL'])}", flush=True)
        print(f"  worker      pid {self.children[0].pid}, queues {','.join(self.settings.all_queues)}", flush=True)
        print(f"  sweeper     pid {self.children[1].pid}", flush=True)
        print("  try:  ibex submit --org acme --agent support-bot --source chat "
              "--content 'User prefers Python for data work' --wait 30", flush=True)
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


def _redact_url(url: str) -> str:
    import re

    return re.sub(r"://([^:@/]+):[^@/]*@", r"://\1:***@", url)


COMMANDS = {"up": cmd_up, "migrate": cmd_migrate, "worker": cmd_worker, "sweeper": cmd_sweeper,
            "submit": cmd_submit, "job": cmd_job}

if __name__ == "__main__":
    sys.exit(main())
