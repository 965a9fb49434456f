"""The read cache: the ``ReadCache`` seam and its Redis implementation, written after
commit. A failure here degrades reads and is logged; it never undoes or blocks the durable
record. Quarantined memories are never cached (persist hands over active memories only)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

import redis
import structlog

from ibex_worker.errors import TransientError

log = structlog.get_logger("ibex.cache")


def cache_key(org_id: str, memory_id: str) -> str:
    return f"ibex:memory:{org_id}:{memory_id}"


def erased_agent_key(org_id: str, agent_id: str) -> str:
    """Set while (and for a cache lifetime after) an agent is erased: no entry of it is written."""
    return f"ibex:erased:{org_id}:agent:{agent_id}"


def erased_memory_key(org_id: str, memory_id: str) -> str:
    return f"ibex:erased:{org_id}:memory:{memory_id}"


# An entry is written only if neither its agent nor the memory is being (or was just) erased:
# a persist that committed before an erasure's first batch writes its entry after commit, and
# must not put back what the erasure has dropped.
_GUARDED_SET = """
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
"""


class ReadCache(Protocol):
    def put(self, entry: dict[str, Any]) -> bool:
        """Cache an active memory; False when the write failed (logged, never raised)."""

    def evict(self, org_id: str, memory_ids: list[str]) -> bool:
        """Drop entries whose memory stopped being active; False when that failed."""

    def drop(self, org_id: str, memory_ids: list[str]) -> int:
        """Drop the entries of erased memories; how many there were. Raises ``TransientError``
        when the cache cannot be reached (an erasure must not end with an entry left)."""

    def mark_erased(self, org_id: str, *, agent_id: str | None = None, memory_ids: Sequence[str] = ()) -> None:
        """Before an erasure drops entries: refuse later writes of entries of the agent or of
        these memories for a cache lifetime. Raises ``TransientError`` like ``drop``."""

    def compact(self) -> bool:
        """Have the server rewrite its append-only file, so dropped entries leave its history
        too; best effort (False when it could not be started)."""


class RedisCache:
    def __init__(self, url: str, ttl_seconds: int) -> None:
        self._client = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
        self._ttl = ttl_seconds
        self._guarded_set = self._client.register_script(_GUARDED_SET)

    def put(self, entry: dict[str, Any]) -> bool:
        org_id, memory_id = entry["org_id"], entry["memory_id"]
        try:
            self._guarded_set(keys=[cache_key(org_id, memory_id), erased_agent_key(org_id, entry["agent_id"]),
                                    erased_memory_key(org_id, memory_id)], args=[json.dumps(entry), self._ttl])
        except redis.RedisError as exc:
            log.warning("cache_write_failed", memory_id=entry["memory_id"], error=type(exc).__name__)
            return False
        return True

    def evict(self, org_id: str, memory_ids: list[str]) -> bool:
        """Drop entries whose memory stopped being active (superseded)."""
        if not memory_ids:
            return True
        try:
            self._client.delete(*(cache_key(org_id, m) for m in memory_ids))
        except redis.RedisError as exc:
            log.warning("cache_evict_failed", memories=len(memory_ids), error=type(exc).__name__)
            return False
        return True

    def drop(self, org_id: str, memory_ids: list[str]) -> int:
        if not memory_ids:
            return 0
        try:
            return int(self._client.delete(*(cache_key(org_id, m) for m in memory_ids)))
        except redis.RedisError:
            raise TransientError("read cache unavailable", code="CACHE_UNAVAILABLE") from None

    def mark_erased(self, org_id: str, *, agent_id: str | None = None, memory_ids: Sequence[str] = ()) -> None:
        keys = ([erased_agent_key(org_id, agent_id)] if agent_id else []) + [erased_memory_key(org_id, m)
                                                                             for m in memory_ids]
        try:
            with self._client.pipeline() as pipe:
                for key in keys:
                    pipe.set(key, "1", ex=self._ttl)
                pipe.execute()
        except redis.RedisError:
            raise TransientError("read cache unavailable", code="CACHE_UNAVAILABLE") from None

    def compact(self) -> bool:
        try:
            if self._client.config_get("appendonly").get("appendonly") != "yes":
                return True
            self._client.bgrewriteaof()
        except redis.RedisError as exc:  # a rewrite already running, or CONFIG/BGREWRITEAOF not allowed
            log.warning("cache_compact_failed", error=type(exc).__name__)
            return False
        return True

    def close(self) -> None:
        self._client.close()

    def get(self, org_id: str, memory_id: str) -> dict[str, Any] | None:
        try:
            raw = self._client.get(cache_key(org_id, memory_id))
        except redis.RedisError:
            return None
        return json.loads(raw) if raw else None
