"""``ibex escalations run|list|resolve``. Importing this module is cheap: every command
imports what it needs when it runs."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

EXIT_ERROR = 2


def register(subparsers: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add the ``escalations`` command group; returns {command name: handler}."""
    group = subparsers.add_parser("escalations", help="the escalation worker, and conflicts waiting for a person")
    sub = group.add_subparsers(dest="escalations_command", required=True)
    run = sub.add_parser("run", help="run the escalation worker (PostgreSQL only) until SIGTERM")
    run.add_argument("--name", default=None, help="this poller's name in leases and logs (default host:pid)")
    lst = sub.add_parser("list", help="print one org's escalations as JSON, oldest first")
    lst.add_argument("--org", required=True)
    lst.add_argument("--status", choices=["pending", "claimed", "needs_review", "resolved", "dead"])
    lst.add_argument("--limit", type=int, default=50)
    lst.add_argument("--cursor")
    res = sub.add_parser("resolve", help="decide an escalation as a person (final)")
    res.add_argument("escalation_id")
    res.add_argument("--org", required=True)
    res.add_argument("--outcome", required=True, choices=["supersedes", "contradicts", "compatible"])
    res.add_argument("--note", help="why: stored as the decision's reason")
    res.add_argument("--user", default=None, help="recorded as cli:<user> (default: the login name)")
    return {"escalations": _dispatch}


def _dispatch(args: argparse.Namespace) -> int:
    return {"run": cmd_run, "list": cmd_list, "resolve": cmd_resolve}[args.escalations_command](args)


def cmd_run(args: argparse.Namespace) -> int:
    from ibex_worker.config import get_settings
    from ibex_worker.db import make_engine
    from ibex_worker.escalations.classifiers import build_classifier
    from ibex_worker.escalations.poller import Poller, install_signal_handlers
    from ibex_worker.logs import configure_logging
    from ibex_worker.metrics import get_metrics, serve
    from ibex_worker.runtime import read_cache

    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level)
    serve(settings, "escalations")
    owner = args.name or f"{socket.gethostname()}:{os.getpid()}"
    stop = threading.Event()
    install_signal_handlers(stop)
    if not _schema_ready(settings.database_url, stop):
        return EXIT_ERROR
    engine = make_engine(_named(settings.database_url, owner), pool_size=2)
    metrics = get_metrics()
    classifier = build_classifier(settings, metrics)
    try:
        Poller(engine, settings, classifier, metrics, owner=owner, cache=read_cache(settings), stop=stop).run()
    finally:
        classifier.close()
        engine.dispose()
        _mark_metrics_dead()
    return 0


def _schema_ready(url: str, stop: threading.Event) -> bool:
    """Wait for PostgreSQL; refuse to run on a schema older than this code."""
    import psycopg
    import structlog

    from ibex_worker import migrate

    log = structlog.get_logger("ibex.escalations")
    wait = 0.5
    while not stop.is_set():
        try:
            if migrate.is_current(url):
                return True
            log.error("escalation_poller_refused", reason="schema_not_current", hint="run ibex migrate")
            return False
        except psycopg.OperationalError:
            log.warning("escalation_poller_waiting", reason="database_unavailable")
            stop.wait(wait)
            wait = min(wait * 2, 10.0)
    return False


def _named(url: str, owner: str) -> str:
    """The URL with an application_name, so pg_stat_activity shows which poller is which."""
    from sqlalchemy.engine import make_url

    name = f"ibex-escalations {owner}"[:63]
    return make_url(url).update_query_dict({"application_name": name}).render_as_string(hide_password=False)


def _mark_metrics_dead() -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(os.getpid())


def cmd_list(args: argparse.Namespace) -> int:
    from ibex_worker.escalations.service import list_escalations

    return _print_or_fail(lambda engine: list_escalations(engine, args.org, args.status, args.limit, args.cursor))


def cmd_resolve(args: argparse.Namespace) -> int:
    from ibex_worker.escalations.service import resolve

    from ibex_worker.runtime import read_cache, shared_redactor

    user = args.user or getpass.getuser()
    settings = _settings()
    return _print_or_fail(lambda engine: resolve(engine, args.org, args.escalation_id, args.outcome, args.note,
                                                 f"cli:{user}", cache=read_cache(settings),
                                                 note_redactor=lambda: shared_redactor(settings)))


def _settings() -> Any:
    from ibex_worker.config import get_settings

    return get_settings()


def _print_or_fail(action: Callable[[Any], dict[str, Any]]) -> int:
    from ibex_worker.db import get_engine
    from ibex_worker.errors import IbexError
    from ibex_worker.logs import configure_logging

    settings = _settings()
    configure_logging(settings.log_format, settings.log_level)  # logs to stderr; stdout is the JSON answer
    try:
        result = action(get_engine(settings.database_url))
    except IbexError as exc:
        body: dict[str, Any] = {"error": exc.as_dict()}
        if getattr(exc, "escalation", None):
            body["escalation"] = exc.escalation  # type: ignore[attr-defined]
        print(json.dumps(body, indent=2), file=sys.stdout)
        return EXIT_ERROR
    print(json.dumps(result, indent=2))
    return 0
