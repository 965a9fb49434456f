"""Test support for the HTTP API: a real ``ibex api`` (uvicorn) process on a free port
against a real PostgreSQL and Redis, API keys, and small request helpers.

Import the fixtures into a test module (``from tests.api_support import api, make_key``);
conftest.py stays as it is.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import Infra, Proc
from ibex_worker.devstack.ports import free_port

UUID_RE = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"


class ApiServer:
    """``python -m ibex_worker.cli api`` with its own log file, ready when /healthz answers."""

    def __init__(self, infra: Infra, name: str, **overrides: Any) -> None:
        self.infra = infra
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = Proc(infra, ["api", "--port", str(self.port)], name, infra.env(**overrides))
        self.wait_ready()

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.popen.poll() is not None:
                raise RuntimeError(f"{self.proc.name} exited:\n{self.proc.log_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass  # not listening yet
            time.sleep(0.2)
        raise TimeoutError(f"{self.proc.name} never answered /healthz:\n{self.proc.log_text()[-3000:]}")

    def client(self, key: str | None = None, **kwargs: Any) -> httpx.Client:
        headers = {**kwargs.pop("headers", {}), **({"Authorization": f"Bearer {key}"} if key else {})}
        return httpx.Client(base_url=self.url, headers=headers, timeout=kwargs.pop("timeout", 60.0), **kwargs)

    def log_text(self) -> str:
        return self.proc.log_text()

    def stop(self) -> None:
        self.proc.stop()


@pytest.fixture(scope="session")
def api(infra: Infra) -> Iterator[ApiServer]:
    """The API on the session's PostgreSQL and Redis with default settings (default queues:
    a test that needs its jobs finished also asks for the ``pipeline`` worker)."""
    server = ApiServer(infra, "api")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def make_key(engine: Any) -> Callable[..., str]:
    """Create an API key through ``ibex_worker.apikeys`` (what ``ibex keys create`` calls)."""
    from ibex_worker import apikeys

    def create(org: str, agents: list[str] | None = None) -> str:
        key, _ = apikeys.create(engine, org, agents)
        return key

    return create


def new_key() -> str:
    return f"key-{uuid.uuid4().hex}"


def wait_for_job(client: httpx.Client, job_id: str, timeout: float = 90.0) -> dict[str, Any]:
    """Poll ``GET /v1/jobs/{id}`` until the job is finished."""
    deadline = time.monotonic() + timeout
    while True:
        view = client.get(f"/v1/jobs/{job_id}").json()
        if view.get("status") in ("succeeded", "failed"):
            return view
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} did not finish in {timeout}s: {view}")
        time.sleep(0.2)


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The error envelope of API.md, with the request id in the body and the header."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert body["request_id"] == response.headers["x-request-id"]
    return body
