"""A person's free text (an escalation's note, the reason a link was removed) is stored only
after the write path's PII analysis: its findings, certain or not, become placeholders. An
analysis that cannot run refuses the decision (``TransientError``, ``PII_ANALYSIS_FAILED``);
the error names no text."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog

from ibex_worker.errors import TransientError

if TYPE_CHECKING:
    from ibex_worker.adapters.redactor import RedactionOutcome, Redactor

log = structlog.get_logger("ibex.notes")


def analysed(texts: list[str], redactor: Callable[[], Redactor] | None, field: str) -> list[RedactionOutcome]:
    """The write path's analysis of ``texts``; ``field`` names them in the error."""
    if redactor is None:
        raise ValueError(f"a {field} is stored only through the PII redactor")
    try:
        return redactor().redact_many(texts)
    except Exception as exc:  # fail closed: no analysis, nothing stored
        raise TransientError(f"PII analysis of the {field} failed ({type(exc).__name__})",
                             code="PII_ANALYSIS_FAILED") from None


def redacted(text: str, redactor: Callable[[], Redactor] | None, field: str) -> str:
    """``text`` as it may be stored; ``field`` names it in the error and the log."""
    outcome = analysed([text], redactor, field)[0]
    log.info("note_redacted", field=field, findings=len(outcome.findings))
    return outcome.content
