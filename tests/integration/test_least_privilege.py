"""The services' login, ``ibex_app``: it owns nothing and inherits nothing, so outside the
per-transaction switch to ``ibex_tenant`` (one org's rows) or ``ibex_maint`` it reads no
table; it cannot become the owner, change the schema, or read another org's rows as a
tenant. Row-level security is forced on every table that has it."""

from __future__ import annotations

import subprocess
import sys

import psycopg
import pytest
from sqlalchemy import text

from tests.conftest import ROOT, new_scope, query
from ibex_worker.migrate import libpq_url


@pytest.fixture
def app_conn(infra):
    with psycopg.connect(libpq_url(infra.pg.app_url), autocommit=True) as conn:
        yield conn


@pytest.fixture
def stored(engine):
    """Two orgs with one memory each, written by the owner."""
    orgs = [new_scope(), new_scope()]
    with engine.begin() as conn:
        for org in orgs:
            conn.execute(text("INSERT INTO memories (org_id, agent_id, content, content_hash, source) "
                              "VALUES (:o, 'agent-lp', 'The printer is on floor two.', repeat('d', 64), 'chat')"),
                         {"o": org})
    return orgs


def _denied(conn, sql: str) -> bool:
    try:
        with conn.transaction():  # a savepoint inside a transaction: a refusal rolls back to it
            conn.execute(sql)
    except (psycopg.errors.InsufficientPrivilege, psycopg.errors.UndefinedObject):
        return True
    return False


def test_the_app_login_reads_nothing_until_it_switches_role(app_conn, stored):
    assert app_conn.execute("SELECT current_user").fetchone()[0] == "ibex_app"
    for table in ("memories", "memory_write_jobs", "api_keys", "memory_conflict_escalations"):
        assert _denied(app_conn, f"SELECT count(*) FROM {table}"), table
    assert app_conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == 1  # readiness only


def test_as_a_tenant_it_sees_its_org_alone_and_without_the_setting_no_org(app_conn, stored):
    mine, other = stored
    with app_conn.transaction():
        app_conn.execute("SELECT set_config('role', 'ibex_tenant', true)")
        assert app_conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0  # no org set: nothing
        app_conn.execute("SELECT set_config('ibex.org_id', %s, true)", (mine,))
        rows = app_conn.execute("SELECT org_id FROM memories WHERE org_id IN (%s, %s)", (mine, other)).fetchall()
        assert rows == [(mine,)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # a row of another org is refused
            app_conn.execute("INSERT INTO memories (org_id, agent_id, content, content_hash, source) "
                             "VALUES (%s, 'a', 'x', repeat('e', 64), 'chat')", (other,))


def test_it_cannot_become_the_owner_or_change_the_schema(app_conn):
    app_conn.execute("SET ROLE ibex_tenant")
    app_conn.execute("RESET ROLE")  # back to ibex_app, never further
    assert app_conn.execute("SELECT current_user").fetchone()[0] == "ibex_app"
    assert _denied(app_conn, "SELECT count(*) FROM memories")
    for statement in ("SET ROLE postgres", "SET SESSION AUTHORIZATION postgres", "CREATE TABLE lp_probe (x int)",
                      "ALTER TABLE memories ADD COLUMN lp_probe int", "DROP TABLE memories",
                      "ALTER TABLE memories DISABLE ROW LEVEL SECURITY", "GRANT ibex_maint TO PUBLIC"):
        assert _denied(app_conn, statement), statement
    with app_conn.transaction():
        app_conn.execute("SET LOCAL ROLE ibex_maint")
        assert _denied(app_conn, "ALTER TABLE memories ADD COLUMN lp_probe int")
        assert _denied(app_conn, "TRUNCATE memories")


def test_every_table_with_row_level_security_forces_it_and_every_tenant_table_has_it(engine):
    rows = query(engine, "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity FROM pg_class c "
                         "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'org_id' "
                         "WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'")
    assert rows and [r.relname for r in rows if not (r.relrowsecurity and r.relforcerowsecurity)] == []
    owners = query(engine, "SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class "
                           "WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'")
    assert "ibex_app" not in [r.owner for r in owners]


def test_migrate_runs_as_the_owner_url_and_gives_the_app_login_its_password(infra, engine):
    env = infra.env(app_database_password="lp-test-password-0123456789")
    try:
        done = subprocess.run([sys.executable, "-m", "ibex_worker.cli", "migrate", "up"], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "lp-test-password" not in done.stdout + done.stderr
        [row] = query(engine, "SELECT rolpassword LIKE 'SCRAM-SHA-256$%' AS hashed FROM pg_authid "
                              "WHERE rolname = 'ibex_app'")
        assert row.hashed
    finally:
        with engine.begin() as conn:
            conn.execute(text("ALTER ROLE ibex_app PASSWORD NULL"))
