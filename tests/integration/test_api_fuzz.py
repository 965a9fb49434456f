"""Schemathesis (from PyPI) fuzzes the running server from its own /openapi.json: no 5xx,
and every answer conforms to the document (status codes, headers, content types, bodies;
schema-violating requests rejected; auth enforced). Bounded in examples and time, on
127.0.0.1 only, on a PostgreSQL and Redis of its own so its jobs stay out of the session's.

Excluded check: ``positive_data_acceptance``. JSON Schema cannot state the cross-field rules
the API enforces with a 422 (``valid_until`` later than ``valid_from``, a real calendar date,
labels unique ignoring case, one idempotency key header or two equal ones) nor the key's
scope (403), so schema-valid requests are legitimately refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.api_support import ApiServer
from tests.conftest import Infra, memory, new_scope, start_worker
from ibex_worker import apikeys
from ibex_worker.db import make_engine

MAX_EXAMPLES = 25
SEED = 20261130  # fixed: the same run in CI as on a laptop

_CONFIG = """
[dictionaries.orgs]
values = ["{org}"]

[dictionaries.memories]
values = ["{memory_id}"]

[dictionaries.jobs]
values = ["{job_id}"]

[parameters]
"body.org_id" = {{ dictionary = "orgs", probability = 0.8 }}
"body.items[*].org_id" = {{ dictionary = "orgs", probability = 0.8 }}
"path.memory_id" = {{ dictionary = "memories", probability = 0.7 }}
"path.job_id" = {{ dictionary = "jobs", probability = 0.7 }}

# Link inference off: on this schema schemathesis 4.32.5's stateful engine otherwise stalls
# ("No progress can be made") waiting for a 201 that only a finished job gives.
[phases.stateful.inference]
algorithms = []
"""


def _seed_memory(own: Infra, server: ApiServer, api_key: str, org: str) -> dict[str, str]:
    worker = start_worker(own, "fuzz-seed-worker", concurrency=1)
    try:
        with server.client(api_key) as client:
            response = client.post("/v1/memories", headers={"Prefer": "wait=30"},
                                   json=memory(org, "fuzz-agent", "The fuzzing seed memory lives here."))
    finally:
        worker.stop()
    assert response.status_code == 201, response.text
    return response.json()


def test_schemathesis_finds_no_server_error_and_no_answer_outside_the_schema(tmp_path, servers_path):
    own = Infra(servers_path / "own")
    own.start()
    engine = make_engine(own.pg.url)
    server = None
    try:
        org = new_scope()
        api_key, _ = apikeys.create(engine, org)
        server = ApiServer(own, "api-fuzz")
        seed = _seed_memory(own, server, api_key, org)
        config = tmp_path / "schemathesis.toml"
        config.write_text(_CONFIG.format(org=org, memory_id=seed["memory_id"], job_id=seed["job_id"]))
        command = [str(Path(sys.executable).parent / "schemathesis"), "--config-file", str(config), "run",
                   f"{server.url}/openapi.json", "-H", f"Authorization: Bearer {api_key}",
                   "--checks", "all", "--exclude-checks", "positive_data_acceptance",
                   "--max-examples", str(MAX_EXAMPLES), "--seed", str(SEED), "--workers", "1",
                   "--request-timeout", "40", "--max-failures", "20"]
        run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=280)
        (own.root / "logs" / "schemathesis.txt").write_text(run.stdout + run.stderr)
    finally:
        if server is not None:
            server.stop()
        engine.dispose()
        own.stop()
    summary = run.stdout[run.stdout.rfind("SUMMARY"):]
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "Test cases:" in summary and " passed" in summary
    assert "Server error" not in run.stdout
    print(summary)
