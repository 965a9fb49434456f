"""The benchmark's load client against a small HTTP server on 127.0.0.1: every request is
sent once with its own headers and body, answers are read whole (keep-alive connections
are reused), a server that closes or stalls gives status 0, and only localhost is allowed."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from ops.bench import loadclient


class _Server:
    """Answers POSTs with 202 and a JSON body; every 5th with ``Connection: close``; a body
    with ``"stall": true`` gets no answer; one with ``"drop_once": true`` has its connection
    closed unanswered the first time (a keep-alive connection closing under a request)."""

    def __init__(self) -> None:
        self.seen: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.connections = 0
        self.dropped: list[int] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode().split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
                body = json.loads(await reader.readexactly(int(headers["content-length"])))
                self.seen.append((headers, body))
                if body.get("stall"):
                    await asyncio.sleep(5)
                    return
                if body.get("drop_once") and body["i"] not in self.dropped:
                    self.dropped.append(body["i"])
                    return
                close = len(self.seen) % 5 == 0
                payload = json.dumps({"job_id": str(body["i"])}).encode()
                writer.write(b"HTTP/1.1 202 Accepted\r\ncontent-type: application/json\r\n"
                             + f"content-length: {len(payload)}\r\n".encode()
                             + (b"connection: close\r\n" if close else b"") + b"\r\n" + payload)
                await writer.drain()
                if close:
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()


async def _run(requests: list[loadclient.Request], rate: float, timeout: float) -> tuple[dict[str, Any], _Server]:
    server = _Server()
    srv = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    try:
        out = await loadclient.open_loop(f"http://127.0.0.1:{port}", requests, rate, timeout, max_connections=4)
    finally:
        srv.close()
    return out, server


def test_every_request_is_sent_once_with_its_headers_and_answers_are_counted() -> None:
    requests = [loadclient.Request("/v1/memories", {"i": i, "content": f"note {i}"},
                                   {"Authorization": f"Bearer k{i % 2}", "X-Idempotency-Key": f"key-{i}"})
                for i in range(40)]
    out, server = asyncio.run(_run(requests, rate=400.0, timeout=5.0))
    assert out["statuses"] == {"202": 40}
    assert sorted(body["i"] for _, body in server.seen) == list(range(40))
    by_i = {body["i"]: headers for headers, body in server.seen}
    assert all(by_i[i]["x-idempotency-key"] == f"key-{i}" and by_i[i]["authorization"] == f"Bearer k{i % 2}"
               for i in range(40))
    # Keep-alive: far fewer connections than requests (each 5th answer closes its connection).
    assert server.connections == out["connections_opened"] <= 40 // 5 + 4
    assert len(out["latency_s"]) == 40 and min(out["latency_s"]) > 0


def test_a_stalled_answer_times_out_as_status_0_and_the_rest_go_on() -> None:
    requests = [loadclient.Request("/v1/memories", {"i": i, "stall": i == 3}, {}) for i in range(10)]
    out, _ = asyncio.run(_run(requests, rate=200.0, timeout=0.5))
    assert out["statuses"] == {"202": 9, "0": 1}


def test_a_request_whose_kept_alive_connection_closes_unanswered_is_sent_once_more() -> None:
    requests = [loadclient.Request("/v1/memories", {"i": i, "drop_once": i == 2}, {}) for i in range(4)]
    out, server = asyncio.run(_run(requests, rate=20.0, timeout=5.0))  # one at a time: one connection reused
    assert server.dropped == [2]
    assert out["statuses"] == {"202": 4}
    assert [body["i"] for _, body in server.seen] == [0, 1, 2, 2, 3]


def test_only_localhost_is_a_target() -> None:
    with pytest.raises(ValueError):
        asyncio.run(loadclient.open_loop("http://example.com:80", [], 1.0, 1.0))
