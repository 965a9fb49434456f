"""PII detection and redaction: the ``Redactor`` seam and its Presidio implementation.

One spaCy pass per text serves both Presidio (through precomputed NLP artifacts) and the
conflict stage's subject key, which is read from the same parse with every redacted span
replaced by its placeholder, so a subject key never holds a raw value.

The report kept with a memory holds entity types, counts and scores, never values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

PLACEHOLDER_RE = re.compile(r"\[[A-Z_]+\]")


@dataclass(frozen=True)
class Finding:
    entity_type: str
    start: int
    end: int
    score: float


@dataclass
class RedactionOutcome:
    content: str  # redacted text
    findings: list[Finding]
    redacted: list[Finding]
    quarantine_reasons: list[str]
    subject_key: str | None
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def quarantined(self) -> bool:
        return bool(self.quarantine_reasons)


class Redactor(Protocol):
    name: str

    def redact_many(self, texts: Sequence[str]) -> list[RedactionOutcome]:
        """Analyze and redact each text. Raises on analyzer failure: callers fail closed."""


@dataclass(frozen=True)
class RedactionPolicy:
    entities: tuple[str, ...]
    redaction_threshold: float
    quarantine_floor: float
    disallowed: tuple[str, ...]


def classify_findings(findings: Sequence[Finding], policy: RedactionPolicy) -> tuple[list[Finding], list[str]]:
    """Split findings into those to redact and the reasons (if any) to quarantine.

    A finding at or above the redaction threshold is redacted. One between the floor and
    the threshold quarantines the memory unless a redacted finding already covers its span
    (Presidio often reports the same span twice with different scores). Any finding of a
    disallowed type at or above the floor quarantines.
    """
    redact = [f for f in findings if f.score >= policy.redaction_threshold]
    reasons: set[str] = set()
    for f in findings:
        if f.score < policy.quarantine_floor:
            continue
        if f.entity_type in policy.disallowed:
            reasons.add(f"disallowed_entity:{f.entity_type}")
        elif f.score < policy.redaction_threshold and not _covered(f, redact):
            reasons.add(f"low_confidence:{f.entity_type}")
    return redact, sorted(reasons)


def _covered(finding: Finding, redact: Sequence[Finding]) -> bool:
    return any(r.start <= finding.start and finding.end <= r.end for r in redact)


def apply_placeholders(text: str, redact: Sequence[Finding]) -> str:
    """Replace each redacted span with ``[ENTITY_TYPE]``; overlapping spans merge, the
    higher-scoring (then longer) finding naming the merged span."""
    merged: list[Finding] = []
    for f in sorted(redact, key=lambda f: (f.start, -(f.end - f.start))):
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            keeper = last if (last.score, last.end - last.start) >= (f.score, f.end - f.start) else f
            merged[-1] = Finding(keeper.entity_type, last.start, max(last.end, f.end), keeper.score)
        else:
            merged.append(f)
    out, cursor = [], 0
    for f in merged:
        out.append(text[cursor:f.start])
        out.append(f"[{f.entity_type}]")
        cursor = f.end
    out.append(text[cursor:])
    return "".join(out)


def build_report(findings: Sequence[Finding], redacted: Sequence[Finding], reasons: Sequence[str],
                 policy: RedactionPolicy, analyzer: str) -> dict[str, Any]:
    """Entity types, counts and scores only."""
    entities: dict[str, dict[str, Any]] = {}
    for f in findings:
        entry = entities.setdefault(f.entity_type, {"count": 0, "redacted": 0, "max_score": 0.0})
        entry["count"] += 1
        entry["max_score"] = round(max(entry["max_score"], f.score), 4)
    for f in redacted:
        entities[f.entity_type]["redacted"] += 1
    status = "quarantined" if reasons else ("redacted" if redacted else "clean")
    return {
        "status": status,
        "entities": entities,
        "quarantine_reasons": list(reasons),
        "redaction_threshold": policy.redaction_threshold,
        "quarantine_floor": policy.quarantine_floor,
        "analyzer": analyzer,
    }


class PresidioRedactor:
    """Presidio ``AnalyzerEngine`` over an already-loaded spaCy pipeline (one copy in memory)."""

    def __init__(self, nlp: Any, policy: RedactionPolicy, *, phone_score: float, model_name: str) -> None:
        from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
        from presidio_analyzer.nlp_engine import SpacyNlpEngine
        from presidio_analyzer.predefined_recognizers import EmailRecognizer, PhoneRecognizer

        _pin_tldextract_offline()
        engine = SpacyNlpEngine(models=[{"lang_code": "en", "model_name": model_name}])
        engine.nlp = {"en": nlp}  # share the worker's pipeline; never spacy.load (or download) again
        registry = RecognizerRegistry(supported_languages=["en"])
        registry.load_predefined_recognizers(languages=["en"], nlp_engine=engine)
        registry.remove_recognizer("PhoneRecognizer")
        registry.remove_recognizer("EmailRecognizer")

        class _ScoredPhoneRecognizer(PhoneRecognizer):
            # Presidio scores a phonenumbers-validated match 0.4, below any sane redaction
            # threshold; a number that parses and validates for a region is a phone number.
            SCORE = phone_score

        class _AnyDomainEmailRecognizer(EmailRecognizer):
            # Presidio drops an address whose domain is not on the public suffix list
            # (`.test`, `.internal`, `.corp`): that leaks real internal addresses. The
            # pattern alone is strict enough to act on.
            def validate_result(self, pattern_text: str) -> bool:
                return True

        registry.add_recognizer(_ScoredPhoneRecognizer())
        registry.add_recognizer(_AnyDomainEmailRecognizer())
        self._engine = engine
        self._analyzer = AnalyzerEngine(registry=registry, nlp_engine=engine, supported_languages=["en"])
        self._nlp = nlp
        self.policy = policy
        # Disallowed types are looked for too, even when they are not redaction targets.
        self._entities = list(dict.fromkeys((*policy.entities, *policy.disallowed)))
        unknown = set(self._entities) - set(self._analyzer.get_supported_entities("en"))
        if unknown:
            raise ValueError(f"PII entity types no recognizer supports: {sorted(unknown)}")
        from importlib.metadata import version

        self.name = f"presidio-analyzer {version('presidio-analyzer')} / {model_name}"

    def redact_many(self, texts: Sequence[str]) -> list[RedactionOutcome]:
        from worker.pipeline.subjects import subject_key_from_doc

        outcomes = []
        for text, doc in zip(texts, self._nlp.pipe(texts, batch_size=64)):
            artifacts = self._engine._doc_to_nlp_artifact(doc, "en")
            results = self._analyzer.analyze(
                text=text, language="en", entities=self._entities,
                score_threshold=min(self.policy.quarantine_floor, self.policy.redaction_threshold),
                nlp_artifacts=artifacts,
            )
            findings = [Finding(r.entity_type, r.start, r.end, float(r.score)) for r in results]
            redact, reasons = classify_findings(findings, self.policy)
            outcomes.append(RedactionOutcome(
                content=apply_placeholders(text, redact),
                findings=findings, redacted=redact, quarantine_reasons=reasons,
                subject_key=subject_key_from_doc(doc, redact),
                report=build_report(findings, redact, reasons, self.policy, self.name),
            ))
        return outcomes


def _pin_tldextract_offline() -> None:
    """Presidio's email recognizer calls ``tldextract``, which downloads the public suffix
    list on first use; offline that stalls. Use the snapshot bundled with the package."""
    import tldextract.tldextract as tld

    tld.TLD_EXTRACTOR = tld.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)
