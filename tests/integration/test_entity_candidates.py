"""The entities a new name is compared with (``ibex_worker.store.entities.alike``) against real
PostgreSQL, as the tenant role: every entity one typo apart or resembling at the threshold is
found through the rarest trigrams of the name, none of another org's, and the trigram rows
follow their entity."""

from __future__ import annotations

import random

from sqlalchemy import text

from ibex_worker import entity_keys
from ibex_worker.db import tenant_tx
from ibex_worker.pipeline import entities
from ibex_worker.store import entities as store
from tests.conftest import new_scope

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
THRESHOLD = 0.6


def _names(rng: random.Random, count: int) -> list[str]:
    """Keys of one to three words from a small alphabet of syllables, so that most names share
    common trigrams with many others and a few are one edit from another."""
    syllables = ["ka", "lo", "mi", "ra", "ten", "son", "ber", "vin", "tor", "el", "an", "dor", "sta", "gu"]
    names: set[str] = set()
    while len(names) < count:
        words = ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(rng.randint(1, 3))]
        names.add(" ".join(words))
    return sorted(names)


def _edited(rng: random.Random, name: str) -> str:
    i = rng.randrange(len(name) - 1)
    return rng.choice([name[:i] + rng.choice(_LETTERS) + name[i + 1:], name[:i] + name[i + 1:],
                       name[:i] + rng.choice(_LETTERS) + name[i:], name[:i] + name[i + 1] + name[i] + name[i + 2:]])


def _insert(conn, org: str, names: list[str]) -> None:
    for name in names:
        store.insert(conn, org, name, name, "subject", entity_keys.trigrams(name), entities.PIPELINE)


def test_every_entity_one_typo_apart_or_resembling_is_found_among_many_sharing_trigrams(engine):
    rng = random.Random(20261207)
    org = new_scope()
    names = _names(rng, 1500)
    with tenant_tx(engine, org) as conn:
        _insert(conn, org, names)
    probes = [_edited(rng, rng.choice(names)) for _ in range(80)] + _names(random.Random(5), 20)
    checked = 0
    with tenant_tx(engine, org) as conn:
        for probe in probes:
            probe_key = entity_keys.key(probe)
            trigrams = entity_keys.trigrams(probe_key)
            typo = {r.key for r in store.alike(conn, org, entities.NO_ENTITY, trigrams,
                                               entity_keys.reach(probe_key, None, typo=True), 200)}
            alike = {r.key for r in store.alike(conn, org, entities.NO_ENTITY, trigrams,
                                                entity_keys.reach(probe_key, THRESHOLD, typo=False), 200)}
            typo_truth = {n for n in names if entity_keys.one_typo_apart(probe_key, n)}
            alike_truth = {n for n in names if entity_keys.resembles(probe_key, n, THRESHOLD) is not None}
            assert typo_truth <= typo, probe_key
            assert alike_truth <= alike, probe_key
            checked += len(typo_truth) + len(alike_truth)
    assert checked >= 50, "the probes found too few neighbours to test the lookup"


def test_the_lookup_reads_the_rarest_trigrams_of_keys_in_reach_only(engine):
    """A name sharing only a common trigram with many entities is not read when its other
    trigrams are rare, nor a key with more trigrams than the reach allows: an entity that
    cannot reach the similarity is not a candidate."""
    org = new_scope()
    common = [f"zq{i:03d}" for i in range(60)]  # " zq" and "zq0" in every one of them
    with tenant_tx(engine, org) as conn:
        _insert(conn, org, common + ["zq0 wolverhampton"])
        key = "zq0 wolverhamptons"
        found = [r.key for r in store.alike(conn, org, entities.NO_ENTITY, entity_keys.trigrams(key),
                                            entity_keys.reach(key, THRESHOLD, typo=False), 50)]
        everything = [r.key for r in store.alike(conn, org, entities.NO_ENTITY, entity_keys.trigrams(key),
                                                 entity_keys.Reach(1, 100), 100)]
        shorter = [r.key for r in store.alike(conn, org, entities.NO_ENTITY, entity_keys.trigrams(key),
                                              entity_keys.Reach(1, 10), 100)]
    assert found == ["zq0 wolverhampton"]
    assert everything[0] == "zq0 wolverhampton" and set(common) <= set(everything), "one shared trigram reads all"
    assert set(shorter) == set(common), "a key of more trigrams than reached is not read"


def test_another_org_s_entities_and_trigram_rows_are_never_seen(engine):
    org, other = new_scope(), new_scope()
    with tenant_tx(engine, other) as conn:
        _insert(conn, other, ["zorbax gateway"])
    with tenant_tx(engine, org) as conn:
        key = "zorbax gatewai"
        assert store.alike(conn, org, entities.NO_ENTITY, entity_keys.trigrams(key),
                           entity_keys.reach(key, THRESHOLD, typo=True), 50) == []
        assert conn.execute(text("SELECT count(*) FROM entity_trigrams")).scalar_one() == 0
        assert entities.resolve(conn, org, key) is None
        made = entities.resolve_or_create(conn, org, key, THRESHOLD)
        assert (made.rule, made.possibly_same_as) == ("new", [])


def test_trigram_rows_come_with_their_entity_and_go_with_it(engine):
    org = new_scope()
    key = "atlas support contract"
    with tenant_tx(engine, org) as conn:
        made = entities.resolve_or_create(conn, org, key, THRESHOLD)
        rows = conn.execute(text("SELECT trigram, size FROM entity_trigrams WHERE entity_id = :id"),
                            {"id": made.entity_id}).all()
        assert sorted(rows) == sorted((t, len(entity_keys.trigrams(key))) for t in entity_keys.trigrams(key))
        assert entities.resolve_or_create(conn, org, "atlas suport contract", THRESHOLD).rule == "typo"
        store.delete(conn, org, made.entity_id)
        assert conn.execute(text("SELECT count(*) FROM entity_trigrams WHERE entity_id = :id"),
                            {"id": made.entity_id}).scalar_one() == 0
