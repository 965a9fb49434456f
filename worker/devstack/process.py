"""Child processes.

``Proc`` is the one supervisor of an ``ibex`` subcommand run as a child process: ``ibex up``
runs the stack's processes with it, the tests and the benchmarks theirs. The functions below
it look at processes known only by their pid (an embedded server found from its pid file).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

IBEX_COMMAND = (sys.executable, "-m", "ibex_worker.cli")
KILL_WAIT_S = 30.0  # after SIGKILL, only an uninterruptible process takes longer to go


class Proc:
    """``python -m ibex_worker.cli <command>`` in a session of its own, so that a signal reaches it
    and every process it forks (Celery pool, uvicorn workers) as one group.

    With ``log_path``, stdout and stderr are appended to that file (its folder is created);
    without, they are this process's own.
    """

    def __init__(self, name: str, command: list[str], env: dict[str, str], *,
                 log_path: Path | None = None, cwd: Path | None = None) -> None:
        self.name = name
        self.log_path = log_path
        argv = [*IBEX_COMMAND, *command]
        if log_path is None:
            self.popen = subprocess.Popen(argv, env=env, cwd=cwd, start_new_session=True)
            return
        log_path.parent.mkdir(exist_ok=True)
        with open(log_path, "ab") as log:  # the child keeps its own copy of the descriptor
            self.popen = subprocess.Popen(argv, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True)

    def log_text(self, offset: int = 0) -> str:
        """The log file from byte ``offset`` on."""
        with open(self._log_file(), "rb") as log:
            log.seek(offset)
            return log.read().decode("utf-8", errors="replace")

    def log_size(self) -> int:
        """Bytes in the log file now: an offset for ``log_text`` that skips what came before."""
        return self._log_file().stat().st_size

    def wait_for_log(self, needle: str, timeout: float = 120.0, count: int = 1) -> None:
        """Return once the log holds ``needle`` ``count`` times; raise RuntimeError if the
        process exits first, TimeoutError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.log_text().count(needle) >= count:
                return
            if self.popen.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.popen.returncode}:\n{self.log_text()[-3000:]}")
            time.sleep(0.2)
        raise TimeoutError(f"{self.name} did not log {needle!r} {count}x in {timeout}s:\n{self.log_text()[-3000:]}")

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM to the process group; SIGKILL if the process has not exited after ``timeout``."""
        self.terminate()
        self.wait_or_kill(timeout)

    def terminate(self) -> None:
        """SIGTERM to the process group if the process still runs; returns at once."""
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def wait_or_kill(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the process to exit, then kill its group."""
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """SIGKILL the whole process group: the process and the children it forked."""
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.popen.wait(KILL_WAIT_S)

    def _log_file(self) -> Path:
        if self.log_path is None:
            raise RuntimeError(f"{self.name} writes to the parent's output, not to a log file")
        return self.log_path


def process_alive(pid: int) -> psutil.Process | None:
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


def wait_dead(pid: int, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``pid`` to be gone; False if it is still alive."""
    deadline = time.monotonic() + timeout
    while process_alive(pid) is not None:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a server's log, for an error message."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"<could not read {path}: {exc}>"
    return "\n".join(text.splitlines()[-lines:])
