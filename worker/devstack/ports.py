"""TCP ports on 127.0.0.1 for the embedded servers and the processes of ``ibex up``."""

from __future__ import annotations

import re
import socket
from pathlib import Path

LOCALHOST = "127.0.0.1"


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports on 127.0.0.1 that are free right now.

    Every socket stays bound until all are chosen: two separate ``free_port()`` calls may return the
    same port, since the kernel may hand out a port again as soon as it is released."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind((LOCALHOST, 0))
        return [int(sock.getsockname()[1]) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def port_is_free(port: int) -> bool:
    """True if a server could bind 127.0.0.1:port (servers use SO_REUSEADDR)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOCALHOST, port))
        except OSError:
            return False
        return True


def port_is_open(port: int) -> bool:
    """True if something accepts TCP connections on 127.0.0.1:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        try:
            sock.connect((LOCALHOST, port))
        except OSError:
            return False
        return True


def bindable_port(host: str, port: int) -> int:
    """``port`` (or, for 0, some free port) if it can be bound on ``host`` now, else 0."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return 0
        return int(sock.getsockname()[1])


def remembered_port(path: Path, pattern: str) -> int | None:
    """The port an earlier start wrote to ``path`` (the first group of ``pattern``), if any."""
    try:
        text = path.read_text()
    except OSError:
        return None
    match = re.search(pattern, text, re.MULTILINE)
    return int(match.group(1)) if match else None
