"""Stage 7, labels: the 1-5 labels a memory is stored with.

Guarantees: ``ctx.labels`` holds 1-5 unique labels (trimmed, lowercased) each with a
confidence in [0, 1]. When the producer gave none, one is synthesised from the scalar
``category`` (``uncategorized`` when absent) and ``confidence`` (1.0 when absent). The
primary category on ``memories`` is projected from these by a database trigger; this
stage never sets it. A released quarantined memory keeps the labels it has.
"""

from __future__ import annotations

from typing import Any

from ibex_worker.pipeline.context import StageDeps, WriteContext

DEFAULT_CATEGORY = "uncategorized"
DEFAULT_CONFIDENCE = 1.0


def normalise(request: dict[str, Any]) -> list[dict[str, Any]]:
    given = request.get("labels")
    if given:
        return [{"label": item["label"].strip().lower(), "confidence": float(item["confidence"])} for item in given]
    category = (request.get("category") or DEFAULT_CATEGORY).strip().lower()
    confidence = request.get("confidence")
    return [{"label": category, "confidence": float(DEFAULT_CONFIDENCE if confidence is None else confidence)}]


def run(ctx: WriteContext, deps: StageDeps) -> WriteContext:
    if ctx.release_of is not None:  # a released memory keeps the labels it was stored with
        ctx.decide("labels", result="kept", count=len(ctx.labels))
        return ctx
    ctx.labels = normalise(ctx.request)
    ctx.decide("labels", result="given" if ctx.request.get("labels") else "synthesized",
               count=len(ctx.labels))
    return ctx
