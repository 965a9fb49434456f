"""Erasures: ``POST /v1/erasures`` and ``GET /v1/erasures/{id}``, and the worker task that
carries them out.

An erasure names one agent (every memory of it) or a list of memory ids. The request writes a
receipt (``memory_erasures``, ids and counts only) and publishes its id to the erase queue; a
worker claims it under a lease and works in bounded batches, each one transaction that ends
by recording its counts fenced on the lease, so a worker killed mid-way loses at most the
batch it was in, and the next delivery (Celery's redelivery or the sweeper's re-publish)
picks up where the receipt says. A delivery works for at most half the task's soft time
limit, then hands the lease over and publishes the next one.

- **An agent**: its memories and every row naming them are deleted (no tombstone: no other
  agent's memory links to them), their read-cache entries dropped, then its finished jobs and
  ledger entries. From the request on, new writes for the agent are refused (409
  ``ERASURE_IN_PROGRESS``) and a write already in flight is refused at persist (``ERASED``); the
  last transaction, under the agent's corpus lock, removes what a persist committed meanwhile
  and fails every job of the agent still unfinished. Nothing written before the erasure
  finished survives it; a write after it is a new memory.
- **Memory ids**: each is deleted as ``DELETE /v1/memories/{id}`` does (a tombstone stays, its
  escalations end withdrawn); ids that are unknown, another agent's than the requesting key
  covers, or deleted already are skipped.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from itertools import groupby
from typing import Any

import structlog

from ibex_worker.db import maint_tx, tenant_tx
from ibex_worker.errors import FieldIssue, IbexError, LeaseLost, TransientError, ValidationFailed
from ibex_worker.pipeline.validate import check_scope_ids
from ibex_worker.publish import publish_erasure
from ibex_worker.reads import iso
from ibex_worker.store import corpus, erasure, erasure_receipts, memories, retention

log = structlog.get_logger("ibex.erasures")

COUNT_KINDS = ("memories", "relationships", "labels", "jobs", "idempotency_keys", "escalations", "cache_keys")
ERASED_BY = "system:erasure"  # who a listed memory's tombstone and withdrawn escalations name
MAX_FAILURES = 5  # deliveries that end in an unexpected error before the erasure is failed


class ErasureNotFound(IbexError):
    code = "NOT_FOUND"


def request(engine: Any, app: Any, settings: Any, org_id: str, *, agent_id: str | None,
            memory_ids: Sequence[str] | None, requested_by: str,
            agent_scope: Sequence[str] | None = None) -> tuple[str, str]:
    """Record an erasure and publish it; its id and status (``queued``). An agent with an open
    erasure gets that one's id and status (nothing new is recorded). Raises
    ``ValidationFailed`` naming the field."""
    ids = check_request(settings, org_id, agent_id, memory_ids)
    with tenant_tx(engine, org_id) as conn:
        if agent_id is not None:  # waits for writes of the agent being recorded now (submit's shared lock)
            erasure_receipts.lock_agent_writes(conn, org_id, agent_id)
        erasure_id = erasure_receipts.insert(conn, org_id, agent_id=agent_id, memory_ids=ids,
                                             agent_scope=agent_scope, requested_by=requested_by)
        if erasure_id is None:
            assert agent_id is not None  # only an agent's erasure can meet an open one
            open_row = erasure_receipts.open_status(conn, org_id, agent_id)
            if open_row is not None:
                return open_row
            raise TransientError("the agent's open erasure finished meanwhile; retry", code="UNAVAILABLE")
    publish_erasure(app, settings, erasure_id)
    log.info("erasure_requested", erasure_id=erasure_id, org_id=org_id,
             target="agent" if agent_id else "memories", memories=len(ids or ()))
    return erasure_id, "queued"


def check_request(settings: Any, org_id: str, agent_id: str | None,
                  memory_ids: Sequence[str] | None) -> list[str] | None:
    """Raise ``ValidationFailed`` naming the field when the request is malformed; the listed
    ids, normalised and without repeats (None for an agent's erasure)."""
    check_scope_ids({"org_id": org_id} if agent_id is None else {"org_id": org_id, "agent_id": agent_id}, settings)
    if (agent_id is None) == (memory_ids is None):
        raise ValidationFailed([FieldIssue("body", "give exactly one of agent_id and memory_ids")])
    if memory_ids is None:
        return None
    if not memory_ids or len(memory_ids) > settings.erasure_max_ids:
        raise ValidationFailed([FieldIssue("memory_ids", f"1 to {settings.erasure_max_ids} memory ids")])
    try:
        return sorted({str(uuid.UUID(str(m))) for m in memory_ids})
    except ValueError:
        raise ValidationFailed([FieldIssue("memory_ids", "every item must be a memory id (a UUID)")]) from None


def view(engine: Any, org_id: str, erasure_id: str, agent_scope: Sequence[str] | None = None) -> dict[str, Any]:
    """The receipt as ``GET /v1/erasures/{id}`` shows it. Raises ``ErasureNotFound`` for a
    malformed or unknown id, another org's, or one the key's agents do not cover."""
    try:
        key = str(uuid.UUID(str(erasure_id)))
    except ValueError:
        raise ErasureNotFound("erasure not found") from None
    with tenant_tx(engine, org_id) as conn:
        row = erasure_receipts.view(conn, org_id, key)
    if row is None or not _covers(agent_scope, row):
        raise ErasureNotFound("erasure not found")
    counts = {kind: int((row.counts or {}).get(kind, 0)) for kind in COUNT_KINDS}
    return {"erasure_id": str(row.id), "status": row.status, "agent_id": row.agent_id,
            "memory_count": row.memory_count, "counts": counts, "error": row.error,
            "created_at": iso(row.created_at), "finished_at": iso(row.finished_at)}


def _covers(agent_scope: Sequence[str] | None, row: Any) -> bool:
    if agent_scope is None:
        return True
    if row.agent_id is not None:
        return row.agent_id in agent_scope
    return row.agent_scope is not None and set(row.agent_scope) <= set(agent_scope)


# ---------------------------------------------------------------- the worker's side


def run(engine: Any, settings: Any, cache: Any, erasure_id: str) -> float | None:
    """One delivery: claim, then work in batches until done or out of time. Returns when the
    next delivery is due, in seconds (0: at once, the lease was handed over), or None when
    there is nothing more to do here (finished, failed, or another delivery holds it)."""
    with maint_tx(engine) as conn:
        claim = erasure_receipts.claim(conn, erasure_id, settings.erasure_lease_seconds)
    if claim is None:
        log.info("erasure_skipped", erasure_id=erasure_id, reason="finished_or_leased")
        return None
    work = _Work(engine, settings, cache, claim)
    backoff = min(settings.retry_backoff_cap, settings.retry_backoff_base * 2.0 ** claim.attempts)
    try:
        done = work.agent() if claim.agent_id is not None else work.listed()
    except LeaseLost:
        log.warning("erasure_lease_lost", erasure_id=erasure_id)
        return None
    except TransientError as exc:
        log.warning("erasure_retry", erasure_id=erasure_id, error=exc.code, countdown_s=backoff)
        return work.hand_over(hold_seconds=backoff)
    except Exception as exc:  # a bug or a constraint: retried a few times, then failed
        if claim.failures + 1 >= MAX_FAILURES:
            log.error("erasure_failed", erasure_id=erasure_id, failures=claim.failures + 1, error=type(exc).__name__)
            work.fail("INTERNAL")
            return None
        log.warning("erasure_retry", erasure_id=erasure_id, error=type(exc).__name__, countdown_s=backoff)
        return work.hand_over(hold_seconds=backoff, failed=True)
    return None if done else work.hand_over()


class _Work:
    """One delivery's share of an erasure, under its lease."""

    def __init__(self, engine: Any, settings: Any, cache: Any, claim: Any) -> None:
        self.engine, self.settings, self.cache, self.claim = engine, settings, cache, claim
        self.org_id, self.id, self.token = claim.org_id, str(claim.id), str(claim.lease_token)
        self.counts = {kind: int((claim.counts or {}).get(kind, 0)) for kind in COUNT_KINDS}
        self.saved = dict(self.counts)  # as the receipt holds them (after the last commit)
        self.batch = settings.erasure_batch_size
        self.deadline = time.monotonic() + settings.task_soft_time_limit / 2.0
        self.started = time.monotonic()
        self.phase_ms: dict[str, float] = {}  # this delivery's time by phase, for the log

    def _timed(self, phase: str, since: float) -> None:
        self.phase_ms[f"{phase}_ms"] = round((time.monotonic() - since) * 1000.0, 1)

    def _add(self, counts: dict[str, int]) -> None:
        for kind, n in counts.items():
            if kind in self.counts:
                self.counts[kind] += n

    def _advance(self, conn: Any) -> None:
        if not erasure_receipts.advance(conn, self.org_id, self.id, self.token, self.counts,
                                        self.settings.erasure_lease_seconds):
            raise LeaseLost("erasure lease lost")

    def _committed(self) -> None:
        self.saved = dict(self.counts)

    def _out_of_time(self) -> bool:
        return time.monotonic() >= self.deadline

    # -- an agent

    def agent(self) -> bool:
        agent_id = self.claim.agent_id
        phase = time.monotonic()
        if self.cache is not None:  # before any entry is dropped: a late persist cannot put one back
            self.cache.mark_erased(self.org_id, agent_id=agent_id)
        while True:
            with tenant_tx(self.engine, self.org_id) as conn:
                corpus.lock(conn, self.org_id, agent_id)
                removed = self._remove_agent_memories(conn, agent_id)
                self._advance(conn)
            self._committed()
            if removed < self.batch:
                break
            if self._out_of_time():
                return False
        self._timed("memories", phase)
        phase = time.monotonic()
        while True:
            with tenant_tx(self.engine, self.org_id) as conn:
                purged = retention.delete_agent_finished(conn, self.org_id, agent_id, self.batch)
                self._add({"jobs": purged.jobs, "idempotency_keys": purged.idempotency_keys})
                self._advance(conn)
            self._committed()
            if purged.jobs < self.batch:
                break
            if self._out_of_time():
                return False
        self._timed("jobs", phase)
        phase = time.monotonic()
        with tenant_tx(self.engine, self.org_id) as conn:
            corpus.lock(conn, self.org_id, agent_id)  # no persist of the agent runs from here to commit
            while self._remove_agent_memories(conn, agent_id) == self.batch:
                pass
            # Unfinished jobs first (waiting for any that is finishing right now), then every
            # other finished job, locks waited for: none of the agent's jobs is skipped.
            refused = erasure.refuse_agent_jobs(conn, self.org_id, agent_id)
            self._add({"idempotency_keys": erasure.drop_agent_keys(conn, self.org_id, agent_id)})
            self._add({"jobs": len(refused) + erasure.delete_agent_jobs(conn, self.org_id, agent_id, keep=refused)})
            corpus.forget(conn, self.org_id, agent_id)
            self._compact_cache()
            self._timed("last", phase)
            self._finish(conn)
        return True

    def _remove_agent_memories(self, conn: Any, agent_id: str) -> int:
        """One batch of the agent's memories, in the caller's transaction; how many."""
        ids = erasure.agent_batch(conn, self.org_id, agent_id, self.batch)
        if not ids:
            return 0
        self._add({"cache_keys": self._drop_cached(ids)})
        self._add(erasure.remove_agent_batch(conn, self.org_id, ids))
        corpus.bump(conn, self.org_id, agent_id)
        return len(ids)

    def _drop_cached(self, memory_ids: list[str]) -> int:
        """Before the rows go: a cache that cannot be reached fails the batch (retried), so
        an erasure never succeeds with a cached copy left behind."""
        if self.cache is None:
            return 0
        return self.cache.drop(self.org_id, memory_ids)

    # -- listed memories

    def listed(self) -> bool:
        ids = [str(m) for m in self.claim.memory_ids or ()]
        scope = self.claim.agent_scope
        for start in range(0, len(ids), self.batch):
            with tenant_tx(self.engine, self.org_id) as conn:
                owners = memories.agents_of(conn, self.org_id, ids[start:start + self.batch])
                live = sorted((agent, memory_id) for memory_id, agent in owners.items()
                              if scope is None or agent in scope)
                for agent_id, pairs in groupby(live, key=lambda pair: pair[0]):
                    corpus.lock(conn, self.org_id, agent_id)
                    self._erase_listed(conn, agent_id, [memory_id for _, memory_id in pairs])
                self._advance(conn)
            self._committed()
            if self._out_of_time() and start + self.batch < len(ids):
                return False
        with tenant_tx(self.engine, self.org_id) as conn:
            self._compact_cache()
            self._finish(conn)
        return True

    def _erase_listed(self, conn: Any, agent_id: str, memory_ids: list[str]) -> None:
        live = memories.lock_live(conn, self.org_id, memory_ids)
        if not live:
            return
        if self.cache is not None:
            self.cache.mark_erased(self.org_id, memory_ids=[str(row.id) for row in live])
        self._add({"cache_keys": self._drop_cached([str(row.id) for row in live])})
        for row in live:
            removed = erasure.erase(conn, self.org_id, str(row.id), ERASED_BY)
            self._add({**removed, "memories": 1})
        corpus.bump(conn, self.org_id, agent_id)

    # -- endings

    def _compact_cache(self) -> None:
        """Before the receipt turns final (every entry is dropped by then): the dropped entries
        also leave Redis's append-only file, whose rewrite has started when the receipt says
        ``succeeded``. Always, not only when this delivery dropped entries: an earlier delivery
        may have dropped some in a batch that then rolled back (and counted none)."""
        if self.cache is not None:
            self.cache.compact()

    def _finish(self, conn: Any) -> None:
        if not erasure_receipts.finish(conn, self.org_id, self.id, self.token, self.counts):
            raise LeaseLost("erasure lease lost")
        log.info("erasure_succeeded", erasure_id=self.id, org_id=self.org_id, attempts=self.claim.attempts,
                 duration_ms=round((time.monotonic() - self.started) * 1000.0, 1), **self.phase_ms, **self.counts)

    def fail(self, code: str) -> None:
        with tenant_tx(self.engine, self.org_id) as conn:
            erasure_receipts.finish(conn, self.org_id, self.id, self.token, self.saved,
                            error={"code": code, "message": "the erasure could not be completed; see the worker log"})

    def hand_over(self, hold_seconds: float = 0.0, *, failed: bool = False) -> float | None:
        """Give the lease up for the next delivery, due in ``hold_seconds`` (``failed``: this
        delivery ended in an unexpected error, counted towards ``MAX_FAILURES``); None when the
        database cannot take it (the lease runs out and the sweeper re-publishes)."""
        try:
            with tenant_tx(self.engine, self.org_id) as conn:
                if not erasure_receipts.hand_over(conn, self.org_id, self.id, self.token, hold_seconds, failed=failed):
                    return None
        except TransientError:
            return None
        log.info("erasure_handed_over", erasure_id=self.id, hold_s=hold_seconds, **self.saved)
        return hold_seconds
