"""Stage 2, pii: detect and redact personal data before anything else sees the text.

Guarantees: after this stage ``ctx.content`` is the redacted text, ``ctx.raw_content`` is
None (and the job row's raw column is erased in the same write), ``ctx.pii_report`` holds
entity types, counts and scores only, and ``ctx.subject_key`` is derived from the redacted
parse. Outcomes: clean, redacted, or quarantined (a finding between the floor and the
redaction threshold, a disallowed type). Fails closed: an analyzer error raises
``TransientError`` (retried, then the job fails and nothing is stored); it never lets
unanalysed text through.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from worker.errors import TransientError
from worker.pipeline.context import WriteContext


def run_batch(ctxs: Sequence[WriteContext], deps: Any) -> list[WriteContext]:
    texts = [ctx.raw_content or "" for ctx in ctxs]
    try:
        outcomes = deps.redactor.redact_many(texts)
    except Exception as exc:  # any analyzer failure: fail closed, keep no detail that may quote text
        raise TransientError(f"PII analysis failed ({type(exc).__name__})", code="PII_ANALYSIS_FAILED") from None
    if len(outcomes) != len(ctxs):
        raise TransientError("PII analysis returned a wrong number of results", code="PII_ANALYSIS_FAILED")
    for ctx, outcome in zip(ctxs, outcomes):
        _apply(ctx, outcome, deps, len(ctxs))
    return list(ctxs)


def _apply(ctx: WriteContext, outcome: Any, deps: Any, batch_size: int) -> None:
    ctx.content = outcome.content
    ctx.raw_content = None
    ctx.pii_report = outcome.report
    ctx.quarantine_reasons = list(outcome.quarantine_reasons)
    ctx.subject_key = outcome.subject_key
    counts = {etype: entry["count"] for etype, entry in outcome.report.get("entities", {}).items()}
    ctx.decide("pii", result=outcome.report.get("status"), entities=counts,
               quarantine_reasons=ctx.quarantine_reasons, batch_size=batch_size)
    if deps.metrics is not None:
        deps.metrics.pii_findings(counts)
