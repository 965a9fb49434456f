"""Stage 4, embed: the vector of the redacted content.

Guarantees: ``ctx.embedding`` is a unit vector of the schema's dimension for every job that
reaches near_dedup. A model failure raises ``TransientError`` (retried, then the job
fails): never a half-written active row. Quarantined memories are not embedded: they are
never near-duplicate candidates, so a vector would only widen what holds their text.
"""

from __future__ import annotations

from collections.abc import Sequence

from ibex_worker.errors import TransientError
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.store.vectors import EMBEDDING_DIM


def run_batch(ctxs: Sequence[WriteContext], deps: StageDeps) -> list[WriteContext]:
    todo = [ctx for ctx in ctxs if not ctx.quarantined]
    for ctx in ctxs:
        if ctx.quarantined:
            ctx.decide("embed", result="skipped", reason="quarantined")
    if not todo:
        return list(ctxs)
    try:
        vectors = deps.embedder.embed_many([ctx.content or "" for ctx in todo])
    except Exception as exc:
        raise TransientError(f"embedding failed ({type(exc).__name__})", code="EMBEDDING_FAILED") from None
    if deps.metrics is not None:
        deps.metrics.embedding_calls(len(todo))
    for ctx, vector in zip(todo, vectors, strict=True):
        if len(vector) != EMBEDDING_DIM:
            raise TransientError("embedding has the wrong dimension", code="EMBEDDING_FAILED")
        ctx.embedding = vector
        ctx.embedding_model = deps.embedder.model_name
        ctx.decide("embed", result="embedded", model=deps.embedder.model_name, batch_size=len(todo))
    return list(ctxs)
