"""The pipeline's backlog: jobs accepted and not yet finished (``queued`` or ``running``),
counted over every org because the workers are shared.

One count is reused in-process for ``backlog_cache_seconds``: under a burst, one request
refreshes it and the rest read the cached figure (stale by at most that long). Each org's own
count (for ``org_backlog_limit``) is cached the same way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
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


class OrgBacklogs:
    """Cached counts of each org's unfinished jobs (one count per org reused for
    ``max_age_seconds``), for the per-org limit. Raises ``TransientError`` when the database
    is down and no count is fresh enough."""

    MAX_ORGS = 4096  # counts kept at most; older ones are dropped first

    def __init__(self, engine: Any, max_age_seconds: float) -> None:
        self._engine = engine
        self._max_age = max_age_seconds
        self._lock = threading.Lock()
        self._counts: dict[str, tuple[float, int]] = {}

    def current(self, org_id: str) -> int:
        with self._lock:
            cached = self._counts.get(org_id)
        if cached is not None and time.monotonic() - cached[0] <= self._max_age:
            return cached[1]
        with maint_tx(self._engine) as conn:
            value = job_store.count_unfinished_of(conn, org_id)
        with self._lock:
            self._counts[org_id] = (time.monotonic(), value)
            if len(self._counts) > self.MAX_ORGS:
                for stale in sorted(self._counts, key=lambda org: self._counts[org][0])[:len(self._counts) // 2]:
                    del self._counts[stale]
        return value

    def added(self, org_id: str) -> None:
        """A job of the org was admitted: the cached count grows with it until it is read again."""
        with self._lock:
            if org_id in self._counts:
                at, value = self._counts[org_id]
                self._counts[org_id] = (at, value + 1)


class BacklogFull(IbexError):
    """The pipeline holds ``backlog_limit`` or more unfinished jobs, or the org holds
    ``org_backlog_limit``: refuse new work (of that org only, in the second case)."""

    code = "BACKPRESSURE"

    def __init__(self, retry_after: int, *, org: bool = False) -> None:
        super().__init__("this org's writes waiting in the pipeline are at their limit; retry later" if org
                         else "the write pipeline is saturated; retry later")
        self.retry_after = retry_after


def admission(backlog: Backlog, org_backlogs: OrgBacklogs, settings: Any,
              org_ids: Iterable[str]) -> Callable[[str], None]:
    """A check for ``submit`` to run just before it inserts a new job of an org (never for a
    replay, an in-progress key or a conflict): raises ``BacklogFull`` when the backlog, or
    that org's share of it, is at its limit. The counts are taken now, outside the write
    transaction, so that transaction never waits for a second pooled connection."""
    full = backlog.current() >= settings.backlog_limit
    unfinished = {org: org_backlogs.current(org) for org in set(org_ids)}

    def admit(org_id: str) -> None:
        if full:
            raise BacklogFull(settings.backpressure_retry_after_seconds)
        if unfinished.get(org_id, 0) >= settings.org_backlog_limit:
            raise BacklogFull(settings.backpressure_retry_after_seconds, org=True)
        unfinished[org_id] = unfinished.get(org_id, 0) + 1  # a batch counts its own items
        org_backlogs.added(org_id)  # and so do the next requests reading the cached count
    return admit
