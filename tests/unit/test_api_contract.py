"""The API's shape without any server: what importing it loads, what its OpenAPI document
promises, how it reads `Prefer`, and the answers it gives before touching PostgreSQL (or
when PostgreSQL cannot be reached at all)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from starlette.testclient import TestClient

from tests.conftest import ROOT, make_settings
from ibex_worker.devstack.ports import free_port

MODEL_LIBRARIES = ("spacy", "presidio_analyzer", "presidio_anonymizer", "torch", "sentence_transformers",
                   "transformers", "thinc")
WELL_FORMED_KEY = "ibex_" + "A" * 43


def _app(**overrides):
    from ibex_api.app import create_app

    # A port nothing listens on: any request that reaches PostgreSQL finds it down.
    url = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/ibex"
    return create_app(make_settings(database_url=url, redis_url=f"redis://127.0.0.1:{free_port()}/0", **overrides))


def test_importing_and_building_the_api_loads_no_model_library():
    code = ("import sys, json; import ibex_api.app; from ibex_worker.config import Settings; "
            "ibex_api.app.create_app(Settings(environment='test')); "
            f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {MODEL_LIBRARIES!r})))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_every_documented_failure_answers_the_error_envelope():
    schema = _app().openapi()
    failures = 0
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                if int(status) < 400:
                    continue
                failures += 1
                ref = response["content"]["application/json"]["schema"]["$ref"]
                assert ref == "#/components/schemas/ErrorEnvelope", (method, path, status)
    assert failures > 20
    assert "HTTPValidationError" not in json.dumps(schema)
    envelope = schema["components"]["schemas"]["ErrorEnvelope"]
    assert set(envelope["required"]) == {"error", "request_id"}


def test_the_write_operations_document_every_answer_of_the_contract():
    responses = _app().openapi()["paths"]["/v1/memories"]["post"]["responses"]
    assert set(responses) == {"201", "202", "401", "403", "409", "413", "422", "429", "500", "503"}
    assert responses["202"]["headers"]["Location"]["required"] is True
    assert responses["429"]["headers"]["Retry-After"]["required"] is True
    assert responses["503"]["headers"]["Retry-After"]["required"] is True
    batch = _app().openapi()["paths"]["/v1/memories:batch"]["post"]["responses"]
    assert {"202", "207", "401", "422"} <= set(batch)


def test_request_schemas_state_the_bounds_in_force():
    schema = _app(content_max_chars=123, scope_id_max_chars=40).openapi()
    memory = schema["components"]["schemas"]["MemoryIn"]
    assert memory["required"] == ["org_id", "agent_id", "content", "source"]
    assert memory["additionalProperties"] is False
    assert memory["properties"]["content"]["maxLength"] == 123
    assert memory["properties"]["org_id"]["maxLength"] == 40
    assert schema["components"]["schemas"]["BatchIn"]["properties"]["items"]["maxItems"] == 100
    assert "idempotency_key" in schema["components"]["schemas"]["BatchItem"]["properties"]


@pytest.mark.parametrize(("header", "expected"), [
    (None, None), ("", None), ("wait=5", 5), ("respond-async, wait=10", 10), ("WAIT = 7", 7),
    ("wait=100", 30), ("wait=0", None), ("wait=abc", None), ("wait=-3", None), ('wait="4"', 4),
    ("handling=lenient; wait=5", None),
])
def test_prefer_wait_is_read_as_rfc_7240_asks_and_capped(header, expected):
    from ibex_api.routes.memories import prefer_wait

    assert prefer_wait(header, 30) == expected


def test_a_request_without_a_key_answers_401_in_the_envelope():
    with TestClient(_app()) as client:
        response = client.post("/v1/memories", json={"org_id": "acme"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    body = response.json()
    assert body["error"]["code"] == "UNAUTHENTICATED"
    assert body["request_id"] == response.headers["x-request-id"]


def test_a_declared_body_over_the_limit_answers_413_before_anything_else():
    with TestClient(_app(max_request_bytes=1024)) as client:
        response = client.post("/v1/memories", content=b"x" * 5000,
                               headers={"Authorization": f"Bearer {WELL_FORMED_KEY}"})
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert response.json()["request_id"] == response.headers["x-request-id"]


def test_postgres_unreachable_at_authentication_answers_503_never_401():
    headers = {"Authorization": f"Bearer {WELL_FORMED_KEY}"}
    body = {"org_id": "acme", "agent_id": "bot", "content": "x", "source": "chat"}
    with TestClient(_app()) as client:
        plain = client.post("/v1/memories", json=body, headers=headers)
        keyed = client.post("/v1/memories", json=body, headers={**headers, "X-Idempotency-Key": "k-1"})
        read = client.get("/v1/jobs/00000000-0000-0000-0000-000000000000", headers=headers)
    assert (plain.status_code, plain.json()["error"]["code"]) == (503, "UNAVAILABLE")
    assert (keyed.status_code, keyed.json()["error"]["code"]) == (503, "IDEMPOTENCY_UNAVAILABLE")
    assert (read.status_code, read.json()["error"]["code"]) == (503, "UNAVAILABLE")
    assert all(r.headers["retry-after"] == "2" for r in (plain, keyed, read))


def test_unknown_routes_and_methods_answer_the_envelope():
    with TestClient(_app()) as client:
        missing = client.get("/v1/nothing-here")
        wrong_method = client.delete("/v1/memories")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "NOT_FOUND")
    assert (wrong_method.status_code, wrong_method.json()["error"]["code"]) == (405, "METHOD_NOT_ALLOWED")
    assert wrong_method.headers["allow"] == "POST"


def test_an_unhandled_error_answers_a_bare_500_that_echoes_nothing(capsys):
    canary = "canary-4b1d-secret-content"
    app = _app()

    async def explode() -> None:
        raise ValueError(f"something about {canary}")

    app.add_api_route("/explode", explode, methods=["GET"])
    with TestClient(app) as client:
        response = client.get("/explode")
    assert response.status_code == 500
    assert response.json() == {"error": {"code": "INTERNAL", "message": "internal error"},
                               "request_id": response.headers["x-request-id"]}
    assert canary not in response.text
    captured = capsys.readouterr()
    assert canary not in captured.out + captured.err
