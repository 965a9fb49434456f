"""Structured logging: structlog over the standard library, JSON in production.

Events are snake_case past tense with identifiers, outcomes and timings only. The
standard-library handlers (Celery's own loggers included) go through the same renderer;
Celery's task received/succeeded lines are reduced to task name and id (see celery_app).
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure_logging(fmt: str = "console", level: str = "INFO") -> None:
    shared = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if fmt == "json":
        shared.append(structlog.processors.format_exc_info)
    # Plain tracebacks only: "rich" tracebacks print local variables, which can hold content.
    renderer = (structlog.processors.JSONRenderer() if fmt == "json"
                else structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback))
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer]))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # Third-party loggers that can echo text or parameters at INFO/DEBUG.
    # Presidio warns once per recognizer of every language we do not load: noise, not news.
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
    for noisy in ("sentence_transformers", "transformers", "urllib3", "httpx",
                  "filelock", "huggingface_hub", "sqlalchemy.engine"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
