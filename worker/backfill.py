"""``ibex backfill --org ORG``: the lexical signal's fingerprint and bands
(``ibex_worker.lexical``) for memories stored before it existed, so that they can be
proposed as near duplicates too, then the entity each memory's subject resolves to
(``ibex_worker.entities``: existing entities by key and alias, new ones with their
``possibly_same_as`` resemblances), then the embedding bucket of each memory embedded by a
model whose centroids were loaded after it was stored (``ibex_worker.adapters.centroids``). Nothing
else of a memory changes; nothing merges.

Batches in id order, each in its own tenant transaction, over the rows not filled yet
(``memories_lexical_unfilled``, ``memories_entity_unfilled``, a bucket of NULL): resumable by construction, since a rerun finds only what
is still empty, and safe beside live writes (a memory written meanwhile is filled by its
own write). A memory whose text is too short for a lexical similarity gets a fingerprint
and no bands, and counts as filled. Progress goes to ``out`` after every batch.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

import structlog
from ibex_worker import lexical
from ibex_worker.db import tenant_tx
from ibex_worker.pipeline import entities
from ibex_worker.store import entities as entity_store
from ibex_worker.store import lexical as lexical_store
from ibex_worker.store import vectors

log = structlog.get_logger("ibex.backfill")

_FIRST = "00000000-0000-0000-0000-000000000000"


def run(engine: Any, org_id: str, batch: int = 500, out: TextIO = sys.stderr,
        entity_threshold: float | None = 0.6) -> dict[str, int]:
    """Fill every unfilled memory of the org; ``{"filled", "left", "entities_filled",
    "entities_left", "buckets_filled", "buckets_left"}``."""
    def fill_lexical(conn: Any, rows: list[Any]) -> int:
        for row in rows:
            lexical_store.fill(conn, org_id, str(row.id), lexical.profile(row.content, org_id, row.agent_id))
        return len(rows)

    def fill_entities(conn: Any, rows: list[Any]) -> int:
        return entities.fill_memory_entities(conn, org_id, rows, entity_threshold)

    filled = _pass(engine, org_id, batch, out, "memories filled", lexical_store, fill_lexical)
    resolved = _pass(engine, org_id, batch, out, "subjects resolved to entities", entity_store, fill_entities)
    filed = _pass(engine, org_id, batch, out, "embeddings filed in buckets", vectors,
                  lambda conn, rows: vectors.file_in_buckets(conn, org_id, [str(row.id) for row in rows]))
    with tenant_tx(engine, org_id) as conn:
        left, entities_left = lexical_store.unfilled_count(conn, org_id), entity_store.unfilled_count(conn, org_id)
        buckets_left = vectors.unfilled_count(conn, org_id)
    log.info("backfill_finished", org_id=org_id, filled=filled, left=left, entities_filled=resolved,
             entities_left=entities_left, buckets_filled=filed, buckets_left=buckets_left)
    return {"filled": filled, "left": left, "entities_filled": resolved, "entities_left": entities_left,
            "buckets_filled": filed, "buckets_left": buckets_left}


def _pass(engine: Any, org_id: str, batch: int, out: TextIO, what: str, source: Any,
          fill: Callable[[Any, list[Any]], int]) -> int:
    """One pass over ``source.unfilled`` rows in id order, a batch per transaction."""
    with tenant_tx(engine, org_id) as conn:
        total = source.unfilled_count(conn, org_id)
    filled, after, started = 0, _FIRST, time.monotonic()
    while True:
        with tenant_tx(engine, org_id) as conn:
            rows = source.unfilled(conn, org_id, after, batch)
            filled += fill(conn, rows) if rows else 0
        if not rows:
            return filled
        after = str(rows[-1].id)
        rate = filled / max(time.monotonic() - started, 1e-6)
        print(f"ibex backfill: {filled} of {total} {what} ({rate:.0f}/s)", file=out, flush=True)
