"""`ibex up` (what `make run` calls): the whole stack in the foreground, a refusal to start
twice on one data folder, and a clean stop on Ctrl-C that leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil

from tests.conftest import ROOT
from ibex_worker.devstack.ports import free_ports


def _wait_for(path, needle, proc, timeout=150.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if needle in path.read_text(errors="replace"):
            return
        assert proc.poll() is None, path.read_text(errors="replace")[-3000:]
        time.sleep(0.3)
    raise AssertionError(f"never saw {needle!r}:\n{path.read_text(errors='replace')[-3000:]}")


def _flower_lists_the_pipeline_tasks(out, data_dir, job_id):
    """Flower, started by the stack with basic auth, shows the stage task of the write (its
    arguments are the job id, never content) and refuses a request without credentials."""
    import re

    import httpx

    url = re.search(r"Flower\s+(http://\S+)", out.read_text()).group(1)
    user, password = (data_dir / "flower-auth").read_text().strip().split(":", 1)
    assert httpx.get(f"{url}/api/tasks", timeout=10).status_code == 401
    deadline = time.monotonic() + 30
    names: set[str] = set()
    while time.monotonic() < deadline:
        answer = httpx.get(f"{url}/api/tasks", auth=(user, password), timeout=10)
        if answer.status_code == 200:
            tasks = answer.json().values()
            names = {t.get("name") for t in tasks}
            # One worker on every queue carries the write through all stages in the validate delivery.
            done = [t for t in tasks if t.get("name") == "ibex.stage.validate" and job_id in str(t.get("args"))]
            if done and done[0].get("state") == "SUCCESS":
                assert "Python" not in str(done[0].get("args")) + str(done[0].get("kwargs"))
                return
        time.sleep(0.5)
    raise AssertionError(f"Flower never listed the pipeline's tasks: {sorted(filter(None, names))}")


def _processes_using(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and marker in " ".join(proc.info["cmdline"] or []):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def test_ibex_up_runs_the_stack_refuses_a_second_copy_and_stops_cleanly(tmp_path, servers_path):
    pg_port, redis_port = free_ports(2)
    data_dir = servers_path / "stack"
    env = {k: v for k, v in os.environ.items() if not k.startswith("IBEX_")}
    env.update(IBEX_DATA_DIR=str(data_dir), IBEX_EMBEDDED_PG_PORT=str(pg_port),
               IBEX_EMBEDDED_REDIS_PORT=str(redis_port), IBEX_WORKER_CONCURRENCY="1")
    out = tmp_path / "up.log"
    with open(out, "wb") as log:
        up = subprocess.Popen([sys.executable, "-m", "ibex_worker.cli", "up"], env=env, cwd=ROOT, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for(out, "IBEX stack is up", up)
        _wait_for(out, " ready.", up)

        second = subprocess.run([sys.executable, "-m", "ibex_worker.cli", "up"], env=env, cwd=ROOT,
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 3
        assert "already running" in second.stderr

        client_env = {**env, "IBEX_DATABASE_URL": f"postgresql+psycopg://postgres@127.0.0.1:{pg_port}/ibex",
                      "IBEX_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0"}
        submitted = subprocess.run(
            [sys.executable, "-m", "ibex_worker.cli", "submit", "--org", "acme", "--agent", "support-bot",
             "--source", "chat", "--content", "User prefers Python for data work", "--wait", "60"],
            env=client_env, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr
        view = json.loads(submitted.stdout)
        assert view["status"] == "succeeded" and view["outcome"] == "created" and view["memory_id"]
        _flower_lists_the_pipeline_tasks(out, data_dir, view["job_id"])
        descendants = psutil.Process(up.pid).children(recursive=True)
        assert len(descendants) >= 3  # worker (+ pool children), sweeper, redis, postgres
    finally:
        if up.poll() is None:
            os.killpg(up.pid, signal.SIGINT)  # what Ctrl-C sends to the foreground group
        up.wait(60)

    assert up.returncode == 0, out.read_text(errors="replace")[-3000:]
    time.sleep(1)
    assert _processes_using(str(data_dir)) == []  # postgres -D <data_dir>/pgdata
    assert _processes_using(f"127.0.0.1:{redis_port}") == []
    survivors = [p for p in descendants if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert survivors == []
