"""Stage 1, validate: scope, content bounds, source, RFC 3339 validity, labels, metadata.

Guarantees: a request that passes has a non-blank ``org_id``/``agent_id``/``content``/
``source`` within their bounds, timezone-aware ``valid_from < valid_until`` when both are
given, 1-5 unique labels each with a confidence in [0, 1] (or none at all), and JSON
metadata under the size bound. Outcome on failure: ``PermanentError`` naming the fields,
never quoting their values. The API runs the same function before it accepts a write.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from collections.abc import Iterator
from typing import Any

from ibex_worker.config import Settings
from ibex_worker.errors import FieldIssue, ValidationFailed
from ibex_worker.limits import MAX_LABELS
from ibex_worker.pipeline.context import StageDeps, WriteContext

_SCOPE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]*$")
# RFC 3339 date-time: full date, "T", full time with seconds, and a mandatory offset.
_RFC3339_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$")
_FIELD_NAME_RE = re.compile(r"[a-z][a-z0-9_]{0,39}")
_KNOWN_FIELDS = {"org_id", "agent_id", "content", "source", "valid_from", "valid_until",
                 "category", "confidence", "labels", "metadata"}


def validate_request(body: Any, settings: Settings) -> dict[str, Any]:
    """Return the normalised request or raise ``ValidationFailed`` listing every bad field."""
    if not isinstance(body, dict):
        raise ValidationFailed([FieldIssue("body", "must be a JSON object")])
    issues: list[FieldIssue] = []
    issues += _unknown_fields(set(body) - _KNOWN_FIELDS)
    for name in ("org_id", "agent_id"):
        _check_scope(body.get(name), name, settings.scope_id_max_chars, issues)
    _check_text(body.get("content"), "content", settings.content_max_chars, issues)
    _check_text(body.get("source"), "source", settings.source_max_chars, issues)
    valid_from = _parse_time(body.get("valid_from"), "valid_from", issues)
    valid_until = _parse_time(body.get("valid_until"), "valid_until", issues)
    if valid_from and valid_until and not valid_until > valid_from:
        issues.append(FieldIssue("valid_until", "must be later than valid_from"))
    _check_category(body, settings, issues)
    _check_labels(body.get("labels", None), "labels" in body, settings, issues)
    _check_metadata(body.get("metadata"), settings, issues)
    if issues:
        raise ValidationFailed(issues)
    return {**body, "valid_from": _iso(valid_from), "valid_until": _iso(valid_until),
            "metadata": body.get("metadata") or {}}


def run(ctx: WriteContext, deps: StageDeps) -> WriteContext:
    body = {**ctx.request, "org_id": ctx.org_id, "agent_id": ctx.agent_id, "content": ctx.raw_content}
    normalised = validate_request(body, deps.settings)
    ctx.request = {k: v for k, v in normalised.items() if k not in ("org_id", "agent_id", "content")}
    ctx.decide("validate", result="valid")
    return ctx


def _unknown_fields(names: set[Any]) -> list[FieldIssue]:
    """Name an unknown field only when its name is a plain identifier: a client-chosen key
    is producer text and must not be echoed whatever it holds."""
    plain = sorted(n for n in names if isinstance(n, str) and _FIELD_NAME_RE.fullmatch(n))
    issues = [FieldIssue(name, "unknown field") for name in plain]
    if len(plain) < len(names):
        issues.append(FieldIssue("body", f"{len(names) - len(plain)} unknown field(s) with unusual names"))
    return issues


def check_scope_ids(values: dict[str, Any], settings: Settings) -> None:
    """``org_id``/``agent_id``-shaped fields outside a write (an erasure's); raises
    ``ValidationFailed`` naming each bad one."""
    issues: list[FieldIssue] = []
    for name, value in values.items():
        _check_scope(value, name, settings.scope_id_max_chars, issues)
    if issues:
        raise ValidationFailed(issues)


def _check_scope(value: Any, name: str, max_chars: int, issues: list[FieldIssue]) -> None:
    if not isinstance(value, str) or not value:
        issues.append(FieldIssue(name, "required, a non-empty string"))
    elif len(value) > max_chars:
        issues.append(FieldIssue(name, f"at most {max_chars} characters"))
    elif not _SCOPE_RE.fullmatch(value):
        issues.append(FieldIssue(name, "letters, digits and . _ : @ - only, starting with a letter or digit"))


def _check_text(value: Any, name: str, max_chars: int, issues: list[FieldIssue]) -> None:
    if not isinstance(value, str) or not value.strip():
        issues.append(FieldIssue(name, "required, a non-blank string"))
    elif len(value) > max_chars:
        issues.append(FieldIssue(name, f"at most {max_chars} characters"))
    elif "\x00" in value:
        issues.append(FieldIssue(name, "must not contain NUL characters"))


def _parse_time(value: Any, name: str, issues: list[FieldIssue]) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        issues.append(FieldIssue(name, "must be an RFC 3339 timestamp string or null"))
        return None
    if not _RFC3339_RE.fullmatch(value):
        issues.append(FieldIssue(name, "must be an RFC 3339 timestamp with seconds and an offset"))
        return None
    fraction = re.search(r"\.(\d+)", value)
    normalised = value.upper().replace("Z", "+00:00")
    if fraction and len(fraction.group(1)) > 6:  # Python keeps microseconds
        normalised = normalised.replace(fraction.group(0), "." + fraction.group(1)[:6])
    try:
        return datetime.fromisoformat(normalised)
    except ValueError:  # well-shaped but impossible: month 13, hour 25
        issues.append(FieldIssue(name, "must be a real date and time"))
        return None


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _is_confidence(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and 0.0 <= value <= 1.0)


def _check_category(body: dict[str, Any], settings: Settings, issues: list[FieldIssue]) -> None:
    category, confidence = body.get("category"), body.get("confidence")
    if category is not None and (not isinstance(category, str) or not category.strip()
                                 or len(category) > settings.label_max_chars):
        issues.append(FieldIssue("category", f"a non-blank string of at most {settings.label_max_chars} characters"))
    if confidence is not None and not _is_confidence(confidence):
        issues.append(FieldIssue("confidence", "a number between 0 and 1"))


def _check_labels(labels: Any, present: bool, settings: Settings, issues: list[FieldIssue]) -> None:
    if not present or labels is None:
        return
    if not isinstance(labels, list):
        issues.append(FieldIssue("labels", "must be a list"))
        return
    if not 1 <= len(labels) <= MAX_LABELS:
        issues.append(FieldIssue("labels", f"must hold 1 to {MAX_LABELS} labels when given"))
    seen: set[str] = set()
    for i, item in enumerate(labels):
        where = f"labels[{i}]"
        if not isinstance(item, dict) or set(item) - {"label", "confidence"}:
            issues.append(FieldIssue(where, "must be an object with label and confidence"))
            continue
        name = item.get("label")
        if not isinstance(name, str) or not name.strip() or len(name) > settings.label_max_chars:
            issues.append(FieldIssue(f"{where}.label", f"a non-blank string of at most {settings.label_max_chars} characters"))
        elif name.strip().lower() in seen:
            issues.append(FieldIssue(f"{where}.label", "duplicate label"))
        else:
            seen.add(name.strip().lower())
        if not _is_confidence(item.get("confidence")):
            issues.append(FieldIssue(f"{where}.confidence", "a number between 0 and 1"))


def _check_metadata(metadata: Any, settings: Settings, issues: list[FieldIssue]) -> None:
    if metadata is None:
        return
    if not isinstance(metadata, dict):
        issues.append(FieldIssue("metadata", "must be a JSON object"))
        return
    try:
        size = len(json.dumps(metadata, separators=(",", ":"), allow_nan=False, ensure_ascii=False).encode())
    except (TypeError, ValueError):
        issues.append(FieldIssue("metadata", "must be plain JSON"))
        return
    if size > settings.metadata_max_bytes:
        issues.append(FieldIssue("metadata", f"at most {settings.metadata_max_bytes} bytes as JSON"))
    elif any(len(text) > settings.pii_max_chars for _, text, _ in metadata_strings(metadata)):
        # the PII stage analyses each key and string value: a longer one could never be stored
        issues.append(FieldIssue("metadata", f"keys and string values of at most {settings.pii_max_chars} characters"))


def metadata_strings(metadata: Any) -> Iterator[tuple[tuple[Any, ...], str, bool]]:
    """Every key and every string value of the metadata, at any depth: ``(path, text, is_key)``,
    where ``path`` leads to the value (for a key, to the object holding it)."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), metadata)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                yield path, key, True
                stack.append(((*path, key), item))
        elif isinstance(value, list):
            stack.extend(((*path, position), item) for position, item in enumerate(value))
        elif isinstance(value, str):
            yield path, value, False
