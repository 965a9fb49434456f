"""Near-duplicate quality: the embedding signal, the lexical signal and both, on labelled
pairs, and the lexical threshold chosen on the dev split alone.

    python -m ops.dedup_eval.evaluate [--write]      # make dedup-eval

Splits: ``dev`` is ``ops.bench.pairs.generate()`` (typos, spelling variants, rewordings,
case, number changes, negations, another subject, unrelated pairs around 44 base facts);
``heldout`` is ``tests/data/dedup/heldout.tsv``, written by hand on other facts (and name
variants and record numbers, which dev lacks), never used to choose anything. Labels:
``same`` (one memory said twice: it should be linked), ``competing`` (the same attribute
with another value: it should be linked, so that conflict detection decides it) and
``distinct`` (it should not be linked). A link is correct when the pair is ``same`` or
``competing``. Each linked pair's verdict from the rules classifier is counted by label: a
``contradicts`` is right on ``competing`` pairs only. With ``--write`` the tables go to
``docs/dedup-quality.md``.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "tests" / "data" / "dedup" / "heldout.tsv"
PAGE = ROOT / "docs" / "dedup-quality.md"
DEV_LABELS = {"same_words_case": "same", "typo": "same", "spelling": "same", "paraphrase": "same",
              "number": "competing", "negation": "competing", "other_subject": "distinct", "unrelated": "distinct"}
TARGET_PRECISION = 0.95


@dataclass(frozen=True)
class Pair:
    kind: str
    label: str
    a: str
    b: str


@dataclass(frozen=True)
class Scored:
    pair: Pair
    embedding: float
    lexical: float | None
    same_fingerprint: bool
    different_records: bool
    small_edits: bool


def dev_pairs() -> list[Pair]:
    from ops.bench.pairs import generate

    return [Pair(p.kind, DEV_LABELS[p.kind], p.a, p.b) for p in generate()]


def heldout_pairs() -> list[Pair]:
    rows = [line.split("\t") for line in HELDOUT.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]
    return [Pair(kind, label, a, b) for kind, label, a, b in rows]


def score(pairs: list[Pair]) -> list[Scored]:
    import numpy as np

    from ibex_worker import identifiers, lexical
    from ibex_worker.config import Settings
    from ibex_worker.conflict_rules import edits, verdicts
    from ibex_worker.runtime import load_embedder

    embedder = load_embedder(Settings(environment="test"))
    va = np.asarray(embedder.embed_many([p.a for p in pairs]))
    vb = np.asarray(embedder.embed_many([p.b for p in pairs]))
    return [Scored(p, float(va[i] @ vb[i]), lexical.similarity(p.a, p.b),
                   lexical.fingerprint(p.a) == lexical.fingerprint(p.b),
                   bool(identifiers.distinct_records(identifiers.find(p.a), identifiers.find(p.b))),
                   edits.small_edits_only(verdicts.tokens(p.a), verdicts.tokens(p.b)))
            for i, p in enumerate(pairs)]


SIGNALS = ("embedding, before", "embedding", "lexical", "combined")


def linked(s: Scored, signal: str, embedding_threshold: float, lexical_threshold: float) -> bool:
    """Whether the pipeline links the pair. ``embedding, before`` is the signal as it was
    before issue 14 (no screen); the others leave out pairs about different records, as
    ``near_dedup`` does."""
    by_embedding = s.embedding > embedding_threshold
    if signal == "embedding, before":
        return by_embedding
    by_lexical = s.same_fingerprint or s.small_edits or (s.lexical is not None and s.lexical >= lexical_threshold)
    fired = {"embedding": by_embedding, "lexical": by_lexical, "combined": by_embedding or by_lexical}[signal]
    return fired and not s.different_records


def figures(scored: list[Scored], signal: str, embedding_threshold: float, lexical_threshold: float) -> dict:
    links = [linked(s, signal, embedding_threshold, lexical_threshold) for s in scored]
    wanted = [s.pair.label != "distinct" for s in scored]
    hits = sum(1 for l, w in zip(links, wanted) if l and w)
    out = {"precision": hits / sum(links) if any(links) else 1.0, "recall": hits / sum(wanted) if any(wanted) else 1.0,
           "links": sum(links)}
    for label in ("same", "competing"):
        of = [l for l, s in zip(links, scored) if s.pair.label == label]
        out[f"recall_{label}"] = sum(of) / len(of) if of else None
    return out


def choose_lexical_threshold(dev: list[Scored], embedding_threshold: float) -> float:
    """The lowest threshold (0.50-0.99) at which the combined signal keeps dev precision at
    or above the target: the most recall the precision target allows."""
    for step in range(50, 100):
        t = step / 100
        if figures(dev, "combined", embedding_threshold, t)["precision"] >= TARGET_PRECISION:
            return t
    return 1.0


def by_kind(scored: list[Scored], embedding_threshold: float, lexical_threshold: float) -> list[tuple]:
    rows: dict[str, list[Scored]] = defaultdict(list)
    for s in scored:
        rows[s.pair.kind].append(s)
    out = []
    for kind, items in rows.items():
        counts = [sum(linked(s, signal, embedding_threshold, lexical_threshold) for s in items)
                  for signal in SIGNALS]
        out.append((kind, items[0].pair.label, len(items), *counts))
    return out


def verdicts(scored: list[Scored], emb: float, lex: float) -> dict[str, Counter[str]]:
    """The rules classifier's verdict on every pair the pipeline links, by label. The pairs
    carry no validity, so each linked pair is escalated (``missing_valid_from``) and the
    rules decide it, as the escalation worker does by default."""
    from ibex_worker.conflict_rules.verdicts import rules_verdict

    out: dict[str, Counter[str]] = defaultdict(Counter)
    for s in scored:
        if linked(s, "combined", emb, lex):
            out[s.pair.label][rules_verdict(s.pair.a, s.pair.b).outcome] += 1
    return out


def _verdict_lines(scored: list[Scored], emb: float, lex: float) -> list[str]:
    by_label = verdicts(scored, emb, lex)
    false = by_label["same"]["contradicts"] + by_label["distinct"]["contradicts"]
    lines = ["| linked pairs by label | contradicts | compatible | needs_review |", "|---|---:|---:|---:|"]
    lines += [f"| {label} | {c['contradicts']} | {c['compatible']} | {c['needs_review']} |"
              for label, c in sorted(by_label.items())]
    return lines + ["", f"False `contradicts` (on `same` or `distinct` pairs): {false} of {len(scored)} pairs "
                        f"({false / len(scored):.1%}). No `supersedes`: the pairs are undated, and the rules supersede "
                        "only two open-ended dated facts about one subject.", ""]


def _table(name: str, scored: list[Scored], emb: float, lex: float) -> list[str]:
    lines = [f"### {name}: {len(scored)} pairs", "",
             "| signal | links | precision | recall (same + competing) | recall, same | recall, competing |",
             "|---|---:|---:|---:|---:|---:|"]
    for signal in SIGNALS:
        f = figures(scored, signal, emb, lex)
        lines.append(f"| {signal} | {f['links']} | {f['precision']:.3f} | {f['recall']:.3f} | "
                     f"{f['recall_same']:.3f} | {f['recall_competing']:.3f} |")
    lines += ["", "| kind | label | pairs | linked: embedding, before | embedding | lexical | combined |",
              "|---|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {k} | {label} | {n} | {b} | {e} | {lx} | {c} |"
              for k, label, n, b, e, lx, c in by_kind(scored, emb, lex)]
    return lines + [""] + _verdict_lines(scored, emb, lex)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"write {PAGE.relative_to(ROOT)}")
    args = parser.parse_args()
    from ibex_worker.config import Settings

    settings = Settings(environment="test")
    emb, lex = settings.memory_near_duplicate_sim_threshold, settings.memory_near_duplicate_lexical_threshold
    started = time.monotonic()
    dev, heldout = score(dev_pairs()), score(heldout_pairs())
    chosen = choose_lexical_threshold(dev, emb)
    lines = _table("dev", dev, emb, lex) + _table("heldout", heldout, emb, lex)
    print("\n".join(lines))
    print(f"lexical threshold chosen on dev alone: {chosen:.2f} (in force: {lex:.2f}); "
          f"{time.monotonic() - started:.1f} s")
    if args.write:
        PAGE.write_text(_page(lines, emb, lex, chosen), encoding="utf-8")


def _page(lines: list[str], emb: float, lex: float, chosen: float) -> str:
    from ops.bench.service_bench import versions

    v = versions()
    head = [
        "# Near-duplicate quality", "",
        f"Written by `make dedup-eval` on {time.strftime('%Y-%m-%d')}; embedding model "
        f"{v.get('embedding_model', 'all-MiniLM-L6-v2')} (ONNX Runtime, the default backend), embedding threshold "
        f"{emb:.2f} (strictly above), lexical threshold {lex:.2f} (trigram Jaccard, at or above; chosen on dev: "
        f"{chosen:.2f}). A pair is linked by the lexical signal when its similarity reaches the threshold, "
        "both texts have the same word-set fingerprint, or they have the same words apart from at most three "
        "misspellings or British/American spellings (`conflict_rules.edits`, the rules' own test).", "",
        "Labels: `same` (one memory said twice), `competing` (the same attribute with another value, which must "
        "be linked for conflict detection to decide it), `distinct` (must not be linked). Precision counts a link "
        "as correct on `same` and `competing` pairs. The held-out split was written by hand and never used to "
        "choose a threshold.", ""]
    return "\n".join(head + lines)


if __name__ == "__main__":
    main()
