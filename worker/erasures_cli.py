"""``ibex erasures request|show``: erase an agent or listed memories from a shell (a person's
erasure request arrives through support more often than through an agent). Requests are
recorded as ``cli:<user>``; the erasure itself runs on a worker consuming the erase queue."""

from __future__ import annotations

import argparse
import getpass
import json
import time
from collections.abc import Callable
from typing import Any

EXIT_ERROR = 2


def register(subparsers: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add the ``erasures`` command group; returns {command name: handler}."""
    group = subparsers.add_parser("erasures", help="erase an agent's memories, or listed memories; show a receipt")
    sub = group.add_subparsers(dest="erasures_command", required=True)
    req = sub.add_parser("request", help="queue an erasure and print its receipt")
    req.add_argument("--org", required=True)
    target = req.add_mutually_exclusive_group(required=True)
    target.add_argument("--agent", help="erase every memory of this agent")
    target.add_argument("--memory", action="append", metavar="MEMORY_ID", help="erase this memory (repeatable)")
    req.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="wait for it to finish")
    req.add_argument("--user", default=None, help="recorded as cli:<user> (default: the login name)")
    show = sub.add_parser("show", help="print an erasure's receipt: status and counts")
    show.add_argument("erasure_id")
    show.add_argument("--org", required=True)
    return {"erasures": _dispatch}


def _dispatch(args: argparse.Namespace) -> int:
    return {"request": cmd_request, "show": cmd_show}[args.erasures_command](args)


def _print(value: Any) -> None:
    print(json.dumps(value, indent=2, default=str))


def _settings() -> Any:
    from ibex_worker.config import get_settings
    from ibex_worker.logs import configure_logging

    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level)  # logs to stderr; stdout is the JSON answer
    return settings


def cmd_request(args: argparse.Namespace) -> int:
    from ibex_worker import erasures
    from ibex_worker.celery_app import get_app
    from ibex_worker.db import get_engine
    from ibex_worker.errors import IbexError

    settings = _settings()
    engine = get_engine(settings.database_url)
    try:
        erasure_id, _ = erasures.request(engine, get_app(), settings, args.org, agent_id=args.agent,
                                      memory_ids=args.memory, requested_by=f"cli:{args.user or getpass.getuser()}")
        view = erasures.view(engine, args.org, erasure_id)
        deadline = time.monotonic() + min(args.wait, 3600.0)
        while view["status"] in ("queued", "running") and time.monotonic() < deadline:
            time.sleep(0.5)
            view = erasures.view(engine, args.org, erasure_id)
    except IbexError as exc:
        _print({"error": exc.as_dict()})
        return EXIT_ERROR
    _print(view)
    return 1 if view["status"] == "failed" else 0


def cmd_show(args: argparse.Namespace) -> int:
    from ibex_worker import erasures
    from ibex_worker.db import get_engine
    from ibex_worker.errors import IbexError

    try:
        _print(erasures.view(get_engine(_settings().database_url), args.org, args.erasure_id))
    except IbexError as exc:
        _print({"error": exc.as_dict()})
        return EXIT_ERROR
    return 0
