"""The ``WriteContext`` a job carries from stage to stage, and the stage dependencies.

Between stages the context lives in the job row (``memory_write_jobs.context``, plus the
raw content until the PII stage and the embedding), never in a broker message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: the context stays a plain data module that loads no adapter
    from sqlalchemy import Engine

    from ibex_worker.adapters.cache import ReadCache
    from ibex_worker.adapters.embedder import Embedder
    from ibex_worker.adapters.redactor import Redactor
    from ibex_worker.adapters.vector_store import VectorStore
    from ibex_worker.config import Settings
    from ibex_worker.metrics import Metrics
    from ibex_worker.pipeline.leases import LeaseKeeper
    from ibex_worker.publish import Waker
    from ibex_worker.rewording import Tagger

# Context fields kept in the job row's `context` JSON (everything but raw content and vector).
_JSON_FIELDS = ("content", "content_hash", "quarantine_reasons", "pii_report", "subject_key", "subject_aspect",
                "redaction_tags", "exact_duplicate_of", "near_duplicates", "corpus_version", "conflict", "labels",
                "embedding_model", "release_of", "reviewer")


@dataclass
class WriteContext:
    job_id: str
    org_id: str
    agent_id: str
    request: dict[str, Any]                # source, validity, labels, category, metadata
    raw_content: str | None = None         # unredacted; None once the PII stage has run
    content: str | None = None             # redacted
    content_hash: str | None = None
    quarantine_reasons: list[str] = field(default_factory=list)
    pii_report: dict[str, Any] = field(default_factory=dict)
    subject_key: str | None = None
    subject_aspect: str | None = None      # the fact's "for" phrase, from the redacted parse
    redaction_tags: list[str] = field(default_factory=list)  # keyed tag per masked region (redaction_tags)
    embedding: list[float] | None = None
    embedding_model: str | None = None
    embedding_bucket: int | None = None    # the centroid persist files the embedding under (not kept)
    exact_duplicate_of: str | None = None
    near_duplicates: list[dict[str, Any]] = field(default_factory=list)  # {memory_id, similarity}
    corpus_version: int | None = None      # agent corpus version the near-dup/conflict view was read at
    conflict: dict[str, Any] = field(default_factory=dict)  # see pipeline.conflict.ConflictPlan
    labels: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    idempotency_key: str | None = None
    lease_token: str | None = None
    next_stage: str | None = None          # set by a stage that skips ahead (exact hit)
    stored_stage: str | None = None        # the stage the job row is at (where a retry resumes)
    release_of: str | None = None          # a reviewer's release of this quarantined memory
    reviewer: str | None = None            # who released it (``api_key:<id>``, ``cli:<user>``)
    failure: Any = None                    # a permanent error a batch stage found for this job alone

    @property
    def quarantined(self) -> bool:
        return bool(self.quarantine_reasons)

    def decide(self, stage: str, **details: Any) -> None:
        """Append to the job's decision receipt: identifiers and numbers only."""
        self.decisions.append({"stage": stage, **details})

    def context_json(self) -> dict[str, Any]:
        return {name: _plain(getattr(self, name)) for name in _JSON_FIELDS}

    @classmethod
    def from_row(cls, row: Any) -> "WriteContext":
        ctx_data = dict(row.context or {})
        known = {f.name for f in fields(cls)}
        return cls(
            job_id=str(row.id), org_id=row.org_id, agent_id=row.agent_id,
            request=dict(row.request), raw_content=row.raw_content,
            embedding=_vector(row.embedding),
            decisions=list(row.decisions or []), timings_ms=dict(row.timings_ms or {}),
            idempotency_key=row.idempotency_key, lease_token=str(row.lease_token), stored_stage=row.stage,
            **{k: v for k, v in ctx_data.items() if k in known},
        )


def _plain(value: Any) -> Any:
    """A JSON-ready copy (lists and dicts copied, as ``asdict`` would)."""
    return json.loads(json.dumps(value)) if isinstance(value, (dict, list)) else value


def _vector(value: Any) -> list[float] | None:
    if value is None:
        return None
    if isinstance(value, str):  # pgvector's text form, "[0.1,0.2,...]"
        value = json.loads(value)
    return [float(x) for x in value]


@dataclass
class StageDeps:
    """What stages may use. Model adapters are None in processes that do not load them."""

    settings: Settings
    engine: Engine
    vector_store: VectorStore
    redactor: Redactor | None = None
    embedder: Embedder | None = None
    cache: ReadCache | None = None
    metrics: Metrics | None = None
    consumed_queues: frozenset[str] = frozenset()  # queues this worker process takes (inline stages)
    waker: Waker | None = None  # coalesced wake-ups: kept by deliveries of the entry stage
    leases: LeaseKeeper | None = None  # renews the leases of this process's deliveries
    tagger: Tagger | None = None  # the rewording signal's, in processes that search near duplicates
