"""Retention: finished jobs older than the retention period, and the idempotency-ledger
entries naming them, deleted together, oldest first, a bounded batch per statement. An
erasure deletes an agent's finished jobs the same way, whatever their age.

Unfinished jobs are never purged, however old. A ledger entry goes with the job it names,
so a replay of its key after the purge is a new write."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import text


def _delete_finished(which: str) -> Any:
    """Delete a batch of finished jobs chosen by ``which`` (a WHERE fragment) and the ledger
    entries naming them, in one statement (the ledger's foreign key is checked at its end)."""
    return text(
        f"""
    WITH old AS (
        SELECT org_id, id FROM memory_write_jobs
         WHERE status IN ('succeeded', 'failed') AND {which}
         ORDER BY finished_at
         LIMIT :limit
           FOR UPDATE SKIP LOCKED
    ), keys AS (
        DELETE FROM memory_idempotency_keys k USING old
         WHERE k.org_id = old.org_id AND k.job_id = old.id
        RETURNING 1
    ), jobs AS (
        DELETE FROM memory_write_jobs j USING old
         WHERE j.org_id = old.org_id AND j.id = old.id
        RETURNING 1
    )
    SELECT (SELECT count(*) FROM jobs) AS jobs, (SELECT count(*) FROM keys) AS idempotency_keys
    """
    )


_PURGE = _delete_finished("finished_at < now() - make_interval(secs => :older_than_seconds)")
_DELETE_AGENT_FINISHED = _delete_finished("org_id = :org_id AND agent_id = :agent_id")


@dataclass(frozen=True)
class Purged:
    jobs: int
    idempotency_keys: int


def purge_finished(conn: Any, older_than_seconds: float, limit: int) -> Purged:
    """Delete up to ``limit`` finished jobs that finished more than ``older_than_seconds``
    ago, with the ledger entries naming them, in the caller's (maintenance) transaction."""
    row = conn.execute(_PURGE, {"older_than_seconds": older_than_seconds, "limit": limit}).one()
    return Purged(jobs=int(row.jobs), idempotency_keys=int(row.idempotency_keys))


def delete_agent_finished(conn: Any, org_id: str, agent_id: str, limit: int) -> Purged:
    """Delete up to ``limit`` of the agent's finished jobs, whatever their age, with the ledger
    entries naming them (an erasure)."""
    row = conn.execute(_DELETE_AGENT_FINISHED, {"org_id": org_id, "agent_id": agent_id, "limit": limit}).one()
    return Purged(jobs=int(row.jobs), idempotency_keys=int(row.idempotency_keys))
