"""The migration runner: plain SQL files under ``schema/migrations`` named golang-migrate
style (``000001_init.up.sql`` / ``.down.sql``), applied in order under an advisory lock and
recorded in golang-migrate's own ``schema_migrations`` table (one row: version, dirty), so
the same files and database also work with the ``migrate`` tool. After the files, ``up`` loads
the embedding centroids the package ships (``ibex_worker.adapters.centroids``), which SQL files cannot
carry; with the ``migrate`` tool, run ``ibex migrate`` once after it to load them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import psycopg.sql
import structlog

from ibex_worker.adapters import centroids

log = structlog.get_logger("ibex.migrate")

def _migrations_dir() -> Path:
    """Installed from a wheel, the migrations are the package ``ibex_worker.migrations``; in a
    checkout, ``schema/migrations`` beside ``worker/``."""
    installed = Path(__file__).resolve().parent / "migrations"
    return installed if installed.is_dir() else Path(__file__).resolve().parent.parent / "schema" / "migrations"


MIGRATIONS_DIR = _migrations_dir()
_NAME = re.compile(r"^(\d+)_([a-z0-9_]+)\.(up|down)\.sql$")
_LOCK_KEY = 0x1BE7_0001  # advisory lock id shared by every ibex migrate run
_VERSION = "SELECT version, dirty FROM schema_migrations LIMIT 1"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    up: Path
    down: Path


def discover(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    found: dict[int, dict[str, Path | str]] = {}
    for path in directory.iterdir():
        match = _NAME.match(path.name)
        if match:
            entry = found.setdefault(int(match.group(1)), {"name": match.group(2)})
            entry[match.group(3)] = path
    migrations = []
    for version in sorted(found):
        entry = found[version]
        if "up" not in entry or "down" not in entry:
            raise RuntimeError(f"migration {version} needs both an up and a down file")
        migrations.append(Migration(version, str(entry["name"]), Path(entry["up"]), Path(entry["down"])))
    return migrations


def libpq_url(url: str) -> str:
    return re.sub(r"^postgresql\+\w+://", "postgresql://", url)


def current_version(conn: psycopg.Connection) -> tuple[int | None, bool]:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version bigint NOT NULL PRIMARY KEY, dirty boolean NOT NULL)")
    row = conn.execute(_VERSION).fetchone()
    return (int(row[0]), bool(row[1])) if row else (None, False)


def clean_version(engine: Any) -> int | None:
    """The version the database is migrated to, read through a service's SQLAlchemy engine;
    None when it was never migrated or is dirty. Raises when ``schema_migrations`` is missing
    or the database is unreachable."""
    with engine.connect() as conn:
        row = conn.exec_driver_sql(_VERSION).first()
    return None if row is None or row.dirty else int(row.version)


def _set_version(conn: psycopg.Connection, version: int | None, dirty: bool) -> None:
    conn.execute("DELETE FROM schema_migrations")
    if version is not None:
        conn.execute("INSERT INTO schema_migrations (version, dirty) VALUES (%s, %s)", (version, dirty))


def up(url: str, directory: Path = MIGRATIONS_DIR) -> list[int]:
    applied = []
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
        try:
            version, dirty = current_version(conn)
            if dirty:
                raise RuntimeError(f"database is dirty at migration {version}; fix it by hand, then force the version")
            for migration in discover(directory):
                if version is not None and migration.version <= version:
                    continue
                _apply(conn, migration.up, migration.version)
                applied.append(migration.version)
                log.info("migration_applied", version=migration.version, name=migration.name, direction="up")
            if _has_table(conn, "embedding_centroids"):
                centroids.ensure(conn)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return applied


def _has_table(conn: psycopg.Connection, name: str) -> bool:
    return conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()[0]


def down(url: str, steps: int | None = None, directory: Path = MIGRATIONS_DIR) -> list[int]:
    reverted = []
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
        try:
            version, _ = current_version(conn)
            todo = [m for m in reversed(discover(directory)) if version is not None and m.version <= version]
            for i, migration in enumerate(todo[:steps] if steps else todo):
                previous = todo[i + 1].version if i + 1 < len(todo) else None
                _apply(conn, migration.down, previous)
                reverted.append(migration.version)
                log.info("migration_applied", version=migration.version, name=migration.name, direction="down")
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return reverted


def _apply(conn: psycopg.Connection, path: Path, resulting_version: int | None) -> None:
    with conn.transaction():
        conn.execute(path.read_text())
        _set_version(conn, resulting_version, False)


def set_app_password(url: str, password: str) -> None:
    """Give ``ibex_app`` (the services' login, migration 000008) its password, as the owner."""
    statement = psycopg.sql.SQL("ALTER ROLE ibex_app PASSWORD {}").format(psycopg.sql.Literal(password))
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute(statement)


def is_current(url: str, directory: Path = MIGRATIONS_DIR) -> bool:
    """Whether the database is migrated to the latest version, read only (a service's login
    may not create the version table)."""
    latest = max((m.version for m in discover(directory)), default=None)
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        try:
            row = conn.execute(_VERSION).fetchone()
        except psycopg.errors.UndefinedTable:
            return False
    return row is not None and int(row[0]) == latest and not row[1]
