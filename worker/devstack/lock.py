"""The stack lock of a data folder (``<data_dir>/stack.lock``), held by ``ibex up``."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path


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
