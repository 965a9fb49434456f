"""``ibex import``: a JSONL file written through a real ``ibex api`` process with the producers'
client. Interrupted and run again, it ends with exactly one job per good line; bad lines are
reported by number and code, never content, and do not stop it; a third run adds nothing;
``--dry-run`` sends nothing. On a PostgreSQL and Redis of the test's own, with no worker: the
jobs stay queued, which is all an import promises."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from tests.api_support import ApiServer
from tests.conftest import ROOT, new_scope, query, wait_until
from ibex_worker import apikeys
from ibex_worker.importer import BATCH_LINES

LINES = 2000
CANARY = f"canary-{uuid.uuid4().hex[:10]}"
BAD = {6: f'{{"content": "{CANARY} never closed', 700: f'["{CANARY}"]', 1500: json.dumps(
    {"content": "", "source": f"import {CANARY}"})}


def _write_file(path: Path, org: str) -> Path:
    with path.open("w", encoding="utf-8") as out:
        good = 0
        for number in range(1, LINES + len(BAD) + 1):
            if number in BAD:
                out.write(BAD[number] + "\n")
                continue
            out.write(json.dumps({"org_id": org, "content": f"Pallet {good} of order SO-{good:06d} ships from dock "
                                                            f"{good % 12 + 1}.", "source": "import"}) + "\n")
            good += 1
    return path


def _import(infra, server: ApiServer, key: str, org: str, path: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ibex_worker.cli", "import", str(path), "--url", server.url,
                             "--api-key", key, "--org", org, "--agent", "agent-import", *extra],
                            env=infra.env(), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=_ctrl_c_as_at_a_terminal)


def _ctrl_c_as_at_a_terminal() -> None:
    """A suite started in the background (``make test &``) ignores SIGINT, and a child inherits
    that: Python then never turns Ctrl-C into KeyboardInterrupt. The import gets it back."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _jobs(engine, org: str) -> int:
    return query(engine, "SELECT count(*) AS n FROM memory_write_jobs WHERE org_id = :o", o=org)[0].n


def test_an_interrupted_import_run_again_ends_with_one_job_per_good_line(own_infra, own_engine, tmp_path):
    org = new_scope()
    key, _ = apikeys.create(own_engine, org)
    path = _write_file(tmp_path / "memories.jsonl", org)
    server = ApiServer(own_infra, "api-import", backlog_limit=100_000, org_backlog_limit=100_000,
                       queue_validate=f"ibex.test.{org}.validate")
    try:
        dry = _import(own_infra, server, key, org, path, "--dry-run", "--no-progress")
        dry_output, _ = dry.communicate(timeout=120)
        after_dry = _jobs(own_engine, org)
        first = _import(own_infra, server, key, org, path, "--concurrency", "2")
        assert wait_until(lambda: _jobs(own_engine, org) >= BATCH_LINES, timeout=120, interval=0.02)
        first.send_signal(signal.SIGSTOP)  # frozen mid-run, it cannot finish before Ctrl-C reaches it
        running_when_stopped = first.poll() is None
        first.send_signal(signal.SIGINT)
        first.send_signal(signal.SIGCONT)
        first_output, _ = first.communicate(timeout=60)
        interrupted_at = _jobs(own_engine, org)
        second = _import(own_infra, server, key, org, path, "--no-progress")
        second_output, _ = second.communicate(timeout=300)
        third = _import(own_infra, server, key, org, path, "--no-progress")
        third_output, _ = third.communicate(timeout=300)
    finally:
        server.stop()

    assert dry.returncode == 1 and "dry run" in dry_output and after_dry == 0
    assert "line 1500" in dry_output and "VALIDATION_ERROR (content)" in dry_output
    assert running_when_stopped and BATCH_LINES <= interrupted_at < LINES
    assert first.returncode == 130 and "run the same command again" in first_output
    assert second.returncode == 1, second_output  # three bad lines
    assert "line 6" in second_output and "INVALID_JSON" in second_output
    assert "line 700" in second_output and "NOT_AN_OBJECT" in second_output
    assert "line 1500" in second_output and "VALIDATION_ERROR (content)" in second_output
    for output in (dry_output, second_output, third_output):
        assert CANARY not in output and "Pallet" not in output
    assert _jobs(own_engine, org) == LINES
    assert re.search(rf"already accepted\s*│\s*{LINES:,}\s*│", third_output), third_output
    assert not re.search(r"(?<!already )accepted\s*│", third_output), third_output
