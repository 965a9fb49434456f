"""Train the PII stage's name model (``worker/pii/name_model.py``) on the ``dev`` split.

Only ``dev`` is read: ``heldout`` and ``blind`` stay unseen, so their tables in
``docs/pii-quality.md`` measure the model on text it was not trained or tuned on.

    python -m ops.pii.train_name_model --cv 5          # cross-validated figures on dev, nothing written
    python -m ops.pii.train_name_model --write         # train on all of dev, write the weights

``--cv`` splits ``dev`` into folds of whole 25-line blocks of a file (neighbouring lines are
often one writer's variations on a theme), trains on all folds but one and scores the one
left out with the evaluation's own scorer, against the rules alone on the same sentences
(about 10 minutes on 2 cores for one strength and any number of thresholds). Training:
scikit-learn's L2 logistic regression, twice (see ``NameModel``), over string features; the
weights are kept as plain ``{feature: weight}`` tables (near-zero weights dropped), so the
worker needs no scikit-learn to run the model.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ops.pii_eval.corpus import CORPUS_DIR, Example, load_file
from ops.pii_eval.score import build_report, score_example

OUT = Path(__file__).resolve().parents[2] / "worker" / "pii" / "data" / "name_model.json.gz"
C = 1.0               # inverse L2 strength, chosen by cross-validation on dev
THRESHOLD = 0.2       # a word at or above this probability seeds a name (cross-validated on dev)
MIN_WEIGHT = 1e-3     # weights smaller than this are dropped from the shipped table
BLOCK = 25            # lines of one file that always fall in the same fold


@dataclass
class Row:
    example: Example
    analysis: Any
    feats: list[list[str]]
    labels: list[int]
    words: list[Any]


def _labels(example: Example, analysis: Any, words: Sequence[Any]) -> list[int]:
    """1 for a word whose original characters overlap a labelled PERSON span."""
    people = [s for s in example.spans if s.label == "PERSON"]
    out = []
    for word in words:
        start, end = analysis.view.to_original(word.start, word.end)
        out.append(int(any(s.start < end and start < s.end for s in people)))
    return out


def prepare(redactor: Any, examples: Sequence[Example]) -> list[Row]:
    from ibex_worker.adapters.people import name_evidence
    from ibex_worker.adapters.recognizers import refine
    from ibex_worker.pii import languages, name_model

    rows = []
    for example, analysis in zip(examples, redactor.analyze_many([e.text for e in examples]), strict=True):
        text = analysis.view.text
        words = name_model.words_of(text, analysis.artifacts.tokens)
        evidence = name_evidence(analysis.findings, refine(analysis.view, analysis.findings))
        feats = name_model.word_features(text, words, evidence, foreign=languages.reads_foreign(text))
        rows.append(Row(example, analysis, feats, _labels(example, analysis, words), words))
    return rows


def fit(feats: Sequence[Sequence[str]], ys: Sequence[int], c: float) -> dict[str, float]:
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    xs = [dict.fromkeys(f, 1) for f in feats]
    vectorizer = DictVectorizer()
    matrix = vectorizer.fit_transform(xs)
    model = LogisticRegression(C=c, max_iter=2000, fit_intercept=False)  # "bias" is a feature
    model.fit(matrix, list(ys))
    return {name: round(float(w), 4) for name, w in zip(vectorizer.get_feature_names_out(), model.coef_[0],
                                                           strict=True) if abs(w) >= MIN_WEIGHT}


def train(rows: Sequence[Row], c: float = C, threshold: float = THRESHOLD, inner: int = 4) -> Any:
    """Both passes: the second is trained on first-pass probabilities of words the first
    pass was not trained on (``inner`` folds), as it will meet them in use."""
    from ibex_worker.pii.name_model import NameModel, second_pass_features

    first = fit([f for row in rows for f in row.feats], [y for row in rows for y in row.labels], c)
    stacked, ys = [], []
    for k in range(inner):
        inside = [r for i, r in enumerate(rows) if i % inner != k]
        model = NameModel(fit([f for r in inside for f in r.feats], [y for r in inside for y in r.labels], c),
                          threshold=threshold)
        for row in (r for i, r in enumerate(rows) if i % inner == k):
            probabilities = model.first_pass(row.feats)
            stacked += [[*f, *g] for f, g in zip(row.feats, second_pass_features(row.words, probabilities),
                                                  strict=True)]
            ys += row.labels
    return NameModel(first, fit(stacked, ys, c), threshold=threshold)


def rules_alone(redactor: Any, rows: Sequence[Row]) -> Any:
    """The figures of refinement's people without the model (what the stage did before it)."""
    from ibex_worker.adapters.recognizers import refine
    from ibex_worker.adapters.redactor import to_original
    from ibex_worker.pii.policy import classify_findings

    scored = []
    for row in rows:
        view = row.analysis.view
        decision = to_original(view, classify_findings(refine(view, row.analysis.findings), redactor.policy))
        scored.append(score_example(row.example, decision.redact, decision.mask, bool(decision.reasons)))
    return build_report("dev", scored)


def _fold(example: Example, folds: int) -> int:
    name, _, line = example.source.rpartition(":")
    return (sum(map(ord, name)) + int(line) // BLOCK) % folds


def cross_validate(redactor: Any, rows: Sequence[Row], folds: int, c: float,
                   thresholds: Sequence[float]) -> dict[float, Any]:
    """Out-of-fold reports of the model at each threshold (one training per fold), printed
    beside the rules alone on the same sentences."""
    from ibex_worker.pii.name_model import NameModel

    held: list[Row] = []
    models = []
    for k in range(folds):
        train_rows = [r for r in rows if _fold(r.example, folds) != k]
        test_rows = [r for r in rows if _fold(r.example, folds) == k]
        models += [train(train_rows, c)] * len(test_rows)
        held += test_rows
    print(_line("rules alone", rules_alone(redactor, held)))
    reports = {}
    for threshold in thresholds:
        outcomes = [redactor.decide(row.analysis, NameModel(m.first, m.second, threshold=threshold))
                    for row, m in zip(held, models, strict=True)]
        reports[threshold] = build_report("dev", [score_example(row.example, o.redacted, o.masked, o.quarantined)
                                                  for row, o in zip(held, outcomes, strict=True)])
        print(_line(f"model C={c} t={threshold}", reports[threshold]))
    return reports


def _line(name: str, report: Any) -> str:
    person = report.per_label["PERSON"]
    false_person = sum(1 for _, etype, _ in report.false_hits if etype.startswith("PERSON"))
    return (f"{name:>24}: PERSON leaked {person['leaked']}/{person['spans']} ({report.leak_rate('PERSON'):.1%}), "
            f"false placeholders {report.false_placeholders} ({report.false_per_sentence:.3f}/sentence, "
            f"{false_person} PERSON), on languages or ids {report.false_on_languages_and_ids}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cv", type=int, default=0, help="cross-validate with this many folds on dev")
    parser.add_argument("--c", type=float, nargs="*", default=[C])
    parser.add_argument("--threshold", type=float, nargs="*", default=[THRESHOLD])
    parser.add_argument("--write", action="store_true", help=f"train on all of dev and write {OUT.name}")
    parser.add_argument("--skip", nargs="*", default=[], help="leave out dev files whose names start so")
    parser.add_argument("--show", action="store_true", help="with --cv, list the held-out folds' person misses")
    args = parser.parse_args(argv)
    from ops.pii_eval.evaluate import load_redactor

    redactor = load_redactor()
    files = sorted(p for p in (CORPUS_DIR / "dev").glob("*.txt") if not p.name.startswith(tuple(args.skip) or ("\0",)))
    examples = [example for path in files for example in load_file(path)]
    rows = prepare(redactor, examples)
    if args.cv:
        for c in args.c:
            for report in cross_validate(redactor, rows, args.cv, c, args.threshold).values():
                if args.show:
                    for source, label, value in report.leaks:
                        print(f"LEAK  {source:>26}  {label:<15} {value}")
                    for source, etype, value in report.false_hits:
                        print(f"FALSE {source:>26}  {etype:<15} {value}")
    if args.write:
        model = train(rows, args.c[0], args.threshold[0])
        payload = {"trained_on": "tests/data/pii/dev", "c": args.c[0], "threshold": args.threshold[0],
                   "first": dict(sorted(model.first.items())), "second": dict(sorted(model.second.items()))}
        OUT.write_bytes(gzip.compress(json.dumps(payload, separators=(",", ":")).encode(), mtime=0))
        print(f"wrote {OUT} ({len(payload['first']) + len(payload['second'])} weights)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
