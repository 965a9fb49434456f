"""A lean open-loop HTTP/1.1 load client for the service benchmark.

The client shares the 2-core machine with the service, so every millisecond of CPU it spends
per request is taken from the service it measures. httpx cost about 4 ms of CPU per write
here; this client sends pre-encoded requests over keep-alive connections on asyncio streams
and reads only the status line, the headers and a ``Content-Length`` body, for a fraction
of that. It speaks just enough HTTP/1.1 for the API's answers (no chunked bodies, no TLS, no
redirects) and only to 127.0.0.1.

Open loop: request i is due at ``t0 + i / rate`` whatever happened before; its latency runs
from that due time, so time spent waiting for a free connection counts (no coordinated
omission).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Request:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]


def encode(host: str, request: Request) -> bytes:
    payload = json.dumps(request.body, separators=(",", ":")).encode()
    head = [f"POST {request.path} HTTP/1.1", f"Host: {host}", "Content-Type: application/json",
            f"Content-Length: {len(payload)}", *(f"{k}: {v}" for k, v in request.headers.items())]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + payload


Conn = tuple[asyncio.StreamReader, asyncio.StreamWriter]
# A connection idle longer than this is closed rather than reused: uvicorn closes keep-alive
# connections idle for 5 s, and a request sent just as the server closes gets no answer.
MAX_IDLE_S = 2.0


class _Connections:
    """Keep-alive connections to one host, opened on demand up to ``limit``."""

    def __init__(self, host: str, port: int, limit: int) -> None:
        self.host, self.port = host, port
        self.idle: list[tuple[Conn, float]] = []  # (connection, idle since), most recent last
        self.opened = 0
        self.slots = asyncio.Semaphore(limit)

    async def take(self) -> tuple[Conn, bool]:
        """A connection and whether it was used before."""
        await self.slots.acquire()
        now = time.monotonic()
        while self.idle:
            conn, since = self.idle.pop()
            if now - since <= MAX_IDLE_S:
                return conn, True
            conn[1].close()
        try:
            return await self.connect(), False
        except BaseException:
            self.slots.release()
            raise

    async def connect(self) -> Conn:
        conn = await asyncio.open_connection(self.host, self.port)
        self.opened += 1
        return conn

    def give_back(self, conn: Conn, reusable: bool) -> None:
        if reusable:
            self.idle.append((conn, time.monotonic()))
        else:
            conn[1].close()
        self.slots.release()

    def close(self) -> None:
        for (_, writer), _ in self.idle:
            writer.close()
        self.idle.clear()


class _Closed(Exception):
    """The connection closed before a byte of the answer came back."""


async def _exchange(conn: Conn, raw: bytes) -> tuple[int, bool]:
    """Send one request, read its answer; (status, connection reusable)."""
    reader, writer = conn
    writer.write(raw)
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            raise _Closed() from None
        raise
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length, keep = 0, True
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value.strip())
        elif name == "connection" and value.strip().lower() == "close":
            keep = False
        elif name == "transfer-encoding":
            raise ValueError("chunked answers are not supported by this client")
    if length:
        await reader.readexactly(length)
    return status, keep


async def open_loop(url: str, requests: Sequence[Request], rate: float, timeout: float,
                    max_connections: int = 512) -> dict[str, Any]:
    """Send ``requests`` at ``rate`` per second; status 0 = no answer (error or timeout)."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError("the load client only targets localhost")
    raws = [encode(f"{host}:{port}", r) for r in requests]  # encoded before the clock starts
    n = len(raws)
    lateness, latency, statuses = [0.0] * n, [0.0] * n, [0] * n
    pool = _Connections(host, port, max_connections)
    started = time.perf_counter()

    async def one(i: int) -> None:
        scheduled = started + i / rate
        delay = scheduled - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        lateness[i] = time.perf_counter() - scheduled
        conn = None
        try:
            async with asyncio.timeout(timeout):
                conn, reused = await pool.take()
                try:
                    statuses[i], keep = await _exchange(conn, raws[i])
                except (_Closed, ConnectionResetError, BrokenPipeError):
                    if not reused:
                        raise
                    # A kept-alive connection the server had just closed: the request was
                    # not read, so send it once more on a new connection (as httpx does).
                    conn[1].close()
                    conn = await pool.connect()
                    statuses[i], keep = await _exchange(conn, raws[i])
            pool.give_back(conn, keep)
        except (OSError, _Closed, asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ValueError):
            statuses[i] = 0
            if conn is not None:
                pool.give_back(conn, False)
        latency[i] = time.perf_counter() - scheduled

    try:
        await asyncio.gather(*(one(i) for i in range(n)))
    finally:
        pool.close()
    return {"sent": n, "wall_s": round(time.perf_counter() - started, 3),
            "statuses": dict(Counter(str(s) for s in statuses)), "connections_opened": pool.opened,
            "lateness_s": lateness, "latency_s": latency}
