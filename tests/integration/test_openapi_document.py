"""The committed OpenAPI document (api/openapi.json, ``make openapi``) is what the running
server answers at /openapi.json: a change to the API that was not exported fails here."""

from __future__ import annotations

import json

import httpx

from tests.api_support import api  # noqa: F401
from tests.conftest import ROOT


def test_the_committed_openapi_document_is_the_live_one(api):
    committed = json.loads((ROOT / "api" / "openapi.json").read_text(encoding="utf-8"))
    live = httpx.get(f"{api.url}/openapi.json", timeout=30).json()
    assert live == committed, "api/openapi.json is stale: run `make openapi`"
    assert {"/v1/memories", "/v1/memories:batch", "/v1/jobs/{job_id}"} <= set(committed["paths"])
