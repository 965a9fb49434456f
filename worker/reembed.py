"""Re-embedding after a change of ``IBEX_EMBEDDING_MODEL_*``: near-duplicate search compares
vectors of the configured model only, so memories embedded by another model are invisible
to it until ``ibex reembed`` gives them a vector of the current one.

The command lists the memories whose vector is of another model, in id order, and publishes
them in batches to the embed queue (``ibex.reembed`` tasks, ids only); a worker consuming
that queue embeds their stored (redacted) text with its model and stores the vectors under the
agent's corpus lock, bumping the corpus version (near-dup decisions computed meanwhile are
recomputed at persist). Resumable by construction: a rerun finds only what is still stale.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from itertools import groupby
from typing import Any, TextIO

import structlog

from ibex_worker.db import tenant_tx
from ibex_worker.publish import publish_reembed
from ibex_worker.store import corpus, reembedding

log = structlog.get_logger("ibex.reembed")

IN_FLIGHT = 2  # batches published and not yet done: one per pool process of a default worker


def reembed_batch(engine: Any, embedder: Any, org_id: str, memory_ids: Sequence[str]) -> int:
    """The worker's side: embed those of ``memory_ids`` whose vector is of another model and
    store the new vectors; how many were stored."""
    model = embedder.model_name
    with tenant_tx(engine, org_id) as conn:
        rows = reembedding.stale_among(conn, org_id, model, memory_ids)
    if not rows:
        return 0
    started = time.perf_counter()
    vectors = embedder.embed_many([row.content for row in rows])
    embed_ms = round((time.perf_counter() - started) * 1000.0, 1)
    stored = 0
    with tenant_tx(engine, org_id) as conn:
        pairs = sorted(zip(rows, vectors), key=lambda pair: (pair[0].agent_id, str(pair[0].id)))
        for agent_id, group in groupby(pairs, key=lambda pair: pair[0].agent_id):
            version = corpus.lock(conn, org_id, agent_id)
            for row, vector in group:
                stored += reembedding.set_vector(conn, org_id, str(row.id), row.content_hash, vector, model,
                                                 searchable_since=version + 1)
            corpus.bump(conn, org_id, agent_id)
    log.info("reembedded", org_id=org_id, memories=stored, model=model, embed_ms=embed_ms)
    return stored


class Progress:
    """done/total, rate and ETA: one rewritten line on a terminal, plain lines otherwise."""

    def __init__(self, total: int, out: TextIO = sys.stderr) -> None:
        self.total, self.out, self.started = total, out, time.monotonic()
        self.tty = out.isatty()

    def show(self, done: int, final: bool = False) -> None:
        elapsed = max(time.monotonic() - self.started, 1e-6)
        rate = done / elapsed
        eta = (self.total - done) / rate if rate > 0 else float("inf")
        share = 100.0 * done / self.total if self.total else 100.0
        line = (f"reembed: {done}/{self.total} ({share:.0f}%), {rate:.1f} memories/s, "
                f"ETA {'-' if eta == float('inf') else f'{eta:.0f} s'}")
        if self.tty:
            self.out.write("\r" + line + ("\n" if final else ""))
        else:
            self.out.write(line + "\n")
        self.out.flush()


def run(engine: Any, app: Any, settings: Any, org_id: str, *, agent_id: str | None = None, batch: int = 64,
        stall_seconds: float = 120.0, progress: Callable[..., Any] | None = None) -> tuple[int, int]:
    """Publish every stale memory of the org (or agent) in batches and wait for each; returns
    (re-embedded now, still stale). Stops early, leaving the rest for a rerun, when no batch
    makes progress for ``stall_seconds`` (no worker on the embed queue, or one with another
    model)."""
    model = settings.embedding_model_name
    with tenant_tx(engine, org_id) as conn:
        total = reembedding.count_stale(conn, org_id, model, agent_id)
    show = progress or Progress(total).show
    done, after, waiting = 0, None, deque()
    show(done, total == 0)
    while True:
        while len(waiting) < IN_FLIGHT:
            with tenant_tx(engine, org_id) as conn:
                ids = reembedding.next_stale(conn, org_id, model, agent_id, after, batch)
            if not ids:
                break
            publish_reembed(app, settings, org_id, ids, model)
            waiting.append(ids)
            after = ids[-1]
        if not waiting:
            break
        ids = waiting.popleft()
        left = _wait_done(engine, org_id, model, ids, stall_seconds)
        done += len(ids) - left
        show(done)
        if left:
            log.warning("reembed_stalled", org_id=org_id, model=model, queue=settings.queue_embed, left=left)
            break
    with tenant_tx(engine, org_id) as conn:
        remaining = reembedding.count_stale(conn, org_id, model, agent_id)
    show(done, True)
    return done, remaining


def _wait_done(engine: Any, org_id: str, model: str, ids: list[str], stall_seconds: float) -> int:
    """Wait until none of ``ids`` is stale, or ``stall_seconds`` without progress; how many are left."""
    left, last_change = len(ids), time.monotonic()
    while left and time.monotonic() - last_change < stall_seconds:
        time.sleep(0.1)
        with tenant_tx(engine, org_id) as conn:
            now_left = reembedding.count_stale_among(conn, org_id, model, ids)
        if now_left < left:
            left, last_change = now_left, time.monotonic()
    return left
