"""A seeded set of labelled text pairs around the near-duplicate threshold, for checking that
two ways of computing embeddings take the same near-duplicate decisions.

    from ops.bench.pairs import generate
    pairs = generate(seed=11)   # [Pair(a, b, kind, near_duplicate)]

Kinds (each from every base fact, so every kind is represented evenly):
- ``same_words_case``: case and spacing changed (a near duplicate);
- ``typo``: one or two words with a letter dropped, doubled or two letters swapped (near);
- ``spelling``: British/American spelling variants (near);
- ``paraphrase``: a light rewording through a synonym table (near);
- ``number``: the same sentence with another number or time (not the same fact);
- ``negation``: ``not`` added or removed (not the same fact);
- ``other_subject``: the same template about another subject (not the same fact);
- ``unrelated``: two different base facts (not near).

The label says what a person would call the pair; whether the model puts it above 0.92 is
what the equivalence check compares between backends, label or not. Plain Python, no
project imports.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

BASES = [
    "The customer prefers to be called in the afternoon, never before 2 pm.",
    "Our staging database is refreshed from production every Sunday at 3 am.",
    "The team standup moved to 9:45 on Tuesdays and Thursdays.",
    "Invoices for the Berlin office are sent on the 5th of each month.",
    "The user's favourite colour for dashboards is dark blue.",
    "The mobile app crashes when the camera permission is denied.",
    "Renewal of the support contract is due in September, with a 10 % discount.",
    "The warehouse in Leeds ships orders placed before 4 pm on the same day.",
    "She asked us to archive every ticket older than 18 months.",
    "The billing service retries failed card payments 3 times over 5 days.",
    "Backups of the analytics cluster are kept for 30 days in cold storage.",
    "The agent should answer in Spanish when the customer writes in Spanish.",
    "He is allergic to peanuts and avoids the catering on Fridays.",
    "The VPN certificate expires at the end of March and must be rotated.",
    "Deploys are frozen during the last week of December.",
    "The onboarding checklist has 12 steps and takes about two days.",
    "Our licence for the design tool covers 25 seats.",
    "The client organised a workshop on data retention for the 14th.",
    "Password resets require a second factor for all administrators.",
    "The reporting job fails when the input file is larger than 2 GB.",
    "The user likes short answers with a summary at the top.",
    "Payroll questions go to the finance team, not to IT.",
    "The printer on the second floor is out of toner again.",
    "The recruiter will follow up with the candidate on Monday morning.",
    "The shipment to Lisbon was delayed by customs for 4 days.",
    "Our API rate limit is 600 requests per minute per key.",
    "The kitchen renovation starts on the 3rd and lasts six weeks.",
    "The patient portal must show lab results within 48 hours.",
    "The board meeting is scheduled for 10 am in room B.",
    "The team agreed to review pull requests within one working day.",
    "The trial account converts to a paid plan after 14 days.",
    "Customer feedback is collected through a survey after each call.",
    "The firewall blocks outbound traffic on port 25.",
    "The marketing budget for the spring campaign is 40,000 euros.",
    "The user travels to Singapore every quarter for client visits.",
    "Night shifts are paid at one and a half times the normal rate.",
    "The cache is warmed every hour by a scheduled job.",
    "The legal team must approve any contract above 100,000 dollars.",
    "The school pickup is at 3:15 pm on weekdays.",
    "Support tickets tagged urgent are answered within 2 hours.",
]
SPELLING = [("colour", "color"), ("favourite", "favorite"), ("organised", "organized"), ("licence", "license"),
            ("centre", "center"), ("cancelled", "canceled"), ("analyse", "analyze"), ("programme", "program")]
SYNONYMS = [("prefers", "would rather have"), ("asked us", "requested us"), ("moved", "was moved"),
            ("is due", "falls due"), ("crashes", "stops working"), ("ships", "dispatches"), ("kept", "retained"),
            ("should answer", "must reply"), ("avoids", "skips"), ("must be", "needs to be"),
            ("are frozen", "are paused"), ("takes about", "needs roughly"), ("covers", "includes"),
            ("require", "need"), ("fails", "breaks"), ("likes", "prefers"), ("go to", "are handled by"),
            ("will follow up", "will get back"), ("was delayed", "was held up"), ("starts", "begins"),
            ("is scheduled", "is planned"), ("agreed", "decided"), ("converts", "switches"), ("blocks", "stops"),
            ("travels", "flies"), ("are paid", "pay"), ("is warmed", "is preloaded"), ("must approve", "signs off"),
            ("are answered", "get a reply"), ("is collected", "is gathered"), ("is out of", "has run out of")]
SUBJECTS = [("customer", "supplier"), ("staging", "production"), ("Berlin", "Madrid"), ("user's", "manager's"),
            ("mobile app", "web app"), ("Leeds", "Bristol"), ("She", "He"), ("billing", "shipping"),
            ("analytics", "search"), ("Spanish", "French"), ("peanuts", "shellfish"), ("VPN", "SSO"),
            ("December", "August"), ("design", "accounting"), ("administrators", "contractors"),
            ("reporting", "import"), ("finance", "legal"), ("second", "fourth"), ("candidate", "client"),
            ("Lisbon", "Oslo"), ("kitchen", "bathroom"), ("lab results", "invoices"), ("board", "team"),
            ("pull requests", "design documents"), ("trial", "student"), ("survey", "email"),
            ("outbound", "inbound"), ("spring", "autumn"), ("Singapore", "Toronto"), ("Night", "Weekend"),
            ("cache", "index"), ("legal", "security"), ("school", "nursery"), ("urgent", "billing")]


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    kind: str
    near_duplicate: bool


def _typo(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    long_words = [i for i, w in enumerate(words) if len(re.sub(r"\W", "", w)) >= 5]
    for i in rng.sample(long_words, min(len(long_words), rng.choice((1, 2)))):
        w, j = words[i], rng.randrange(1, len(words[i]) - 2)
        words[i] = rng.choice((w[:j] + w[j + 1:], w[:j] + w[j] + w[j:], w[:j] + w[j + 1] + w[j] + w[j + 2:]))
    return " ".join(words)


def _swap(text: str, table: list[tuple[str, str]], rng: random.Random) -> str | None:
    hits = [(x, y) for x, y in table if x in text] + [(y, x) for x, y in table if y in text]
    if not hits:
        return None
    x, y = rng.choice(hits)
    return text.replace(x, y, 1)


def _number(text: str, rng: random.Random) -> str | None:
    numbers = list(re.finditer(r"\d+", text))
    if not numbers:
        return None
    m = rng.choice(numbers)
    return text[:m.start()] + str(int(m.group()) + rng.randint(1, 9)) + text[m.end():]


def _negation(text: str) -> str:
    for verb in (" is ", " are ", " must ", " should ", " will ", " was "):
        if verb in text:
            return text.replace(verb, f"{verb}not ", 1)
    return re.sub(r"^(\S+ \S+) ", r"\1 does not always ", text, count=1)


def generate(seed: int = 11) -> list[Pair]:
    rng = random.Random(seed)
    pairs: list[Pair] = []
    for base in BASES:
        pairs.append(Pair(base, "  ".join(base.upper().split(" ")) if rng.random() < 0.5 else base.lower(),
                          "same_words_case", True))
        for _ in range(3):
            pairs.append(Pair(base, _typo(base, rng), "typo", True))
        spelled = _swap(base, SPELLING, rng)
        if spelled:
            pairs.append(Pair(base, spelled, "spelling", True))
        for _ in range(2):
            reworded = _swap(base, SYNONYMS, rng)
            if reworded:
                pairs.append(Pair(base, reworded, "paraphrase", True))
        for _ in range(2):
            changed = _number(base, rng)
            if changed:
                pairs.append(Pair(base, changed, "number", False))
        pairs.append(Pair(base, _negation(base), "negation", False))
        other = _swap(base, SUBJECTS, rng)
        if other:
            pairs.append(Pair(base, other, "other_subject", False))
        for other_base in rng.sample([b for b in BASES if b != base], 4):
            pairs.append(Pair(base, other_base, "unrelated", False))
    return pairs
