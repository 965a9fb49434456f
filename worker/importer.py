"""``ibex import FILE.jsonl|-``: bulk import through the HTTP API with the producers' client.

One JSON object per line, in the write body's shape (``org_id``/``agent_id`` may come from
``--org``/``--agent``; ``idempotency_key`` is optional). Every line gets an idempotency key
derived from its body (``ibex_client.derived_key``) unless it has one, so a rerun after an
interruption sends everything again and the API replays what it had accepted: nothing is
stored twice. Batches of up to 100 lines go out on ``--concurrency`` connections; the client
waits out ``429``/``503`` (``Retry-After``). A line that is not a JSON object, or that the API
(or ``--dry-run``'s local check) refuses, is reported by its number and error code, never its
content, and the import goes on. The file is read whole first (the bar needs the total).
Exit status: 0 when every line was accepted, 1 when some were refused, 130 when interrupted.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ibex_worker.config import Settings
from ibex_worker.errors import ValidationFailed
from ibex_worker.pipeline.validate import validate_request

BATCH_LINES = 100


@dataclass(frozen=True)
class Line:
    number: int
    body: dict[str, Any] | None  # None: not a JSON object
    error: str | None = None


@dataclass
class Tally:
    """Counts per outcome, safe to update from the sending threads."""

    total: int
    outcomes: Counter[str] = field(default_factory=Counter)
    refused: list[tuple[int, str, list[str]]] = field(default_factory=list)  # line, code, fields
    started: float = field(default_factory=time.monotonic)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, outcome: str, line: int | None = None, code: str | None = None,
            fields: Sequence[str] = ()) -> None:
        with self._lock:
            self.outcomes[outcome] += 1
            if code is not None and line is not None:
                self.refused.append((line, code, list(fields)))

    @property
    def done(self) -> int:
        return sum(self.outcomes.values())


def read_lines(source: TextIO, org: str | None, agent: str | None) -> list[Line]:
    lines = []
    for number, raw in enumerate(source, start=1):
        if not raw.strip():
            continue
        try:
            body = json.loads(raw)
        except ValueError:
            lines.append(Line(number, None, "INVALID_JSON"))
            continue
        if not isinstance(body, dict):
            lines.append(Line(number, None, "NOT_AN_OBJECT"))
            continue
        if org:
            body.setdefault("org_id", org)
        if agent:
            body.setdefault("agent_id", agent)
        lines.append(Line(number, body))
    return lines


def _fields(error: Any) -> list[str]:
    return [str(d.get("field")) for d in getattr(error, "details", []) if isinstance(d, dict) and d.get("field")]


def check_locally(lines: Iterable[Line], settings: Settings, tally: Tally) -> None:
    """``--dry-run``: the API's own field checks, with this machine's settings; nothing sent."""
    for line in lines:
        if line.body is None:
            tally.add("bad line", line.number, line.error)
            continue
        body = {k: v for k, v in line.body.items() if k != "idempotency_key"}
        try:
            validate_request(body, settings)
        except ValidationFailed as exc:
            tally.add("refused", line.number, exc.code, [issue.field for issue in exc.issues])
            continue
        tally.add("valid")


def send(client: Any, lines: Sequence[Line], tally: Tally, concurrency: int) -> None:
    """Send the lines in batches on ``concurrency`` threads, tallying each line's outcome."""
    for line in lines:
        if line.body is None:
            tally.add("bad line", line.number, line.error)
    good = [line for line in lines if line.body is not None]
    batches = [good[start:start + BATCH_LINES] for start in range(0, len(good), BATCH_LINES)]

    def one(batch: list[Line]) -> None:
        try:
            results = client.add_many([line.body for line in batch])
        except Exception as exc:  # the whole request failed after the client's retries
            code = getattr(exc, "code", type(exc).__name__)
            for line in batch:
                tally.add("refused", line.number, code)
            return
        for line, result in zip(batch, results, strict=True):
            if result.error is not None:
                tally.add("refused", line.number, result.error.code, _fields(result.error))
            elif result.result.replayed:
                tally.add("already accepted")
            else:
                tally.add("accepted")

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        list(pool.map(one, batches))


@contextmanager
def open_source(path: str) -> Iterator[TextIO]:
    if path == "-":
        yield sys.stdin
        return
    with Path(path).open(encoding="utf-8") as handle:
        yield handle


def run(args: Any, settings: Settings) -> int:
    try:
        from ibex_client import IbexClient
    except ImportError:
        print("ibex import needs the producers' client: pip install ./client", file=sys.stderr)
        return 2
    from rich.console import Console

    console = Console(stderr=True)
    with open_source(args.file) as source:
        lines = read_lines(source, args.org, args.agent)
    tally = Tally(total=len(lines))
    interrupted = False
    with _progress(console, tally, enabled=args.progress):
        try:
            if args.dry_run:
                check_locally(lines, settings, tally)
            else:
                with IbexClient(args.url, args.api_key, timeout=60.0) as client:
                    send(client, lines, tally, args.concurrency)
        except KeyboardInterrupt:  # the batches in flight finished; the others were never sent
            interrupted = True
    console.print(summary(tally, dry_run=args.dry_run))
    if interrupted:
        console.print("interrupted: run the same command again to finish; what was accepted is not stored twice")
        return 130
    ok = {"valid"} if args.dry_run else {"accepted", "already accepted"}
    return 0 if set(tally.outcomes) <= ok else 1


class _progress:
    """A live bar (done/total, lines/s, ETA, counts per outcome) redrawn from the tally."""

    def __init__(self, console: Any, tally: Tally, *, enabled: bool) -> None:
        self.console, self.tally, self.enabled = console, tally, enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> _progress:
        if self.enabled:
            self._thread = threading.Thread(target=self._draw, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _draw(self) -> None:
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                   TimeRemainingColumn)

        columns = (TextColumn("import"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                   TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[counts]}"))
        with Progress(*columns, console=self.console, transient=False) as progress:
            task = progress.add_task("import", total=self.tally.total, rate="", counts="")
            while True:
                stopping = self._stop.wait(0.2)
                elapsed = max(1e-6, time.monotonic() - self.tally.started)
                progress.update(task, completed=self.tally.done, rate=f"{self.tally.done / elapsed:,.0f} lines/s",
                                counts=" ".join(f"{k}: {v}" for k, v in sorted(self.tally.outcomes.items())))
                if stopping:
                    return


def summary(tally: Tally, *, dry_run: bool) -> Any:
    from rich.table import Table

    elapsed = time.monotonic() - tally.started
    table = Table(title="ibex import" + (" (dry run: nothing sent)" if dry_run else ""))
    table.add_column("outcome")
    table.add_column("lines", justify="right")
    for outcome, count in sorted(tally.outcomes.items()):
        table.add_row(outcome, f"{count:,}")
    table.add_row("total", f"{tally.total:,}")
    table.add_row("seconds", f"{elapsed:,.1f}")
    table.add_row("lines/s", f"{tally.done / max(elapsed, 1e-6):,.0f}")
    for line, code, fields in sorted(tally.refused)[:50]:
        table.add_row(f"line {line}", code + (f" ({', '.join(fields)})" if fields else ""))
    if len(tally.refused) > 50:
        table.add_row("…", f"{len(tally.refused) - 50} more refused lines")
    return table
