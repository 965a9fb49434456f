"""Near-duplicate quality: the embedding signal, the lexical signal and both, on labelled
pairs, and the lexical threshold chosen on the dev split alone.

    python -m ops.dedup_eval.evaluate [--write]      # make dedup-eval

Pairs are scored as the pipeline compares them: redacted by the PII stage, with their
placeholders' tags (``score``).

Splits: ``dev`` is ``ops.bench.pairs.generate()`` (typos, spelling variants, rewordings,
case, number changes, negations, another subject, unrelated pairs around 44 base facts),
``name_pairs()`` (two spellings of one name, and two people's names that differ by little) and
``written_pairs()`` (``dev_written.tsv``: 420 pairs written by hand by someone who read neither
the detector nor the held-out pairs, free rewordings most of all; their kinds end in
", written");
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
from functools import lru_cache
from pathlib import Path

from ibex_worker import rewording

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "tests" / "data" / "dedup" / "heldout.tsv"
WRITTEN = Path(__file__).resolve().parent / "dev_written.tsv"
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
    different_people: bool = False
    redacted: tuple[str, str] = ("", "")
    tags: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    differing: tuple[str, ...] = ()  # content words on one side only (``ibex_worker.rewording``)


def dev_pairs() -> list[Pair]:
    from ops.bench.pairs import generate

    return [Pair(p.kind, DEV_LABELS[p.kind], p.a, p.b) for p in generate()] + name_pairs() + written_pairs()


def written_pairs() -> list[Pair]:
    return [Pair(f"{p.kind}, written", p.label, p.a, p.b) for p in _read(WRITTEN)]


# Facts about a person, and two spellings of one name (``name``: the same memory) or two
# people's names that differ by little (``other_person``: distinct), for the sound of names
# (``redaction_tags.sound_key``). The name is the fact's subject, where another name is another
# person; a name elsewhere ("send the renewal to ...") may be another value of the same fact, and
# such pairs are neither left out nor told apart by the tags (a person decides them).
_PERSON_FACTS = ["{} asked to be called back after 3 pm.", "{} prefers invoices by post, not by e-mail.",
                 "The onboarding guide for {} is due on Friday.", "{} is allergic to penicillin.",
                 "{} wants the weekly report in Spanish.", "{} renews the support contract every March."]
_SPELLINGS = [("Jon Smyth", "John Smith"), ("Katherine Olsen", "Catherine Olson"), ("Steven Marsh", "Stephen Marsh"),
              ("Mohammed Rahman", "Muhammad Rahman"), ("Sarah Cohen", "Sara Cohen"), ("Phillip Grant", "Philip Grant"),
              ("Zoe Fischer", "Zoey Fisher"), ("Thomas Nilsen", "Tomas Nielsen"), ("Jacob Weiss", "Jakob Weiss"),
              ("Christina Novak", "Kristina Novak"), ("Matthew Reid", "Mathew Reed"), ("Brian Kelly", "Bryan Kelley"),
              ("Geoffrey Hart", "Jeffrey Hart"), ("José Pérez", "Jose Perez"), ("Michael Obi", "Micheal Obi"),
              ("Nicholas Byrne", "Nicolas Burne"), ("Lindsay Grey", "Lyndsey Gray"), ("Eileen Doyle", "Aileen Doyle")]
_OTHER_PEOPLE = [("John Smith", "Jane Smith"), ("Maria Rossi", "Mario Rossi"), ("Daniel Cohen", "Daniela Cohen"),
                 ("Tim Walsh", "Tom Walsh"), ("Peter Novak", "Paul Novak"), ("Dan Brown", "Don Brown"),
                 ("Carl Meyer", "Karl Maier"), ("Anna Berg", "Hanna Berg"), ("Erik Lund", "Erika Lund")]


def name_pairs() -> list[Pair]:
    return [Pair(kind, label, fact.format(a), fact.format(b))
            for i, fact in enumerate(_PERSON_FACTS)
            for kind, label, names in (("name", "same", _SPELLINGS), ("other_person", "distinct", _OTHER_PEOPLE))
            for a, b in names[i % 3::3]]


def heldout_pairs() -> list[Pair]:
    return _read(HELDOUT)


def _read(path: Path) -> list[Pair]:
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]
    return [Pair(kind, label, a, b) for kind, label, a, b in rows]


# The pipeline compares what the PII stage stored: redacted texts and the keyed tags of their
# placeholders (``ibex_worker.redaction_tags``), so the pairs are scored on those, under a
# fixed key and org.
_TAG_KEY, _ORG = "dedup-eval-tag-key", "dedup-eval"


def score(pairs: list[Pair]) -> list[Scored]:
    import numpy as np

    from ibex_worker import identifiers, lexical, redaction_tags
    from ibex_worker.adapters.tagger import SpacyTagger
    from ibex_worker.config import Settings
    from ibex_worker.conflict_rules import edits, verdicts
    from ibex_worker.pii.policy import merge
    from ibex_worker.runtime import load_embedder, load_redactor

    settings = Settings(environment="test")
    texts = [text for p in pairs for text in (p.a, p.b)]
    redactor = load_redactor(settings)
    tagger = SpacyTagger(redactor.nlp)
    outcomes = redactor.redact_many(texts)
    contents = [o.content for o in outcomes]
    tags = [tuple(redaction_tags.make(_TAG_KEY, _ORG, text, merge(o.redacted, o.masked), o.subject_span,
                                      o.value_span)) for text, o in zip(texts, outcomes)]
    vectors = np.asarray(load_embedder(settings).embed_many(contents))
    out = []
    for i, p in enumerate(pairs):
        a, b = contents[2 * i], contents[2 * i + 1]
        ta, tb = tags[2 * i], tags[2 * i + 1]
        out.append(Scored(p, float(vectors[2 * i] @ vectors[2 * i + 1]), lexical.similarity(a, b),
                          lexical.fingerprint(a) == lexical.fingerprint(b),
                          bool(identifiers.distinct_records(identifiers.find(a), identifiers.find(b))),
                          edits.small_edits_only(verdicts.tokens(a), verdicts.tokens(b)),
                          redaction_tags.relation(ta, tb) == "different_people", (a, b), (ta, tb),
                          tuple(rewording.differing(tagger.terms(a), tagger.terms(b)))))
    return out


SIGNALS = ("embedding, before", "embedding", "lexical", "rewording", "combined")


@lru_cache(maxsize=1)
def rewording_floor() -> float:
    from ibex_worker.config import Settings

    return Settings(environment="test").memory_near_duplicate_rewording_floor


def linked(s: Scored, signal: str, embedding_threshold: float, lexical_threshold: float,
           floor: float | None = None) -> bool:
    """Whether the pipeline links the pair. ``embedding, before`` is the signal as it was
    before issue 14 (no screen); the others leave out pairs about different records and pairs
    whose subjects are different people's redacted names, as ``near_dedup`` does. ``floor`` is
    the rewording floor (by default the one in force)."""
    by_embedding = s.embedding > embedding_threshold
    if signal == "embedding, before":
        return by_embedding
    by_lexical = s.same_fingerprint or s.small_edits or (s.lexical is not None and s.lexical >= lexical_threshold)
    floor = rewording_floor() if floor is None else floor
    by_rewording = s.embedding > min(floor, embedding_threshold) and rewording.reworded(list(s.differing))
    fired = {"embedding": by_embedding, "lexical": by_lexical, "rewording": by_rewording,
             "combined": by_embedding or by_lexical or by_rewording}[signal]
    return fired and not s.different_records and not s.different_people


def figures(scored: list[Scored], signal: str, embedding_threshold: float, lexical_threshold: float,
            floor: float | None = None) -> dict:
    floor = rewording_floor() if floor is None else floor
    links = [linked(s, signal, embedding_threshold, lexical_threshold, floor) for s in scored]
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


REWORDING_RECALL_GIVEN_UP = 0.005


def choose_rewording_floor(dev: list[Scored], embedding_threshold: float, lexical_threshold: float) -> float:
    """The highest floor (0.50-0.90, in steps of 0.05) at which the combined signal keeps dev
    precision at or above the target and gives up at most ``REWORDING_RECALL_GIVEN_UP`` of
    the dev recall of the lowest: a higher floor tags fewer candidates for the same links."""
    floors = [step / 100 for step in range(50, 95, 5)]
    at = {f: figures(dev, "combined", embedding_threshold, lexical_threshold, f) for f in floors}
    best = at[floors[0]]["recall"]
    return max(f for f in floors if at[f]["precision"] >= TARGET_PRECISION
               and at[f]["recall"] >= best - REWORDING_RECALL_GIVEN_UP - 1e-9)


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
    """The rules classifier's verdict on every pair the pipeline links, by label, read on the
    redacted texts and their tags. The pairs carry no validity, so each linked pair is
    escalated (``missing_valid_from``) and the rules decide it, as the escalation worker does
    by default."""
    from ibex_worker.conflict_rules.verdicts import rules_verdict

    out: dict[str, Counter[str]] = defaultdict(Counter)
    for s in scored:
        if linked(s, "combined", emb, lex):
            out[s.pair.label][rules_verdict(*s.redacted, *s.tags).outcome] += 1
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
    lines += ["", "| kind | label | pairs | linked: " + " | ".join(SIGNALS) + " |",
              "|---|---|---:|" + "---:|" * len(SIGNALS)]
    lines += [f"| {k} | {label} | {n} | " + " | ".join(str(c) for c in counts) + " |"
              for k, label, n, *counts in by_kind(scored, emb, lex)]
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
    floor, chosen_floor = settings.memory_near_duplicate_rewording_floor, choose_rewording_floor(dev, emb, lex)
    lines = _table("dev", dev, emb, lex) + _table("heldout", heldout, emb, lex)
    print("\n".join(lines))
    print(f"lexical threshold chosen on dev alone: {chosen:.2f} (in force: {lex:.2f}); rewording floor chosen on "
          f"dev alone: {chosen_floor:.2f} (in force: {floor:.2f}); {time.monotonic() - started:.1f} s")
    if args.write:
        PAGE.write_text(_page(lines, emb, lex, chosen, floor), encoding="utf-8")


def _page(lines: list[str], emb: float, lex: float, chosen: float, floor: float) -> str:
    from ops.bench.service_bench import versions

    v = versions()
    head = [
        "# Near-duplicate quality", "",
        f"Written by `make dedup-eval` on {time.strftime('%Y-%m-%d')}; embedding model "
        f"{v.get('embedding_model', 'all-MiniLM-L6-v2')} (ONNX Runtime, the default backend), embedding threshold "
        f"{emb:.2f} (strictly above), lexical threshold {lex:.2f} (trigram Jaccard, at or above; chosen on dev: "
        f"{chosen:.2f}). A pair is linked by the lexical signal when its similarity reaches the threshold, "
        "both texts have the same word-set fingerprint, or they have the same words apart from at most three "
        "misspellings or British/American spellings (`conflict_rules.edits`, the rules' own test). It is linked by "
        f"the rewording signal when its embedding similarity is above the rewording floor ({floor:.2f}, chosen on "
        "dev) and at most one content word (noun, proper noun, number, adjective, by lemma) stands in one text only "
        "(`ibex_worker.rewording`): a text said again in other words, where a swapped noun is another fact; or "
        "when every content word in one text only says when, one of them by name (\"on Wednesdays\" / \"on "
        "Mondays\", \"1 August\" / \"15 September\"): the same fact with another date, for conflict detection "
        "to decide.", "",
        "Each pair is scored as the pipeline compares it: both texts through the PII stage first (the redactor "
        "and the keyed tags of its placeholders), the signals on the redacted texts, and a pair whose subjects are "
        "different people's redacted names left out (`different_people`), as `near_dedup` does. So spelling "
        "variants of a name (`name`) are told from two people only by how the names sound (the tags' sound, "
        "`redaction_tags.sound_key`). Before 2026-12-06 the pairs were scored on their raw text, which the "
        "pipeline never compares: held-out combined recall 0.821 then; scored as stored 0.782, with `name` 2 of "
        "8 linked, before names' sounds were kept.", "",
        "Labels: `same` (one memory said twice), `competing` (the same attribute with another value, which must "
        "be linked for conflict detection to decide it), `distinct` (must not be linked). Precision counts a link "
        "as correct on `same` and `competing` pairs. The held-out split was written by hand and never used to "
        "choose a threshold.", "",
        "`dev` is the generated pairs, the name pairs, and (since 2026-12-07) 420 pairs written by hand by a "
        "writer who read neither the detector nor the held-out pairs (kinds ending in \", written\": free "
        "rewordings, negations, another choice, another subject, another record, another fact on one topic). "
        "Those are far harder than the generated ones: embedding alone links 49 % of their linkable pairs, "
        "embedding and lexical together 61 %, with the rewording signal 76 % (precision 0.944), 78 % with its "
        "rule for dates (found on the written `date` pairs: 5 of 25 were missed, all five differing only in "
        "words that say when; on all of dev the rule linked 6 more pairs and no distinct one); changed choices "
        "(\"prefers Python\" / \"prefers Go\": a swapped word, as another subject's is) and the freest "
        "rewordings (83 of 120 linked) are the gap that is left. With them the lowest lexical "
        "threshold keeping dev precision at 0.95 rose from 0.79 to 0.81, and is 0.79 again with the rewording "
        "signal.", ""]
    return "\n".join(head + lines)


if __name__ == "__main__":
    main()
