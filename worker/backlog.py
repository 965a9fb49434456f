"""The pipeline's backlog: jobs accepted and not yet finished (``queued`` or ``running``),
counted over every org because the workers are shared.

One count is reused in-process for ``backlog_cache_seconds``: under a burst, one request
refreshes it and the rest read the cached figure (stale by at most that long).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ibex_worker.db import maint_tx
from ibex_worker.errors import IbexError
from ibex_worker.store import escalations
from ibex_worker.store import jobs as job_store


def snapshot(engine: Any) -> dict[str, Any]:
    """Unfinished jobs by the stage they wait for, unresolved escalations by status, and the
    seconds the pipeline has had work and finished none (for /metrics; read at scrape time, so
    every process's view agrees)."""
    with maint_tx(engine) as conn:
        return {"stages": job_store.unfinished_by_stage(conn), "escalations": escalations.count_unresolved(conn, ()),
                "stalled_seconds": job_store.seconds_without_progress(conn)}


def seconds_without_progress(engine: Any) -> float:
    with maint_tx(engine) as conn:
        return job_store.seconds_without_progress(conn)


def count_unfinished(engine: Any) -> int:
    with maint_tx(engine) as conn:
        return job_store.count_unfinished(conn)


class Backlog:
    """A cached count of unfinished jobs. Raises ``TransientError`` when the database is
    down and no count is fresh enough."""

    def __init__(self, engine: Any, max_age_seconds: float) -> None:
        self._engine = engine
        self._max_age = max_age_seconds
        self._lock = threading.Lock()
        self._value = 0
        self._at = float("-inf")

    @property
    def last(self) -> int:
        """The last count taken, without refreshing it."""
        return self._value

    def current(self) -> int:
        if time.monotonic() - self._at <= self._max_age:
            return self._value
        with self._lock:  # one refresh at a time; the others wait for it and share it
            if time.monotonic() - self._at > self._max_age:
                self._value = count_unfinished(self._engine)
                self._at = time.monotonic()
            return self._value


class BacklogFull(IbexError):
    """The pipeline holds ``backlog_limit`` or more unfinished jobs: refuse new work."""

    code = "BACKPRESSURE"

    def __init__(self, retry_after: int) -> None:
        super().__init__("the write pipeline is saturated; retry later")
        self.retry_after = retry_after


def admission(backlog: Backlog, settings: Any) -> Callable[[], None]:
    """A check for ``submit`` to run just before it inserts a new job (never for a replay,
    an in-progress key or a conflict): raises ``BacklogFull`` when the backlog is at its
    limit. The count is taken now, outside the write transaction, so that transaction
    never waits for a second pooled connection."""
    full = backlog.current() >= settings.backlog_limit

    def admit() -> None:
        if full:
            raise BacklogFull(settings.backpressure_retry_after_seconds)
    return admit
