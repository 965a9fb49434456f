"""The conflict workload's generator and summary (``ops.bench.conflict_workload``): the
labels it plants are what the measurement counts against, so they are checked here."""

from __future__ import annotations

from collections import Counter

from ops.bench.conflict_workload import TEMPLATES, generate, summarise


def test_the_traffic_is_deterministic_per_seed_and_varied():
    writes = generate(1500, seed=3)
    assert writes == generate(1500, seed=3) and writes != generate(1500, seed=4)
    assert len(writes) == 1500
    templates = Counter(w.template for w in writes)
    assert set(templates) == {*TEMPLATES, "preference"}
    assert min(templates[t] for t in TEMPLATES) > 150
    assert len({(w.org_id, w.agent_id) for w in writes}) == 16


def test_every_true_conflict_points_back_at_an_earlier_write_of_the_same_agent_about_the_same_thing():
    writes = generate(3000, seed=5)
    conflicts = [(i, w) for i, w in enumerate(writes) if w.conflict_with is not None]
    assert 20 < len(conflicts) < 150
    for i, w in conflicts:
        earlier = writes[w.conflict_with]
        assert w.conflict_with < i
        assert (earlier.org_id, earlier.agent_id, earlier.template) == (w.org_id, w.agent_id, w.template)
        assert earlier.content != w.content
    dated = [w for _, w in conflicts if w.template == "preference"]
    assert dated and all(w.valid_from and w.valid_from > writes[w.conflict_with].valid_from for w in dated)
    assert all(w.valid_from is None for _, w in conflicts if w.template != "preference")


def test_the_summary_counts_per_thousand_writes_and_which_planted_pairs_were_caught():
    writes = generate(1000, seed=7)
    planted = [frozenset((i, w.conflict_with)) for i, w in enumerate(writes) if w.conflict_with is not None]
    escalations = [{"pair": planted[0], "reason": "missing_valid_from"},
                   {"pair": frozenset((1, 2)), "reason": "overlapping_intervals"}]
    summary = summarise(writes, escalations, {planted[1]}, Counter({"needs_review": 1, "contradicts": 1}))
    assert summary["escalations_per_1000_writes"] == 2.0
    assert summary["needs_review_per_1000_writes"] == 1.0
    assert (summary["true_conflicts"], summary["true_conflicts_caught"]) == (len(planted), 2)
    assert sum(summary["true_conflicts_missed_by_template"].values()) == len(planted) - 2
