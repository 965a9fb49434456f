"""Stage 2, pii: detect and redact personal data before anything else sees the text.

Every free-text field goes through the same analysis, in one model call per batch: the
content, every string in ``metadata`` (keys and values, at any depth), each label, the
``category`` and the ``source`` (and a reviewer's note when a quarantined memory is
released). Guarantees, per job:

- ``ctx.content`` is the redacted text: ``[TYPE]`` for a finding at or above the redaction
  threshold, ``[TYPE?]`` for an uncertain one (between the floor and the threshold), which
  also quarantines the memory. Quarantine holds a memory back; it never keeps a raw value.
- ``metadata`` values are redacted in place the same way (an uncertain one quarantines the
  memory); a finding in a metadata key, a label, the category or the source fails the job
  with ``PII_IN_FIELD`` naming the field (those are identifiers, not text to keep).
- ``ctx.request`` holds only redacted text from here on (the job row is rewritten with it),
  ``ctx.raw_content`` is None (the job row's raw column is erased in the same write),
  ``ctx.pii_report`` holds entity types, counts and scores only, ``ctx.subject_key`` is
  derived from the redacted parse, and ``ctx.redaction_tags`` holds the keyed tag of each
  masked region of the content, in order (``ibex_worker.redaction_tags``; none without
  ``IBEX_PII_TAG_KEY``).

Fails closed: an analyzer error raises ``TransientError`` (retried, then the job fails and
nothing is stored); it never lets unanalysed text through.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ibex_worker import redaction_tags
from ibex_worker.errors import FieldIssue, TransientError, ValidationFailed
from ibex_worker.pii.policy import merge
from ibex_worker.pipeline.context import StageDeps, WriteContext
from ibex_worker.pipeline.validate import metadata_strings

if TYPE_CHECKING:
    from ibex_worker.adapters.redactor import RedactionOutcome

# Fields that identify or classify a memory: personal data there is refused, not redacted.
REFUSED_FIELDS = ("source", "category")


class PiiInField(ValidationFailed):
    """Personal data in a field that must not hold it: a label, the category, the source or
    a metadata key. Names the field and the entity type, never the value."""

    code = "PII_IN_FIELD"

    def __init__(self, issues: list[FieldIssue]) -> None:
        super().__init__(issues)
        self.message = "personal data in a field that must not hold it: " + self.message.split(": ", 1)[1]


@dataclass(frozen=True)
class _Text:
    """One string of one job to analyse: where it sits, and whether a finding refuses the write."""

    job: int
    field: str              # "content", "labels[0].label", "metadata", "note" ...
    text: str
    path: tuple[Any, ...]   # where a metadata value sits (keys and list indexes)
    refuse: bool


def run_batch(ctxs: Sequence[WriteContext], deps: StageDeps) -> list[WriteContext]:
    texts = [item for index, ctx in enumerate(ctxs) for item in _texts(index, ctx)]
    unique = list(dict.fromkeys(item.text for item in texts))  # "chat", "preference": analysed once
    try:
        outcomes = deps.redactor.redact_many(unique)
    except Exception as exc:  # any analyzer failure: fail closed, keep no detail that may quote text
        raise TransientError(f"PII analysis failed ({type(exc).__name__})", code="PII_ANALYSIS_FAILED") from None
    if len(outcomes) != len(unique):
        raise TransientError("PII analysis returned a wrong number of results", code="PII_ANALYSIS_FAILED")
    by_text = dict(zip(unique, outcomes))
    per_job: list[list[tuple[_Text, RedactionOutcome]]] = [[] for _ in ctxs]
    for item in texts:
        per_job[item.job].append((item, by_text[item.text]))
    for ctx, analysed in zip(ctxs, per_job):
        _apply(ctx, analysed, deps, len(ctxs))
    return list(ctxs)


def _texts(index: int, ctx: WriteContext) -> Iterator[_Text]:
    """A release (``ctx.release_of``) brings stored, already analysed text: only the
    reviewer's note is new."""
    request = ctx.request
    if ctx.release_of is not None:
        if isinstance(request.get("note"), str):
            yield _Text(index, "note", request["note"], ("note",), False)
        return
    yield _Text(index, "content", ctx.raw_content or "", (), False)
    for name in REFUSED_FIELDS:
        if isinstance(request.get(name), str):
            yield _Text(index, name, request[name], (), True)
    for position, label in enumerate(request.get("labels") or []):
        yield _Text(index, f"labels[{position}].label", label["label"], (), True)
    yield from _metadata_texts(index, request.get("metadata") or {})


def _metadata_texts(index: int, metadata: Any) -> Iterator[_Text]:
    """Every key (refused if personal) and every string value (redacted) of the metadata."""
    for path, text, is_key in metadata_strings(metadata):
        yield _Text(index, "metadata", text, () if is_key else ("metadata", *path), is_key)


def _apply(ctx: WriteContext, analysed: list[tuple[_Text, RedactionOutcome]], deps: StageDeps,
           batch_size: int) -> None:
    refused = [FieldIssue(item.field, f"holds personal data ({', '.join(_types(outcome))})")
               for item, outcome in analysed if item.refuse and outcome.findings]
    if refused:
        ctx.failure = PiiInField(refused)
        ctx.raw_content = None
        ctx.request = {}
        ctx.decide("pii", result="refused", fields=sorted({issue.field for issue in refused}))
        return
    reasons: set[str] = set()
    for item, outcome in analysed:
        if item.field == "content":
            _take_content(ctx, outcome, deps.settings.pii_tag_key.get_secret_value())
        elif item.field == "note":
            _replace(ctx.request, item.path, outcome.content)
            continue  # the reviewer's note is redacted; it never quarantines the memory
        elif item.path:
            _replace(ctx.request, item.path, outcome.content)
            _count(ctx.pii_report.setdefault("fields", {}), item.field, outcome)
        reasons.update(outcome.quarantine_reasons)
    ctx.raw_content = None
    ctx.quarantine_reasons = sorted(reasons)
    ctx.pii_report["status"] = _status(ctx)
    ctx.pii_report["quarantine_reasons"] = list(ctx.quarantine_reasons)
    counts = {etype: entry["count"] for etype, entry in ctx.pii_report.get("entities", {}).items()}
    ctx.decide("pii", result="released" if ctx.release_of else ctx.pii_report["status"], entities=counts,
               quarantine_reasons=ctx.quarantine_reasons, batch_size=batch_size)
    if deps.metrics is not None:
        deps.metrics.pii_findings(counts)


def _take_content(ctx: WriteContext, outcome: RedactionOutcome, tag_key: str) -> None:
    regions = merge(outcome.redacted, outcome.masked)
    ctx.redaction_tags = redaction_tags.make(tag_key, ctx.org_id, ctx.raw_content or "", regions,
                                             outcome.subject_span, outcome.value_span)
    ctx.content = outcome.content
    ctx.pii_report = dict(outcome.report)
    ctx.subject_key = outcome.subject_key
    ctx.subject_aspect = outcome.subject_aspect


def _status(ctx: WriteContext) -> str:
    if ctx.quarantine_reasons:
        return "quarantined"
    fields = ctx.pii_report.get("fields") or {}
    redacted = ctx.pii_report.get("entities") or any(fields.values())
    return "redacted" if redacted else "clean"


def _count(fields: dict[str, Any], field: str, outcome: RedactionOutcome) -> None:
    """Values by type, as the stored text shows them (one per placeholder)."""
    entry = fields.setdefault(field, {})
    for _, _, etype, _ in merge(outcome.redacted, outcome.masked):
        entry[etype] = entry.get(etype, 0) + 1


def _types(outcome: RedactionOutcome) -> list[str]:
    return sorted({finding.entity_type for finding in outcome.findings})


def _replace(request: dict[str, Any], path: tuple[Any, ...], value: str) -> None:
    target: Any = request
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
