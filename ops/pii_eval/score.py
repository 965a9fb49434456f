"""Scoring a redactor against the labelled corpus.

A labelled value counts as **protected** when every letter and digit of it lies inside a
masked region (a placeholder, certain or uncertain): then nothing of it is readable in the
stored text. Anything less is a **leak**, however small the readable part. A masked region
that overlaps no labelled span is a **false placeholder**. Quarantine rates say how often
an example holding a type (or holding nothing) was held back for review.

Pure functions over (example, outcome) pairs; ``evaluate.py`` runs the real redactor.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ops.pii_eval.corpus import LABELS, Example, Span

# Programming languages and well-known software names, for the report's "false placeholders
# on languages and ids" line. A measuring list: the redactor never reads it.
LANGUAGE_WORDS = frozenset("""
ada agda apl assembly awk bash basic c clojure cobol coffeescript crystal csharp cuda d dart delphi elixir elm
erlang f fortran gleam go golang groovy hack haskell haxe idris java javascript julia kotlin lisp logo lua
matlab mojo nim ocaml octave odin pascal perl php pony powershell prolog purescript python r racket raku
reason rexx ruby rust sas scala scheme scratch smalltalk solidity sql swift tcl typescript v vala verilog
vhdl vlang wasm zig ansible cassandra confluence cortana django docker figma flask grafana hadoop heroku
jenkins jira kafka kubernetes laravel mercurial netlify notion postgres rails redis salesforce siri spark
terraform vercel zendesk alexa atlas slack github gitlab
""".split())
_ALNUM = re.compile(r"\w", re.UNICODE)


class Masked(Protocol):
    start: int
    end: int
    entity_type: str


@dataclass
class Scored:
    """What one outcome did to one example."""

    example: Example
    regions: list[tuple[int, int, str, bool]]  # merged masked regions: start, end, type, certain
    quarantined: bool
    leaked: list[Span]
    false_regions: list[tuple[int, int, str, bool]]


def merge_regions(certain: Iterable[Masked], uncertain: Iterable[Masked]) -> list[tuple[int, int, str, bool]]:
    """Masked regions as the stored text shows them: overlapping findings form one region."""
    items = sorted([(f.start, f.end, f.entity_type, True) for f in certain]
                   + [(f.start, f.end, f.entity_type, False) for f in uncertain])
    merged: list[tuple[int, int, str, bool]] = []
    for start, end, etype, certain_ in items:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2], last[3] or certain_)
        else:
            merged.append((start, end, etype, certain_))
    return merged


def score_example(example: Example, certain: Sequence[Masked], uncertain: Sequence[Masked],
                  quarantined: bool) -> Scored:
    regions = merge_regions(certain, uncertain)
    covered = [False] * len(example.text)
    for start, end, _, _ in regions:
        for i in range(start, min(end, len(covered))):
            covered[i] = True
    leaked = [span for span in example.spans if _readable(example.text, span, covered)]
    false = [r for r in regions if not any(r[0] < s.end and s.start < r[1] for s in example.spans)]
    return Scored(example, regions, quarantined, leaked, false)


def _readable(text: str, span: Span, covered: list[bool]) -> bool:
    return any(_ALNUM.match(text[i]) and not covered[i] for i in range(span.start, span.end))


@dataclass
class Report:
    split: str
    examples: int
    negatives: int
    per_label: dict[str, dict[str, Any]] = field(default_factory=dict)
    placeholders: int = 0
    false_placeholders: int = 0
    false_on_negatives: int = 0
    false_on_languages_and_ids: int = 0
    quarantined_negatives: int = 0
    precision_by_type: dict[str, dict[str, int]] = field(default_factory=dict)
    leaks: list[tuple[str, str, str]] = field(default_factory=list)          # source, label, value
    false_hits: list[tuple[str, str, str]] = field(default_factory=list)     # source, type, text

    @property
    def precision(self) -> float:
        return 1.0 - self.false_placeholders / self.placeholders if self.placeholders else 1.0

    @property
    def false_per_sentence(self) -> float:
        return self.false_placeholders / self.examples if self.examples else 0.0

    def recall(self, label: str) -> float:
        entry = self.per_label.get(label)
        return 1.0 - entry["leaked"] / entry["spans"] if entry and entry["spans"] else 1.0

    def leak_rate(self, label: str) -> float:
        return 1.0 - self.recall(label)


def build_report(split: str, scored: Sequence[Scored]) -> Report:
    report = Report(split, len(scored), sum(1 for s in scored if not s.example.spans))
    spans: Counter[str] = Counter()
    leaked: Counter[str] = Counter()
    uncertain_only: Counter[str] = Counter()
    holding: Counter[str] = Counter()
    holding_quarantined: Counter[str] = Counter()
    by_type: dict[str, Counter[str]] = defaultdict(Counter)
    for s in scored:
        _count_spans(s, spans, leaked, uncertain_only)
        for label in {span.label for span in s.example.spans}:
            holding[label] += 1
            holding_quarantined[label] += s.quarantined
        if not s.example.spans:
            report.quarantined_negatives += s.quarantined
            report.false_on_negatives += len(s.false_regions)
        report.placeholders += len(s.regions)
        report.false_placeholders += len(s.false_regions)
        for region in s.regions:
            by_type[region[2]]["placeholders"] += 1
            by_type[region[2]]["false"] += region in s.false_regions
        for region in s.false_regions:
            value = s.example.text[region[0]:region[1]]
            report.false_on_languages_and_ids += _language_or_id(value)
            report.false_hits.append((s.example.source, region[2] + ("" if region[3] else "?"), value))
        report.leaks.extend((s.example.source, span.label, s.example.value(span)) for span in s.leaked)
    for label in LABELS:
        if spans[label]:
            report.per_label[label] = {
                "spans": spans[label], "leaked": leaked[label], "uncertain": uncertain_only[label],
                "examples": holding[label], "quarantined": holding_quarantined[label]}
    report.precision_by_type = {etype: dict(counts) for etype, counts in sorted(by_type.items())}
    return report


def _count_spans(s: Scored, spans: Counter[str], leaked: Counter[str], uncertain_only: Counter[str]) -> None:
    for span in s.example.spans:
        spans[span.label] += 1
        if span in s.leaked:
            leaked[span.label] += 1
        elif not any(r[3] and r[0] <= span.start and span.end <= r[1] for r in s.regions):
            uncertain_only[span.label] += 1


def _language_or_id(value: str) -> bool:
    words = re.findall(r"[\w#+]+", value.lower())
    return any(ch.isdigit() for ch in value) or bool(words) and all(w in LANGUAGE_WORDS for w in words)
