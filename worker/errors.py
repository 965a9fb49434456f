"""The error taxonomy. The pipeline decides retries from these, in one place:
``ibex_worker.pipeline.settling`` (the backoff schedule is ``ibex_worker.retry``).

Messages carry codes and field names only: never submitted content, so that an error
can be logged, stored on a job row and returned to a producer as it is.
"""

from __future__ import annotations


class IbexError(Exception):
    code = "INTERNAL"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def as_dict(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message}


class PermanentError(IbexError):
    """Validation or policy: retrying cannot help. Never retried."""


# The HTTP status that is a permanent failure's final answer, by code (422 for any other):
# a release of a memory no longer quarantined, and a write whose agent was erased meanwhile,
# are conflicts with the state of the store, not bad requests.
FINAL_STATUS = {"NOT_QUARANTINED": 409, "ERASED": 409}


def final_status_of(code: str) -> int:
    return FINAL_STATUS.get(code, 422)


class TransientError(IbexError):
    """Database, broker or model trouble that may pass. Retried with capped, jittered backoff."""

    code = "TRANSIENT"


class FieldIssue:
    __slots__ = ("field", "issue")

    def __init__(self, field: str, issue: str) -> None:
        self.field = field
        self.issue = issue

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "issue": self.issue}

    def __repr__(self) -> str:
        return f"FieldIssue({self.field!r}, {self.issue!r})"


class ValidationFailed(PermanentError):
    code = "VALIDATION_ERROR"

    def __init__(self, issues: list[FieldIssue]) -> None:
        fields = ", ".join(sorted({issue.field for issue in issues}))
        super().__init__(f"invalid fields: {fields}")
        self.issues = issues

    def as_dict(self) -> dict[str, object]:
        return {**super().as_dict(), "details": [issue.as_dict() for issue in self.issues]}


class ErasureInProgress(IbexError):
    """A write for an agent whose erasure is queued or running: refused, never stored."""

    code = "ERASURE_IN_PROGRESS"

    def __init__(self, erasure_id: str, retry_after: int = 5) -> None:
        super().__init__("the agent's memories are being erased; retry once the erasure has finished")
        self.erasure_id = erasure_id
        self.retry_after = retry_after


class IdempotencyConflict(PermanentError):
    code = "IDEMPOTENCY_CONFLICT"


class IdempotencyInProgress(IbexError):
    code = "IDEMPOTENCY_IN_PROGRESS"

    def __init__(self, job_id: str, retry_after: int) -> None:
        super().__init__("a request with this idempotency key is still running")
        self.job_id = job_id
        self.retry_after = retry_after


class LeaseLost(IbexError):
    """Another delivery took the job over; this one's result must be dropped."""

    code = "LEASE_LOST"
