"""The Redis broker transport: kombu's, with messages that jump the queue and one kombu 5.7
failure turned into the connection error it is.

A message whose headers carry ``FRONT`` is pushed to the end of the Redis list that consumers
pop from, so it is delivered next rather than after the backlog: the sweeper sends a job whose
holder died that way, and the job runs again within seconds of its lease running out, however
long the queue (``docs/reliability.md``).

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
from kombu.utils.json import dumps
from redis.exceptions import ConnectionError as RedisConnectionError

TRANSPORT = "ibex_worker.broker:Transport"
FRONT = "x-ibex-front"


class Channel(kombu_redis.Channel):
    def _put(self, queue: str, message: dict[str, Any], **kwargs: Any) -> None:
        """kombu pushes on the left and consumers pop on the right: a ``FRONT`` message is
        pushed on the right."""
        if (not (message.get("headers") or {}).get(FRONT) or kwargs.get("_publish_batch") is not None
                or self._expires and queue in self._expires):
            super()._put(queue, message, **kwargs)
            return
        key = self._q_for_pri(queue, self._get_message_priority(message, reverse=False))
        with self.conn_or_acquire() as client:
            client.rpush(key, dumps(message))

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection is None or self.connection.client is None:
            raise RedisConnectionError("the broker connection is closed")
        return super()._connparams(asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
