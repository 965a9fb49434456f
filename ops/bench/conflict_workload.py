"""Escalations on realistic agent traffic: how many near-duplicate pairs reach the conflict
queue per 1,000 writes, how many of them a person must review, and whether every true
conflict planted in the traffic is still escalated or superseded.

    python -m ops.bench.conflict_workload [--writes 2000] [--seed 11] [--out FILE]

The traffic (:func:`generate`, deterministic per seed) is what support, billing and
assistant agents write all day, spread over 4 orgs x 4 agents, mostly undated:

- call-backs: a person asked to be called back on a phone number about a ticket;
- ticket notes: a ticket escalated to a team about an issue;
- invoices: an account's invoices go to an e-mail address on a schedule;
- orders: an order ships from a warehouse on a weekday;
- deadlines: a deliverable for a client is due on a date;
- preferences: the user prefers a language or a tool for a kind of work, dated.

Names, phones and e-mail addresses vary, so after redaction many writes of one template
read alike. Among them, **true conflicts**: a write about the same order, ticket or
client deliverable as an earlier one, saying something else (another day, answer time or
due date; undated), and a preference for a kind of work that changes at a later
``valid_from`` (dated). Each must end escalated or superseded.

One service stack with the product's defaults (``service_bench.start_stack``), the writes
sent at once over HTTP, then the escalation queue read from the database; the rules
classifier (``IBEX_ESCALATION_CLASSIFIER=rules``, the default) is applied to every pending
escalation, as the escalation worker would, to count ``needs_review``. Loopback only,
bounded in time. Writes JSON to ``--out`` (generated output, kept out of git) and the
summary on stderr.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ORGS, AGENTS_PER_ORG = 4, 4
PREFERENCE_SHARE = 0.04  # of writes: dated preferences, each after the first a true conflict
RESTATE_SHARE = 0.01     # of writes: about what an earlier write of the agent was about

FIRST = ["Maria", "James", "Aisha", "Lukas", "Sofia", "Daniel", "Priya", "Tomasz", "Elena", "Kenji", "Olivia",
         "Mateo", "Hannah", "Omar", "Chloe", "Noah", "Ingrid", "Rafael", "Grace", "Viktor", "Amara", "Felix"]
LAST = ["Lopez", "Whitfield", "Okafor", "Brandt", "Rossi", "Kowalski", "Sharma", "Novak", "Petrova", "Tanaka",
        "Bennett", "Alvarez", "Schneider", "Haddad", "Dubois", "Fischer", "Lindqvist", "Moreau", "Walsh"]
TEAMS = ["billing", "tier-2 support", "the payments team", "logistics", "the security team", "account management"]
ISSUES = ["a duplicate charge", "a missing refund", "a failed login", "a damaged parcel", "a wrong address",
          "an expired card", "a locked account", "a late delivery"]
WAREHOUSES = ["Leeds", "Rotterdam", "Lyon", "Poznań", "Reno", "Osaka"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
SCHEDULES = ["every month", "every quarter", "on the first working day", "after each shipment"]
PROJECTS = ["the Q3 budget review", "the onboarding guide", "the vendor audit", "the pricing page",
            "the data retention policy", "the SOC 2 evidence pack", "the customer survey", "the API changelog"]
TOOLS = [("Python", "data work"), ("Go", "data work"), ("Rust", "systems work"), ("TypeScript", "front-end work"),
         ("Postgres", "analytics"), ("DuckDB", "analytics"), ("Vim", "editing"), ("VS Code", "editing")]


@dataclass(frozen=True)
class Write:
    org_id: str
    agent_id: str
    content: str
    template: str
    valid_from: str | None = None
    conflict_with: int | None = None  # index of the earlier write this one truly conflicts with

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"org_id": self.org_id, "agent_id": self.agent_id, "content": self.content,
                                "source": "conflict_workload"}
        if self.valid_from:
            body["valid_from"] = self.valid_from
        return body


def _phone(rng: random.Random) -> str:
    return rng.choice([f"+44 7700 9{rng.randrange(10**5):05d}", f"(415) 555-{rng.randrange(10**4):04d}",
                       f"+49 30 {rng.randrange(10**7):07d}"])


def _person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _number(rng: random.Random, digits: int) -> str:
    return str(rng.randrange(10 ** (digits - 1), 10 ** digits))


CLIENTS = ["Globex", "Initech", "Umbrella", "Hooli", "Stark Industries", "Wayne Enterprises", "Soylent",
           "Tyrell", "Cyberdyne", "Wonka", "Acme", "Vandelay", "Pied Piper", "Massive Dynamic"]


@dataclass(frozen=True)
class _Fact:
    template: str
    content: str
    key: tuple[str, ...] | None = None  # what the fact is about; two contents with one key conflict


def _fact(rng: random.Random, template: str, key: tuple[str, ...] | None = None) -> _Fact:
    """A fact of ``template``; with ``key``, about that same thing with freshly drawn values."""
    if template == "callback":
        return _Fact(template, f"{_person(rng)} asked to be called back on {_phone(rng)} regarding ticket "
                               f"{_number(rng, 5)}.")
    if template == "ticket_note":
        return _Fact(template, f"Ticket {_number(rng, 5)} was escalated to {rng.choice(TEAMS)} about "
                               f"{rng.choice(ISSUES)}.")
    if template == "ticket_sla":
        ticket = key[1] if key else _number(rng, 5)
        return _Fact(template, f"Ticket {ticket} must be answered within {rng.randint(2, 12)} days.",
                     ("ticket", ticket))
    if template == "invoice":
        return _Fact(template, f"Invoices for account {_number(rng, 6)} are sent to {rng.choice(FIRST).lower()}@"
                               f"{rng.choice(['acme', 'globex'])}.example {rng.choice(SCHEDULES)}.")
    if template == "order":
        order, warehouse = key[1:] if key else (f"ORD-{_number(rng, 5)}", rng.choice(WAREHOUSES))
        return _Fact(template, f"Order {order} ships from the {warehouse} warehouse on {rng.choice(DAYS)}.",
                     ("order", order, warehouse))
    if template == "deadline":
        project, client = key[1:] if key else (rng.choice(PROJECTS), rng.choice(CLIENTS))
        return _Fact(template, f"{project[0].upper()}{project[1:]} for {client} is due on {rng.choice(DAYS)}, "
                               f"{rng.randint(1, 28)} {rng.choice(['March', 'June', 'September'])}.",
                     ("deadline", project, client))
    raise ValueError(template)


TEMPLATES = ("callback", "ticket_note", "ticket_sla", "invoice", "order", "deadline")


def generate(n: int, seed: int, org_prefix: str = "cw-org", agent_prefix: str = "cw-agent") -> list[Write]:
    """``n`` writes, in sending order. A write about what an earlier write of the same agent
    was about (same ticket, order, deliverable), saying something else, is a true conflict:
    ``conflict_with`` names the latest such write. A dated preference for a kind of work
    conflicts with the agent's previous preference for it."""
    rng = random.Random(seed)
    scopes = [(f"{org_prefix}-{o}", f"{agent_prefix}-{o}-{a}") for o in range(ORGS) for a in range(AGENTS_PER_ORG)]
    writes: list[Write] = []
    about: dict[tuple[str, tuple[str, ...]], int] = {}
    month: dict[str, int] = {}
    while len(writes) < n:
        org, agent = rng.choice(scopes)
        roll = rng.random()
        if roll < PREFERENCE_SHARE and month.get(agent, 0) < 12:
            tool, work = rng.choice(TOOLS)
            month[agent] = month.get(agent, 0) + 1
            fact = _Fact("preference", f"The user prefers {tool} for {work}.", ("preference", work))
            valid_from = f"2026-{month[agent]:02d}-01T00:00:00Z"
        else:
            keyed = ([(a, k) for (a, k) in about if a == agent and k[0] != "preference"]
                     if roll < PREFERENCE_SHARE + RESTATE_SHARE else [])
            if keyed:
                _, key = rng.choice(keyed)
                fact = _fact(rng, writes[about[(agent, key)]].template, key)
            else:
                fact = _fact(rng, rng.choice(TEMPLATES))
            valid_from = None
        earlier = about.get((agent, fact.key)) if fact.key else None
        if earlier is not None and writes[earlier].content == fact.content:
            continue
        if fact.key:
            about[(agent, fact.key)] = len(writes)
        writes.append(Write(org, agent, fact.content, fact.template, valid_from, earlier))
    return writes


def summarise(writes: list[Write], escalations: list[dict[str, Any]], supersessions: set[frozenset[int]],
              verdicts: Counter[str]) -> dict[str, Any]:
    """Per 1,000 writes, and the planted conflicts that were caught (escalated or superseded),
    by the indexes of the writes; ``escalations`` are ``{"pair": frozenset of indexes, "reason"}``."""
    per_k = 1000.0 / len(writes)
    planted = {frozenset((i, w.conflict_with)) for i, w in enumerate(writes) if w.conflict_with is not None}
    escalated = {e["pair"] for e in escalations}
    caught = {p for p in planted if p in escalated or p in supersessions}
    templates = (lambda pair: "+".join(sorted(writes[i].template if 0 <= i < len(writes) else "?" for i in pair)))
    return {"writes": len(writes), "escalations": len(escalations),
            "escalations_per_1000_writes": round(len(escalations) * per_k, 1),
            "true_conflicts_per_1000_writes": round(len(planted) * per_k, 1),
            "needs_review_per_1000_writes": round(verdicts.get("needs_review", 0) * per_k, 1),
            "escalation_reasons": dict(Counter(e["reason"] for e in escalations)),
            "escalations_by_templates": dict(Counter(templates(e["pair"]) for e in escalations)),
            "rules_verdicts": dict(verdicts), "true_conflicts": len(planted), "true_conflicts_caught": len(caught),
            "true_conflicts_missed_by_template": dict(Counter(templates(p) for p in planted - caught)),
            "supersessions": len(supersessions)}


def _read_outcome(dsn: str, keys: dict[str, int]) -> tuple[list[dict[str, Any]], set[frozenset[int]], Counter[str],
                                                           dict[str, Any]]:
    import psycopg

    from ibex_worker.conflict_rules.verdicts import ConflictPair, MemoryFact, RulesClassifier, order_pair

    with psycopg.connect(dsn, autocommit=True) as conn:
        by_memory = {str(m): keys[k] for k, m in conn.execute(
            "SELECT idempotency_key, memory_id FROM memory_write_jobs WHERE agent_id LIKE 'cw-agent%' "
            "AND memory_id IS NOT NULL").fetchall() if k in keys}
        rows = conn.execute(
            "SELECT e.memory_id, e.candidate_id, e.reason, e.evidence->>'similarity' FROM memory_conflict_escalations e "
            "WHERE e.agent_id LIKE 'cw-agent%'").fetchall()
        facts = {str(r[0]): MemoryFact(str(r[0]), *r[1:-1], tuple(r[-1] or ())) for r in conn.execute(
            "SELECT id, content, valid_from, valid_until, subject_key, created_at, subject_aspect, redaction_tags "
            "FROM memories WHERE agent_id LIKE 'cw-agent%'").fetchall()}
        links = conn.execute("SELECT source_memory_id, target_memory_id FROM memory_relationships "
                             "WHERE relationship_type = 'supersedes' AND org_id LIKE 'cw-org%'").fetchall()
        span = conn.execute("SELECT extract(epoch FROM max(finished_at) - min(created_at)) FROM memory_write_jobs "
                            "WHERE agent_id LIKE 'cw-agent%'").fetchone()[0]
        near = conn.execute("SELECT count(*) FROM memory_relationships WHERE relationship_type = 'near_duplicate_of' "
                            "AND org_id LIKE 'cw-org%'").fetchone()[0]
    pair = (lambda a, b: frozenset((by_memory.get(str(a), -1), by_memory.get(str(b), -2))))
    escalations = [{"pair": pair(r[0], r[1]), "reason": r[2]} for r in rows]
    rules = RulesClassifier()
    verdicts = Counter(rules.classify(ConflictPair(*order_pair(facts[str(r[0])], facts[str(r[1])]),
                                                   float(r[3]) if r[3] else None, r[2])).outcome for r in rows)
    rate = {"writes_per_s": round(len(keys) / float(span), 1),
            "near_duplicate_links_per_1000_writes": round(int(near) * 1000.0 / len(keys), 1)}
    return escalations, {pair(s, t) for s, t in links}, verdicts, rate


def main() -> None:
    from ibex_worker import apikeys
    from ibex_worker.config import Settings
    from ibex_worker.db import make_engine
    from ops.bench.burst import burst
    from ops.bench.ingest_load import cpu_model
    from ops.bench.service_bench import ROOT, Stack, exclusive, start_stack, stop_stack, unfinished, versions

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--drain-cap", type=float, default=600.0)
    parser.add_argument("--out", type=Path, default=ROOT / "ops" / "bench" / "results" / "conflict_workload.json")
    args = parser.parse_args()
    lock = exclusive(1800.0)
    writes = generate(args.writes, args.seed)
    stack = Stack(Path(tempfile.mkdtemp(prefix="ibex-conflicts-")), Settings(environment="test").stage_batch_max)
    try:
        start_stack(stack, None)
        engine = make_engine(stack.pg.url, pool_size=1)
        for org in sorted({w.org_id for w in writes}):
            stack.keys[org], _ = apikeys.create(engine, org, None, "conflict_workload")
        engine.dispose()
        started = time.monotonic()
        burst(stack, [_Item(w.body()) for w in writes], "cw", args.connections)
        deadline = time.monotonic() + args.drain_cap
        while unfinished(stack.dsn, "cw-agent") and time.monotonic() < deadline:
            time.sleep(0.25)
        seconds = round(time.monotonic() - started, 1)
        escalations, supersessions, verdicts, rate = _read_outcome(stack.dsn,
                                                                   {f"cw-{i}": i for i in range(len(writes))})
    finally:
        stop_stack(stack)
        shutil.rmtree(stack.folder, ignore_errors=True)
    result = {"benchmark": "conflict_workload", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": {"cpu": cpu_model()}, "versions": versions(), "config": vars(args), "seconds": seconds,
              "summary": {**summarise(writes, escalations, supersessions, verdicts), **rate}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, default=str))
    print(json.dumps(result["summary"], indent=1), flush=True)
    lock.close()


@dataclass
class _Item:
    body: dict[str, Any]


if __name__ == "__main__":
    main()
