"""The Redis broker transport, with one kombu 5.7 failure turned into the connection error it is.

When Redis goes away while the worker holds unacknowledged messages, kombu closes the channel
after the connection object is already gone, and reading the connection parameters raises
``AttributeError`` instead of a connection error. Celery takes that for an unrecoverable error:
the consumer stops and the worker process stays up consuming nothing. Raised as a
``redis.exceptions.ConnectionError``, it is one of the errors the consumer already ignores
while it closes a lost connection, and it reconnects. The messages that were unacknowledged
are not lost: Redis keeps them (append-only file) and kombu restores them after the visibility
timeout, and the job rows in PostgreSQL are what the sweeper republishes in any case.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

TRANSPORT = "ibex_worker.broker:Transport"


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection is None or self.connection.client is None:
            raise RedisConnectionError("the broker connection is closed")
        return super()._connparams(asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
