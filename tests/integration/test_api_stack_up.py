"""`ibex up` serves the HTTP API, prints its URL and a development API key, and prints the
same key again on the next start (kept in <data_dir>/dev-api-key, mode 0600)."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time

import httpx

from tests.conftest import ROOT
from ibex_worker.devstack.ports import free_ports


def _wait_for(path, pattern, proc, timeout=150.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = re.search(pattern, path.read_text(errors="replace"))
        if match:
            return match
        assert proc.poll() is None, path.read_text(errors="replace")[-3000:]
        time.sleep(0.3)
    raise AssertionError(f"never saw {pattern!r}:\n{path.read_text(errors='replace')[-3000:]}")


def _up(env, out):
    with open(out, "wb") as log:
        return subprocess.Popen([sys.executable, "-m", "ibex_worker.cli", "up"], env=env, cwd=ROOT, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)


def _stop(up):
    if up.poll() is None:
        os.killpg(up.pid, signal.SIGINT)
    return up.wait(60)


def test_ibex_up_serves_the_api_and_prints_a_development_key_it_reuses(tmp_path, servers_path):
    pg_port, redis_port, api_port = free_ports(3)
    data_dir = servers_path / "stack"
    env = {k: v for k, v in os.environ.items() if not k.startswith("IBEX_")}
    env.update(IBEX_DATA_DIR=str(data_dir), IBEX_EMBEDDED_PG_PORT=str(pg_port),
               IBEX_EMBEDDED_REDIS_PORT=str(redis_port), IBEX_API_PORT=str(api_port), IBEX_WORKER_CONCURRENCY="1")
    first = _up(env, tmp_path / "up1.log")
    try:
        _wait_for(tmp_path / "up1.log", r"IBEX stack is up", first)
        url = _wait_for(tmp_path / "up1.log", r"API\s+(http://127\.0\.0\.1:\d+)", first).group(1)
        key = _wait_for(tmp_path / "up1.log", r"API key\s+(ibex_\S+)", first).group(1)
        assert url == f"http://127.0.0.1:{api_port}"
        key_file = data_dir / "dev-api-key"
        assert key_file.read_text().strip() == key
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        deadline = time.monotonic() + 60
        while True:
            try:
                ready = httpx.get(f"{url}/readyz", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the API never listened"
                time.sleep(0.3)
        assert ready.status_code == 200
        written = httpx.post(f"{url}/v1/memories", headers={"Authorization": f"Bearer {key}", "Prefer": "wait=30"},
                             json={"org_id": "acme", "agent_id": "support-bot", "source": "chat",
                                   "content": "User prefers Python for data work"}, timeout=60)
        assert written.status_code in (201, 202), written.text
    finally:
        assert _stop(first) == 0, (tmp_path / "up1.log").read_text(errors="replace")[-3000:]

    second = _up(env, tmp_path / "up2.log")
    try:
        again = _wait_for(tmp_path / "up2.log", r"API key\s+(ibex_\S+)", second).group(1)
    finally:
        _stop(second)
    assert again == key
