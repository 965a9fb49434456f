"""The name model's pure parts: which words it reads, how words it scored become names, and
what its features may depend on (never the producer's casing)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ibex_worker.pii.casing import canonical_view
from ibex_worker.pii.name_model import (GROW, Evidence, NameModel, Word, name_spans, second_pass_features,
                                        word_features, words_of)


def _token(idx: int, text: str) -> SimpleNamespace:
    token = SimpleNamespace(idx=idx, text=text, lower_=text.lower(), pos_="PROPN", dep_="nsubj",
                            ent_iob_="O", ent_type_="")
    token.head = token
    return token


def _doc(text: str) -> list[SimpleNamespace]:
    """One token per space-separated chunk, as a tokenizer that never splits on commas would."""
    tokens, at = [], 0
    for chunk in text.split(" "):
        tokens.append(_token(at, chunk))
        at += len(chunk) + 1
    return tokens


def _words(text: str) -> list[Word]:
    return words_of(text, _doc(text))


def _spans(text: str, probabilities: list[float], threshold: float = 0.5) -> list[str]:
    return [text[s:e] for s, e in name_spans(text, _words(text), probabilities, threshold)]


def test_words_leave_out_the_possessive_and_split_what_a_csv_glues_together():
    assert [w.text for w in _words("1183,Lukas,Berger,43 and Hugo's inhaler")] == [
        "Lukas", "Berger", "and", "Hugo", "inhaler"]


def test_each_word_knows_the_token_it_lies_in():
    words = _words("id=7 name=Ada")
    assert [(w.text, w.token.text) for w in words] == [("id", "id=7"), ("name", "name=Ada"), ("Ada", "name=Ada")]


def test_a_doubted_particle_between_two_parts_of_a_name_belongs_to_it():
    text = "Mohammed bin Rashid signed"
    assert _spans(text, [0.9, GROW * 0.5 + 0.01, 0.8, 0.01]) == ["Mohammed bin Rashid"]


def test_a_word_below_the_growing_level_ends_the_name():
    text = "Mohammed bin Rashid signed"
    assert _spans(text, [0.9, GROW * 0.5 - 0.01, 0.8, 0.01]) == ["Mohammed", "Rashid"]


def test_a_doubted_word_grows_only_from_a_neighbour_it_is_joined_to():
    assert _spans("Lukas,Berger", [0.9, 0.3]) == ["Lukas"]
    assert _spans("Lukas Berger", [0.9, 0.3]) == ["Lukas Berger"]


def test_every_occurrence_of_a_name_is_masked_once_one_is_sure():
    text = "Hugo and Renata came; do not forget Hugo's inhaler"
    probabilities = [0.9, 0.01, 0.8, 0.01, 0.01, 0.01, 0.01, GROW * 0.5 + 0.01, 0.01]
    assert _spans(text, probabilities) == ["Hugo", "Renata", "Hugo"]


def test_initials_join_the_name_they_stand_before():
    assert _spans("M. J. Castellanos called", [0.3, 0.3, 0.9, 0.01]) == ["M. J. Castellanos"]


def test_nothing_above_the_threshold_means_no_name():
    assert _spans("the grace period ends", [0.4, 0.4, 0.1, 0.1]) == []


def test_features_do_not_depend_on_the_producers_casing_or_spacing():
    def features(original: str) -> list[list[str]]:
        view = canonical_view(original)
        return word_features(view.text, _words(view.text), Evidence({}), foreign=False)

    assert features("Call Amara Okafor at the depot") == features("CALL   amara OKAFOR at the DEPOT")


def test_the_second_pass_sees_its_neighbours_and_the_same_word_elsewhere():
    words = _words("Hope Adjovi and hope")
    feats = second_pass_features(words, [0.2, 0.9, 0.0, 0.05])
    assert "p1=5" in feats[0] and "same=2" in feats[0]
    assert "same=2" in feats[3] and "p-2=5" in feats[3] and "p1=none" in feats[3]


def test_the_model_adds_the_weights_of_the_features_present():
    model = NameModel({"bias": -1.0, "gz=g": 3.0}, threshold=0.5)
    assert model.first_pass([["bias", "gz=g"], ["bias"]]) == pytest.approx([0.8808, 0.2689], abs=1e-4)


def test_training_learns_both_passes_from_labelled_words():
    from ops.pii.train_name_model import Row, train

    words = _words("Amara met the team")
    feats = [["bias", "gz=g"], ["bias", "pos=VERB"], ["bias", "stop"], ["bias", "common"]]
    rows = [Row(None, None, feats, [1, 0, 0, 0], words) for _ in range(40)]
    model = train(rows, c=1.0, threshold=0.5, inner=4)
    first = model.first_pass(feats)
    second = [model._score(model.second, [*f, *g])
              for f, g in zip(feats, second_pass_features(words, first), strict=True)]
    assert first[0] > 0.8 and max(first[1:]) < 0.25
    assert second[0] > 0.8 and max(second[1:]) < 0.25
