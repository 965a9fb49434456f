"""The escalation worker: a long-running process that decides escalated conflicts.

Each round claims up to ``escalation_batch_size`` escalations (``FOR UPDATE SKIP LOCKED``
in a CTE, then ``UPDATE … RETURNING`` with a lease and a fencing token: pending rows that
are due, and claimed rows whose lease ran out). Each item then goes through its own short
transactions: renew its lease and read the two memories; classify, **outside** any
transaction; apply the verdict in one tenant transaction fenced on the token. A classifier
that raises costs an attempt: the item returns to ``pending`` with capped, jittered
backoff, and after ``escalation_max_attempts`` it is ``dead`` with an error code (never
content). When nothing is due the poller waits, doubling its idle wait up to a bound.
SIGTERM/SIGINT let the item in hand finish; the rest of the batch is released unprocessed.

It needs PostgreSQL only. Redis is touched only to evict superseded memories from the read
cache, best effort, after commit.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

import structlog

from ibex_worker.db import tenant_tx
from ibex_worker.errors import IbexError, TransientError
from ibex_worker.escalations import apply as applying
from ibex_worker.escalations import queue
from ibex_worker.escalations.classifiers import ConflictClassifier, ConflictPair, Verdict, order_pair
from ibex_worker.retry import backoff_seconds
from ibex_worker.store import escalations

log = structlog.get_logger("ibex.escalations")

BACKLOG_REFRESH_SECONDS = 15.0  # how often the backlog gauge is recounted


class Poller:
    def __init__(self, engine: Any, settings: Any, classifier: ConflictClassifier, metrics: Any, *,
                 owner: str, cache: Any = None, stop: threading.Event | None = None) -> None:
        self.engine = engine
        self.settings = settings
        self.classifier = classifier
        self.metrics = metrics
        self.owner = owner
        self.cache = cache
        self.stop = stop or threading.Event()
        self._idle = settings.escalation_idle_backoff_min_seconds
        self._next_backlog = 0.0

    # ------------------------------------------------------------ the loop

    def run(self) -> None:
        log.info("escalation_poller_started", poller=self.owner, classifier=self.classifier.decided_by,
                 batch_size=self.settings.escalation_batch_size, lease_s=self.settings.escalation_lease_seconds)
        while not self.stop.is_set():
            self._refresh_backlog()
            try:
                handled = self.poll_once()
                self.metrics.round_done("escalations")
            except TransientError:
                log.warning("escalation_claim_failed", poller=self.owner, reason="database_unavailable")
                handled = 0
            if handled:
                self._idle = self.settings.escalation_idle_backoff_min_seconds
            else:
                self._wait_idle()
        log.info("escalation_poller_stopped", poller=self.owner)

    def poll_once(self) -> int:
        """Claim one batch and work through it; returns how many items were claimed."""
        batch = queue.claim_batch(self.engine, limit=self.settings.escalation_batch_size,
                                  lease_seconds=self.settings.escalation_lease_seconds, owner=self.owner,
                                  org_ids=self.settings.escalation_org_ids)
        if not batch:
            return 0
        log.info("escalation_batch_claimed", poller=self.owner, claimed=len(batch),
                 limit=self.settings.escalation_batch_size)
        for index, claim in enumerate(batch):
            if self.stop.is_set():
                self._release(batch[index:])
                break
            if index:
                self._renew(batch[index:])
            self.handle(claim)
        return len(batch)

    def _wait_idle(self) -> None:
        log.debug("poller_idle", poller=self.owner, wait_s=round(self._idle, 3))
        self.stop.wait(self._idle)
        self._idle = min(self._idle * 2, self.settings.escalation_idle_backoff_max_seconds)

    def _renew(self, claims: list[queue.Claim]) -> None:
        try:
            queue.renew_waiting(self.engine, claims, self.settings.escalation_lease_seconds)
        except TransientError:
            log.warning("escalation_lease_renewal_failed", poller=self.owner, items=len(claims))

    def _release(self, claims: list[queue.Claim]) -> None:
        try:
            released = queue.release(self.engine, claims)
        except TransientError:
            released = 0  # their leases run out and another poller takes them over
        log.info("escalations_released", poller=self.owner, released=released, unreleased=len(claims) - released)

    def _refresh_backlog(self) -> None:
        if time.monotonic() < self._next_backlog:
            return
        self._next_backlog = time.monotonic() + BACKLOG_REFRESH_SECONDS
        try:
            self.metrics.escalation_backlog_counts(queue.backlog(self.engine, self.settings.escalation_org_ids))
        except TransientError:
            log.warning("escalation_backlog_failed", reason="database_unavailable")

    # ------------------------------------------------------------ one item

    def handle(self, claim: queue.Claim) -> None:
        bound = log.bind(escalation_id=claim.id, org_id=claim.org_id, attempt=claim.attempts, poller=self.owner)
        try:
            loaded = queue.start(self.engine, claim, self.settings.escalation_lease_seconds)
        except TransientError:
            bound.warning("escalation_start_failed", reason="database_unavailable")
            return
        if loaded is None:
            bound.info("escalation_fenced", step="start")
            return
        if claim.attempts > self.settings.escalation_max_attempts:  # its leases kept running out
            self._fail(claim, "ATTEMPTS_EXHAUSTED", "LeaseExpired", bound)
            return
        verdict = self._verdict(claim, loaded, bound)
        if verdict is not None:
            self._decide(claim, verdict, bound)

    def _verdict(self, claim: queue.Claim, loaded: queue.Loaded, bound: Any) -> Verdict | None:
        if loaded.unusable or loaded.memory is None or loaded.candidate is None:
            return Verdict("needs_review", "One of the memories is deleted or quarantined; it is never sent to "
                                           "a classifier.", loaded.unusable or "memory_missing")
        older, newer = order_pair(loaded.memory, loaded.candidate)
        pair = ConflictPair(older, newer, claim.evidence.get("similarity"), claim.reason)
        started = time.perf_counter()
        try:
            verdict = self.classifier.classify(pair)
        except Exception as exc:  # any classifier failure costs an attempt; the poller goes on
            code = exc.code if isinstance(exc, IbexError) else "CLASSIFIER_FAILED"
            self._fail(claim, code, type(exc).__name__, bound)
            return None
        bound.info("escalation_classified", outcome=verdict.outcome, rule=verdict.rule,
                   ms=round((time.perf_counter() - started) * 1000, 1))
        return verdict

    def _decide(self, claim: queue.Claim, verdict: Verdict, bound: Any) -> None:
        decision = applying.Decision(verdict.outcome, verdict.reason, self.classifier.decided_by, {
            "classifier": self.classifier.name, "version": self.classifier.version, "rule": verdict.rule,
            "poller": self.owner, "attempt": claim.attempts})
        try:
            applied = self._apply_fenced(claim, decision)
        except TransientError:
            bound.warning("escalation_apply_failed", reason="database_unavailable")
            return
        except Exception as exc:  # a bug or a broken invariant: recorded, counted, never silent
            self._fail(claim, "APPLY_FAILED", type(exc).__name__, bound)
            return
        if applied is None:
            bound.info("escalation_fenced", step="apply")
            return
        self.metrics.conflict_decided(applied.outcome)
        if self.cache is not None and applied.superseded:
            self.cache.evict(claim.org_id, applied.superseded)
        bound.info("escalation_resolved" if applied.status == "resolved" else "escalation_needs_review",
                   outcome=applied.outcome, relationship=(applied.relationship or {}).get("type"))

    def _apply_fenced(self, claim: queue.Claim, decision: applying.Decision) -> applying.Applied | None:
        with tenant_tx(self.engine, claim.org_id) as conn:
            row = escalations.lock_claimed(conn, claim.org_id, claim.id, claim.lease_token)
            if row is None:  # lease taken over, or a person decided meanwhile: drop our result
                return None
            return applying.apply(conn, row, decision)

    def _fail(self, claim: queue.Claim, code: str, error_type: str, bound: Any) -> None:
        dead = claim.attempts >= self.settings.escalation_max_attempts
        delay = backoff_seconds(claim.attempts, base=self.settings.retry_backoff_base,
                                cap=self.settings.retry_backoff_cap)
        try:
            recorded = queue.fail(self.engine, claim, f"{code}: {error_type}", dead=dead, delay_seconds=delay)
        except TransientError:
            bound.warning("escalation_fail_unrecorded", code=code, reason="database_unavailable")
            return
        if not recorded:
            bound.info("escalation_fenced", step="fail")
            return
        self.metrics.escalation_failed(code, dead=dead)
        if dead:
            bound.error("escalation_dead", code=code, error_type=error_type)
        else:
            bound.warning("escalation_retry_scheduled", code=code, error_type=error_type, delay_s=round(delay, 3))


def install_signal_handlers(stop: threading.Event) -> None:
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
