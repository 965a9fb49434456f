"""PII detection and redaction: the ``Redactor`` seam and its Presidio implementation.

Each text is analysed in its canonical view (``ibex_worker.pii.casing``: whitespace collapsed,
case folded, truecased), so the result does not depend on the producer's casing or
spacing. One spaCy pass over the view serves Presidio (through ``process_batch``) and the
conflict stage's subject key, which is read from the same parse with every masked span
replaced by its placeholder, so a subject key never holds a raw value.

The report kept with a memory holds entity types, counts and scores, never values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ibex_worker.adapters.subjects import aspect_from_doc, complement_extent, subject_extent, subject_key_from_doc
from ibex_worker.pii.casing import View, canonical_view
from ibex_worker.pii.name_model import NameModel, shipped_model
from ibex_worker.pii.policy import (Decision, Finding, RedactionPolicy, apply_placeholders, build_report,
                               classify_findings, every_copy)

__all__ = ["Finding", "PresidioRedactor", "RedactionOutcome", "RedactionPolicy", "Redactor"]

# spaCy entity labels Presidio has no entity type for (left out quietly instead of logged per text).
IGNORED_NER_LABELS = ["CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT", "LANGUAGE", "LAW", "WORK_OF_ART",
                      "EVENT", "PRODUCT", "FAC"]


@dataclass
class RedactionOutcome:
    content: str                     # the text with [TYPE] and [TYPE?] placeholders
    findings: list[Finding]          # every finding at or above the floor, original coordinates
    redacted: list[Finding]          # replaced by [TYPE]
    masked: list[Finding]            # uncertain, replaced by [TYPE?]
    quarantine_reasons: list[str]
    subject_key: str | None
    report: dict[str, Any] = field(default_factory=dict)
    subject_aspect: str | None = None  # the fact's "for" phrase (adapters.subjects)
    subject_span: tuple[int, int] | None = None  # the subject phrase, original coordinates
    value_span: tuple[int, int] | None = None    # the verb's complement, original coordinates

    @property
    def quarantined(self) -> bool:
        return bool(self.quarantine_reasons)


class Redactor(Protocol):
    name: str

    def redact_many(self, texts: Sequence[str]) -> list[RedactionOutcome]:
        """Analyze and redact each text. Raises on analyzer failure: callers fail closed."""


class PresidioRedactor:
    """Presidio ``AnalyzerEngine`` over an already-loaded spaCy pipeline (one copy in memory),
    with the recognizers of ``ibex_worker.adapters.recognizers``."""

    def __init__(self, nlp: Any, policy: RedactionPolicy, *, model_name: str) -> None:
        from presidio_analyzer import AnalyzerEngine
        from presidio_analyzer.nlp_engine import NerModelConfiguration, SpacyNlpEngine

        from ibex_worker.adapters.recognizers import build_registry, entity_type

        _pin_tldextract_offline()
        _keep_phone_patterns()
        engine = SpacyNlpEngine(models=[{"lang_code": "en", "model_name": model_name}],
                                ner_model_configuration=NerModelConfiguration(labels_to_ignore=IGNORED_NER_LABELS))
        engine.nlp = {"en": nlp}  # share the worker's pipeline; never spacy.load (or download) again
        self.nlp = nlp
        self._engine = engine
        self._analyzer = AnalyzerEngine(registry=build_registry(engine), nlp_engine=engine,
                                        supported_languages=["en"])
        self.policy = policy
        self._names = shipped_model()  # a missing or unreadable weights file fails the load, loudly
        # Disallowed types are looked for too, even when they are not redaction targets.
        wanted = set(policy.entities) | set(policy.disallowed)
        supported = self._analyzer.get_supported_entities("en")
        unknown = wanted - {entity_type(tagged)[0] for tagged in supported}
        if unknown:
            raise ValueError(f"PII entity types no recognizer supports: {sorted(unknown)}")
        self._entities = sorted(tagged for tagged in supported if entity_type(tagged)[0] in wanted)
        from importlib.metadata import version

        self.name = f"presidio-analyzer {version('presidio-analyzer')} / {model_name}"

    def redact_many(self, texts: Sequence[str]) -> list[RedactionOutcome]:
        return [self.decide(analysis) for analysis in self.analyze_many(texts)]

    def analyze_many(self, texts: Sequence[str]) -> list[Analysis]:
        """Every recognizer's findings in each text's view, before any refinement."""
        views = [canonical_view(text) for text in texts]
        batch = self._engine.process_batch([view.text for view in views], "en", batch_size=64)
        return [Analysis(view, artifacts, self._findings(view, artifacts))
                for view, (_, artifacts) in zip(views, batch, strict=True)]

    def _findings(self, view: View, artifacts: Any) -> list[Finding]:
        results = self._analyzer.analyze(
            text=view.text, language="en", entities=self._entities,
            score_threshold=min(self.policy.quarantine_floor, self.policy.redaction_threshold),
            nlp_artifacts=artifacts,
        )
        return [_finding(r) for r in results]

    def decide(self, analysis: Analysis, names: NameModel | None = None) -> RedactionOutcome:
        """Refine an analysis, let the name model (``names``, by default the shipped one)
        decide who is a person, mask every copy of a value found, and redact."""
        from ibex_worker.adapters.people import arbitrate_names
        from ibex_worker.adapters.recognizers import refine

        view, artifacts = analysis.view, analysis.artifacts
        refined = refine(view, analysis.findings)
        in_view = every_copy(view.text, arbitrate_names(view, artifacts.tokens, analysis.findings, refined,
                                                        names or self._names))
        decision = classify_findings(in_view, self.policy)
        original = to_original(view, decision)
        findings = [_shift(view, f) for f in in_view]
        return RedactionOutcome(
            content=apply_placeholders(view.original, original.redact, original.mask),
            findings=findings, redacted=original.redact, masked=original.mask,
            quarantine_reasons=decision.reasons,
            subject_key=subject_key_from_doc(artifacts.tokens, [*decision.redact, *decision.mask]),
            report=build_report(findings, original, self.policy, self.name),
            subject_aspect=aspect_from_doc(artifacts.tokens, [*decision.redact, *decision.mask]),
            subject_span=_original_span(view, subject_extent(artifacts.tokens)),
            value_span=_original_span(view, complement_extent(artifacts.tokens)),
        )


@dataclass(frozen=True)
class Analysis:
    """One text's view, its spaCy parse (Presidio's artifacts) and the raw findings."""

    view: View
    artifacts: Any
    findings: list[Finding]


def _finding(result: Any) -> Finding:
    from ibex_worker.adapters.recognizers import entity_type

    base, recognizer = entity_type(result.entity_type)
    name = recognizer or (result.recognition_metadata or {}).get(result.RECOGNIZER_NAME_KEY, "")
    return Finding(base, result.start, result.end, float(result.score), name)


def _shift(view: View, finding: Finding) -> Finding:
    start, end = view.to_original(finding.start, finding.end)
    return Finding(finding.entity_type, start, end, finding.score, finding.recognizer)


def _original_span(view: View, span: tuple[int, int] | None) -> tuple[int, int] | None:
    return view.to_original(*span) if span is not None and span[1] > span[0] else None


def to_original(view: View, decision: Decision) -> Decision:
    """A decision made in the view, in the original text's coordinates."""
    return Decision([_shift(view, f) for f in decision.redact], [_shift(view, f) for f in decision.mask],
                    decision.reasons)


def _pin_tldextract_offline() -> None:
    """Presidio's email recognizer calls ``tldextract``, which downloads the public suffix
    list on first use; offline that stalls. Use the snapshot bundled with the package."""
    import tldextract.tldextract as tld

    tld.TLD_EXTRACTOR = tld.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)


def _keep_phone_patterns() -> None:
    """Presidio's phone matcher runs ``phonenumbers`` once per region; the metadata patterns of
    forty regions overflow the ``re`` module's bounded cache, which then recompiles them for
    every text (a sixth of the analysis time). ``phonenumbers`` keeps them when asked."""
    from phonenumbers import re_util

    re_util.enable_pattern_cache()
