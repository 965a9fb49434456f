"""Near-duplicate quality with the real MiniLM weights, on the labelled pairs of
``ops.dedup_eval`` (no infrastructure), scored as the pipeline compares them (redacted, with
their placeholders' tags): the held-out figures issue 14 sets targets for, as far as they are
met, so that a regression fails here. Held-out recall of all linkable pairs (0.949, 74 of 78,
target 0.95) is not met: two dated pairs, a name spelt two ways and a paraphrase are missed
(``docs/dedup-quality.md``)."""

from __future__ import annotations

import pytest

from ops.dedup_eval.evaluate import (choose_lexical_threshold, choose_rewording_floor, dev_pairs, figures, heldout_pairs,
                                     linked, score)
from ibex_worker.config import Settings

SETTINGS = Settings(environment="test")
EMB, LEX = SETTINGS.memory_near_duplicate_sim_threshold, SETTINGS.memory_near_duplicate_lexical_threshold


@pytest.fixture(scope="module")
def scored():
    return {"dev": score(dev_pairs()), "heldout": score(heldout_pairs())}


def test_the_lexical_threshold_in_force_is_the_one_chosen_on_dev(scored):
    assert choose_lexical_threshold(scored["dev"], EMB) == LEX


def test_the_rewording_floor_in_force_is_the_one_chosen_on_dev(scored):
    assert choose_rewording_floor(scored["dev"], EMB, LEX) == SETTINGS.memory_near_duplicate_rewording_floor


def test_held_out_rewordings_and_negations_are_linked_and_other_records_are_not(scored):
    def linked_count(kind: str, signal: str = "combined") -> int:
        return sum(linked(s, signal, EMB, LEX) for s in scored["heldout"] if s.pair.kind == kind)

    assert linked_count("paraphrase") >= 10 and linked_count("paraphrase", "embedding") <= 6   # 11 of 12; 5 alone
    assert linked_count("negation") == 8
    assert linked_count("record") == 0


def test_held_out_precision_meets_the_target_and_recall_beats_the_embedding_alone(scored):
    combined = figures(scored["heldout"], "combined", EMB, LEX)
    before = figures(scored["heldout"], "embedding, before", EMB, LEX)
    embedding = figures(scored["heldout"], "embedding", EMB, LEX)
    assert combined["precision"] >= 0.95 and combined["precision"] > before["precision"]
    assert combined["recall"] >= 0.94 and combined["recall"] > embedding["recall"] + 0.2


def test_held_out_typos_and_spelling_variants_are_linked(scored):
    variants = [s for s in scored["heldout"] if s.pair.kind in ("typo", "spelling")]
    assert len(variants) >= 20
    recall = sum(linked(s, "combined", EMB, LEX) for s in variants) / len(variants)
    before = sum(linked(s, "embedding, before", EMB, LEX) for s in variants) / len(variants)
    assert recall >= 0.95 and before < 0.8


def test_pairs_about_different_records_are_never_linked(scored):
    records = [s for s in scored["heldout"] if s.pair.kind == "record"]
    assert records and not any(linked(s, "combined", EMB, LEX) for s in records)
    assert sum(linked(s, "embedding, before", EMB, LEX) for s in records) >= len(records) // 2


def test_names_spelt_two_ways_are_linked_and_other_people_are_not(scored):
    def linked_share(split: str, kind: str) -> float:
        pairs = [s for s in scored[split] if s.pair.kind == kind]
        return sum(linked(s, "combined", EMB, LEX) for s in pairs) / len(pairs)

    assert linked_share("dev", "other_person") == 0.0
    assert linked_share("dev", "name") >= 0.8                  # 30 of 36 when names' sounds were added
    assert linked_share("heldout", "name") >= 0.75             # 6 of 8 (2 of 8 before)
