"""The lexical signal's candidates from the store (``ibex_worker.store.lexical``) against real
PostgreSQL: most shared bands first, counted position by position, within one agent."""

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
    assert set(ids) == {best, displaced, same_words, *decoys}
    assert ids[0] == best and set(ids[1:71]) == set(decoys)
    assert set(ids[71:]) == {displaced, same_words}, "a value at another position or no band at all shares none"
