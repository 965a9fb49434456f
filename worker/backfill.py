"""``ibex backfill --org ORG``: the lexical signal's fingerprint and bands
(``ibex_worker.lexical``) for memories stored before it existed, so that they can be
proposed as near duplicates too. Nothing else of a memory changes; nothing merges.

Batches in id order, each in its own tenant transaction, over the rows not filled yet
(``memories_lexical_unfilled``): resumable by construction, since a rerun finds only what
is still empty, and safe beside live writes (a memory written meanwhile is filled by its
own write). A memory whose text is too short for a lexical similarity gets a fingerprint
and no bands, and counts as filled. Progress goes to ``out`` after every batch.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

import structlog

from ibex_worker import lexical
from ibex_worker.db import tenant_tx
from ibex_worker.store import lexical as lexical_store

log = structlog.get_logger("ibex.backfill")

_FIRST = "00000000-0000-0000-0000-000000000000"


def run(engine: Any, org_id: str, batch: int = 500, out: TextIO = sys.stderr) -> dict[str, int]:
    """Fill every unfilled memory of the org; ``{"filled", "left"}``."""
    with tenant_tx(engine, org_id) as conn:
        total = lexical_store.unfilled_count(conn, org_id)
    filled, after, started = 0, _FIRST, time.monotonic()
    while True:
        with tenant_tx(engine, org_id) as conn:
            rows = lexical_store.unfilled(conn, org_id, after, batch)
            for row in rows:
                lexical_store.fill(conn, org_id, str(row.id), lexical.profile(row.content, org_id, row.agent_id))
        if not rows:
            break
        filled, after = filled + len(rows), str(rows[-1].id)
        rate = filled / max(time.monotonic() - started, 1e-6)
        print(f"ibex backfill: {filled} of {total} memories filled ({rate:.0f}/s)", file=out, flush=True)
    with tenant_tx(engine, org_id) as conn:
        left = lexical_store.unfilled_count(conn, org_id)
    log.info("backfill_finished", org_id=org_id, filled=filled, left=left)
    return {"filled": filled, "left": left}
