"""Page cursors for listings ordered by ``(created_at, id)``: opaque base64url JSON."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import datetime
from typing import Any

from ibex_worker.errors import FieldIssue, ValidationFailed


def encode_cursor(row: Any) -> str:
    raw = json.dumps([row.created_at.isoformat(), str(row.id)]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None, issues: list[FieldIssue]) -> tuple[datetime | None, str | None]:
    """The ``(created_at, id)`` a page starts after; an issue on ``cursor`` if it is not one
    of ours."""
    if not cursor:
        return None, None
    try:
        at, key = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not isinstance(at, str) or not isinstance(key, str):
            raise TypeError("cursor fields must be strings")
        return datetime.fromisoformat(at), str(uuid.UUID(key))
    except (ValueError, TypeError):
        issues.append(FieldIssue("cursor", "is not a cursor this service returned"))
        return None, None


def page_start(limit: int, limit_max: int, cursor: str | None,
               issues: list[FieldIssue] | None = None) -> tuple[datetime | None, str | None]:
    """Check a page request (``limit`` in 1..``limit_max``, a cursor of ours) together with
    the caller's own ``issues``; raise ``ValidationFailed`` naming every bad field, or return
    where the page starts."""
    issues = list(issues or [])
    if not 1 <= limit <= limit_max:
        issues.append(FieldIssue("limit", f"must be between 1 and {limit_max}"))
    after = decode_cursor(cursor, issues)
    if issues:
        raise ValidationFailed(issues)
    return after


def page(rows: list[Any], limit: int, view: Any) -> dict[str, Any]:
    """``{"items", "next_cursor"}`` from ``limit + 1`` rows read in page order."""
    more = len(rows) > limit
    return {"items": [view(row) for row in rows[:limit]],
            "next_cursor": encode_cursor(rows[limit - 1]) if more else None}
