"""Migrations: all up, all down, all up again on an empty database; the runner's record
matches golang-migrate's; invariants that live in SQL hold."""

from __future__ import annotations

import uuid

import psycopg
import pytest

from ibex_worker import migrate

TABLES = {"memories", "memory_labels", "memory_relationships", "memory_conflict_escalations",
          "memory_write_jobs", "memory_idempotency_keys", "api_keys", "memory_agent_corpus",
          "memory_lexical_band_counts", "entities", "entity_aliases", "entity_relationships", "entity_trigrams"}


@pytest.fixture
def empty_db(infra):
    name = f"mig_{uuid.uuid4().hex[:10]}"
    admin = f"host=127.0.0.1 port={infra.pg.port} user=postgres dbname=postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield infra.pg.url.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def _tables(url):
    with psycopg.connect(migrate.libpq_url(url)) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return {r[0] for r in rows} - {"schema_migrations"}


def _version(url):
    with psycopg.connect(migrate.libpq_url(url)) as conn:
        return conn.execute("SELECT version, dirty FROM schema_migrations").fetchall()


def test_all_up_all_down_all_up_again_on_an_empty_database(empty_db):
    latest = max(m.version for m in migrate.discover())
    assert migrate.up(empty_db) == [m.version for m in migrate.discover()]
    assert TABLES <= _tables(empty_db)
    assert _version(empty_db) == [(latest, False)]
    assert migrate.is_current(empty_db)

    assert migrate.down(empty_db) == [m.version for m in reversed(migrate.discover())]
    assert _tables(empty_db) == set()
    assert _version(empty_db) == []

    assert migrate.up(empty_db) == [m.version for m in migrate.discover()]
    assert TABLES <= _tables(empty_db)
    assert migrate.up(empty_db) == []  # already current: nothing to do


def test_every_migration_has_an_up_and_a_down_file_named_golang_migrate_style():
    names = sorted(p.name for p in migrate.MIGRATIONS_DIR.iterdir())
    assert names, "no migrations found"
    for m in migrate.discover():
        assert m.up.name == f"{m.version:06d}_{m.name}.up.sql"
        assert m.down.name == f"{m.version:06d}_{m.name}.down.sql"
    assert len(names) == 2 * len(migrate.discover())


def test_every_tenant_table_has_row_level_security_and_an_org_id(empty_db):
    migrate.up(empty_db)
    with psycopg.connect(migrate.libpq_url(empty_db)) as conn:
        rls = dict(conn.execute("SELECT relname, relrowsecurity FROM pg_class WHERE relname = ANY(%s)",
                                (list(TABLES),)).fetchall())
        org_cols = {r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'org_id' "
            "AND table_schema = 'public'").fetchall()}
    assert rls == {t: True for t in TABLES}
    assert TABLES <= org_cols


def test_the_tenant_role_sees_only_the_transaction_org(empty_db):
    migrate.up(empty_db)
    with psycopg.connect(migrate.libpq_url(empty_db)) as conn:
        for org in ("org-a", "org-b"):
            conn.execute("INSERT INTO memory_agent_corpus (org_id, agent_id) VALUES (%s, 'agent')", (org,))
        conn.execute("SELECT set_config('role', 'ibex_tenant', true), set_config('ibex.org_id', 'org-a', true)")
        visible = conn.execute("SELECT org_id FROM memory_agent_corpus").fetchall()
        assert visible == [("org-a",)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO memory_agent_corpus (org_id, agent_id) VALUES ('org-b', 'other')")


def test_the_partial_unique_index_allows_one_active_copy_only(empty_db):
    migrate.up(empty_db)
    digest = "a" * 64
    insert = ("INSERT INTO memories (org_id, agent_id, content, content_hash, source, status) "
              "VALUES ('o', 'a', 'x', %s, 'chat', %s)")
    with psycopg.connect(migrate.libpq_url(empty_db), autocommit=True) as conn:
        conn.execute(insert, (digest, "active"))
        conn.execute(insert, (digest, "superseded"))  # a superseded copy frees the hash
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute(insert, (digest, "active"))
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(insert, ("b" * 64, "pending_review"))


def test_what_metrics_and_back_pressure_count_is_read_from_indexes_not_whole_tables(empty_db):
    from sqlalchemy import text

    from ibex_worker.db import make_engine
    from ibex_worker.store import escalations, jobs

    migrate.up(empty_db)
    engine = make_engine(empty_db)
    statements = [(escalations._COUNT_UNRESOLVED.text, {"org_ids": []}), (jobs._UNFINISHED_BY_STAGE.text, {}),
                  (jobs._SECONDS_WITHOUT_PROGRESS.text, {}), (jobs._COUNT_UNFINISHED.text, {}),
                  (jobs._COUNT_UNFINISHED_OF.text, {"org_id": "org-x"})]
    try:
        with engine.connect() as conn:
            conn.execute(text("SET enable_seqscan = off"))  # an empty table: what an index would answer
            plans = ["\n".join(row[0] for row in conn.execute(text(f"EXPLAIN {sql}"), params))
                     for sql, params in statements]
    finally:
        engine.dispose()
    assert [plan for plan in plans if "Seq Scan" in plan] == []
    assert "memory_conflict_escalations_unresolved" in plans[0]
    assert "memory_write_jobs_org_unfinished" in plans[4]  # not the primary key: that holds finished jobs too


def test_a_built_wheel_installed_in_a_fresh_venv_migrates_from_its_own_files(empty_db, tmp_path):
    """The wheel carries the migrations (ibex_worker.migrations): its ``ibex migrate``, run
    outside the checkout, applies every one. The fresh venv takes the dependencies from the
    project's environment (a path entry), the project itself only from the wheel."""
    import json
    import subprocess
    import sys
    import sysconfig
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path / "dist"), str(root)], check=True, capture_output=True, timeout=300)
    [wheel] = (tmp_path / "dist").glob("ibex_memory_writer-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("ibex_worker/migrations/"))
    assert shipped == sorted(p.name for p in migrate.MIGRATIONS_DIR.glob("*.sql"))
    assert not any(n.startswith(("tests/", "client/", "ops/")) for n in names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
                    "--no-deps", str(wheel)], check=True, capture_output=True, timeout=300)
    [site] = (venv / "lib").glob("python3.*/site-packages")
    (site / "project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "IBEX_ENVIRONMENT": "test", "IBEX_DATABASE_URL": empty_db,
           "IBEX_LOG_FORMAT": "json"}
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import ibex_worker.migrate as m; "
                            "print(m.__file__); print(m.MIGRATIONS_DIR)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, check=True).stdout.split()
    migrated = subprocess.run([str(venv / "bin" / "ibex"), "migrate"], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120)
    version = subprocess.run([str(venv / "bin" / "ibex"), "--version"], cwd=tmp_path, env=env, capture_output=True,
                             text=True, check=True).stdout

    assert all(path.startswith(str(site)) for path in where), where
    assert migrated.returncode == 0, migrated.stderr[-2000:]
    assert json.loads(migrated.stdout.strip().splitlines()[-1])["migrations"] == [m.version for m in migrate.discover()]
    assert _version(empty_db) == [(max(m.version for m in migrate.discover()), False)]
    assert version.strip().startswith("ibex 0.") and "not installed" not in version


def test_entity_trigram_rows_are_filled_for_entities_stored_before_them(empty_db):
    migrate.up(empty_db)
    migrate.down(empty_db, steps=1)  # back to before entity_trigrams
    with psycopg.connect(migrate.libpq_url(empty_db), autocommit=True) as conn:
        conn.execute("INSERT INTO entities (org_id, name, key, key_trigrams, created_by) VALUES "
                     "('o', 'Atlas', 'atlas', ARRAY[' at', 'atl', 'tla', 'las', 'as '], 'cli:test')")
    migrate.up(empty_db)
    with psycopg.connect(migrate.libpq_url(empty_db)) as conn:
        rows = conn.execute("SELECT org_id, trigram, size FROM entity_trigrams ORDER BY trigram").fetchall()
    assert rows == [("o", " at", 5), ("o", "as ", 5), ("o", "atl", 5), ("o", "las", 5), ("o", "tla", 5)]


def test_the_entity_lookup_reads_by_primary_keys_as_the_tenant_role(empty_db):
    """As the tenant role, under row-level security: the trigram rows and the entities found
    through their primary keys, never every entity of the org (the GIN index's ``&&`` could not
    serve this role)."""
    from ibex_worker.store import entities

    migrate.up(empty_db)
    params = {"org_id": "org-a", "id": "00000000-0000-0000-0000-000000000000", "trigrams": [" at", "atl", "las"],
              "probe": 2, "fewest": 2, "most": 5, "cap": 1000, "count": 3, "limit": 50}
    sql = entities._ALIKE.text
    for name in params:
        sql = sql.replace(f":{name}", f"%({name})s")
    with psycopg.connect(migrate.libpq_url(empty_db)) as conn:
        conn.execute("SET enable_seqscan = off")  # empty tables: what an index would answer
        conn.execute("SELECT set_config('role', 'ibex_tenant', true), set_config('ibex.org_id', 'org-a', true)")
        plan = "\n".join(row[0] for row in conn.execute(f"EXPLAIN {sql}", params).fetchall())
    assert "Seq Scan" not in plan
    assert "entity_trigrams_pkey" in plan and "entities_pkey" in plan
