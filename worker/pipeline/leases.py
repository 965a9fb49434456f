"""Keeping a delivery's leases alive while it works: a job's lease is short
(``job_lease_seconds``) and renewed every third of it by a thread of the process that holds
it, so a process that dies (a pool process killed, a whole worker gone) lets its jobs go
within one lease, while a slow one keeps them.

A renewal that fails (the database unreachable for a moment) is logged and tried again at the
next beat; a lease that runs out anyway is taken by another delivery, and the fencing on the
lease token drops this one's write-back.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import structlog

from ibex_worker.db import maint_tx
from ibex_worker.store import jobs as job_store

log = structlog.get_logger("ibex.pipeline")


class LeaseKeeper:
    """Renews the leases of the deliveries running in this process."""

    def __init__(self, engine: Any, lease_seconds: float) -> None:
        self._engine = engine
        self._lease_seconds = lease_seconds
        self._held: dict[int, dict[str, str]] = {}
        self._handles = itertools.count()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def interval(self) -> float:
        return self._lease_seconds / 3.0

    @contextmanager
    def holding(self, rows: Iterable[Any]) -> Iterator[None]:
        """Keep the leases of ``rows`` (claimed job rows: ``id``, ``lease_token``) alive inside."""
        leases = {str(row.id): str(row.lease_token) for row in rows if row.lease_token is not None}
        with self._lock:
            handle = next(self._handles)
            self._held[handle] = leases
            self._start()
        try:
            yield
        finally:
            with self._lock:
                del self._held[handle]

    def renew_now(self) -> int:
        """Renew every lease held in this process; the number of jobs whose lease was renewed."""
        with self._lock:
            held = {job: token for leases in self._held.values() for job, token in leases.items()}
        if not held:
            return 0
        with maint_tx(self._engine, durable=False) as conn:
            return job_store.renew_leases(conn, held, self._lease_seconds)

    def stop(self) -> None:
        self._wake.set()

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():  # first use in this process (after fork)
            self._wake.clear()
            self._thread = threading.Thread(target=self._beat, name="ibex-lease-keeper", daemon=True)
            self._thread.start()

    def _beat(self) -> None:
        while not self._wake.wait(self.interval):
            try:
                self.renew_now()
            except Exception as exc:  # the next beat tries again; fencing covers a lease that ran out
                log.warning("lease_renewal_failed", error=type(exc).__name__)
