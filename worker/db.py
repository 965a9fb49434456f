"""Engine and transaction helpers.

Every transaction declares whose rows it touches: ``tenant_tx(engine, org_id)`` switches to
the RLS-bound ``ibex_tenant`` role and sets ``ibex.org_id`` for the transaction, so a query
that forgot its ``org_id`` filter still cannot read another tenant. ``maint_tx`` is for the
few cross-tenant paths (claiming a batch of jobs by id, the sweeper, key lookup).
Repository helpers take a connection and never commit: the caller owns the transaction.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError, InvalidatePoolError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from ibex_worker.errors import TransientError
from ibex_worker.store import session

# A pooled connection idle longer than this is pinged before use (a dead one is replaced,
# with the rest of the pool). One busier than that is not: SQLAlchemy's ``pool_pre_ping``
# pings on every checkout, one more round trip per transaction - measured here at about a
# fifth of a short transaction's CPU on both sides, about 15 transactions per write. A
# connection that dies while busy (a restart shorter than this) fails one transaction with
# a disconnect, which invalidates the pool and surfaces as ``TransientError`` (retried).
PING_AFTER_IDLE_SECONDS = 1.0
_IDLE_SINCE = "ibex_idle_since"

_engines: dict[str, Engine] = {}
_engines_lock = threading.Lock()


def make_engine(url: str, *, pool_size: int = 5, max_overflow: int = 5, pool_timeout: float = 30.0) -> Engine:
    engine = create_engine(
        url,
        pool_size=pool_size,
        max_overflow=max_overflow,
        pool_timeout=pool_timeout,
        pool_recycle=1800,
        connect_args={"connect_timeout": 5},
        hide_parameters=True,  # exception messages must never quote bound values (content)
    )
    dialect = engine.dialect

    def ping_if_idle(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        _ping_if_idle(dialect, dbapi_connection, record)

    event.listen(engine, "checkin", _mark_idle)
    event.listen(engine, "checkout", ping_if_idle)
    return engine


def _mark_idle(dbapi_connection: Any, record: Any) -> None:
    if record is not None:
        record.info[_IDLE_SINCE] = time.monotonic()


def _ping_if_idle(dialect: Any, dbapi_connection: Any, record: Any) -> None:
    """Checkout hook: ping a connection that sat in the pool for a while; a failed ping makes
    the pool drop every connection made before now and connect afresh (as pre-ping does)."""
    idle_since = record.info.get(_IDLE_SINCE)  # None: a new connection, nothing to check
    if idle_since is None or time.monotonic() - idle_since < PING_AFTER_IDLE_SECONDS:
        return
    try:
        alive = dialect.do_ping(dbapi_connection)
    except Exception:
        alive = False
    if not alive:
        raise InvalidatePoolError("idle connection failed its ping")


def get_engine(url: str) -> Engine:
    """One engine per URL per process, created on first use (never at import)."""
    with _engines_lock:
        engine = _engines.get(url)
        if engine is None:
            engine = _engines[url] = make_engine(url)
        return engine


def dispose_engines() -> None:
    """Drop pooled connections; call in a forked child before first use."""
    with _engines_lock:
        for engine in _engines.values():
            engine.dispose(close=False)
        _engines.clear()


@contextmanager
def tenant_tx(engine: Engine, org_id: str, *, durable: bool = True) -> Iterator[Connection]:
    """``durable=False``: the commit does not wait for the WAL flush (``synchronous_commit =
    off`` for this transaction only). For intermediate pipeline state that a crash may lose
    safely - a lost claim or stage write-back only means the stage runs again - never for a
    write a caller is told about (job insert, persist, failure)."""
    with _begin(engine) as conn:
        session.as_tenant(conn, org_id, durable=durable)
        yield conn


@contextmanager
def maint_tx(engine: Engine, *, durable: bool = True) -> Iterator[Connection]:
    with _begin(engine) as conn:
        session.as_maint(conn, durable=durable)
        yield conn


@contextmanager
def _begin(engine: Engine) -> Iterator[Connection]:
    try:
        with engine.begin() as conn:
            yield conn
    except OperationalError:
        # Connection refused, server gone, serialization trouble: all worth a retry.
        raise TransientError("database unavailable", code="DATABASE_UNAVAILABLE") from None  # parameters may quote content
    except PoolTimeout:
        # Every pooled connection busy for pool_timeout seconds: overload, worth a retry (503, not 500).
        raise TransientError("database connections exhausted", code="DATABASE_UNAVAILABLE") from None
    except DBAPIError as exc:
        if exc.connection_invalidated:
            raise TransientError("database connection lost", code="DATABASE_UNAVAILABLE") from None  # parameters may quote content
        raise

