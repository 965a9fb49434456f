"""Which module may import which. The worker's layers import downwards only, and the API
reaches into the worker only through the modules made for producers. Read from the source
files (every import, the ones inside functions and relative ones included), so a new
upward import fails here."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("api", "worker")
# The folders install under these import names (pyproject.toml); importing a folder's own
# name works only from a checkout and would load a second copy of the module.
IMPORT_NAMES = {"api": "ibex_api", "worker": "ibex_worker"}

# Lowest first: a module may import modules of its own layer and of the layers below.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("ibex_worker.pii", "ibex_worker.identifiers", "ibex_worker.lexical", "ibex_worker.entity_keys",
     "ibex_worker.redaction_tags", "ibex_worker.conflict_rules", "ibex_worker.rewording"),  # pure text analysis
    ("ibex_worker.store",),  # SQL
    ("ibex_worker.adapters", "ibex_worker.publish", "ibex_worker.celery_app", "ibex_worker.broker"),  # models, vectors, read cache, broker
    ("ibex_worker.pipeline",),
    ("ibex_worker.escalations", "ibex_worker.submit", "ibex_worker.reads", "ibex_worker.review", "ibex_worker.erasures",
     "ibex_worker.reembed", "ibex_worker.runtime", "ibex_worker.links", "ibex_worker.notes", "ibex_worker.backfill", "ibex_worker.entities",
     "ibex_worker.tasks", "ibex_worker.backlog", "ibex_worker.apikeys", "ibex_worker.migrate", "ibex_worker.sweeper", "ibex_worker.cli",
     "ibex_worker.review_cli", "ibex_worker.erasures_cli", "ibex_worker.importer", "ibex_worker.probe", "ibex_worker.devstack"),  # services, processes and their tools
    ("ibex_api",),
)
# Anyone may import the core; the core itself imports only the core and the layers up to the
# store (``ibex_worker.db`` sets the tenant through ``ibex_worker.store.session``).
CORE = ("ibex_worker.config", "ibex_worker.errors", "ibex_worker.logs", "ibex_worker.metrics", "ibex_worker.db", "ibex_worker.retry",
        "ibex_worker.cursor", "ibex_worker.limits")
CORE_REACHES = LAYERS.index(("ibex_worker.store",))
# The worker modules the API may import (a package stands for its modules).
API_MAY_IMPORT = CORE + ("ibex_worker.celery_app", "ibex_worker.broker", "ibex_worker.publish", "ibex_worker.backlog", "ibex_worker.apikeys", "ibex_worker.submit",
                         "ibex_worker.reads", "ibex_worker.review", "ibex_worker.erasures", "ibex_worker.migrate",
                         "ibex_worker.links", "ibex_worker.entities", "ibex_worker.entity_keys",
                         "ibex_worker.runtime", "ibex_worker.escalations.service", "ibex_worker.store")


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def layer_of(module: str) -> int | None:
    """The layer a module belongs to; None for the core and for a module with no place."""
    return next((rank for rank, prefixes in enumerate(LAYERS) if any(_within(module, p) for p in prefixes)), None)


def _is_core(module: str) -> bool:
    return module in CORE or module == "ibex_worker"  # the package's own __init__ sits with the core


def _reach(module: str) -> int | None:
    """The highest layer ``module`` may import from."""
    return CORE_REACHES if _is_core(module) else layer_of(module)


def imported_modules(source: str, module: str, *, is_package: bool, known: set[str]) -> set[str]:
    """The ``api``/``worker`` modules ``source`` (the text of ``module``) imports anywhere in
    it. ``from a import b`` names ``a.b`` when that is a module in ``known``, else ``a``."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names)
    return {name for name in found if name.split(".")[0] in (*PACKAGES, *IMPORT_NAMES.values())}


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = ".".join(parts[:len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


def violations(module: str, imports: Iterable[str]) -> list[str]:
    """Every import of ``module`` its place forbids, as a sentence. A module with no place
    has none here: ``test_every_module_has_a_place_in_the_layers`` names it."""
    by_folder = [f"{module} imports {name} by its folder's name, not as {IMPORT_NAMES[name.split('.')[0]]}"
                 for name in sorted(imports) if name.split(".")[0] in PACKAGES]
    imports = [name for name in imports if name.split(".")[0] not in PACKAGES]
    if _within(module, "ibex_api"):
        return by_folder + [
            f"{module} imports {name}, which is not made for the API" for name in sorted(imports)
            if _within(name, "ibex_worker") and not any(_within(name, allowed) for allowed in API_MAY_IMPORT)]
    reach = _reach(module)
    return by_folder + [f"{module} imports {name}, which belongs to a higher layer" for name in sorted(imports)
            if reach is not None and not _is_core(name) and (layer_of(name) or 0) > reach]


def _modules() -> dict[str, Path]:
    paths = sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))
    return {".".join((IMPORT_NAMES[p.relative_to(ROOT).parts[0]], *p.relative_to(ROOT).with_suffix("").parts[1:]))
            .removesuffix(".__init__"): p for p in paths}


def _violations_in(package: str) -> list[str]:
    modules = _modules()
    found = []
    for module, path in modules.items():
        if _within(module, package):
            source = path.read_text(encoding="utf-8")
            found += violations(module, imported_modules(source, module, is_package=path.name == "__init__.py",
                                                         known=set(modules)))
    return found


def test_every_module_has_a_place_in_the_layers():
    assert [m for m in _modules() if not _is_core(m) and layer_of(m) is None] == []


def test_no_worker_module_imports_one_of_a_higher_layer():
    assert _violations_in("ibex_worker") == []


def test_the_api_imports_only_the_worker_modules_made_for_it():
    assert _violations_in("ibex_api") == []


# The checker itself, on small made-up modules.

KNOWN = {"ibex_worker.pipeline", "ibex_worker.pipeline.persist", "ibex_worker.pipeline.conflict", "ibex_worker.store",
         "ibex_worker.store.memories", "ibex_worker.limits", "ibex_worker.review"}


def _check(module: str, source: str, *, is_package: bool = False) -> list[str]:
    return violations(module, imported_modules(source, module, is_package=is_package, known=KNOWN))


def test_an_upward_import_inside_a_function_is_caught():
    source = "def bump():\n    from ibex_worker.pipeline import persist\n    return persist\n"
    assert _check("ibex_worker.store.memories", source) == [
        "ibex_worker.store.memories imports ibex_worker.pipeline.persist, which belongs to a higher layer"]


def test_an_upward_relative_import_is_caught():
    assert _check("ibex_worker.adapters.cache", "from ..pipeline.persist import PersistOutcome\n") == [
        "ibex_worker.adapters.cache imports ibex_worker.pipeline.persist, which belongs to a higher layer"]


def test_a_module_may_import_its_own_layer_the_layers_below_and_the_core():
    source = "import json\nfrom ibex_worker.store import memories\nfrom ibex_worker.limits import MAX_LABELS\nfrom . import conflict\n"
    assert _check("ibex_worker.pipeline.persist", source) == []


def test_a_core_module_reaches_no_higher_than_the_store():
    assert _check("ibex_worker.db", "from ibex_worker.store import memories\n") == []
    assert _check("ibex_worker.db", "from ibex_worker import review\n") == [
        "ibex_worker.db imports ibex_worker.review, which belongs to a higher layer"]


def test_the_api_may_not_reach_past_the_modules_made_for_it():
    assert _check("ibex_api.schemas", "from ibex_worker.pipeline.persist import DECIDED_BY\n") == [
        "ibex_api.schemas imports ibex_worker.pipeline.persist, which is not made for the API"]
    assert _check("ibex_api.schemas", "from ibex_worker.limits import MAX_LABELS\nfrom ibex_worker import review\n") == []


def test_a_module_imported_by_its_folder_name_is_caught():
    assert _check("ibex_worker.pipeline.persist", "from worker.store import memories\n") == [
        "ibex_worker.pipeline.persist imports worker.store by its folder's name, not as ibex_worker"]
