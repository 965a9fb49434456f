"""Where things live: SQL only in ``worker/store/`` (and the migration runner), modules small
enough to read, and the API reaching into the worker package only through the modules made
for it. Read from the source files themselves, so a move that breaks the layout fails here."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("api", "worker")
MIGRATION_RUNNER = Path("worker/migrate.py")
MAX_LINES = 400
# Declarative modules: settings, request and response schemas, word tables.
DECLARATIVE = {Path("worker/config.py"), Path("api/schemas.py")}


def _modules(*packages: str) -> list[Path]:
    return sorted(p.relative_to(ROOT) for package in packages for p in (ROOT / package).rglob("*.py"))


def _calls_sql_text(path: Path) -> list[int]:
    """Lines that build a statement with sqlalchemy's ``text`` or run raw SQL with
    ``exec_driver_sql``."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             and (node.module or "").startswith("sqlalchemy") for alias in node.names if alias.name == "text"}
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        isinstance(node.func, ast.Name) and node.func.id in names
        or isinstance(node.func, ast.Attribute) and node.func.attr == "exec_driver_sql")]


def test_sql_statements_live_only_in_the_store_and_the_migration_runner():
    outside = {str(path): lines for path in _modules(*PACKAGES)
               if path.parts[:2] != ("worker", "store") and path != MIGRATION_RUNNER
               and (lines := _calls_sql_text(path))}
    assert outside == {}


def test_the_store_holds_sql_so_the_check_above_looks_at_the_right_thing():
    for table in ("jobs", "idempotency", "memories", "relationships", "escalations", "apikeys"):
        assert _calls_sql_text(Path(f"worker/store/{table}.py")), table


def test_no_module_outgrows_a_reading():
    long = {str(path): n for path in _modules(*PACKAGES) if path not in DECLARATIVE
            and (n := len((ROOT / path).read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
