"""A seeded corpus of realistic agent memories for the throughput benchmark.

    from ops.bench.corpus import generate
    items = generate(1000, seed=7)

What it holds (proportions hold for any seed, to within a few points at n >= 500):

- contents of 40-400 characters (one to a few sentences: preferences, infrastructure facts,
  meeting decisions, support notes, reminders), most between 80 and 250;
- ~30 % with personal data (names, e-mail addresses, phone numbers, card numbers, IBANs,
  IP addresses) that the PII stage must find; IP addresses score below the redaction
  threshold, so a few of those memories end up quarantined, as in production;
- ~10 % exact repeats: the same content, org and agent as an earlier memory (a new write,
  with its own idempotency key if any): the exact-dedup path;
- ~10 % paraphrases of an earlier memory of the same agent (light rewording: mostly
  above the 0.92 near-duplicate threshold, some below);
- a few supersession chains: one subject's value changing over time ("The staging server
  listens on port 8080" -> 8081 -> 8443) with back-to-back validity intervals, so each
  newer fact supersedes the older one without a classifier call; one chain in four arrives
  newest first (a late, older fact).

Memories are spread over ``orgs`` x ``agents_per_org`` agents. Nothing here imports the
project: the generator is plain Python and deterministic (``random.Random(seed)``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

MIN_CHARS, MAX_CHARS = 40, 400
PII_SHARE, REPEAT_SHARE, PARAPHRASE_SHARE = 0.30, 0.10, 0.10
CHAIN_LENGTH = 3


@dataclass
class Item:
    index: int
    body: dict[str, Any]            # the POST /v1/memories body
    kind: str                       # fresh | repeat | paraphrase | chain
    pii: bool                       # carries personal data the PII stage should find
    keyed: bool                     # sent with an X-Idempotency-Key
    source_index: int | None = None  # the earlier item a repeat or paraphrase copies
    chain: int | None = None        # supersession chain number
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def content(self) -> str:
        return str(self.body["content"])


# ---------------------------------------------------------------- vocabulary

FIRST = ["Maria", "James", "Aisha", "Lukas", "Sofia", "Daniel", "Priya", "Tomasz", "Elena", "Kenji", "Olivia",
         "Mateo", "Hannah", "Omar", "Chloe", "Noah", "Ingrid", "Rafael", "Grace", "Viktor", "Amara", "Felix"]
LAST = ["Lopez", "Whitfield", "Okafor", "Brandt", "Rossi", "Kowalski", "Sharma", "Novak", "Petrova", "Tanaka",
        "Bennett", "Alvarez", "Schneider", "Haddad", "Dubois", "Fischer", "Lindqvist", "Moreau", "Walsh", "Ivanov"]
DOMAINS = ["northwind.example", "contoso.example", "acme-corp.example", "globex.example", "initech.example"]
SERVICES = ["staging server", "billing service", "data warehouse", "deploy pipeline", "mobile app backend",
            "support queue", "nightly backup job", "search cluster", "auth gateway", "reporting dashboard",
            "payments API", "feature-flag service", "metrics pipeline", "VPN concentrator"]
PLATFORMS = ["Kubernetes", "two bare-metal hosts", "a managed PostgreSQL instance", "Lambda functions",
             "a single VM", "the shared ECS cluster", "Nomad", "a Hetzner box"]
REGIONS = ["eu-west-1", "us-east-2", "the Frankfurt region", "ap-southeast-1", "the London data centre"]
LANGS = ["Python", "Go", "TypeScript", "Rust", "Kotlin", "R", "Java", "SQL"]
TOPICS = ["data work", "quick scripts", "backend services", "notebooks", "infrastructure code", "dashboards",
          "one-off migrations", "prototyping"]
HABITS = ["dark mode in every editor", "tabs over spaces", "meetings before noon", "short written updates",
          "Slack threads over e-mail", "weekly summaries on Fridays", "metric units", "24-hour times",
          "tea over coffee", "async reviews", "bullet-point answers", "British spelling"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
ACTIONS = ["freeze deploys", "move the release", "rotate the database credentials", "retire the old API",
           "switch CI to the new runners", "archive the legacy tickets", "raise the rate limits",
           "split the monolith's billing module", "turn on two-factor login for everyone",
           "migrate the logs to the new bucket"]
ISSUES = ["login loops on Safari", "CSV exports missing the last row", "slow dashboard loads",
          "duplicate invoice e-mails", "timeouts on the search page", "push notifications arriving twice",
          "a blank settings page", "wrong currency on receipts"]
WORKAROUNDS = ["clear the session cookie", "export in smaller date ranges", "disable the browser extension",
               "re-sync the account from the admin page", "retry after five minutes", "use the desktop app"]
LABELS = {"preference": ["preference", "style"], "infra": ["infrastructure", "ops"], "decision": ["decision", "team"],
          "support": ["support", "customer"], "contact": ["contact", "account"], "reminder": ["reminder", "task"]}
SOURCES = ["chat", "email", "crm", "agent", "meeting-notes"]

CHAIN_FACTS = [
    ("The {svc} listens on port {v} behind the internal load balancer", ["8080", "8081", "8443", "9090"]),
    ("The {svc} release train ships every {v} after the change review", ["Tuesday", "Thursday", "second Monday",
                                                                         "Friday"]),
    ("The on-call rotation for the {svc} is owned by the {v} team", ["platform", "payments", "core", "SRE"]),
    ("The {svc} keeps its database backups for {v} days", ["7", "14", "30", "90"]),
    ("The {svc} runs in {v} for all production traffic", ["eu-west-1", "us-east-2", "ap-southeast-1",
                                                          "eu-central-1"]),
]

SYNONYMS = [("prefers", "likes"), ("prefer", "like"), ("runs on", "is hosted on"), ("agreed to", "decided to"),
            ("reported", "said they saw"), ("before", "ahead of"), ("wants", "would like"),
            ("Remind", "Remember to remind"), ("uses", "relies on"), ("every", "each"), ("the team", "we")]
PREFIXES = ["Note: ", "FYI, ", "Reminder: ", "Update: ", "For the record, ", ""]
# Template words a sentence may open with (lower-cased after a prefix; a name never is).
OPENERS = {"The", "User", "They", "In", "We", "Leadership", "Customer", "Known", "Ticket", "Remind", "Follow",
           "Deploys", "Alerts", "Send", "Refunds"}


class _Gen:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self, seq: list[str]) -> str:
        return seq[self.rng.randrange(len(seq))]

    def person(self) -> str:
        return f"{self.pick(FIRST)} {self.pick(LAST)}"

    def email(self, name: str) -> str:
        first, last = name.lower().split()
        return f"{first}.{last}@{self.pick(DOMAINS)}"

    def phone(self) -> str:
        return self.pick([f"+44 20 7946 0{self.rng.randrange(100, 999)}",
                          f"+1 415 555 0{self.rng.randrange(100, 199)}",
                          f"+49 30 {self.rng.randrange(1000000, 9999999)}",
                          f"(212) 555-0{self.rng.randrange(100, 199)}"])

    def card(self) -> str:
        digits = [4] + [self.rng.randrange(10) for _ in range(14)]
        total = 0
        for i, d in enumerate(reversed(digits)):  # Luhn check digit
            d = d * 2 if i % 2 == 0 else d
            total += d - 9 if d > 9 else d
        digits.append((10 - total % 10) % 10)
        s = "".join(map(str, digits))
        return " ".join(s[i:i + 4] for i in range(0, 16, 4))

    def iban(self) -> str:
        return self.pick(["GB82 WEST 1234 5698 7654 32", "DE89 3704 0044 0532 0130 00", "FR14 2004 1010 0505 0001 3M02 606"])

    def ip(self) -> str:
        return f"{self.rng.randrange(11, 223)}.{self.rng.randrange(256)}.{self.rng.randrange(256)}.{self.rng.randrange(1, 255)}"

    # -- sentences -------------------------------------------------------------

    def plain_sentence(self, topic: str) -> str:
        r, p = self.rng, self.pick
        if topic == "preference":
            return p([f"User prefers {p(LANGS)} for {p(TOPICS)}.",
                      f"The user wants {p(HABITS)} and {p(HABITS)}.",
                      f"User prefers {p(HABITS)} when working on {p(TOPICS)}.",
                      f"They like answers in {p(LANGS)} with short code samples for {p(TOPICS)}."])
        if topic == "infra":
            return p([f"The {p(SERVICES)} runs on {p(PLATFORMS)} in {p(REGIONS)}.",
                      f"Deploys of the {p(SERVICES)} go out every {p(WEEKDAYS)} after the smoke tests pass.",
                      f"The {p(SERVICES)} depends on the {p(SERVICES)} and degrades when it is slow.",
                      f"Alerts for the {p(SERVICES)} page the on-call engineer after {r.randrange(2, 15)} minutes."])
        if topic == "decision":
            return p([f"In the {p(WEEKDAYS)} sync the team agreed to {p(ACTIONS)} before the end of {p(MONTHS)}.",
                      f"We decided to {p(ACTIONS)} once the {p(SERVICES)} is stable.",
                      f"Leadership asked us to {p(ACTIONS)} by {p(MONTHS)} {r.randrange(1, 29)}."])
        if topic == "support":
            return p([f"Customer reported {p(ISSUES)} after upgrading to version {r.randrange(2, 9)}.{r.randrange(20)}.",
                      f"Known workaround for {p(ISSUES)}: {p(WORKAROUNDS)}.",
                      f"Ticket volume about {p(ISSUES)} doubled this week."])
        return p([f"Remind the user to {p(ACTIONS)} on {p(WEEKDAYS)}.",
                  f"Follow up on {p(ISSUES)} next {p(WEEKDAYS)}.",
                  f"The user asked for a summary of open items every {p(WEEKDAYS)} morning."])

    def pii_sentence(self) -> tuple[str, str]:
        name, kind = self.person(), self.rng.choices(
            ["name_email", "name_phone", "email", "card", "iban", "ip", "name"], [30, 25, 15, 10, 6, 6, 8])[0]
        p = self.pick
        if kind == "name_email":
            return f"{name} is the account owner; reach them at {self.email(name)} for billing questions.", kind
        if kind == "name_phone":
            return f"Call {name} on {self.phone()} if the {p(SERVICES)} goes down at night.", kind
        if kind == "email":
            return f"Send the weekly report to {self.email(self.person())} and copy the team lead.", kind
        if kind == "card":
            return f"The customer paid with card {self.card()} and asked for a refund of the last invoice.", kind
        if kind == "iban":
            return f"Refunds for this account go to IBAN {self.iban()} within five working days.", kind
        if kind == "ip":
            return f"The user's office VPN exits from {self.ip()}; allow-list it on the {p(SERVICES)}.", kind
        return f"{name} from the customer side approved the change to the {p(SERVICES)} yesterday.", kind

    def content(self, topic: str, pii: bool) -> tuple[str, str | None]:
        target = MIN_CHARS + int((MAX_CHARS - MIN_CHARS) * self.rng.betavariate(1.4, 2.6))
        sentences, pii_kind = [], None
        if pii:
            first, pii_kind = self.pii_sentence()
            sentences.append(first)
        while len(" ".join(sentences)) < max(target, MIN_CHARS):
            sentences.append(self.plain_sentence(topic if self.rng.random() < 0.7 else self.pick(list(LABELS))))
        while len(sentences) > 1 and len(" ".join(sentences)) > MAX_CHARS:
            sentences.pop()
        return clamp(" ".join(sentences)), pii_kind

    def paraphrase(self, text: str) -> str:
        out = text
        swaps = [s for s in SYNONYMS if s[0] in out]
        for old, new in self.rng.sample(swaps, min(len(swaps), self.rng.randrange(1, 3))) if swaps else []:
            out = out.replace(old, new, 1)
        prefix = self.pick(PREFIXES)
        if prefix:
            first = out.split(" ", 1)[0]
            out = prefix + (out[0].lower() + out[1:] if first in OPENERS else out)  # never a name
        if out == text:
            out = out.rstrip(".") + ", as mentioned before."
        return clamp(out)


def clamp(text: str) -> str:
    """Within MIN_CHARS..MAX_CHARS: cut at a word boundary, pad with a neutral tail."""
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:") + "."
    while len(text) < MIN_CHARS:
        text = text.rstrip(".") + ", noted in the chat."
    return text


def _chain_bodies(g: _Gen, chain: int) -> list[tuple[str, str, str | None]]:
    template, values = CHAIN_FACTS[chain % len(CHAIN_FACTS)]
    svc = g.pick(SERVICES)
    picks = g.rng.sample(values, CHAIN_LENGTH)
    year = 2023 + g.rng.randrange(3)
    starts = [f"{year}-{m:02d}-01T00:00:00Z" for m in (1 + 3 * i for i in range(CHAIN_LENGTH + 1))]
    out = []
    for i, value in enumerate(picks):
        until = starts[i + 1] if i < CHAIN_LENGTH - 1 else None
        out.append((clamp(template.format(svc=svc, v=value) + "."), starts[i], until))
    return out


def generate(n: int, seed: int, *, orgs: int = 4, agents_per_org: int = 8, org_prefix: str = "bench-org",
             agent_prefix: str = "agent") -> list[Item]:
    """``n`` memories, deterministic for a given seed and arguments."""
    rng = random.Random(seed)
    g = _Gen(rng)
    scopes = [(f"{org_prefix}-{o}", f"{agent_prefix}-{a}") for o in range(orgs) for a in range(agents_per_org)]
    n_chains = max(2, round(n * 0.012)) if n >= 50 else 0
    n_chain_items = n_chains * CHAIN_LENGTH
    n_repeat, n_para = round(n * REPEAT_SHARE), round(n * PARAPHRASE_SHARE)
    n_fresh = max(0, n - n_repeat - n_para - n_chain_items)
    kinds = ["repeat"] * n_repeat + ["paraphrase"] * n_para + ["fresh"] * n_fresh
    rng.shuffle(kinds)
    # Repeats and paraphrases need an earlier fresh memory: open with a few fresh ones.
    kinds = _front_load_fresh(kinds, min(n_fresh, 8))
    # Chain members go to spread-out positions, each chain's members in order of arrival.
    slots = sorted(rng.sample(range(len(kinds) + n_chain_items), n_chain_items))
    chain_of_slot = {}
    order = list(range(n_chains))
    for c_pos, slot in enumerate(slots):
        chain_of_slot[slot] = (order[c_pos % n_chains], c_pos // n_chains)
    pii_p = PII_SHARE * n / max(1, n - n_chain_items)  # chains carry none; repeats and paraphrases inherit
    chains = {c: (_chain_bodies(g, c), rng.choice(scopes)) for c in range(n_chains)}
    items: list[Item] = []
    fresh_pool: list[int] = []
    kind_iter = iter(kinds)
    for i in range(len(kinds) + n_chain_items):
        keyed = rng.random() < 0.5
        if i in chain_of_slot:
            c, member = chain_of_slot[i]
            bodies, (org, agent) = chains[c]
            arrival = member if c % 4 != 3 else CHAIN_LENGTH - 1 - member  # one chain in four: newest first
            content, valid_from, valid_until = bodies[arrival]
            body = {"org_id": org, "agent_id": agent, "content": content, "source": "agent",
                    "valid_from": valid_from, "labels": [{"label": "fact", "confidence": 0.95}]}
            if valid_until:
                body["valid_until"] = valid_until
            items.append(Item(i, body, "chain", False, keyed, chain=c))
            continue
        kind = next(kind_iter)
        if kind in ("repeat", "paraphrase") and fresh_pool:
            src = items[rng.choice(fresh_pool[-300:])]
            body = dict(src.body)
            if kind == "paraphrase":
                body["content"] = g.paraphrase(src.content)
            items.append(Item(i, body, kind, src.pii, keyed, source_index=src.index))
            continue
        topic = g.pick(list(LABELS))
        pii = rng.random() < pii_p
        content, pii_kind = g.content("contact" if pii and rng.random() < 0.5 else topic, pii)
        org, agent = rng.choice(scopes)
        body = {"org_id": org, "agent_id": agent, "content": content, "source": g.pick(SOURCES)}
        shape = rng.random()
        if shape < 0.6:
            names = LABELS[topic]
            body["labels"] = [{"label": lab, "confidence": round(rng.uniform(0.6, 0.99), 2)}
                              for lab in names[:rng.randrange(1, len(names) + 1)]]
        elif shape < 0.9:
            body["category"], body["confidence"] = topic, round(rng.uniform(0.5, 0.99), 2)
        if rng.random() < 0.4:
            body["valid_from"] = f"{2023 + rng.randrange(3)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 28):02d}T09:00:00Z"
        if rng.random() < 0.3:
            body["metadata"] = {"session": f"s-{rng.randrange(10**6)}", "turn": rng.randrange(1, 40)}
        items.append(Item(i, body, "fresh", pii, keyed, extra={"pii_kind": pii_kind} if pii_kind else {}))
        fresh_pool.append(i)
    return items


def _front_load_fresh(kinds: list[str], head: int) -> list[str]:
    """Move ``head`` fresh entries to the front (so the first repeat has a source), keeping the rest's order."""
    out: list[str] = []
    rest: list[str] = []
    moved = 0
    for k in kinds:
        if k == "fresh" and moved < head:
            out.append(k)
            moved += 1
        else:
            rest.append(k)
    return out + rest


def summary(items: list[Item]) -> dict[str, Any]:
    n = len(items)
    lengths = sorted(len(it.content) for it in items)
    return {
        "items": n,
        "pii_share": round(sum(it.pii for it in items) / n, 3),
        "repeat_share": round(sum(it.kind == "repeat" for it in items) / n, 3),
        "paraphrase_share": round(sum(it.kind == "paraphrase" for it in items) / n, 3),
        "chains": len({it.chain for it in items if it.chain is not None}),
        "chain_items": sum(it.kind == "chain" for it in items),
        "keyed_share": round(sum(it.keyed for it in items) / n, 3),
        "length_chars": {"min": lengths[0], "p50": lengths[n // 2], "mean": round(sum(lengths) / n, 1),
                         "max": lengths[-1]},
        "agents": len({(it.body["org_id"], it.body["agent_id"]) for it in items}),
    }
