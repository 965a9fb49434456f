"""Redaction quality as a specification: the redactor scored on the labelled corpus
(``tests/data/pii``) must not fall below what ``docs/pii-quality.md`` records for each split
(the page ``make pii-eval`` writes), and on the splits nobody tuned on it must meet the
issue's targets where that page says they are met. A recognizer change that leaks more, or
masks more harmless text, fails here.
"""

from __future__ import annotations

import os
import re

import pytest

from ops.pii_eval.evaluate import DOC, FALSE_PER_SENTENCE_MAX, SPLITS, TARGETS, evaluate_splits

# Measurement noise allowed against the recorded figures (the redactor is deterministic;
# this only absorbs numeric differences of the model on another CPU).
LEAK_MARGIN = 0.01
FALSE_MARGIN = 0.005


def recorded() -> dict[str, dict[str, float]]:
    """{split: {entity: leak rate, "false_per_sentence": x, "languages_and_ids": n}} from the page."""
    figures: dict[str, dict[str, float]] = {}
    split = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"## Split `(\w+)`", line)
        if heading:
            split = heading.group(1)
            figures[split] = {}
        elif line.startswith("## "):
            split = None
        elif split and (row := re.match(r"\| ([A-Z_]+) \| \d+ \| \d+ \| ([\d.]+)% \|", line)):
            figures[split][row.group(1)] = float(row.group(2)) / 100
        elif split and (row := re.match(r"\| \d+ \| \d+ \| [\d.]+ \| ([\d.]+) \| \d+ \| (\d+) \|", line)):
            figures[split]["false_per_sentence"] = float(row.group(1))
            figures[split]["languages_and_ids"] = float(row.group(2))
    return figures


@pytest.fixture(scope="module")
def reports():
    _, scored = evaluate_splits(SPLITS, processes=min(2, os.cpu_count() or 1))
    return {report.split: report for report, _ in scored}


def test_the_page_records_every_split():
    assert set(recorded()) == set(SPLITS)
    assert all("PERSON" in figures and "false_per_sentence" in figures for figures in recorded().values())


@pytest.mark.parametrize("split", SPLITS)
def test_no_entity_type_leaks_more_than_the_page_records(reports, split):
    report, figures = reports[split], recorded()[split]
    worse = {label: (round(report.leak_rate(label), 3), rate) for label, rate in figures.items()
             if label in report.per_label and report.leak_rate(label) > rate + LEAK_MARGIN}
    assert worse == {}


@pytest.mark.parametrize("split", SPLITS)
def test_no_more_false_placeholders_than_the_page_records(reports, split):
    report, figures = reports[split], recorded()[split]
    assert report.false_per_sentence <= figures["false_per_sentence"] + FALSE_MARGIN
    assert report.false_on_languages_and_ids <= figures["languages_and_ids"] + 1


@pytest.mark.parametrize("split", ["heldout", "blind", "fresh"])
def test_targets_the_page_reports_met_on_untuned_splits_stay_met(reports, split):
    figures = recorded()[split]
    met = [label for label, limit in TARGETS.items() if label in figures and figures[label] <= limit]
    assert {"EMAIL_ADDRESS", "IBAN_CODE", "US_SSN"} <= set(met)
    assert {label: round(reports[split].leak_rate(label), 3) for label in met
            if reports[split].leak_rate(label) > TARGETS[label]} == {}


def test_the_held_out_split_meets_the_person_and_false_placeholder_targets(reports):
    report = reports["heldout"]
    assert report.leak_rate("PERSON") <= TARGETS["PERSON"]
    assert report.false_per_sentence <= FALSE_PER_SENTENCE_MAX
