"""The benchmark corpus generator (ops/bench/corpus.py): seeded, with the proportions the
throughput benchmark claims for it."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from ops.bench.corpus import MAX_CHARS, MIN_CHARS, generate, summary

N = 2000


@pytest.fixture(scope="module")
def items():
    return generate(N, seed=11)


def test_same_seed_same_corpus_other_seed_other_corpus() -> None:
    a, b, c = generate(300, seed=5), generate(300, seed=5), generate(300, seed=6)
    assert [(i.body, i.kind, i.keyed) for i in a] == [(i.body, i.kind, i.keyed) for i in b]
    assert [i.body for i in a] != [i.body for i in c]


def test_lengths_within_bounds(items) -> None:
    lengths = [len(it.content) for it in items]
    assert min(lengths) >= MIN_CHARS and max(lengths) <= MAX_CHARS
    assert 120 <= sorted(lengths)[N // 2] <= 260  # mostly short-to-medium memories, some long
    assert sum(n > 300 for n in lengths) > N * 0.05


def test_proportions(items) -> None:
    s = summary(items)
    assert s["items"] == N
    assert 0.26 <= s["pii_share"] <= 0.34
    assert 0.09 <= s["repeat_share"] <= 0.11
    assert 0.09 <= s["paraphrase_share"] <= 0.11
    assert 3 <= s["chains"] <= 40
    assert s["agents"] == 32


def test_repeats_copy_an_earlier_memory_of_the_same_agent(items) -> None:
    for it in items:
        if it.kind == "repeat":
            src = items[it.source_index]
            assert src.index < it.index
            assert src.body == it.body
        if it.kind == "paraphrase":
            src = items[it.source_index]
            assert src.index < it.index
            assert (src.body["org_id"], src.body["agent_id"]) == (it.body["org_id"], it.body["agent_id"])
            assert src.content != it.content


def test_pii_items_carry_personal_data(items) -> None:
    pattern = re.compile(r"@|\+\d|\(\d{3}\)|\d{4} \d{4} \d{4} \d{4}|IBAN|\d+\.\d+\.\d+\.\d+|[A-Z][a-z]+ [A-Z][a-z]+")
    for it in items:
        if it.pii:
            assert pattern.search(it.content), it.content
        else:
            assert "@" not in it.content and "IBAN" not in it.content


def test_supersession_chains_are_back_to_back_intervals_of_one_agent(items) -> None:
    chains = defaultdict(list)
    for it in items:
        if it.kind == "chain":
            chains[it.chain].append(it)
    assert chains
    for members in chains.values():
        assert len({(m.body["org_id"], m.body["agent_id"]) for m in members}) == 1
        ordered = sorted(members, key=lambda m: m.body["valid_from"])
        for older, newer in zip(ordered, ordered[1:]):
            assert older.body["valid_until"] == newer.body["valid_from"]
        assert "valid_until" not in ordered[-1].body


def test_bodies_pass_the_api_validation(items) -> None:
    from ibex_worker.config import Settings
    from ibex_worker.pipeline.validate import validate_request

    settings = Settings(environment="test")
    for it in items[:400]:
        validate_request(dict(it.body), settings)
