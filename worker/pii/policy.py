"""What the PII stage does with findings: redact, mask and quarantine, or ignore.

Pure logic over findings (no model): a finding at or above the redaction threshold is
replaced by ``[TYPE]``; one between the quarantine floor and the threshold is uncertain and
is masked as ``[TYPE?]`` while the memory is quarantined for review. Quarantine holds a
memory back; it never keeps a raw value. Below the floor a finding is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# A placeholder the stage wrote, certain or uncertain: ``[EMAIL_ADDRESS]``, ``[PHONE_NUMBER?]``.
PLACEHOLDER_RE = re.compile(r"\[[A-Z][A-Z_]*\??\]")


@dataclass(frozen=True)
class Finding:
    entity_type: str
    start: int
    end: int
    score: float
    recognizer: str = ""  # which recognizer reported it (for the redactor's own refinement)


@dataclass(frozen=True)
class RedactionPolicy:
    entities: tuple[str, ...]
    redaction_threshold: float
    quarantine_floor: float
    disallowed: tuple[str, ...]


@dataclass(frozen=True)
class Decision:
    redact: list[Finding]       # replaced by [TYPE]
    mask: list[Finding]         # uncertain: replaced by [TYPE?]
    reasons: list[str]          # why the memory is quarantined (empty: it is not)


# A value this long (letters and digits) that a finding covers is masked wherever else the
# text repeats it; a shorter one ("12", "Jo") may stand for something else there.
MIN_COPIED_VALUE = 6


def every_copy(text: str, findings: Sequence[Finding]) -> list[Finding]:
    """The findings, and every other place the text repeats a found value's exact characters
    as a whole (not inside a longer word or number), not already covered: "her mobile 07911
    123456 ... so 'order 07911 123456' doesn't exist" holds one phone number twice. A person's
    name is the name model's to repeat (it reads each occurrence's context)."""
    added: list[Finding] = []
    covered = [(f.start, f.end) for f in findings]
    seen: set[str] = set()
    for f in findings:
        value = text[f.start:f.end]
        if f.entity_type == "PERSON" or len(re.sub(r"[\W_]", "", value)) < MIN_COPIED_VALUE or value in seen:
            continue
        seen.add(value)
        for match in re.finditer(rf"(?<![\w+])(?<!\d )(?<!\d-){re.escape(value)}(?!\w|[.,\-]\w| \d)", text):
            if not any(s < match.end() and match.start() < e for s, e in covered):
                added.append(Finding(f.entity_type, match.start(), match.end(), f.score, f.recognizer))
                covered.append((match.start(), match.end()))
    return [*findings, *added]


def classify_findings(findings: Sequence[Finding], policy: RedactionPolicy) -> Decision:
    """A finding at or above the threshold is redacted. One between the floor and the
    threshold is masked and quarantines the memory, unless a redacted finding covers its span
    (recognizers often report the same span twice). Any finding of a disallowed type at or
    above the floor is hidden too and quarantines the memory."""
    redact = [f for f in findings if f.score >= policy.redaction_threshold]
    mask: list[Finding] = []
    reasons: set[str] = set()
    for f in findings:
        if f.score < policy.quarantine_floor:
            continue
        if f.entity_type in policy.disallowed:
            reasons.add(f"disallowed_entity:{f.entity_type}")
            if f.score < policy.redaction_threshold:
                mask.append(f)
        elif f.score < policy.redaction_threshold and not _covered(f, redact):
            reasons.add(f"low_confidence:{f.entity_type}")
            mask.append(f)
    return Decision(redact, mask, sorted(reasons))


def _covered(finding: Finding, redact: Sequence[Finding]) -> bool:
    return any(r.start <= finding.start and finding.end <= r.end for r in redact)


def apply_placeholders(text: str, redact: Sequence[Finding], mask: Sequence[Finding] = ()) -> str:
    """Replace each span with ``[TYPE]`` (``[TYPE?]`` for a masked one). Overlapping spans merge
    into one region named by the certain finding if any, then the higher score, then the
    longer span."""
    out, cursor = [], 0
    for start, end, etype, certain in merge(redact, mask):
        out.append(text[cursor:start])
        out.append(f"[{etype}]" if certain else f"[{etype}?]")
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def merge(redact: Sequence[Finding], mask: Sequence[Finding] = ()) -> list[tuple[int, int, str, bool]]:
    """The masked regions of a text: ``(start, end, type, certain)``, in order, not overlapping."""
    items = [(f, True) for f in redact] + [(f, False) for f in mask]
    items.sort(key=lambda item: (item[0].start, -(item[0].end - item[0].start)))
    regions: list[list[Any]] = []
    for f, certain in items:
        rank = (certain, f.score, f.end - f.start)
        if regions and f.start < regions[-1][1]:
            region = regions[-1]
            region[1] = max(region[1], f.end)
            if rank > region[4]:
                region[2], region[3], region[4] = f.entity_type, certain, rank
        else:
            regions.append([f.start, f.end, f.entity_type, certain, rank])
    return [(r[0], r[1], r[2], r[3]) for r in regions]


def build_report(findings: Sequence[Finding], decision: Decision, policy: RedactionPolicy,
                 analyzer: str) -> dict[str, Any]:
    """Entity types, counts and scores only. Counts are of the masked regions (several
    recognizers reporting one value count once), by the type that names each region."""
    entities: dict[str, dict[str, Any]] = {}
    for _, _, etype, certain in merge(decision.redact, decision.mask):
        entry = entities.setdefault(etype, {"count": 0, "redacted": 0, "masked": 0, "max_score": 0.0})
        entry["count"] += 1
        entry["redacted" if certain else "masked"] += 1
    for f in findings:
        if f.entity_type in entities:
            entities[f.entity_type]["max_score"] = round(max(entities[f.entity_type]["max_score"], f.score), 4)
    status = "quarantined" if decision.reasons else ("redacted" if decision.redact else "clean")
    return {
        "status": status,
        "entities": entities,
        "quarantine_reasons": list(decision.reasons),
        "redaction_threshold": policy.redaction_threshold,
        "quarantine_floor": policy.quarantine_floor,
        "analyzer": analyzer,
    }
