"""``ibex quarantine list|release|delete`` and ``ibex memories delete``: the quarantine review
queue, and deleting any memory, from a shell. Importing this module is cheap: every command
imports what it needs when it runs. Decisions are recorded as ``cli:<user>``."""

from __future__ import annotations

import argparse
import getpass
import json
from collections.abc import Callable
from typing import Any

EXIT_ERROR = 2


def register(subparsers: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add the ``quarantine`` command group; returns {command name: handler}."""
    group = subparsers.add_parser("quarantine", help="quarantined memories waiting for a person: list, release, delete")
    sub = group.add_subparsers(dest="quarantine_command", required=True)
    lst = sub.add_parser("list", help="print one org's quarantined memories (masked) as JSON, oldest first")
    lst.add_argument("--org", required=True)
    lst.add_argument("--limit", type=int, default=50)
    lst.add_argument("--cursor")
    rel = sub.add_parser("release", help="release a quarantined memory through the pipeline; prints its job")
    rel.add_argument("memory_id")
    rel.add_argument("--org", required=True)
    rel.add_argument("--note", help="why: analysed for personal data, stored redacted with the decision")
    rel.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="wait for the job to finish")
    rel.add_argument("--user", default=None, help="recorded as cli:<user> (default: the login name)")
    _delete_parser(sub)
    memories = subparsers.add_parser("memories", help="memories of any status: delete")
    _delete_parser(memories.add_subparsers(dest="memories_command", required=True))
    return {"quarantine": _dispatch, "memories": cmd_delete}


def _delete_parser(sub: Any) -> None:
    dele = sub.add_parser("delete", help="delete a memory (quarantined or not): a tombstone stays, no content")
    dele.add_argument("memory_id")
    dele.add_argument("--org", required=True)
    dele.add_argument("--user", default=None, help="recorded as cli:<user> (default: the login name)")


def _dispatch(args: argparse.Namespace) -> int:
    return {"list": cmd_list, "release": cmd_release, "delete": cmd_delete}[args.quarantine_command](args)


def _engine() -> Any:
    from ibex_worker.config import get_settings
    from ibex_worker.db import get_engine
    from ibex_worker.logs import configure_logging

    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level)  # logs to stderr; stdout is the JSON answer
    return get_engine(settings.database_url)


def _by(args: argparse.Namespace) -> str:
    return f"cli:{args.user or getpass.getuser()}"


def _print(value: Any) -> None:
    print(json.dumps(value, indent=2, default=str))


def cmd_list(args: argparse.Namespace) -> int:
    from ibex_worker import review
    from ibex_worker.errors import IbexError

    try:
        _print(review.list_quarantined(_engine(), args.org, args.limit, args.cursor))
    except IbexError as exc:
        _print({"error": exc.as_dict()})
        return EXIT_ERROR
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from ibex_worker import review
    from ibex_worker.celery_app import get_app
    from ibex_worker.config import get_settings
    from ibex_worker.errors import IbexError
    from ibex_worker.submit import wait_for_job

    engine = _engine()
    try:
        job_id = review.release(engine, get_app(), get_settings(), args.org, args.memory_id, args.note, _by(args))
    except IbexError as exc:
        _print({"error": exc.as_dict()})
        return EXIT_ERROR
    view = wait_for_job(engine, args.org, job_id, timeout=min(args.wait, 300.0))
    _print(view)
    return 0 if view and view["status"] != "failed" else 1


def cmd_delete(args: argparse.Namespace) -> int:
    from ibex_worker import review
    from ibex_worker.errors import IbexError

    try:
        deleted = review.delete(_engine(), args.org, args.memory_id, _by(args))
    except IbexError as exc:
        _print({"error": exc.as_dict()})
        return EXIT_ERROR
    _print({"memory_id": args.memory_id, "deleted": True, "already": not deleted})
    return 0
