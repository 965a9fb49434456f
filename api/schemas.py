"""Request and response shapes as the OpenAPI document states them.

Request bodies are read and validated by the same ``validate_request`` the pipeline's
validate stage runs (so a producer gets the pipeline's own 422 at once); their JSON Schema
is built here from the same settings, so the document states the bounds in force. Response
bodies are pydantic models used for the document only: handlers return what the ledger and
the job row hold, and the models allow the fields those add.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ibex_worker.entity_keys import NAME_MAX_CHARS as ENTITY_NAME_MAX_CHARS
from ibex_worker.limits import MAX_LABELS, NOTE_MAX_CHARS

BATCH_MAX_ITEMS = 100
# The shapes validate_request accepts, as JSON Schema (ECMA-262) patterns.
SCOPE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]*$"
NON_BLANK_PATTERN = r"^[^\u0000]*\S[^\u0000]*$"
RFC3339_PATTERN = r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$"
IDEMPOTENCY_KEY_PATTERN = r"^[\x21-\x7e]{1,255}$"
NO_NUL_PATTERN = r"^[^\u0000]*$"


def memory_in_schema(settings: Any, *, with_key: bool = False) -> dict[str, Any]:
    scope = {"type": "string", "minLength": 1, "maxLength": settings.scope_id_max_chars, "pattern": SCOPE_PATTERN}
    label_text = {"type": "string", "minLength": 1, "maxLength": settings.label_max_chars,
                  "pattern": NON_BLANK_PATTERN}
    confidence = {"type": "number", "minimum": 0, "maximum": 1}
    instant = {"anyOf": [{"type": "string", "format": "date-time", "pattern": RFC3339_PATTERN}, {"type": "null"}],
               "description": "RFC 3339 with seconds and an offset; valid_until must be later than valid_from"}
    properties: dict[str, Any] = {
        "org_id": scope, "agent_id": scope,
        "content": {"type": "string", "minLength": 1, "maxLength": settings.content_max_chars,
                    "pattern": NON_BLANK_PATTERN},
        "source": {"type": "string", "minLength": 1, "maxLength": settings.source_max_chars,
                   "pattern": NON_BLANK_PATTERN},
        "valid_from": instant, "valid_until": instant,
        "category": {"anyOf": [label_text, {"type": "null"}]},
        "confidence": {"anyOf": [confidence, {"type": "null"}]},
        "labels": {"anyOf": [{"type": "array", "minItems": 1, "maxItems": MAX_LABELS,
                              "items": {"type": "object", "additionalProperties": False,
                                        "required": ["label", "confidence"],
                                        "properties": {"label": label_text, "confidence": confidence}},
                              "description": "1-5 labels, unique ignoring case"}, {"type": "null"}]},
        "metadata": {"anyOf": [{"type": "object", "description": (
            f"at most {settings.metadata_max_bytes} bytes as compact JSON, each key and string value at most "
            f"{settings.pii_max_chars} characters; analysed for PII like the content (string values redacted, "
            "a key holding personal data refuses the write)")},
                               {"type": "null"}]},
    }
    if with_key:
        properties["idempotency_key"] = {"type": "string", "pattern": IDEMPOTENCY_KEY_PATTERN}
    return {"type": "object", "additionalProperties": False, "required": ["org_id", "agent_id", "content", "source"],
            "properties": properties}


def batch_in_schema() -> dict[str, Any]:
    """An item is judged alone: one that is not a BatchItem gets its own VALIDATION_ERROR in
    a 207, so the request-level schema accepts any item (``anyOf`` keeps the intended shape
    first for readers and generators)."""
    item = {"anyOf": [{"$ref": "#/components/schemas/BatchItem"},
                      {"description": "anything else is refused alone, with its own VALIDATION_ERROR"}]}
    return {"type": "object", "additionalProperties": False, "required": ["items"],
            "properties": {"items": {"type": "array", "minItems": 1, "maxItems": BATCH_MAX_ITEMS, "items": item}}}


def request_components(settings: Any) -> dict[str, Any]:
    """The request-body schemas, with the bounds of these settings."""
    return {"MemoryIn": memory_in_schema(settings), "BatchItem": memory_in_schema(settings, with_key=True),
            "BatchIn": batch_in_schema()}


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ErrorDetail(BaseModel):
    field: str
    issue: str


class ErrorBody(_Open):
    code: str = Field(examples=["VALIDATION_ERROR"])
    message: str
    details: list[ErrorDetail] | None = None


class ErrorEnvelope(_Open):
    """Every failure. ``job_id`` accompanies IDEMPOTENCY_IN_PROGRESS and replays;
    ``memory_id`` accompanies DUPLICATE_CONTENT; ``erasure_id`` ERASURE_IN_PROGRESS."""

    error: ErrorBody
    request_id: str
    job_id: str | None = None
    memory_id: str | None = None
    erasure_id: str | None = None


class Accepted(BaseModel):
    job_id: str
    status: Literal["queued"]


class NearDuplicate(BaseModel):
    memory_id: str
    similarity: float | None = Field(description="embedding cosine similarity; null when the other memory has no "
                                                 "vector of this model (found by the lexical signal alone)")
    lexical_similarity: float | None = Field(None, description="character-trigram similarity; null for texts too "
                                                               "short to compare this way")


class Created(_Open):
    job_id: str
    memory_id: str
    status: Literal["active", "quarantined", "superseded"]
    outcome: Literal["created", "released"]
    near_duplicates: list[NearDuplicate]
    supersedes: list[str]
    escalations: list[str]


class JobView(_Open):
    job_id: str
    status: Literal["queued", "running", "succeeded", "failed"]
    stage: str
    attempts: int
    outcome: Literal["created", "exact_duplicate", "released"] | None
    memory_id: str | None
    result: dict[str, Any] | None = Field(description="the final 201/409 body once the job succeeded")
    error: dict[str, Any] | None
    decisions: list[dict[str, Any]] = Field(description="the decision receipt: identifiers and numbers only")
    timings_ms: dict[str, float]
    created_at: str
    finished_at: str | None


class Label(BaseModel):
    label: str
    confidence: float


class PiiEntity(BaseModel):
    count: int
    redacted: int = Field(description="replaced by [TYPE]")
    masked: int = Field(0, description="uncertain, replaced by [TYPE?] (the memory is quarantined)")


class PiiSummary(BaseModel):
    status: str
    entities: dict[str, PiiEntity] = Field(description="in the content, by entity type")
    fields: dict[str, dict[str, int]] = Field(default_factory=dict,
                                              description="in metadata values: entity type -> count")
    quarantine_reasons: list[str]


class MemoryView(_Open):
    memory_id: str
    org_id: str
    agent_id: str
    status: Literal["active", "quarantined", "superseded", "merged_into", "deleted"]
    content: str = Field(description="the stored content: personal data replaced by [TYPE], and by [TYPE?] where "
                                     "uncertain (quarantined)")
    source: str
    category: str | None
    confidence: float | None
    labels: list[Label]
    valid_from: str | None
    valid_until: str | None
    retrieval_count: int
    last_retrieved_at: str | None
    pii: PiiSummary
    metadata: dict[str, Any]
    created_by_job: str | None
    created_at: str
    updated_at: str


class Relationship(BaseModel):
    type: Literal["near_duplicate_of", "supersedes", "contradicts"]
    direction: Literal["outgoing", "incoming"] = Field(
        description="outgoing: this memory is the link's source (it supersedes / is a near duplicate of the other)")
    memory_id: str = Field(description="the memory at the other end")
    evidence: dict[str, Any]
    decided_by: str
    created_at: str


class RelationshipsView(BaseModel):
    memory_id: str
    relationships: list[Relationship]


class BatchItemResult(_Open):
    """One of: accepted (``job_id``, ``status: queued``), replayed (``job_id``,
    ``replayed: true``, the stored ``response_status`` and ``response``) or refused (``error``,
    with ``job_id`` for IDEMPOTENCY_IN_PROGRESS)."""

    index: int
    job_id: str | None = None
    status: Literal["queued"] | None = None
    replayed: bool | None = None
    response_status: int | None = None
    response: dict[str, Any] | None = None
    error: ErrorBody | None = None


class BatchResult(BaseModel):
    results: list[BatchItemResult]


class Health(BaseModel):
    status: Literal["ok"]


class PipelineProgress(BaseModel):
    stalled: bool  # unfinished jobs and none finished for IBEX_PIPELINE_STALL_SECONDS
    seconds_without_progress: float  # 0 when no job is unfinished


class Readiness(BaseModel):
    status: Literal["ready", "unavailable"]
    checks: dict[str, bool]
    pipeline: PipelineProgress


# ---------------------------------------------------------------- escalations

class EscalationView(BaseModel):
    """An escalated pair of memories: identifiers, statuses, numbers and the decision; never
    the memories' content. A closed model: only these fields are ever answered."""

    escalation_id: str
    org_id: str
    agent_id: str
    memory_id: str = Field(description="the memory whose write escalated (the newer fact)")
    candidate_id: str = Field(description="the existing memory it overlaps")
    reason: Literal["overlapping_intervals", "missing_valid_from"]
    evidence: dict[str, Any] = Field(description="what the pipeline saw: similarity, reason, the escalating job")
    status: Literal["pending", "claimed", "needs_review", "resolved", "dead"]
    outcome: Literal["supersedes", "contradicts", "compatible", "needs_review", "withdrawn"] | None
    decided_by: str | None = Field(description="classifier:<name>@<version>, api_key:<key id>, cli:<user>, or "
                                               "system:memory_deleted (withdrawn: a memory it names was deleted)")
    decision_reason: str | None = Field(description="the classifier's reason, or the person's note")
    decided_at: str | None
    attempts: int
    next_attempt_at: str | None
    last_error: str | None = Field(description="`code: error type` of the last failed attempt")
    created_by_job: str | None
    created_at: str
    updated_at: str


class EscalationDecision(BaseModel):
    outcome: Literal["supersedes", "contradicts", "compatible", "needs_review", "withdrawn"]
    decided_by: str
    reason: str
    details: dict[str, Any] = Field(description="classifier, rule, poller or decided_by_person: never content")
    decided_at: str


class ResolvedEscalation(EscalationView):
    decisions: list[EscalationDecision] = Field(description="every decision taken on it, oldest first")


class EscalationList(BaseModel):
    escalations: list[EscalationView]
    next_cursor: str | None = Field(description="pass as `cursor` for the next page; null on the last one")


class ResolveIn(BaseModel):
    """A person's decision on an escalation. Final: a resolved escalation is never decided again."""

    model_config = ConfigDict(extra="forbid")

    outcome: Literal["supersedes", "contradicts", "compatible"]
    note: str | None = Field(None, max_length=NOTE_MAX_CHARS, pattern=NO_NUL_PATTERN,
                             description="why; stored as the decision reason after the PII analysis every "
                                         "write gets, personal data replaced by placeholders (blank or absent: "
                                         "\"resolved by a person\"); never echoed in an error")


# ---------------------------------------------------------------- quarantine review

class QuarantinedMemory(BaseModel):
    """A quarantined memory as a reviewer sees it: masked content, never a raw value."""

    memory_id: str
    agent_id: str
    content: str = Field(description="uncertain values masked as [TYPE?], certain ones as [TYPE]")
    source: str
    metadata: dict[str, Any]
    pii: PiiSummary
    valid_from: str | None
    valid_until: str | None
    created_at: str


class QuarantineList(BaseModel):
    memories: list[QuarantinedMemory]
    next_cursor: str | None = Field(description="pass as `cursor` for the next page; null on the last one")


class RelationshipRemovalIn(BaseModel):
    """Why a person removes a relationship. Analysed for personal data like any text and stored redacted."""

    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(None, max_length=NOTE_MAX_CHARS, pattern=NO_NUL_PATTERN,
                               description="why the link is wrong; audited; never echoed in an error")


class ReleaseIn(BaseModel):
    """A reviewer's release. The note is analysed for personal data like any text and stored redacted."""

    model_config = ConfigDict(extra="forbid")

    note: str | None = Field(None, max_length=NOTE_MAX_CHARS, pattern=NO_NUL_PATTERN,
                             description="why it is released; audited; never echoed in an error")


# ---------------------------------------------------------------- erasures

class ErasureIn(BaseModel):
    """Exactly one of ``agent_id`` (every memory of the agent) and ``memory_ids``."""

    model_config = ConfigDict(extra="forbid")

    org_id: str = Field(description="bounded and shaped like a write's org_id")
    agent_id: str | None = Field(None, description="bounded and shaped like a write's agent_id")
    memory_ids: list[str] | None = Field(None, min_length=1, description="1 to IBEX_ERASURE_MAX_IDS memory ids")


class ErasureAccepted(BaseModel):
    erasure_id: str
    status: Literal["queued", "running", "succeeded", "failed"] = Field(
        description="`queued` for a new erasure; an agent's erasure already open answers its own status")


class ErasureCounts(BaseModel):
    """Rows and cache entries removed so far, by kind. For listed memories, ``escalations``
    counts those withdrawn and ``jobs`` those whose request was scrubbed. ``cache_keys`` counts
    entries found when their batch committed (one dropped in a batch a crash rolled back is gone
    but not counted)."""

    memories: int
    relationships: int
    labels: int
    jobs: int
    idempotency_keys: int
    escalations: int
    cache_keys: int


class ErasureView(BaseModel):
    erasure_id: str
    status: Literal["queued", "running", "succeeded", "failed"]
    agent_id: str | None = Field(description="the erased agent, or null for listed memories")
    memory_count: int | None = Field(description="how many memory ids were listed, or null for an agent")
    counts: ErasureCounts
    error: dict[str, Any] | None = Field(description="`{code, message}` when it failed")
    created_at: str
    finished_at: str | None


class EntityIn(BaseModel):
    """An entity a person names (org-wide). The name and every alias are analysed for personal
    data first: a finding refuses the request with ``PII_IN_FIELD`` naming the field."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=ENTITY_NAME_MAX_CHARS, pattern=NON_BLANK_PATTERN,
                      description="the canonical name; never rewritten")
    kind: str | None = Field(None, pattern=r"^[a-z][a-z0-9_]{0,31}$",
                             description="what it is (`subject` when absent): `tool`, `project`, `service`...")
    aliases: list[str] = Field(default_factory=list, max_length=20,
                               description="other spellings that resolve to this entity")


class AliasIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    alias: str = Field(min_length=1, max_length=ENTITY_NAME_MAX_CHARS, pattern=NON_BLANK_PATTERN,
                       description="another spelling; later subjects of its key resolve to the entity")


class EntityAlias(BaseModel):
    alias: str
    key: str = Field(description="the alias as names are compared: lower case, `.` and `'` dropped, other "
                                 "punctuation one space")
    created_by: str
    created_at: str


class EntitySummary(BaseModel):
    id: str
    name: str
    key: str
    kind: str
    created_by: str = Field(description="`system:pipeline` (a memory's subject) or `api_key:<key id>`")
    created_at: str


class EntityResemblance(BaseModel):
    entity_id: str
    direction: Literal["outgoing", "incoming"]
    type: Literal["possibly_same_as"]
    evidence: dict[str, Any] = Field(description="`rule`, `similarity` and `threshold` of the keys' trigrams")
    decided_by: str
    created_at: str


class EntityView(EntitySummary):
    aliases: list[EntityAlias]
    possibly_same_as: list[EntityResemblance]
    memories: int = Field(description="memories whose subject resolved to this entity")


class EntityList(BaseModel):
    entities: list[EntitySummary]
    next_cursor: str | None = Field(description="pass as `cursor` for the next page; null on the last one")


class AliasList(BaseModel):
    aliases: list[EntityAlias]
