"""docker-compose.yml, checked without a container engine: every service of our image runs a
real `ibex` entry point, every IBEX_ variable it sets is a real setting, infrastructure is
healthchecked and waited for, Flower is bound to localhost only, and every secret comes from
the one .env file through ${VAR:?} (compose refuses to start without it)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from ibex_worker.cli import build_parser
from ibex_worker.config import Settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
OURS = {name: svc for name, svc in SERVICES.items() if svc.get("image", "").startswith("ibex-memory-writer")}
SETTINGS = {f"IBEX_{name.upper()}" for name in Settings.model_fields}


def _argv(command: list[str]) -> list[str]:
    """The `ibex …` argv a service runs, with ${VAR:-default} read as its default."""
    if command[:2] == ["sh", "-c"]:
        script = re.sub(r"\$\$\{[A-Z_]+:-([^}]*)\}", r"\1", command[2])
        command = shlex.split(script.removeprefix("exec "))
    assert command[0] == "ibex", command
    return command[1:]


ENV_EXAMPLE = {line.split("=", 1)[0]: line.split("=", 1)[1] for line in (ROOT / ".env.example").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
_REFERENCE = re.compile(r"\$\{([A-Z_]+):\?[^}]+\}")


def _variables(svc: dict) -> set[str]:
    return set(svc.get("environment", {}))


def _resolved(value: str) -> str:
    """A value as compose runs it with .env.example's values."""
    return _REFERENCE.sub(lambda m: ENV_EXAMPLE[m.group(1)], value)


def test_the_compose_file_has_every_service_of_the_design():
    assert {"postgres", "redis", "migrate", "api", "worker", "escalations", "sweeper", "flower"} <= set(SERVICES)
    assert SERVICES["postgres"]["image"].startswith("pgvector/pgvector:")
    redis_cmd = " ".join(SERVICES["redis"]["command"])
    assert "--appendonly yes" in redis_cmd and "--maxmemory-policy noeviction" in redis_cmd


@pytest.mark.parametrize("name", sorted(OURS))
def test_each_service_runs_a_real_ibex_entry_point(name):
    args = build_parser()[0].parse_args(_argv(OURS[name]["command"]))
    assert args.command


@pytest.mark.parametrize("name", sorted(OURS))
def test_each_ibex_variable_a_service_sets_is_a_real_setting(name):
    ibex_vars = {v for v in _variables(OURS[name]) if v.startswith("IBEX_")}
    assert ibex_vars, "a service of ours with no IBEX_ settings at all is suspicious"
    assert ibex_vars <= SETTINGS, ibex_vars - SETTINGS
    others = {v for v in _variables(OURS[name]) if not v.startswith("IBEX_")}
    assert others <= {"PROMETHEUS_MULTIPROC_DIR"}, others


def test_one_image_serves_every_service_of_ours():
    assert {svc["image"] for svc in OURS.values()} == {"ibex-memory-writer:latest"}
    assert all(svc["build"]["dockerfile"] == "ops/Dockerfile" for svc in OURS.values())
    assert (ROOT / "ops" / "Dockerfile").exists()
    assert "en_core_web_md" in (ROOT / "ops" / "Dockerfile").read_text()


def test_everything_waits_for_a_completed_migration_and_healthy_infrastructure():
    assert SERVICES["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name, svc in OURS.items():
        if name == "migrate":
            continue
        assert svc["depends_on"]["migrate"]["condition"] == "service_completed_successfully", name
    for name, svc in SERVICES.items():
        assert "healthcheck" in svc or name == "migrate", f"{name} has no healthcheck"


def test_flower_is_published_on_localhost_only_and_requires_auth_from_the_env_file():
    ports = SERVICES["flower"]["ports"]
    assert ports and all(str(p).startswith("127.0.0.1:") for p in ports)
    assert "IBEX_FLOWER_BASIC_AUTH" in _variables(SERVICES["flower"])


def test_the_api_gets_the_fingerprint_key_from_the_env_file():
    assert "IBEX_IDEMPOTENCY_FINGERPRINT_KEY" in _variables(SERVICES["api"])


def test_the_workers_get_the_redaction_tag_key_from_the_env_file():
    workers = [name for name, svc in OURS.items() if "worker" in " ".join(map(str, svc.get("command") or []))]
    assert workers
    for name in workers:
        assert "IBEX_PII_TAG_KEY" in _variables(SERVICES[name]), name


def test_services_log_in_as_the_app_role_and_only_migrate_gets_the_owner():
    for name, svc in OURS.items():
        env = svc["environment"]
        assert "://ibex_app:" in env["IBEX_DATABASE_URL"], name
        assert ("IBEX_MIGRATE_DATABASE_URL" in env) == (name == "migrate"), name
        assert not any("IBEX_DB_OWNER_PASSWORD" in str(v) for v in env.values()) or name == "migrate", name
    migrate_env = SERVICES["migrate"]["environment"]
    assert _resolved(migrate_env["IBEX_APP_DATABASE_PASSWORD"]) in _resolved(SERVICES["api"]["environment"]["IBEX_DATABASE_URL"])
    owner = _resolved(SERVICES["postgres"]["environment"]["POSTGRES_PASSWORD"])
    assert f"://ibex:{owner}@" in _resolved(migrate_env["IBEX_MIGRATE_DATABASE_URL"])


def test_every_secret_is_a_required_reference_to_the_one_env_file():
    text = (ROOT / "docker-compose.yml").read_text()
    assert "env_file" not in text
    references = set(_REFERENCE.findall(text))
    assert references == set(ENV_EXAMPLE), references ^ set(ENV_EXAMPLE)
    for line in text.lower().splitlines():  # a secret never stands in the file itself
        if any(word in line for word in ("password", "secret", "_key:", "basic_auth")) and ":" in line \
                and not line.strip().startswith("#"):
            assert "${" in line, line
    assert all("change-me" in value for value in ENV_EXAMPLE.values())
