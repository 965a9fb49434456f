"""`make demo`: a realistic set of writes for two orgs through the running stack's HTTP API,
then a table of what happened to each.

It covers exact and near duplicates, PII, a quarantine case, a supersession chain, a later
replacement and an overlapping contradiction that the escalation worker resolves, and a
tenant boundary. Each write states what the pipeline is expected to decide; `run_demo`
returns the observed rows next to the expectations so a test can check them without the
terminal.

    python -m ops.demo [--api http://127.0.0.1:8080]

API keys for two fresh demo orgs are created directly in the stack's database (the same
as `ibex keys create`), so every run starts from empty tenants.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

JAN, MAR, APR, AUG = "2024-01-01T00:00:00Z", "2024-03-01T00:00:00Z", "2024-04-01T00:00:00Z", "2024-08-01T00:00:00Z"
FEB = "2024-02-01T00:00:00Z"


@dataclass
class Write:
    org: str            # "a" or "b": replaced by the run's org ids
    content: str
    kind: str
    expect_outcome: str = "created"
    expect_status: str = "active"   # final status, after the whole demo ran
    expect_near: int = 0            # near-duplicates found at write time
    expect_supersedes: int = 0
    expect_escalations: int = 0
    expect_link: str = ""           # "type:direction" among its relationships after the run, if set
    fields: dict[str, Any] = field(default_factory=dict)


NOVEL_A = [
    "The billing service retries failed card payments three times.",
    "Customer tickets tagged urgent must be answered within one hour.",
    "The mobile app supports offline mode since version 4.2.",
    "Refunds above 500 euros need a manager's approval.",
    "The data warehouse is refreshed every night at 03:00 UTC.",
    "Support agents work in two shifts on weekdays.",
    "The status page is hosted outside the main cloud account.",
    "Password resets expire after fifteen minutes.",
    "The onboarding email series has five messages.",
    "Enterprise customers get a dedicated Slack channel.",
    "The API rate limit is 600 requests per minute per key.",
    "Invoices are generated on the first business day of the month.",
    "The help center is available in English, French and German.",
    "Chat transcripts are kept for ninety days.",
    "The VPN is required for access to the admin console.",
    "Feature flags are managed in the configuration service.",
    "The quarterly roadmap review happens in the second week of January.",
    "Support macros are reviewed every quarter.",
]
NOVEL_B = [
    "Globex ships hardware orders from the Rotterdam warehouse.",
    "Warranty claims need the original receipt.",
    "The sales team uses a shared inbox for leads.",
    "Quarterly reports are due ten days after quarter end.",
    "Field engineers carry spare routers in their vans.",
    "The returns window is thirty days from delivery.",
    "Large orders are confirmed by phone before shipping.",
    "The company holiday party is in December.",
    "Procurement approves purchases above 10,000 euros.",
    "The intranet search indexes only published pages.",
    "Trucks leave the depot at 06:30 on weekdays.",
    "Product manuals are printed in four languages.",
    "Customer addresses are verified before the first delivery.",
]


def scenario() -> list[Write]:
    writes = [
        Write("a", "User prefers Python for data work.", "novel"),
        Write("a", "  user PREFERS python for data   work.  ", "exact duplicate (case, whitespace)",
              expect_outcome="exact_duplicate"),
        # Undated near-twins: linked, and escalated (missing valid_from) for the classifier.
        Write("a", "User prefers Python for data work!", "near duplicate", expect_near=1, expect_escalations=1),
        Write("a", "Contact Jane Doe at jane.doe@example.com or +1 415 555 0132 about the invoice.", "PII redacted"),
        # The same text after redaction, about someone else: the keyed tags of the values differ.
        Write("a", "Contact John Smith at john.smith@example.com or +1 415 555 0199 about the invoice.",
              "PII, same text, another person"),
        Write("a", "Contact JANE DOE at jane.doe@example.com or +1 (415) 555-0132 about the invoice.",
              "PII, the same person again", expect_outcome="exact_duplicate"),
        Write("a", "The number 4111 1111 1111 1112 came up on the call.", "uncertain PII (masked, quarantined)",
              expect_status="quarantined"),
        Write("a", "The staging server uses port 8080.", "supersession chain 1/3", expect_status="superseded",
              fields={"valid_from": JAN, "valid_until": APR}),
        Write("a", "The staging server uses port 8081.", "supersession chain 2/3", expect_status="superseded",
              expect_near=1, expect_supersedes=1, fields={"valid_from": APR, "valid_until": AUG}),
        Write("a", "The staging server uses port 8082.", "supersession chain 3/3", expect_near=1,
              expect_supersedes=1, fields={"valid_from": AUG}),
        # Open-ended facts, the newer starting later with one value changed: the conflict rules
        # read the newer as the later state of the same attribute, in the pipeline (no queue).
        Write("a", "The team standup is at 9am on Mondays.", "replaced later 1/2 (open-ended)",
              expect_status="superseded", fields={"valid_from": JAN}),
        Write("a", "The team standup is at 10am on Mondays.", "replaced later 2/2 (overlapping)", expect_near=1,
              expect_supersedes=1, expect_link="supersedes:outgoing", fields={"valid_from": MAR}),
        # The older fact has an end of its own that the newer overlaps: a claim about the same
        # months, so a contradiction, and both stay active.
        Write("a", "The office closes at 6pm on Fridays.", "contradiction 1/2", fields={"valid_from": JAN,
                                                                                     "valid_until": AUG}),
        Write("a", "The office closes at 7pm on Fridays.", "contradiction 2/2 (overlapping)", expect_near=1,
              expect_escalations=1, expect_link="contradicts:outgoing", fields={"valid_from": MAR}),
        Write("a", "The frontend team uses React for the dashboard.", "different subject 1/2",
              fields={"valid_from": JAN, "valid_until": FEB}),
        Write("a", "The backend team uses React for the dashboard.", "different subject 2/2", expect_near=1,
              fields={"valid_from": MAR}),
        Write("b", "User prefers Python for data work.", "same text, other org"),
        Write("b", "Contact Jane Doe at jane.doe@example.com or +1 415 555 0132 about the invoice.",
              "PII, other org"),
    ]
    writes += [Write("a", text, "novel") for text in NOVEL_A]
    writes += [Write("b", text, "novel") for text in NOVEL_B]
    return writes


@dataclass
class Row:
    index: int
    org_id: str
    kind: str
    expected: dict[str, Any]
    expect_link: str = ""
    http_status: int = 0
    outcome: str = ""
    memory_id: str = ""
    status: str = ""
    near: int = 0
    supersedes: int = 0
    escalations: list[str] = field(default_factory=list)
    timings_ms: float = 0.0
    final_status: str = ""
    links: list[str] = field(default_factory=list)

    @property
    def observed(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "status": self.final_status, "near": self.near,
                "supersedes": self.supersedes, "escalations": len(self.escalations)}

    @property
    def ok(self) -> bool:
        return self.observed == self.expected and (not self.expect_link or self.expect_link in self.links)


def make_keys(database_url: str, orgs: list[str]) -> dict[str, str]:
    from ibex_worker import apikeys
    from ibex_worker.db import make_engine

    engine = make_engine(database_url, pool_size=1)
    try:
        return {org: apikeys.create(engine, org, None, "make demo")[0] for org in orgs}
    finally:
        engine.dispose()


def run_demo(api_url: str, keys: dict[str, str], orgs: dict[str, str], *, agent: str = "support-bot",
             escalation_timeout: float = 60.0) -> list[Row]:
    rows: list[Row] = []
    with httpx.Client(base_url=api_url, timeout=40.0) as client:
        for i, write in enumerate(scenario()):
            rows.append(_submit(client, i, write, orgs[write.org], keys[orgs[write.org]], agent))
        _wait_for_escalations(client, rows, keys, escalation_timeout)
        for row in rows:
            _finalize(client, row, keys[row.org_id])
    return rows


def _submit(client: httpx.Client, index: int, write: Write, org: str, key: str, agent: str) -> Row:
    expected = {"outcome": write.expect_outcome, "status": write.expect_status, "near": write.expect_near,
                "supersedes": write.expect_supersedes, "escalations": write.expect_escalations}
    row = Row(index, org, write.kind, expected, expect_link=write.expect_link)
    body = {"org_id": org, "agent_id": agent, "source": "demo", "content": write.content, **write.fields}
    answer = client.post("/v1/memories", json=body, headers=_auth(key) | {"Prefer": "wait=30"})
    row.http_status = answer.status_code
    data = answer.json()
    if answer.status_code == 202:  # the wait ran out (a busy machine): the job's view has the answer
        data = _final_answer(client, data["job_id"], key)
    row.memory_id = data.get("memory_id") or ""
    row.outcome = data.get("outcome") or data.get("error", {}).get("code", "")
    row.status = data.get("status", "")
    row.near = len(data.get("near_duplicates", []))
    row.supersedes = len(data.get("supersedes", []))
    row.escalations = list(data.get("escalations", []))
    job = client.get(f"/v1/jobs/{data['job_id']}", headers=_auth(key)).json() if data.get("job_id") else {}
    row.timings_ms = round(sum((job.get("timings_ms") or {}).values()), 1)
    return row


def _final_answer(client: httpx.Client, job_id: str, key: str, timeout: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        job = client.get(f"/v1/jobs/{job_id}", headers=_auth(key)).json()
        if job.get("status") in ("succeeded", "failed") or time.monotonic() > deadline:
            error = {"error": job["error"]} if job.get("error") else {}
            return {"job_id": job_id, **(job.get("result") or {}), **error}
        time.sleep(0.5)


def _wait_for_escalations(client: httpx.Client, rows: list[Row], keys: dict[str, str], timeout: float) -> None:
    """The escalation worker decides each escalated pair (a link for the overlapping
    contradiction, none for the near-twins it finds compatible); wait until none is undecided."""
    deadline = time.monotonic() + timeout
    for org in sorted({row.org_id for row in rows if row.escalations}):
        while time.monotonic() < deadline and _undecided(client, keys[org]):
            time.sleep(0.5)


def _undecided(client: httpx.Client, key: str) -> bool:
    for status in ("pending", "claimed"):
        answer = client.get("/v1/escalations", params={"status": status}, headers=_auth(key))
        if answer.status_code != 200 or answer.json()["escalations"]:
            return True
    return False


def _links(client: httpx.Client, row: Row, key: str) -> list[str]:
    data = client.get(f"/v1/memories/{row.memory_id}/relationships", headers=_auth(key)).json()
    return sorted(f"{r['type']}:{r['direction']}" for r in data.get("relationships", []))


def _finalize(client: httpx.Client, row: Row, key: str) -> None:
    if not row.memory_id:
        return
    memory = client.get(f"/v1/memories/{row.memory_id}", headers=_auth(key)).json()
    row.final_status = memory.get("status", "")
    row.links = _links(client, row, key)


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def render(rows: list[Row]) -> str:
    header = f"{'#':>2}  {'org':<14} {'what':<36} {'outcome':<16} {'status':<12} {'memory':<8} " \
             f"{'near':>4} {'sup':>3} {'esc':>3}  {'ms':>7}  links  check"
    lines = [header, "-" * len(header)]
    for r in rows:
        links = ",".join(sorted(set(r.links))) or "-"
        lines.append(f"{r.index:>2}  {r.org_id[:14]:<14} {r.kind[:36]:<36} {r.outcome[:16]:<16} "
                     f"{r.final_status[:12]:<12} {r.memory_id[:8]:<8} {r.near:>4} {r.supersedes:>3} "
                     f"{len(r.escalations):>3}  {r.timings_ms:>7}  {links}  {'ok' if r.ok else 'UNEXPECTED'}")
    passed = sum(r.ok for r in rows)
    lines.append(f"\n{passed} of {len(rows)} writes ended as expected.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from ibex_worker.config import get_settings

    settings = get_settings()
    parser = argparse.ArgumentParser(description="submit a realistic set of memories and print what happened")
    parser.add_argument("--api", default=f"http://{settings.api_host}:{settings.api_port}")
    args = parser.parse_args(argv)
    run = uuid.uuid4().hex[:6]
    orgs = {"a": f"demo-acme-{run}", "b": f"demo-globex-{run}"}
    try:
        keys = make_keys(settings.database_url, list(orgs.values()))
        rows = run_demo(args.api, keys, orgs)
    except (httpx.HTTPError, OSError) as exc:
        print(f"make demo: is the stack running (make run)? {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(render(rows))
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
