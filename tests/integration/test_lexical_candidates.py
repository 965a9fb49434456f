"""The lexical signal's candidates from the store (``ibex_worker.store.lexical``) against real
PostgreSQL: most shared bands first, counted position by position, within one agent; rows
found by the text's rare bands only; the band counts kept in step by the trigger."""

from __future__ import annotations

import hashlib

from sqlalchemy import text

from ibex_worker.db import tenant_tx
from ibex_worker.lexical import BANDS
from ibex_worker.store import lexical as lexical_store
from tests.conftest import new_scope

_INSERT = text(
    "INSERT INTO memories (org_id, agent_id, content, content_hash, source, lexical_fingerprint, lexical_bands) "
    "VALUES (:org, :agent, :content, :hash, 'test', :fingerprint, CAST(:bands AS bigint[])) RETURNING id"
)


def _store(conn, org: str, agent: str, content: str, bands: list[int], fingerprint: str = "other") -> str:
    return str(conn.execute(_INSERT, {"org": org, "agent": agent, "content": content, "bands": bands,
                                      "hash": hashlib.sha256(content.encode()).hexdigest(),
                                      "fingerprint": fingerprint}).scalar_one())


def test_candidates_come_most_shared_bands_first_and_stay_in_the_agent(engine):
    org, agent, other_agent = new_scope(), new_scope("agent"), new_scope("agent")
    mine = [1000 + i for i in range(BANDS)]
    with tenant_tx(engine, org) as conn:
        # 70 rows sharing one band each (more than the limit), one sharing ten, one sharing
        # the first band's value at another position only, one with no bands but the same
        # word-set fingerprint, and another agent's row sharing every band.
        decoys = [_store(conn, org, agent, f"decoy {i}", [mine[0]] + [-(i * BANDS + j) for j in range(1, BANDS)])
                  for i in range(70)]
        best = _store(conn, org, agent, "best", mine[:10] + [-(10_000 + j) for j in range(BANDS - 10)])
        moved = [-20_000] * BANDS
        moved[3] = mine[0]
        displaced = _store(conn, org, agent, "displaced", moved)
        same_words = _store(conn, org, agent, "same words", [], fingerprint="mine")
        _store(conn, org, other_agent, "other agent", mine)

    with tenant_tx(engine, org) as conn:
        found = lexical_store.candidates(conn, org, agent, mine, "mine", None, None, limit=5)
        everything = lexical_store.candidates(conn, org, agent, mine, "mine", None, None, limit=200)

    assert str(found[0].id) == best
    assert len(found) == 5
    ids = [str(r.id) for r in everything]
    # A band's hash includes its position, so a value at another position is no shared band:
    # the lookup goes by position and does not propose it.
    assert set(ids) == {best, same_words, *decoys}
    assert displaced not in ids
    assert ids[0] == best and set(ids[1:71]) == set(decoys)
    assert ids[71:] == [same_words], "no band at all shares none"


_COUNTS = text("SELECT band, n FROM memory_lexical_band_counts WHERE org_id = :org AND band = ANY(:bands)")


def _counts(conn, org: str, bands: list[int]) -> dict[int, int]:
    return {int(r.band): int(r.n) for r in conn.execute(_COUNTS, {"org": org, "bands": bands})}


def test_a_band_carried_by_many_rows_is_not_looked_up_but_a_partner_on_a_rare_band_is_found(engine, monkeypatch):
    org, agent = new_scope(), new_scope("agent")
    mine = [3000 + i for i in range(BANDS)]
    monkeypatch.setattr(lexical_store, "RARE_BAND_ROWS", 5)
    with tenant_tx(engine, org) as conn:
        # Twelve template siblings share the first two bands (frequent: more than 5 rows); the
        # partner shares one of those and one rare band; a row sharing only the frequent bands
        # is not proposed.
        siblings = [_store(conn, org, agent, f"sibling {i}", mine[:2] + [-(i * BANDS + j) for j in range(2, BANDS)])
                    for i in range(12)]
        partner = _store(conn, org, agent, "partner", [mine[0], -1, mine[2]] + [-(900 + j) for j in range(3, BANDS)])
        assert _counts(conn, org, mine[:3]) == {mine[0]: 13, mine[1]: 12, mine[2]: 1}
    with tenant_tx(engine, org) as conn:
        found = [str(r.id) for r in lexical_store.candidates(conn, org, agent, mine, "mine", None, None, limit=64)]
    assert found == [partner]
    assert not set(found) & set(siblings)

    # No rare band at all: the rows of the two rarest bands are read, at most FALLBACK_ROWS.
    with tenant_tx(engine, org) as conn:
        everyone = [str(r.id) for r in lexical_store.candidates(conn, org, agent, mine[:2], "mine", None, None,
                                                                 limit=64)]
        monkeypatch.setattr(lexical_store, "FALLBACK_ROWS", 4)
        bounded = lexical_store.candidates(conn, org, agent, mine[:2], "mine", None, None, limit=64)
    assert set(everyone) == {partner, *siblings} and everyone[-1] == partner
    assert len(bounded) == 4


def test_band_counts_follow_inserts_status_changes_and_deletes(engine):
    org, agent = new_scope(), new_scope("agent")
    bands = [5000 + i for i in range(BANDS)]
    with tenant_tx(engine, org) as conn:
        first = _store(conn, org, agent, "first", bands)
        _store(conn, org, agent, "second", bands[:8] + [-(j + 1) for j in range(8, BANDS)])
        assert _counts(conn, org, bands) == {b: 2 if i < 8 else 1 for i, b in enumerate(bands)}
        conn.execute(text("UPDATE memories SET status = 'superseded' WHERE org_id = :org AND id = :id"),
                     {"org": org, "id": first})
        assert _counts(conn, org, bands) == {b: 1 for b in bands[:8]}
        conn.execute(text("UPDATE memories SET status = 'active' WHERE org_id = :org AND id = :id"),
                     {"org": org, "id": first})
        conn.execute(text("UPDATE memories SET retrieval_count = retrieval_count + 1 WHERE org_id = :org"), {"org": org})
        assert _counts(conn, org, bands) == {b: 2 if i < 8 else 1 for i, b in enumerate(bands)}
        conn.execute(text("DELETE FROM memories WHERE org_id = :org"), {"org": org})
        assert _counts(conn, org, bands + [-(j + 1) for j in range(8, BANDS)]) == {}


def test_another_org_s_rows_neither_count_for_a_band_nor_show_their_counts(engine, monkeypatch):
    org, other_org, agent = new_scope(), new_scope(), new_scope("agent")
    band = [7000 + i for i in range(BANDS)]
    monkeypatch.setattr(lexical_store, "RARE_BAND_ROWS", 5)
    with tenant_tx(engine, other_org) as conn:
        for i in range(12):  # the same band value, frequent in the other org
            _store(conn, other_org, agent, f"theirs {i}", band[:1] + [-(i * BANDS + j) for j in range(1, BANDS)])
    with tenant_tx(engine, org) as conn:
        mine = _store(conn, org, agent, "mine", band[:1] + [-(900 + j) for j in range(1, BANDS)])
    with tenant_tx(engine, org) as conn:
        assert _counts(conn, org, band[:1]) == {band[0]: 1}
        assert conn.execute(text("SELECT count(*) FROM memory_lexical_band_counts WHERE org_id = :o"),
                            {"o": other_org}).scalar_one() == 0
        found = [str(r.id) for r in lexical_store.candidates(conn, org, agent, band, "x", None, None, limit=64)]
    assert found == [mine]
