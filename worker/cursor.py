"""Page cursors for listings ordered by ``(created_at, id)``: opaque base64url JSON."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import datetime
from typing import Any

from worker.errors import FieldIssue


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
