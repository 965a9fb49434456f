"""What a worker process holds: the engine, the vector store, the cache and (for the
queues it consumes) the heavy models, built once per process on ``worker_process_init``.
The API and the CLI take their read cache and their note redactor from here too.

A model that fails to load stops the worker loudly; nothing downloads weights.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import structlog

from ibex_worker.adapters.cache import RedisCache
from ibex_worker.adapters.tagger import SpacyTagger
from ibex_worker.adapters.vector_store import PgVectorStore
from ibex_worker.config import Settings
from ibex_worker.conflict_rules import edits
from ibex_worker.db import get_engine
from ibex_worker.metrics import get_metrics
from ibex_worker.pipeline.context import StageDeps
from ibex_worker.pipeline.leases import LeaseKeeper

if TYPE_CHECKING:  # the model adapters are imported where the models load, below
    from ibex_worker.adapters.embedder import Embedder
    from ibex_worker.adapters.redactor import PresidioRedactor
    from ibex_worker.publish import Waker

log = structlog.get_logger("ibex.runtime")

_deps: StageDeps | None = None
_lock = threading.Lock()
_shared_redactor: PresidioRedactor | None = None


def build_deps(settings: Settings, *, with_pii: bool, with_embedder: bool,
               consumed_queues: frozenset[str] = frozenset(), waker: Waker | None = None) -> StageDeps:
    redactor = load_redactor(settings) if with_pii else None
    embedder = load_embedder(settings) if with_embedder else None
    if {settings.queue_persist, settings.queue_conflict} & consumed_queues:
        edits.load()  # the typo rule of entities (persist) and of the rules classifier (conflict)
    tagger = None
    if {settings.queue_near_dedup, settings.queue_persist} & consumed_queues:
        tagger = SpacyTagger(redactor.nlp if redactor is not None else load_nlp(settings))
    engine = get_engine(settings.database_url)
    return StageDeps(settings=settings, engine=engine,
                     vector_store=PgVectorStore(settings.near_duplicate_coarse_candidates,
                                                probes=settings.near_duplicate_bucket_probes,
                                                buckets_from=settings.near_duplicate_buckets_from,
                                                audit_every=settings.near_duplicate_bucket_audit_every,
                                                audit_at=settings.memory_near_duplicate_sim_threshold),
                     redactor=redactor, embedder=embedder, cache=read_cache(settings), metrics=get_metrics(),
                     consumed_queues=frozenset(consumed_queues), waker=waker,
                     leases=LeaseKeeper(engine, settings.job_lease_seconds), tagger=tagger)


def read_cache(settings: Settings) -> RedisCache | None:
    """The read cache a process writes and evicts after commit; None when caching is off."""
    return RedisCache(settings.redis_url, settings.cache_ttl_seconds) if settings.cache_enabled else None


def install(deps: StageDeps) -> None:
    global _deps
    with _lock:
        _deps = deps


def current() -> StageDeps:
    if _deps is None:
        raise RuntimeError("worker runtime not initialised (worker_process_init did not run)")
    return _deps


# Packages spaCy and Presidio import when they are installed, though the redactor uses neither:
# thinc imports PyTorch, and Presidio's optional Hugging Face engine imports transformers, which
# took 4 to 8 s of each pool process's start. Installed for the embedder, they are still
# imported by it, when and where it needs them.
_UNUSED_BY_THE_REDACTOR = ("torch", "transformers")


@contextlib.contextmanager
def _without_unused_imports() -> Iterator[None]:
    """Make the packages of ``_UNUSED_BY_THE_REDACTOR`` that are not imported yet read as not
    installed while the redactor's modules import (a ``None`` entry in ``sys.modules`` makes
    an import raise ``ImportError``, which both libraries treat as "not installed")."""
    blocked = [name for name in _UNUSED_BY_THE_REDACTOR if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in blocked:
            if sys.modules.get(name, ...) is None:
                del sys.modules[name]


def load_nlp(settings: Settings) -> Any:
    with _without_unused_imports():
        import spacy

        nlp = spacy.load(settings.spacy_model)
    nlp.max_length = settings.pii_max_chars
    return nlp


def load_redactor(settings: Settings) -> PresidioRedactor:
    with _without_unused_imports():
        from ibex_worker.adapters.redactor import PresidioRedactor, RedactionPolicy

        policy = RedactionPolicy(settings.pii_entities, settings.pii_redaction_threshold,
                                 settings.pii_quarantine_floor, settings.pii_disallowed_entities)
        redactor = PresidioRedactor(load_nlp(settings), policy, model_name=settings.spacy_model)
        redactor.redact_many(["Warm-up text for the analyzer."])  # first call builds lazy state
    log.info("model_loaded", model="pii", name=redactor.name)
    return redactor


def shared_redactor(settings: Settings) -> PresidioRedactor:
    """The PII redactor of a process outside the pipeline (the API, the CLI) for the text a
    person types there, such as an escalation's note: loaded on first use, then kept."""
    global _shared_redactor
    with _lock:
        if _shared_redactor is None:
            _shared_redactor = load_redactor(settings)
        return _shared_redactor


def prepare_embedder(settings: Settings) -> None:
    """Export the ONNX graph now if the ONNX backend needs one that is not cached yet: once,
    in the worker's main process before the pool forks (or at image build), so pool
    processes only load it."""
    if settings.embedding_backend != "onnx":
        return
    from pathlib import Path

    from ibex_worker.adapters.embedder import default_model_path
    from ibex_worker.adapters.onnx_embedder import export

    started = time.monotonic()
    graph = export(Path(settings.embedding_model_path or default_model_path()),
                   Path(settings.embedding_onnx_dir).expanduser())
    log.info("embedding_graph_ready", backend="onnx", file=graph.name, seconds=round(time.monotonic() - started, 2))


def load_embedder(settings: Settings) -> Embedder:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from ibex_worker.adapters.embedder import SentenceTransformerEmbedder, default_model_path, texts_per_pass

    model_path = settings.embedding_model_path or default_model_path()
    embedder: Embedder
    if settings.embedding_backend == "onnx":
        from ibex_worker.adapters.onnx_embedder import OnnxEmbedder

        embedder = OnnxEmbedder(model_path, settings.embedding_model_name, threads=settings.embedding_threads,
                                cache_dir=settings.embedding_onnx_dir,
                                texts_per_pass=texts_per_pass(settings.embedding_threads))
    else:
        embedder = SentenceTransformerEmbedder(model_path, settings.embedding_model_name,
                                               threads=settings.embedding_threads)
    embedder.embed_many(["warm-up"])
    log.info("model_loaded", model="embedding", name=embedder.model_name, backend=settings.embedding_backend)
    return embedder
