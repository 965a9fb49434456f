"""Helpers for the escalation worker's tests: escalated pairs written straight into
PostgreSQL, poller processes, and a real local HTTP server that speaks the
chat-completions shape (the model stand-in)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, TEXT, UUID

from tests.conftest import Infra, Proc, query

JAN = "2024-01-01T00:00:00Z"
JUN = "2024-06-01T00:00:00Z"
SEP = "2024-09-01T00:00:00Z"

# Pairs the rules classifier decides, and what it decides.
CONTRADICTS = ("The staging server uses port 8080.", "The staging server uses port 8081.")
NEGATED = ("Dark mode is enabled for the support team.", "Dark mode is not enabled for the support team.")
COMPATIBLE = ("The nightly backup runs at midnight.", "the nightly backup runs at midnight!")
UNDECIDED = ("The team uses React for the dashboard.", "The team uses Vue for the dashboard.")


def numbered(pair: tuple[str, str], n: int) -> tuple[str, str]:
    """The same pair about a distinct subject (so a thousand pairs never collide)."""
    return tuple(f"Item {n}: {side}" for side in pair)  # type: ignore[return-value]


# ---------------------------------------------------------------- rows

_INSERT_MEMORIES = text(
    """
    INSERT INTO memories (org_id, agent_id, content, content_hash, source, valid_from, valid_until)
    SELECT :org_id, :agent_id, c, encode(sha256(convert_to(lower(c), 'UTF8')), 'hex'), 'chat',
           CAST(NULLIF(f, '') AS timestamptz), CAST(NULLIF(u, '') AS timestamptz)
      FROM unnest(:contents, :froms, :untils) AS t(c, f, u)
    RETURNING id, content
    """
).bindparams(bindparam("contents", type_=ARRAY(TEXT)), bindparam("froms", type_=ARRAY(TEXT)),
             bindparam("untils", type_=ARRAY(TEXT)))
_INSERT_ESCALATIONS = text(
    """
    INSERT INTO memory_conflict_escalations (org_id, agent_id, memory_id, candidate_id, reason, evidence)
    SELECT :org_id, :agent_id, m, c, :reason, jsonb_build_object('similarity', 0.95)
      FROM unnest(:memory_ids, :candidate_ids) AS t(m, c)
    RETURNING id, memory_id
    """
).bindparams(bindparam("memory_ids", type_=ARRAY(UUID(as_uuid=False))),
             bindparam("candidate_ids", type_=ARRAY(UUID(as_uuid=False))))


@dataclass(frozen=True)
class Escalated:
    escalation_id: str
    older_id: str       # the candidate: written first
    newer_id: str       # the memory whose write escalated
    older: str
    newer: str


def escalate_pairs(engine: Any, org: str, agent: str, pairs: Sequence[tuple[str, str]], *,
                   older_validity: tuple[str | None, str | None] = (JAN, None),
                   newer_validity: tuple[str | None, str | None] = (JUN, None),
                   reason: str = "overlapping_intervals") -> list[Escalated]:
    """Write each pair as two active memories and one pending escalation, as persist would."""
    contents = [c for pair in pairs for c in pair]
    validity = [older_validity, newer_validity] * len(pairs)
    with engine.begin() as conn:
        ids = {r.content: str(r.id) for r in conn.execute(_INSERT_MEMORIES, {
            "org_id": org, "agent_id": agent, "contents": contents,
            "froms": [v[0] or "" for v in validity], "untils": [v[1] or "" for v in validity]})}
        rows = conn.execute(_INSERT_ESCALATIONS, {
            "org_id": org, "agent_id": agent, "reason": reason,
            "memory_ids": [ids[new] for _, new in pairs], "candidate_ids": [ids[old] for old, _ in pairs]}).all()
    by_newer = {str(r.memory_id): str(r.id) for r in rows}
    return [Escalated(by_newer[ids[new]], ids[old], ids[new], old, new) for old, new in pairs]


def escalation(engine: Any, escalation_id: str) -> Any:
    return query(engine, "SELECT * FROM memory_conflict_escalations WHERE id = :id", id=escalation_id)[0]


def decisions(engine: Any, escalation_id: str) -> list[Any]:
    return query(engine, "SELECT * FROM memory_conflict_decisions WHERE escalation_id = :id ORDER BY decided_at",
                 id=escalation_id)


def relationships(engine: Any, org: str) -> list[Any]:
    return query(engine, "SELECT * FROM memory_relationships WHERE org_id = :o ORDER BY created_at", o=org)


def statuses(engine: Any, org: str) -> dict[str, int]:
    rows = query(engine, "SELECT status, count(*) AS n FROM memory_conflict_escalations WHERE org_id = :o "
                         "GROUP BY status", o=org)
    return {r.status: r.n for r in rows}


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s")


def settled(engine: Any, org: str, count: int) -> Callable[[], bool]:
    """Every one of the org's ``count`` escalations is decided (resolved or needs_review)."""
    def check() -> bool:
        done = statuses(engine, org)
        return done.get("resolved", 0) + done.get("needs_review", 0) >= count
    return check


# ---------------------------------------------------------------- poller processes

FAST_POLLING = dict(escalation_idle_backoff_min_seconds=0.05, escalation_idle_backoff_max_seconds=0.3)


def start_poller(infra: Infra, name: str, *, org: str, metrics_dir: Path | None = None, wait: bool = True,
                 **overrides: Any) -> Proc:
    """A real ``ibex escalations run`` process polling ``org`` only (so tests never take each
    other's escalations), with its own metrics folder."""
    env = infra.env(escalation_org_ids=org, **{**FAST_POLLING, **overrides})
    metrics_dir = metrics_dir or infra.root / "metrics" / name
    metrics_dir.mkdir(parents=True, exist_ok=True)
    env["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir)
    proc = Proc(infra, ["escalations", "run", "--name", name], name, env)
    proc.metrics_dir = metrics_dir  # type: ignore[attr-defined]
    if wait:
        proc.wait_for_log("escalation_poller_started", timeout=60)
    return proc


def log_events(proc: Proc, event: str | None = None) -> list[dict[str, Any]]:
    found = []
    for line in proc.log_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and (event is None or record.get("event") == event):
            found.append(record)
    return found


def read_gauge(metrics_dir: Path, name: str) -> dict[str, float]:
    """Label value -> sample of a multiprocess gauge with one label."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(metrics_dir))
    return {next(iter(s.labels.values())): s.value for f in registry.collect() for s in f.samples if s.name == name}


def read_labelled_counter(metrics_dir: Path, name: str) -> dict[str, float]:
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(metrics_dir))
    totals: dict[str, float] = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name == f"{name}_total":
                label = next(iter(sample.labels.values()), "")
                totals[label] = totals.get(label, 0.0) + sample.value
    return totals


# ---------------------------------------------------------------- the model stand-in


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None          # dict -> JSON; bytes/str as they are
    delay: float = 0.0        # seconds before answering


def completion(verdict: str, reason: str = "Stated by the fake model.", **message: Any) -> dict[str, Any]:
    """A chat-completions response whose content is the JSON verdict."""
    content = json.dumps({"verdict": verdict, "reason": reason})
    return {"id": "chatcmpl-test", "object": "chat.completion", "model": "fake-model",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content, **message}}]}


def facts_sent(request: dict[str, Any]) -> dict[str, Any]:
    """The facts the classifier put in the user message."""
    return json.loads(request["body"]["messages"][-1]["content"])


class FakeModel:
    """A real HTTP server on 127.0.0.1 answering ``POST /v1/chat/completions``.

    ``answer(request, n)`` gets the parsed request body and its 1-based arrival number and
    returns a :class:`Reply`. Every request is recorded (path, headers, body)."""

    def __init__(self, answer: Callable[[dict[str, Any], int], Reply]) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "FakeModel":
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def _record(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[dict[str, Any], int]:
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"unparsed": raw.decode(errors="replace")}
        with self._lock:
            self.requests.append({"path": path, "headers": headers, "body": body})
            return body, len(self.requests)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body, n = model._record(self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
                reply = model.answer(body, n)
                time.sleep(reply.delay)
                payload = reply.body if isinstance(reply.body, bytes) else (
                    reply.body.encode() if isinstance(reply.body, str) else json.dumps(reply.body).encode())
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *_: Any) -> None:
                return None

        return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out has closed its socket before a slow answer: expected here.
        return None
