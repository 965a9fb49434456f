"""``make pii-eval``: score the PII stage's redactor on the labelled corpus, per split.

Loads the redactor exactly as a worker does (settings: model, thresholds, entity types),
runs it over every example of the ``dev`` and ``heldout`` splits and prints, per entity
type, the leak rate (a labelled value still readable), the share only masked as uncertain,
and the quarantine rate; then precision (masked regions standing on a labelled span) and
false placeholders per sentence. ``--write`` puts the tables into ``docs/pii-quality.md``.

    python -m ops.pii_eval.evaluate [--split dev|heldout|all] [--model NAME] [--write] [--show-misses]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

from ops.pii_eval.corpus import load_split
from ops.pii_eval.score import Report, build_report, score_example

DOC = Path(__file__).resolve().parents[2] / "docs" / "pii-quality.md"
SPLITS = ("dev", "heldout")

# The targets of the PII issue, on the held-out split (leak rate = 1 - recall).
STRUCTURED = ("EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "US_SSN", "IP_ADDRESS", "CRYPTO")
TARGETS = {**{label: 0.01 for label in STRUCTURED}, "PERSON": 0.05, "STREET_ADDRESS": 0.10}
FALSE_PER_SENTENCE_MAX = 0.05


def load_redactor(model: str | None = None) -> Any:
    from worker.config import Settings
    from worker.runtime import load_redactor as load

    overrides = {"spacy_model": model} if model else {}
    return load(Settings(environment="test", **overrides))


def evaluate(redactor: Any, split: str) -> tuple[Report, float]:
    examples = load_split(split)
    started = time.perf_counter()
    outcomes = redactor.redact_many([example.text for example in examples])
    per_text_ms = (time.perf_counter() - started) * 1000.0 / max(1, len(examples))
    scored = [score_example(example, outcome.redacted, outcome.masked, outcome.quarantined)
              for example, outcome in zip(examples, outcomes, strict=True)]
    return build_report(split, scored), per_text_ms


def meets_targets(report: Report) -> list[str]:
    """The targets this report misses (empty: all met)."""
    missed = [f"{label} leak {report.leak_rate(label):.3f} > {limit}" for label, limit in TARGETS.items()
              if label in report.per_label and report.leak_rate(label) > limit]
    if report.false_per_sentence > FALSE_PER_SENTENCE_MAX:
        missed.append(f"false placeholders {report.false_per_sentence:.3f}/sentence > {FALSE_PER_SENTENCE_MAX}")
    if report.false_on_languages_and_ids:
        missed.append(f"{report.false_on_languages_and_ids} false placeholder(s) on languages or ids")
    return missed


def table(report: Report) -> str:
    lines = ["| entity | spans | leaked | leak rate | target | masked as uncertain only | quarantined examples |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for label, entry in report.per_label.items():
        target = f"≤ {TARGETS[label]:.0%}" if label in TARGETS else "–"
        lines.append(f"| {label} | {entry['spans']} | {entry['leaked']} | {report.leak_rate(label):.1%} | {target} "
                     f"| {entry['uncertain']} | {entry['quarantined']} / {entry['examples']} |")
    lines += ["", "| placeholders | false | precision | false per sentence (≤ 0.05) | false on negatives "
                  "| on languages or ids (0) | negatives quarantined |",
              "|---:|---:|---:|---:|---:|---:|---:|",
              f"| {report.placeholders} | {report.false_placeholders} | {report.precision:.3f} "
              f"| {report.false_per_sentence:.3f} | {report.false_on_negatives} | {report.false_on_languages_and_ids} "
              f"| {report.quarantined_negatives} / {report.negatives} |"]
    return "\n".join(lines)


def render(reports: list[tuple[Report, float]], model: str, redactor_name: str) -> str:
    out = [f"# PII redaction quality", "",
           f"Measured {date.today().isoformat()} with `make pii-eval` (`python -m ops.pii_eval.evaluate --write`): "
           f"{redactor_name}, spaCy model `{model}`, Python {platform.python_version()}, {platform.machine()}.",
           "", _METHOD, ""]
    for report, per_text_ms in reports:
        missed = meets_targets(report)
        verdict = "every target met" if not missed else "targets missed: " + "; ".join(missed)
        out += [f"## Split `{report.split}`: {report.examples} sentences ({report.negatives} without personal data)",
                "", f"{verdict}. Analysis time {per_text_ms:.1f} ms per sentence.", "", table(report), ""]
    return "\n".join(out)


_METHOD = """\
The corpus is `tests/data/pii/` (format in `ops/pii_eval/corpus.py`): sentences written for
this evaluation, with every personal value marked. The `heldout` split was written
separately and is never read while tuning recognizers; `dev` is the tuning split. A value
**leaks** when any letter or digit of it is still readable in the stored text; a value masked
only as uncertain (`[TYPE?]`) does not leak, but its memory is quarantined. A placeholder is
**false** when it stands on no labelled value. Targets (held-out): structured values
(email, phone, card, IBAN, SSN, IP, crypto) ≤ 1 % leaked, PERSON ≤ 5 %, street addresses
≤ 10 %, false placeholders ≤ 0.05 per sentence and none on programming languages or ids."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="all")
    parser.add_argument("--model", help="spaCy model (default: the IBEX_SPACY_MODEL setting)")
    parser.add_argument("--write", action="store_true", help=f"write the tables to {DOC.relative_to(DOC.parents[1])}")
    parser.add_argument("--show-misses", action="store_true", help="list leaks and false placeholders (dev only)")
    args = parser.parse_args(argv)
    redactor = load_redactor(args.model)
    from worker.config import Settings

    model = args.model or Settings(environment="test").spacy_model
    reports = [evaluate(redactor, split) for split in (SPLITS if args.split == "all" else (args.split,))]
    for report, per_text_ms in reports:
        print(f"\n== {report.split}: {report.examples} sentences, {per_text_ms:.1f} ms each")
        print(table(report))
        missed = meets_targets(report)
        print("targets:", "met" if not missed else "; ".join(missed))
        if args.show_misses and report.split == "dev":
            _show(report)
    if args.write:
        DOC.write_text(render(reports, model, redactor.name), encoding="utf-8")
        print(f"wrote {DOC}")
    return 0


def _show(report: Report) -> None:
    for source, label, value in report.leaks:
        print(f"LEAK  {source:>22}  {label:<15} {value}")
    for source, etype, value in report.false_hits:
        print(f"FALSE {source:>22}  {etype:<15} {value}")


if __name__ == "__main__":
    sys.exit(main())
